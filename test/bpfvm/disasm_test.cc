// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/disasm_test.cc: the verifier-log style disassembler.
#include <catch2/catch.hpp>

#include <vector>

#include "bpfvm/asm.h"
#include "bpfvm/disasm.h"
#include "bpfvm/opcodes.h"

using namespace umemcg;
using namespace umemcg::emu;

namespace {

std::string dis(const char *src, size_t idx = 0, BpfDisasmOpts opts = {}) {
  auto p = bpf_assemble(src);
  REQUIRE(p.ok());
  return bpf_disasm_insn(*p, idx, opts);
}

}  // namespace

TEST_CASE("disasm: ALU in the verifier's syntax", "[bpfvm][disasm]") {
  CHECK(dis("mov %r1, 5") == "r1 = 5");
  CHECK(dis("mov32 %r1, -1") == "w1 = -1");
  CHECK(dis("add32 %r1, %r2") == "w1 += w2");
  CHECK(dis("add %r1, %r2") == "r1 += r2");
  CHECK(dis("sub %r3, 7") == "r3 -= 7");
  CHECK(dis("sdiv %r1, %r2") == "r1 s/= r2");
  CHECK(dis("smod32 %r1, 3") == "w1 s%= 3");
  CHECK(dis("div %r1, 3") == "r1 /= 3");
  CHECK(dis("arsh %r1, 3") == "r1 s>>= 3");
  CHECK(dis("lsh32 %r1, %r4") == "w1 <<= w4");
  CHECK(dis("neg %r1") == "r1 = -r1");
  CHECK(dis("neg32 %r1") == "w1 = -w1");
  CHECK(dis("mov %r1, %r2") == "r1 = r2");
  CHECK(dis("movsx864 %r1, %r2") == "r1 = (s8)r2");
  CHECK(dis("movsx3264 %r1, %r2") == "r1 = (s32)r2");
  CHECK(dis("movsx1632 %r1, %r2") == "w1 = (s16)w2");
  CHECK(dis("be16 %r1") == "r1 = be16 r1");
  CHECK(dis("le64 %r1") == "r1 = le64 r1");
  CHECK(dis("bswap32 %r1") == "r1 = bswap32 r1");
  CHECK(dis("swap64 %r1") == "r1 = bswap64 r1");
}

TEST_CASE("disasm: memory, atomics, ld_imm64", "[bpfvm][disasm]") {
  CHECK(dis("ldxw %r0, [%r1+4]") == "r0 = *(u32 *)(r1 +4)");
  CHECK(dis("ldxdw %r0, [%r10-8]") == "r0 = *(u64 *)(r10 -8)");
  CHECK(dis("ldxsh %r0, [%r1-2]") == "r0 = *(s16 *)(r1 -2)");
  CHECK(dis("ldxsb %r0, [%r1]") == "r0 = *(s8 *)(r1 +0)");
  CHECK(dis("stxdw [%r10-8], %r1") == "*(u64 *)(r10 -8) = r1");
  CHECK(dis("stb [%r10-1], 5") == "*(u8 *)(r10 -1) = 5");
  CHECK(dis("lock add [%r10-8], %r1") == "lock *(u64 *)(r10 -8) += r1");
  CHECK(dis("lock or32 [%r2+4], %r1") == "lock *(u32 *)(r2 +4) |= r1");
  CHECK(dis("lock fetch add [%r10-8], %r1") == "r1 = atomic64_fetch_add((u64 *)(r10 -8), r1)");
  CHECK(dis("lock fetch xor32 [%r2+0], %r3") == "r3 = atomic_fetch_xor((u32 *)(r2 +0), r3)");
  CHECK(dis("lock xchg [%r2+0], %r3") == "r3 = atomic64_xchg((u64 *)(r2 +0), r3)");
  CHECK(dis("lock cmpxchg32 [%r2+0], %r3") == "r0 = atomic_cmpxchg((u32 *)(r2 +0), r0, r3)");
  CHECK(dis("lddw %r1, 0x1122334455667788") == "r1 = 0x1122334455667788");
  CHECK(dis("lddw %r1, map_by_fd(3)") == "r1 = map[fd:3]");
  CHECK(dis("lddw %r1, map_val(map_by_idx(0)) + 8") == "r1 = map[idx:0][0]+8");
  CHECK(dis("ldabsh 12") == "r0 = *(u16 *)skb[12]");
}

TEST_CASE("disasm: jumps and calls", "[bpfvm][disasm]") {
  CHECK(dis("jgt %r1, 5, +2") == "if r1 > 0x5 goto pc+2");
  CHECK(dis("jslt32 %r1, %r2, -3") == "if w1 s< w2 goto pc-3");
  CHECK(dis("jset %r1, -1, +0") == "if r1 & 0xffffffff goto pc+0");
  CHECK(dis("ja +2") == "goto pc+2");
  CHECK(dis("ja32 -100") == "gotol pc-100");
  CHECK(dis("call 1") == "call bpf_map_lookup_elem#1");
  CHECK(dis("call 100000") == "call unknown#100000");
  CHECK(dis("call local +5") == "call pc+5");
  CHECK(dis("call runtime 1234") == "call kfunc#1234");
  CHECK(dis("callx %r2") == "callx r2");
  CHECK(dis("exit") == "exit");
  BpfDisasmOpts o;
  o.show_code = true;
  CHECK(dis("mov %r0, 1", 0, o) == "(b7) r0 = 1");
  o.kfunc_name = [](s32 id, s16, void *) -> const char * { return id == 7 ? "bpf_cgroup_from_id" : nullptr; };
  CHECK(dis("call runtime 7", 0, o) == "(85) call bpf_cgroup_from_id#7");
}

TEST_CASE("disasm: invalid instructions and whole programs", "[bpfvm][disasm]") {
  std::vector<bpf_insn> p = {bpf_raw_insn(0xff, 0, 0, 0, 0)};
  CHECK(bpf_disasm_insn(p, 0) == "invalid: unknown opcode ff");
  auto prog = bpf_assemble("lddw %r0, 1\nadd %r0, 1\nexit");
  REQUIRE(prog.ok());
  CHECK(bpf_disasm_prog(*prog) == "0: r0 = 0x1\n2: r0 += 1\n3: exit\n");
}

TEST_CASE("disasm: every opcode-table row prints", "[bpfvm][disasm]") {
  for (const bpf_opcode_desc &d : bpf_opcode_table) {
    CAPTURE(d.name);
    bpf_insn in[2] = {};
    in[0].code = d.code;
    if (d.sel == bpf_opc::SEL_OFF) in[0].off = (s16)d.sel_value;
    if (d.sel == bpf_opc::SEL_IMM) in[0].imm = d.sel_value;
    if (d.sel == bpf_opc::SEL_SRC) in[0].src_reg = (u8)d.sel_value;
    std::string s = bpf_disasm_insn(in, 0);
    CHECK(s.rfind("invalid", 0) != 0);
    CHECK_FALSE(s.empty());
  }
}
