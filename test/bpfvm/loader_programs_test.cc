// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/loader_programs_test.cc: programs, SEC() parsing, subprogram
// linking and instruction relocations.
#include <catch2/catch.hpp>

#include "bpfvm/loader_sec_def.h"
#include "loader_test_util.h"

namespace umemcg::emu {
namespace {

using testing::prog_path;

constexpr u8 kLdImm64 = BPF_LD | BPF_IMM | BPF_DW;
constexpr u8 kCall = BPF_JMP | BPF_CALL;

BpfObject load(const std::string &name, const KfuncRegistry *reg = nullptr)
{
	LoadOptions o;
	o.kfuncs = reg;
	absl::StatusOr<BpfObject> obj = load_object_file(prog_path(name), o);
	INFO(obj.status().ToString());
	REQUIRE(obj.ok());
	return std::move(*obj);
}

TEST_CASE("parse_sec_name follows libbpf's section definitions", "[bpfvm][loader]")
{
	SecDef d = parse_sec_name("struct_ops/high_policy");
	CHECK(d.kind == ProgKind::kStructOps);
	CHECK(d.prog_type == BPF_PROG_TYPE_STRUCT_OPS);
	CHECK(d.target == "high_policy");
	CHECK_FALSE(d.sleepable);
	CHECK(parse_sec_name("struct_ops.s/x").sleepable);

	d = parse_sec_name("syscall");
	CHECK(d.kind == ProgKind::kSyscall);
	CHECK(d.prog_type == BPF_PROG_TYPE_SYSCALL);
	CHECK(d.sleepable);
	CHECK(parse_sec_name("syscall/x").kind == ProgKind::kUnknown);

	d = parse_sec_name("iter.s/cgroup");
	CHECK(d.kind == ProgKind::kIter);
	CHECK(d.prog_type == BPF_PROG_TYPE_TRACING);
	CHECK(d.expected_attach_type == BPF_TRACE_ITER);
	CHECK(d.sleepable);
	CHECK(d.target == "cgroup");
	CHECK_FALSE(parse_sec_name("iter/cgroup").sleepable);

	CHECK(parse_sec_name("fentry/down_read").expected_attach_type == BPF_TRACE_FENTRY);
	CHECK(parse_sec_name("fentry.s/x").sleepable);
	CHECK(parse_sec_name("fexit/up_read").expected_attach_type == BPF_TRACE_FEXIT);
	CHECK(parse_sec_name("fmod_ret/f").expected_attach_type == BPF_MODIFY_RETURN);
	d = parse_sec_name("tp_btf/sched_switch");
	CHECK(d.kind == ProgKind::kTpBtf);
	CHECK(d.expected_attach_type == BPF_TRACE_RAW_TP);
	CHECK(d.target == "sched_switch");
	CHECK(parse_sec_name("lsm.s/file_open").prog_type == BPF_PROG_TYPE_LSM);
	CHECK(parse_sec_name("fentryx/y").kind == ProgKind::kUnknown);
	CHECK(parse_sec_name("nonsense").prog_type == BPF_PROG_TYPE_UNSPEC);
}

TEST_CASE("programs are found per FUNC symbol with their SEC() attributes", "[bpfvm][loader]")
{
	BpfObject obj = load("memcg_ops");
	REQUIRE(obj.progs.size() == 9);
	struct Want {
		const char *name, *section;
		ProgKind kind;
		bpf_prog_type type;
		const char *target;
		bool sleepable;
	} want[] = {
		{"high_policy", "struct_ops/high_policy", ProgKind::kStructOps, BPF_PROG_TYPE_STRUCT_OPS, "high_policy", false},
		{"high_policy_linked", "struct_ops/high_policy", ProgKind::kStructOps, BPF_PROG_TYPE_STRUCT_OPS, "high_policy", false},
		{"charged", "struct_ops/charged", ProgKind::kStructOps, BPF_PROG_TYPE_STRUCT_OPS, "charged", false},
		{"reclaim", "syscall", ProgKind::kSyscall, BPF_PROG_TYPE_SYSCALL, "", true},
		{"dump_cgroup", "iter/cgroup", ProgKind::kIter, BPF_PROG_TYPE_TRACING, "cgroup", false},
		{"flush_cgroup", "iter.s/cgroup", ProgKind::kIter, BPF_PROG_TYPE_TRACING, "cgroup", true},
		{"enter_down_read", "fentry/down_read", ProgKind::kFentry, BPF_PROG_TYPE_TRACING, "down_read", false},
		{"exit_up_read", "fexit/up_read", ProgKind::kFexit, BPF_PROG_TYPE_TRACING, "up_read", false},
		{"over_high", "fentry.s/__mem_cgroup_handle_over_high", ProgKind::kFentry, BPF_PROG_TYPE_TRACING,
		 "__mem_cgroup_handle_over_high", true},
	};
	for (const Want &w : want) {
		const BpfProgram *p = obj.find_program(w.name);
		INFO(w.name);
		REQUIRE(p);
		CHECK(p->section == w.section);
		CHECK(p->kind == w.kind);
		CHECK(p->prog_type == w.type);
		CHECK(p->attach_target == w.target);
		CHECK(p->sleepable == w.sleepable);
		CHECK(p->btf_func_id != 0);
		CHECK(p->main_len == p->insns.size());  // no subprograms here
	}
	// Two programs in one section: the second starts at its symbol.
	CHECK(obj.find_program("high_policy")->sec_insn_off == 0);
	CHECK(obj.find_program("high_policy_linked")->sec_insn_off == 10);
	CHECK(obj.find_program("high_policy_linked")->insns.size() == 2);
	CHECK(obj.license == "GPL");
	CHECK(obj.name == "memcg_ops");
}

TEST_CASE("subprograms from .text are appended and calls linked", "[bpfvm][loader]")
{
	BpfObject obj = load("globals");
	const BpfProgram *a = obj.find_program("prog_a");
	REQUIRE(a);
	CHECK(a->main_len == 24);
	// Appended in the order the code first reaches them, like libbpf.
	REQUIRE(a->subprogs.size() == 3);
	CHECK(a->subprogs[0].name == "bump");
	CHECK(a->subprogs[0].start == 24);
	CHECK(a->subprogs[1].name == "loop_cb");
	CHECK(a->subprogs[1].start == 35);
	CHECK(a->subprogs[2].name == "sum_table");
	CHECK(a->subprogs[2].start == 47);
	CHECK(a->insns.size() == 55);

	// call bump at 2 and call sum_table at 13: imm = target - pc - 1.
	REQUIRE(a->insns[2].code == kCall);
	CHECK(a->insns[2].src_reg == BPF_PSEUDO_CALL);
	CHECK(a->insns[2].imm == 24 - 2 - 1);
	REQUIRE(a->insns[13].code == kCall);
	CHECK(a->insns[13].imm == 47 - 13 - 1);
	// A helper call is left alone (bpf_loop = 181).
	CHECK(a->insns[12].src_reg == 0);
	CHECK(a->insns[12].imm == 181);

	// The callback passed to bpf_loop: ld_imm64 BPF_PSEUDO_FUNC.
	REQUIRE(a->insns[9].code == kLdImm64);
	CHECK(a->insns[9].src_reg == BPF_PSEUDO_FUNC);
	CHECK(a->insns[9].imm == 35 - 9 - 1);
	CHECK(a->insns[10].imm == 0);

	// prog_b gets its own copy of bump only.
	const BpfProgram *b = obj.find_program("prog_b");
	REQUIRE(b);
	REQUIRE(b->subprogs.size() == 1);
	CHECK(b->subprogs[0].name == "bump");
	CHECK(b->subprogs[0].start == b->main_len);
	CHECK(b->insns[3].imm == static_cast<s32>(b->main_len) - 3 - 1);
	// The copies of bump are identical apart from their relocations.
	CHECK(b->insns.size() == b->main_len + 11);
}

TEST_CASE("relocation records point at maps, global data, kfuncs and callbacks", "[bpfvm][loader]")
{
	BpfObject g = load("globals");
	const BpfProgram *a = g.find_program("prog_a");
	REQUIRE(a);
	int data = g.map_index(".data"), rodata = g.map_index(".rodata"), bss = g.map_index(".bss"),
	    custom = g.map_index(".data.custom");
	REQUIRE(data >= 0);
	REQUIRE(rodata >= 0);
	REQUIRE(bss >= 0);
	REQUIRE(custom >= 0);
	struct Want {
		u32 insn;
		RelocKind kind;
		int map;
		u32 offset;
	} want[] = {
		{4, RelocKind::kMapValue, rodata, 0},   // limit
		{9, RelocKind::kSubprogAddr, 0, 0},     // loop_cb
		{17, RelocKind::kMapValue, custom, 0},  // custom_val
		{24, RelocKind::kMapValue, bss, 0},     // hits, in bump
		{29, RelocKind::kMapValue, data, 0},    // counter, in bump
		{41, RelocKind::kMapValue, bss, 8},     // scratch, in loop_cb
		{47, RelocKind::kMapValue, data, 8},    // big_table, in sum_table
	};
	REQUIRE(a->relocs.size() == std::size(want));
	for (size_t i = 0; i < std::size(want); i++) {
		const Reloc &r = a->relocs[i];
		INFO("reloc " << i);
		CHECK(r.insn_idx == want[i].insn);
		CHECK(r.kind == want[i].kind);
		const bpf_insn &in = a->insns[r.insn_idx];
		if (r.kind == RelocKind::kMapValue) {
			CHECK(r.map_idx == static_cast<u32>(want[i].map));
			CHECK(r.offset == want[i].offset);
			CHECK(in.src_reg == BPF_PSEUDO_MAP_VALUE);
			CHECK(in.imm == want[i].map);
			CHECK(a->insns[r.insn_idx + 1].imm == static_cast<s32>(want[i].offset));
		} else {
			CHECK(r.target_insn == 35);
		}
	}

	BpfObject m = load("maps");
	const BpfProgram *u = m.find_program("use_maps");
	REQUIRE(u);
	const char *order[] = {"arr", "pcpu_arr", "hash", "pcpu_hash", "lru", "rb"};
	REQUIRE(u->relocs.size() == std::size(order));
	for (size_t i = 0; i < std::size(order); i++) {
		const Reloc &r = u->relocs[i];
		CHECK(r.kind == RelocKind::kMapFd);
		CHECK(r.map_idx == static_cast<u32>(m.map_index(order[i])));
		CHECK(u->insns[r.insn_idx].code == kLdImm64);
		CHECK(u->insns[r.insn_idx].src_reg == BPF_PSEUDO_MAP_FD);
		CHECK(u->insns[r.insn_idx].imm == static_cast<s32>(r.map_idx));
	}

	BpfObject k = load("memcg_ops");
	const BpfProgram *rc = k.find_program("reclaim");
	REQUIRE(rc);
	REQUIRE(rc->relocs.size() == 6);
	CHECK(rc->relocs[0].kind == RelocKind::kKfuncCall);
	CHECK(rc->relocs[0].insn_idx == 1);
	CHECK(rc->relocs[0].extern_idx == static_cast<u32>(k.extern_index("bpf_get_mem_cgroup")));
	CHECK(rc->insns[1].src_reg == BPF_PSEUDO_KFUNC_CALL);
	CHECK(rc->insns[1].imm == static_cast<s32>(rc->relocs[0].extern_idx));
	CHECK(rc->relocs[1].kind == RelocKind::kKsymAddr);
	CHECK(rc->relocs[1].insn_idx == 6);
	CHECK(rc->insns[6].src_reg == BPF_PSEUDO_BTF_ID);
	CHECK(rc->relocs[1].extern_idx == static_cast<u32>(k.extern_index("bpf_proactive_reclaim")));
	CHECK(rc->relocs[5].extern_idx == static_cast<u32>(k.extern_index("bpf_put_mem_cgroup")));
}

TEST_CASE("license_is_gpl_compatible matches the kernel's list", "[bpfvm][loader]")
{
	CHECK(license_is_gpl_compatible("GPL"));
	CHECK(license_is_gpl_compatible("Dual BSD/GPL"));
	CHECK(license_is_gpl_compatible("GPL and additional rights"));
	CHECK_FALSE(license_is_gpl_compatible("BSD"));
	CHECK_FALSE(license_is_gpl_compatible("gpl"));
	CHECK_FALSE(license_is_gpl_compatible(""));
	CHECK(load("globals").license == "Dual BSD/GPL");
}

TEST_CASE("a missing file gives NotFound", "[bpfvm][loader]")
{
	absl::StatusOr<BpfObject> obj = load_object_file("/nonexistent/x.bpf.o");
	REQUIRE_FALSE(obj.ok());
	CHECK(obj.status().code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace umemcg::emu
