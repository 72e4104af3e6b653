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

TEST_CASE("opcode decode: agrees with a field-by-field reading of the rows on random words",
          "[bpfvm][opcodes]") {
  // The decoder's mask fast path must pick exactly the row (or refusal) that the rows' text
  // says: first row of the byte whose selector field holds its value, no reserved field set,
  // operand registers below r11, a cpu version the caller allows.
  auto reference = [](const bpf_insn &in, u8 cpu) -> const bpf_opcode_desc * {
    const bpf_opcode_slot s = bpf_opcode_index[in.code];
    for (size_t i = s.first; i < (size_t)s.first + s.count; i++) {
      const bpf_opcode_desc &d = bpf_opcode_table[i];
      s32 sel = 0;
      switch (d.sel) {
        case bpf_opc::SEL_OFF: sel = in.off; break;
        case bpf_opc::SEL_IMM: sel = in.imm; break;
        case bpf_opc::SEL_SRC: sel = in.src_reg; break;
        case bpf_opc::SEL_NONE: break;
      }
      if (d.sel != bpf_opc::SEL_NONE && sel != d.sel_value) continue;
      const u8 f = bpf_form_of(d).fields;
      if (!(f & bpf_opc::FLD_DST) && in.dst_reg) return nullptr;
      if (!(f & bpf_opc::FLD_SRC) && d.sel != bpf_opc::SEL_SRC && in.src_reg) return nullptr;
      if (!(f & bpf_opc::FLD_OFF) && d.sel != bpf_opc::SEL_OFF && in.off) return nullptr;
      if (!(f & bpf_opc::FLD_IMM) && d.sel != bpf_opc::SEL_IMM && in.imm) return nullptr;
      if (in.dst_reg >= MAX_BPF_REG) return nullptr;
      if ((f & bpf_opc::FLD_SRC) && in.src_reg >= MAX_BPF_REG) return nullptr;
      if (d.cpu > cpu) return nullptr;
      return &d;
    }
    return nullptr;
  };
  u64 x = 0x9e3779b97f4a7c15ull;
  auto next = [&x] {  // splitmix64
    u64 z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  std::vector<u8> codes;
  for (int c = 0; c < 256; c++)
    if (bpf_opcode_index[c].count) codes.push_back((u8)c);
  size_t accepted = 0, refused = 0;
  for (int n = 0; n < 200000; n++) {
    const u64 r = next(), k = next();
    // Mostly valid opcode bytes; each field zero, small, a selector value or random.
    const u8 code = (k & 7) ? codes[(k >> 3) % codes.size()] : (u8)(k >> 8);
    auto pick = [&](int shift, s32 random, s32 small) -> s32 {
      switch ((k >> shift) & 3) {
        case 0: return 0;
        case 1: return small;
        case 2: return random;
        default: return 1;
      }
    };
    const u8 dst = (u8)pick(16, (s32)(r & 15), (s32)(r % 11));
    const u8 src = (u8)pick(18, (s32)((r >> 4) & 15), (s32)((r >> 4) % 11));
    const s16 off = (s16)pick(20, (s32)(s16)(r >> 8), (s32)((r >> 8) % 17 == 16 ? 8 : (r >> 8) % 17));
    const s32 imm = pick(22, (s32)(r >> 32), (s32)((r >> 32) % 64));
    const bpf_insn in = bpf_raw_insn(code, dst, src, off, imm);
    const u8 cpu = (u8)(BPF_CPU_V1 + ((k >> 24) & 3));
    std::string err;
    const bpf_opcode_desc *got = decode1(in, &err, cpu);
    const bpf_opcode_desc *want = reference(in, cpu);
    if (got != want) {
      CAPTURE(n, (int)code, (int)dst, (int)src, off, imm, (int)cpu, err);
      FAIL("decode and the reference disagree");
    }
    (got ? accepted : refused)++;
  }
  // Both outcomes are well represented.
  CHECK(accepted > 20000);
  CHECK(refused > 20000);
}
