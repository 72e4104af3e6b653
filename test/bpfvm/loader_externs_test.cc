// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/loader_externs_test.cc: .ksyms externs, the kfunc registry and
// extern resolution with its failure modes.
#include <catch2/catch.hpp>

#include "loader_test_util.h"

namespace umemcg::emu {
namespace {

using testing::fake_kfunc;
using testing::prog_path;

// The message without the "<path>: " prefix load_object_file adds.
std::string msg(const absl::Status &st)
{
	std::string m(st.message());
	size_t at = m.find(".bpf.o: ");
	return at == std::string::npos ? m : m.substr(at + 8);
}

absl::StatusOr<BpfObject> load_with(const KfuncRegistry &reg)
{
	LoadOptions o;
	o.kfuncs = &reg;
	return load_object_file(prog_path("memcg_ops"), o);
}

// The memcg kfuncs with one of them replaced by `changed`.
absl::StatusOr<BpfObject> load_with_changed(KfuncDesc changed)
{
	KfuncRegistry reg;
	KfuncRegistry full;
	testing::add_memcg_kfuncs(full);
	for (const char *n : {"bpf_get_mem_cgroup", "bpf_put_mem_cgroup", "bpf_mem_cgroup_usage",
			      "bpf_mem_cgroup_flush_stats", "bpf_proactive_reclaim"}) {
		if (changed.name == n)
			continue;
		REQUIRE(reg.add(*full.find(n)).ok());
	}
	changed.fn = fake_kfunc;
	REQUIRE(reg.add(changed).ok());
	return load_with(reg);
}

TEST_CASE("the KF_ flags have the kernel's values", "[bpfvm][kfunc]")
{
	CHECK(KF_ACQUIRE == 0x1);
	CHECK(KF_RELEASE == 0x2);
	CHECK(KF_RET_NULL == 0x4);
	CHECK(KF_TRUSTED_ARGS == 0x10);
	CHECK(KF_SLEEPABLE == 0x20);
	CHECK(KF_DESTRUCTIVE == 0x40);
	CHECK(KF_RCU == 0x80);
	CHECK(KF_RCU_PROTECTED == 0x800);
	CHECK(kfunc_flags_string(KF_ACQUIRE | KF_RET_NULL) == "KF_ACQUIRE|KF_RET_NULL");
	CHECK(kfunc_flags_string(0) == "0");
}

TEST_CASE("the kfunc registry validates descriptors", "[bpfvm][kfunc]")
{
	KfuncRegistry reg;
	testing::add_memcg_kfuncs(reg);
	CHECK(reg.size() == 5);
	const KfuncDesc *get = reg.find("bpf_get_mem_cgroup");
	REQUIRE(get);
	CHECK(get->has(KF_ACQUIRE | KF_RET_NULL));
	CHECK(get->allowed_for(BPF_PROG_TYPE_STRUCT_OPS));  // UNSPEC: every type
	const KfuncDesc *rec = reg.find("bpf_proactive_reclaim");
	CHECK(rec->allowed_for(BPF_PROG_TYPE_SYSCALL));
	CHECK_FALSE(rec->allowed_for(BPF_PROG_TYPE_TRACING));
	CHECK(reg.find("nope") == nullptr);

	CHECK(reg.add({"bpf_get_mem_cgroup", KfuncArg::void_(), {}, 0}).code() ==
	      absl::StatusCode::kAlreadyExists);
	CHECK_FALSE(reg.add({"six", KfuncArg::void_(),
			     {KfuncArg::scalar(8), KfuncArg::scalar(8), KfuncArg::scalar(8),
			      KfuncArg::scalar(8), KfuncArg::scalar(8), KfuncArg::scalar(8)}, 0}).ok());
	CHECK_FALSE(reg.add({"mem_no_size", KfuncArg::void_(), {KfuncArg::mem(1), KfuncArg::scalar(8)}, 0}).ok());
	CHECK(reg.add({"mem_sized", KfuncArg::void_(), {KfuncArg::mem(1), KfuncArg::mem_size()}, 0}).ok());
	CHECK_FALSE(reg.add({"rel_scalar", KfuncArg::void_(), {KfuncArg::scalar(8)}, KF_RELEASE}).ok());
	CHECK_FALSE(reg.add({"acq_scalar", KfuncArg::scalar(8), {}, KF_ACQUIRE}).ok());
	CHECK_FALSE(reg.add({"odd_scalar", KfuncArg::void_(), {KfuncArg::scalar(3)}, 0}).ok());
	CHECK_FALSE(reg.add({"", KfuncArg::void_(), {}, 0}).ok());
	CHECK(kfunc_signature(*rec) == "s64 bpf_proactive_reclaim(struct mem_cgroup *, u64, s32)");
}

TEST_CASE("externs are collected from .ksyms with their weakness", "[bpfvm][loader]")
{
	absl::StatusOr<BpfObject> obj = load_object_file(prog_path("memcg_ops"));
	REQUIRE(obj.ok());
	REQUIRE(obj->externs.size() == 6);
	for (const Extern &e : obj->externs) {
		INFO(e.name);
		CHECK(e.kind == ExternKind::kKfunc);
		CHECK(e.btf_id != 0);
		CHECK(e.btf_type_id != 0);
		CHECK_FALSE(e.resolved);  // no registry given
		CHECK(e.weak == (e.name == "bpf_proactive_reclaim" || e.name == "bpf_not_in_any_kernel"));
	}
}

TEST_CASE("externs resolve against the registry; unknown weak ones read as 0", "[bpfvm][loader]")
{
	KfuncRegistry reg;
	testing::add_memcg_kfuncs(reg);
	absl::StatusOr<BpfObject> obj = load_with(reg);
	INFO(obj.status().ToString());
	REQUIRE(obj.ok());
	for (const Extern &e : obj->externs) {
		INFO(e.name);
		if (e.name == "bpf_not_in_any_kernel") {
			CHECK_FALSE(e.resolved);
			CHECK(e.kfunc == nullptr);
		} else {
			CHECK(e.resolved);
			CHECK(e.kfunc == reg.find(e.name));
		}
	}
	const BpfProgram *rc = obj->find_program("reclaim");
	REQUIRE(rc);
	// `if (bpf_not_in_any_kernel)` at insn 14 now loads the constant 0...
	CHECK(rc->insns[14].src_reg == 0);
	CHECK(rc->insns[14].imm == 0);
	CHECK(rc->insns[15].imm == 0);
	// ...and only the resolved weak extern keeps its address load.
	int addr_relocs = 0;
	for (const Reloc &r : rc->relocs)
		if (r.kind == RelocKind::kKsymAddr) {
			addr_relocs++;
			CHECK(obj->externs[r.extern_idx].name == "bpf_proactive_reclaim");
			CHECK(rc->insns[r.insn_idx].src_reg == BPF_PSEUDO_BTF_ID);
		}
	CHECK(addr_relocs == 1);
	// The call of the unresolved weak kfunc stays a kfunc call record:
	// the verifier must find it unreachable.
	bool call_kept = false;
	for (const Reloc &r : rc->relocs)
		if (r.kind == RelocKind::kKfuncCall && obj->externs[r.extern_idx].name == "bpf_not_in_any_kernel")
			call_kept = true;
	CHECK(call_kept);

	// A weak extern missing from the registry is fine too.
	KfuncRegistry no_reclaim;
	testing::add_memcg_kfuncs(no_reclaim, false);
	absl::StatusOr<BpfObject> o2 = load_with(no_reclaim);
	REQUIRE(o2.ok());
	CHECK_FALSE(o2->externs[static_cast<size_t>(o2->extern_index("bpf_proactive_reclaim"))].resolved);
}

TEST_CASE("extern resolution failures are clear errors", "[bpfvm][loader]")
{
	SECTION("unknown non-weak kfunc") {
		KfuncRegistry reg;
		KfuncRegistry full;
		testing::add_memcg_kfuncs(full);
		for (const char *n : {"bpf_get_mem_cgroup", "bpf_mem_cgroup_usage", "bpf_mem_cgroup_flush_stats"})
			REQUIRE(reg.add(*full.find(n)).ok());
		absl::StatusOr<BpfObject> o = load_with(reg);
		REQUIRE_FALSE(o.ok());
		CHECK(o.status().code() == absl::StatusCode::kNotFound);
		CHECK(msg(o.status()) ==
		      "extern kfunc 'bpf_put_mem_cgroup' is not a known kfunc (declare it __weak to make it optional)");
	}
	SECTION("argument count") {
		absl::StatusOr<BpfObject> o = load_with_changed(
			{"bpf_mem_cgroup_usage", KfuncArg::scalar(8),
			 {KfuncArg::ptr_to("mem_cgroup"), KfuncArg::scalar(4)}, 0});
		REQUIRE_FALSE(o.ok());
		CHECK(std::string(o.status().message()).find(
			      "kfunc 'bpf_mem_cgroup_usage': the object declares 1 argument(s), the kernel's") !=
		      std::string::npos);
	}
	SECTION("scalar size of the return value") {
		absl::StatusOr<BpfObject> o = load_with_changed(
			{"bpf_mem_cgroup_usage", KfuncArg::scalar(4), {KfuncArg::ptr_to("mem_cgroup")}, 0});
		REQUIRE_FALSE(o.ok());
		CHECK(msg(o.status()) ==
		      "kfunc 'bpf_mem_cgroup_usage': the object declares a 8-byte scalar return value, "
		      "the kernel returns a 4-byte scalar");
	}
	SECTION("scalar size of an argument (weak kfuncs are checked too)") {
		absl::StatusOr<BpfObject> o = load_with_changed(
			{"bpf_proactive_reclaim", KfuncArg::scalar(8, true),
			 {KfuncArg::ptr_to("mem_cgroup"), KfuncArg::scalar(8), KfuncArg::scalar(8, true)}, 0});
		REQUIRE_FALSE(o.ok());
		CHECK(msg(o.status()) ==
		      "kfunc 'bpf_proactive_reclaim': argument 3: the object declares a 4-byte scalar, "
		      "the kernel takes a 8-byte scalar");
	}
	SECTION("pointer to a different struct") {
		absl::StatusOr<BpfObject> o = load_with_changed(
			{"bpf_put_mem_cgroup", KfuncArg::void_(), {KfuncArg::ptr_to("task_struct")}, KF_RELEASE});
		REQUIRE_FALSE(o.ok());
		CHECK(msg(o.status()) ==
		      "kfunc 'bpf_put_mem_cgroup': argument 1: the object declares a pointer to struct "
		      "mem_cgroup, the kernel takes a pointer to struct task_struct");
	}
	SECTION("pointer where the kernel has a scalar") {
		absl::StatusOr<BpfObject> o = load_with_changed(
			{"bpf_mem_cgroup_flush_stats", KfuncArg::void_(), {KfuncArg::scalar(8)}, 0});
		REQUIRE_FALSE(o.ok());
		CHECK(std::string(o.status().message()).find("argument 1: the object declares a pointer to struct "
							     "mem_cgroup, the kernel takes a 8-byte scalar") !=
		      std::string::npos);
	}
	SECTION("void result where the kernel returns a pointer") {
		absl::StatusOr<BpfObject> o = load_with_changed(
			{"bpf_put_mem_cgroup", KfuncArg::ptr_to("mem_cgroup"), {KfuncArg::ptr_to("mem_cgroup")}, 0});
		REQUIRE_FALSE(o.ok());
		CHECK(std::string(o.status().message()).find("declares a void return value") != std::string::npos);
	}
}

}  // namespace
}  // namespace umemcg::emu
