// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/loader_object_dump_test.cc: the object summary printer.
#include <catch2/catch.hpp>

#include "bpfvm/object_dump.h"
#include "loader_test_util.h"

namespace umemcg::emu {
namespace {

using testing::prog_path;

TEST_CASE("dump_object lists programs, maps, struct_ops layout and externs", "[bpfvm][loader]")
{
	KfuncRegistry reg;
	testing::add_memcg_kfuncs(reg);
	LoadOptions opts;
	opts.kfuncs = &reg;
	absl::StatusOr<BpfObject> obj = load_object_file(prog_path("memcg_ops"), opts);
	REQUIRE(obj.ok());
	std::string d = dump_object(*obj);
	INFO(d);
	CHECK(d.find("object memcg_ops: license \"GPL\" (GPL-compatible)") != std::string::npos);
	CHECK(d.find("reclaim SEC(\"syscall\") kind=syscall prog_type=syscall(31)") != std::string::npos);
	CHECK(d.find("flush_cgroup SEC(\"iter.s/cgroup\") kind=iter prog_type=tracing(26) target=cgroup sleepable")
	      != std::string::npos);
	CHECK(d.find("implements bpf_memcg_ops.charged (member 1)") != std::string::npos);
	CHECK(d.find("struct bpf_memcg_ops (40 bytes)") != std::string::npos);
	CHECK(d.find("+0    high_policy -> high_policy\n") != std::string::npos);
	CHECK(d.find("+0    high_policy -> high_policy_linked\n") != std::string::npos);
	CHECK(d.find("+8    charged -> NULL\n") != std::string::npos);
	CHECK(d.find("+16   flags (4 bytes)") != std::string::npos);
	CHECK(d.find("reloc insn 1: kfunc_call bpf_get_mem_cgroup") != std::string::npos);
	CHECK(d.find("bpf_not_in_any_kernel kfunc weak (unresolved)") != std::string::npos);
	CHECK(d.find("bpf_put_mem_cgroup kfunc -> void bpf_put_mem_cgroup(struct mem_cgroup *) [KF_RELEASE]")
	      != std::string::npos);
}

TEST_CASE("dump_object shows subprograms, global data and map-in-map", "[bpfvm][loader]")
{
	absl::StatusOr<BpfObject> g = load_object_file(prog_path("globals"));
	REQUIRE(g.ok());
	std::string d = dump_object(*g);
	INFO(d);
	CHECK(d.find("subprog bump at insn 24 (11 insns)") != std::string::npos);
	CHECK(d.find("reloc insn 9: subprog_addr insn 35") != std::string::npos);
	CHECK(d.find(".rodata (rodata) type=array(2) key=4 value=10 max_entries=1 flags=0x480 frozen")
	      != std::string::npos);

	absl::StatusOr<BpfObject> m = load_object_file(prog_path("maps"));
	REQUIRE(m.ok());
	d = dump_object(*m);
	INFO(d);
	CHECK(d.find("outer (.maps) type=array_of_maps(12) key=4 value=4 max_entries=3") != std::string::npos);
	CHECK(d.find("inner: type=array(2) key=4 value=4 max_entries=2") != std::string::npos);
	CHECK(d.find("lru (.maps) type=lru_hash(9) key=4 value=8 max_entries=256 flags=0x0 pinned-by-name")
	      != std::string::npos);
}

}  // namespace
}  // namespace umemcg::emu
