// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/opcodes_test.cc: the opcode table and the one validity decision.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "bpfvm/opcodes.h"

using namespace umemcg;

namespace {

const bpf_opcode_desc *decode1(bpf_insn insn, std::string *err = nullptr, u8 cpu = BPF_CPU_V4) {
  bpf_insn two[2] = {insn, {}};
  return bpf_opcode_decode(two, bpf_is_ldimm64(insn) ? 2 : 1, 0, err, cpu);
}

}  // namespace

TEST_CASE("opcode table: rows are consistent with their opcode byte", "[bpfvm][opcodes]") {
  std::set<std::string> names;
  for (size_t i = 0; i < bpf_opcode_table.size(); i++) {
    const bpf_opcode_desc &d = bpf_opcode_table[i];
    CHECK(d.id == i);
    CHECK(names.insert(d.name).second);
    const bpf_opcode_slot s = bpf_opcode_index[d.code];
    CHECK(i >= s.first);
    CHECK(i < (size_t)s.first + s.count);
    CHECK(d.cpu >= BPF_CPU_V1);
    CHECK(d.cpu <= BPF_CPU_V4);
    CHECK(d.groups != 0);
    if (s.count > 1) CHECK(d.sel != bpf_opc::SEL_NONE);
  }
}

TEST_CASE("opcode table: valid and invalid opcode bytes", "[bpfvm][opcodes]") {
  int valid = 0;
  for (int c = 0; c < 256; c++) valid += bpf_opcode_index[c].count > 0;
  // 26+26 ALU/ALU64 arithmetic bytes (neg K only), 3 END bytes, 25 JMP (ja, 22 jcc, call, callx,
  // exit), 23 JMP32 (gotol + 22 jcc), 1 lddw + 6 legacy packet, 7 LDX, 4 ST, 4 STX, 2 ATOMIC.
  CHECK(valid == 25 + 25 + 3 + 26 + 23 + 7 + 7 + 4 + 4 + 2);
  CHECK(bpf_opcode_index[0x07].count == 1);   // add64 imm
  CHECK(bpf_opcode_index[0x8d].count == 1);   // callx
  CHECK(bpf_opcode_index[0xe5].count == 0);   // may_goto (BPF_JCOND): not RFC 9669
  CHECK(bpf_opcode_index[0x99].count == 0);   // no 64-bit sign-extending load
  CHECK(bpf_opcode_index[0xdf].count == 0);   // ALU64 END with source bit: reserved
  CHECK(bpf_opcode_index[0x0e].count == 0);   // JMP32 JA X
  CHECK(bpf_opcode_index[0x38].count == 0);   // LD ABS DW
  CHECK(bpf_opcode_index[0x8c].count == 0);   // NEG X
  CHECK(bpf_opcode_index[0x9d].count == 0);   // EXIT X
  CHECK(bpf_opcode_index[0x00].count == 0);
}

TEST_CASE("opcode decode: selectors pick the variant", "[bpfvm][opcodes]") {
  std::string err;
  CHECK(decode1(bpf_raw_insn(0x3f, 1, 2, 0, 0))->id == BPF_OPC_ALU64_DIV_X);
  CHECK(decode1(bpf_raw_insn(0x3f, 1, 2, 1, 0))->id == BPF_OPC_ALU64_SDIV_X);
  CHECK(decode1(bpf_raw_insn(0x97, 1, 0, 1, 7))->id == BPF_OPC_ALU64_SMOD_K);
  CHECK(decode1(bpf_raw_insn(0x3f, 1, 2, 2, 0), &err) == nullptr);
  CHECK(err == "BPF_ALU uses reserved fields");
  CHECK(decode1(bpf_raw_insn(0xbf, 1, 2, 8, 0))->id == BPF_OPC_ALU64_MOVSX8_X);
  CHECK(decode1(bpf_raw_insn(0xbf, 1, 2, 32, 0))->id == BPF_OPC_ALU64_MOVSX32_X);
  CHECK(decode1(bpf_raw_insn(0xbc, 1, 2, 16, 0))->id == BPF_OPC_ALU_MOVSX16_X);
  CHECK(decode1(bpf_raw_insn(0xbc, 1, 2, 32, 0)) == nullptr);  // ALU movsx: 8/16 only
  CHECK(decode1(bpf_raw_insn(0xb7, 1, 0, 8, 0)) == nullptr);   // movsx has no K form
  CHECK(decode1(bpf_raw_insn(0xd7, 1, 0, 0, 32))->id == BPF_OPC_ALU64_BSWAP32);
  CHECK(decode1(bpf_raw_insn(0xdc, 1, 0, 0, 16))->id == BPF_OPC_ALU_TO_BE16);
  CHECK(decode1(bpf_raw_insn(0xd4, 1, 0, 0, 8), &err) == nullptr);
  CHECK(err == "BPF_END uses reserved fields");
  CHECK(decode1(bpf_raw_insn(0xdb, 1, 2, 0, BPF_ADD | BPF_FETCH))->id ==
        BPF_OPC_STX_ATOMIC64_FETCH_ADD);
  CHECK(decode1(bpf_raw_insn(0xc3, 1, 2, 0, BPF_CMPXCHG))->id == BPF_OPC_STX_ATOMIC32_CMPXCHG);
  CHECK(decode1(bpf_raw_insn(0xc3, 1, 2, 0, 0xe0), &err) == nullptr);  // xchg without FETCH
  CHECK(err == "BPF_ATOMIC uses invalid atomic opcode e0");
  CHECK(decode1(bpf_raw_insn(0x06, 0, 0, 0, 100000))->id == BPF_OPC_JMP32_JA);
  CHECK(decode1(bpf_raw_insn(0x85, 0, 1, 0, 3))->id == BPF_OPC_JMP_CALL_LOCAL);
  CHECK(decode1(bpf_raw_insn(0x85, 0, 2, 5, 77))->id == BPF_OPC_JMP_CALL_KFUNC);
  CHECK(decode1(bpf_raw_insn(0x85, 0, 3, 0, 1), &err) == nullptr);
  CHECK(err == "BPF_CALL uses reserved fields");
  CHECK(decode1(bpf_raw_insn(0x18, 1, BPF_PSEUDO_MAP_IDX_VALUE, 0, 1))->id ==
        BPF_OPC_LD_IMM64_MAP_IDX_VALUE);
  CHECK(decode1(bpf_raw_insn(0x18, 1, 7, 0, 1), &err) == nullptr);
}

TEST_CASE("opcode decode: reserved fields, registers, cpu version", "[bpfvm][opcodes]") {
  std::string err;
  CHECK(decode1(bpf_raw_insn(0x07, 1, 3, 0, 5), &err) == nullptr);  // K form with src_reg
  CHECK(err == "BPF_ALU uses reserved fields");
  CHECK(decode1(bpf_raw_insn(0x0f, 1, 3, 0, 5), &err) == nullptr);  // X form with imm
  CHECK(decode1(bpf_raw_insn(0x87, 1, 0, 0, 1), &err) == nullptr);  // neg with imm
  CHECK(err == "BPF_NEG uses reserved fields");
  CHECK(decode1(bpf_raw_insn(0x95, 1, 0, 0, 0), &err) == nullptr);
  CHECK(err == "BPF_EXIT uses reserved fields");
  CHECK(decode1(bpf_raw_insn(0x05, 0, 0, 1, 1), &err) == nullptr);
  CHECK(err == "BPF_JA uses reserved fields");
  CHECK(decode1(bpf_raw_insn(0x61, 1, 2, 4, 1), &err) == nullptr);
  CHECK(err == "BPF_LDX uses reserved fields");
  CHECK(decode1(bpf_raw_insn(0xb7, 11, 0, 0, 1), &err) == nullptr);
  CHECK(err == "R11 is invalid");
  CHECK(decode1(bpf_raw_insn(0xbf, 1, 12, 0, 0), &err) == nullptr);
  CHECK(err == "R12 is invalid");
  CHECK(decode1(bpf_raw_insn(0x00, 0, 0, 0, 0), &err) == nullptr);
  CHECK(err == "unknown opcode 00");
  CHECK(decode1(bpf_raw_insn(0x16, 1, 0, 2, 1), &err, BPF_CPU_V2) == nullptr);  // jeq32: v3
  CHECK(err == "opcode 16 needs cpu v3");
  CHECK(decode1(bpf_raw_insn(0x16, 1, 0, 2, 1), &err, BPF_CPU_V3) != nullptr);
  CHECK(decode1(bpf_raw_insn(0xad, 1, 2, 2, 0), &err, BPF_CPU_V1) == nullptr);  // jlt: v2
  CHECK(decode1(bpf_raw_insn(0x3f, 1, 2, 1, 0), &err, BPF_CPU_V3) == nullptr);  // sdiv: v4
  CHECK(decode1(bpf_raw_insn(0x3f, 1, 2, 0, 0), &err, BPF_CPU_V1) != nullptr);  // div: v1
}

TEST_CASE("opcode decode: ld_imm64 needs a zero second slot", "[bpfvm][opcodes]") {
  std::string err;
  bpf_insn p[2] = {bpf_raw_insn(0x18, 1, 0, 0, 1), bpf_raw_insn(0, 0, 0, 0, 2)};
  CHECK(bpf_opcode_decode(p, 2, 0, &err) != nullptr);
  CHECK(bpf_opcode_decode(p, 1, 0, &err) == nullptr);
  CHECK(err == "invalid BPF_LD_IMM insn");
  p[1].dst_reg = 1;
  CHECK(bpf_opcode_decode(p, 2, 0, &err) == nullptr);
  CHECK(err == "invalid bpf_ld_imm64 insn");
}

TEST_CASE("program layout: jumps, calls and the last instruction", "[bpfvm][opcodes]") {
  std::string err;
  size_t bad = 0;
  std::vector<bpf_insn> ok = {bpf_raw_insn(0xb7, 0, 0, 0, 1), bpf_raw_insn(0x05, 0, 0, 0, 0),
                              bpf_raw_insn(0x95, 0, 0, 0, 0)};
  CHECK(bpf_check_prog_layout(ok.data(), ok.size(), &err, &bad));
  std::vector<bpf_insn> out = {bpf_raw_insn(0x05, 0, 0, 5, 0), bpf_raw_insn(0x95, 0, 0, 0, 0)};
  CHECK_FALSE(bpf_check_prog_layout(out.data(), out.size(), &err, &bad));
  CHECK(err == "jump out of range from insn 0 to 6 at insn 0");
  std::vector<bpf_insn> mid = {bpf_raw_insn(0x05, 0, 0, 1, 0), bpf_raw_insn(0x18, 0, 0, 0, 1),
                               bpf_raw_insn(0, 0, 0, 0, 0), bpf_raw_insn(0x95, 0, 0, 0, 0)};
  CHECK_FALSE(bpf_check_prog_layout(mid.data(), mid.size(), &err, &bad));
  CHECK(err == "jump into the middle of ldimm64 insn 1 at insn 0");
  std::vector<bpf_insn> last = {bpf_raw_insn(0xb7, 0, 0, 0, 1)};
  CHECK_FALSE(bpf_check_prog_layout(last.data(), last.size(), &err, &bad));
  CHECK(err == "last insn is not an exit or jmp at insn 0");
  std::vector<bpf_insn> call = {bpf_raw_insn(0x85, 0, 1, 0, 7), bpf_raw_insn(0x95, 0, 0, 0, 0)};
  CHECK_FALSE(bpf_check_prog_layout(call.data(), call.size(), &err, &bad));
  CHECK(err == "call to invalid destination at insn 0");
  std::vector<bpf_insn> badop = {bpf_raw_insn(0xb7, 0, 0, 0, 1), bpf_raw_insn(0xff, 0, 0, 0, 0)};
  CHECK_FALSE(bpf_check_prog_layout(badop.data(), badop.size(), &err, &bad));
  CHECK(err == "unknown opcode ff at insn 1");
  CHECK(bad == 1);
  CHECK_FALSE(bpf_check_prog_layout(nullptr, 0, &err, &bad));
}

TEST_CASE("opcode table: mnemonic lookup", "[bpfvm][opcodes]") {
  const bpf_opcode_desc *rows[4];
  REQUIRE(bpf_opcode_by_mnemonic("add32", rows, 4) == 2);
  CHECK(rows[0]->id == BPF_OPC_ALU_ADD_K);
  CHECK(rows[1]->id == BPF_OPC_ALU_ADD_X);
  REQUIRE(bpf_opcode_by_mnemonic("lock fetch xor", rows, 4) == 1);
  CHECK(rows[0]->id == BPF_OPC_STX_ATOMIC64_FETCH_XOR);
  CHECK(bpf_opcode_by_mnemonic("bogus", rows, 4) == 0);
}
