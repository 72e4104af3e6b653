// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/opcodes.cc: the opcode table built from bpfvm/opcodes.def, and the validity decision.
//
// Mirrors: kernel/bpf/verifier.c (do_check() reserved-field checks, check_subprogs(),
//          check_ld_imm()) (Linux 6.19)
// Emulation: messages use the kernel verifier's wording where it has one; the instruction index
//   is added by the caller (bpf_check_prog_layout() adds " at insn N").
#include "bpfvm/opcodes.h"

#include <cstdio>
#include <cstring>

namespace umemcg {

using namespace bpf_opc;

namespace {
constexpr std::array<bpf_opcode_desc, BPF_OPC_NR> kOpcodeTable = {{
#define BPF_OPCODE(name, code, sel, selval, cpu, groups, form, mnemonic, sym) \
  {BPF_OPC_##name, (code), (sel), (s32)(selval), (cpu), (groups), (form), (mnemonic), (sym), #name},
#include "bpfvm/opcodes.def"
#undef BPF_OPCODE
}};

// kind, operand fields, data flow, slots.
constexpr std::array<bpf_form_desc, F_NR> kFormTable = {{
    /* F_ALU_K */ {K_ALU, FLD_DST | FLD_IMM, RD_DST | WR_DST, 1},
    /* F_ALU_X */ {K_ALU, FLD_DST | FLD_SRC, RD_DST | RD_SRC | WR_DST, 1},
    /* F_MOV_K */ {K_ALU, FLD_DST | FLD_IMM, WR_DST, 1},
    /* F_MOV_X */ {K_ALU, FLD_DST | FLD_SRC, RD_SRC | WR_DST, 1},
    /* F_NEG */ {K_ALU, FLD_DST, RD_DST | WR_DST, 1},
    /* F_END */ {K_ALU, FLD_DST, RD_DST | WR_DST, 1},
    /* F_JA */ {K_JUMP, FLD_OFF, 0, 1},
    /* F_GOTOL */ {K_JUMP, FLD_IMM, 0, 1},
    /* F_JCC_K */ {K_COND_JUMP, FLD_DST | FLD_OFF | FLD_IMM, RD_DST, 1},
    /* F_JCC_X */ {K_COND_JUMP, FLD_DST | FLD_SRC | FLD_OFF, RD_DST | RD_SRC, 1},
    /* F_CALL */ {K_CALL, FLD_IMM, WR_R0 | CLOBBER_CALLER_SAVED, 1},
    /* F_CALL_KFUNC */ {K_CALL, FLD_IMM | FLD_OFF, WR_R0 | CLOBBER_CALLER_SAVED, 1},
    /* F_CALLX */ {K_CALL, FLD_DST, RD_DST | WR_R0 | CLOBBER_CALLER_SAVED, 1},
    /* F_EXIT */ {K_EXIT, 0, RD_R0, 1},
    /* F_LDDW */ {K_LD_IMM64, FLD_DST | FLD_IMM, WR_DST, 2},
    /* F_LD_ABS */ {K_PACKET, FLD_IMM, WR_R0 | CLOBBER_CALLER_SAVED, 1},
    /* F_LD_IND */ {K_PACKET, FLD_SRC | FLD_IMM, RD_SRC | WR_R0 | CLOBBER_CALLER_SAVED, 1},
    /* F_LDX */ {K_LOAD, FLD_DST | FLD_SRC | FLD_OFF, RD_SRC | WR_DST, 1},
    /* F_ST */ {K_STORE, FLD_DST | FLD_OFF | FLD_IMM, RD_DST, 1},
    /* F_STX */ {K_STORE, FLD_DST | FLD_SRC | FLD_OFF, RD_DST | RD_SRC, 1},
    /* F_ATOMIC */ {K_ATOMIC, FLD_DST | FLD_SRC | FLD_OFF, RD_DST | RD_SRC, 1},
    /* F_ATOMIC_FETCH */ {K_ATOMIC, FLD_DST | FLD_SRC | FLD_OFF, RD_DST | RD_SRC | WR_SRC, 1},
    /* F_ATOMIC_CMPXCHG */ {K_ATOMIC, FLD_DST | FLD_SRC | FLD_OFF, RD_DST | RD_SRC | RD_R0 | WR_R0, 1},
}};
}  // namespace

const std::array<bpf_opcode_desc, BPF_OPC_NR> bpf_opcode_table = kOpcodeTable;
const std::array<bpf_form_desc, F_NR> bpf_form_table = kFormTable;

namespace {

constexpr u8 kRowCode[BPF_OPC_NR] = {
#define BPF_OPCODE(name, code, sel, selval, cpu, groups, form, mnemonic, sym) (code),
#include "bpfvm/opcodes.def"
#undef BPF_OPCODE
};

// Rows of one opcode byte are adjacent in opcodes.def; the index maps a byte to its run.
constexpr std::array<bpf_opcode_slot, 256> build_index() {
  std::array<bpf_opcode_slot, 256> idx{};
  for (size_t i = 0; i < BPF_OPC_NR;) {
    size_t j = i;
    while (j < BPF_OPC_NR && kRowCode[j] == kRowCode[i]) j++;
    idx[kRowCode[i]] = {(u16)i, (u8)(j - i)};
    i = j;
  }
  return idx;
}

constexpr bool rows_of_a_byte_are_adjacent() {
  size_t runs[256] = {};
  for (size_t i = 0; i < BPF_OPC_NR; i++)
    if (i == 0 || kRowCode[i] != kRowCode[i - 1]) runs[kRowCode[i]]++;
  for (size_t c = 0; c < 256; c++)
    if (runs[c] > 1) return false;
  return true;
}
static_assert(rows_of_a_byte_are_adjacent(), "opcodes.def: keep the rows of one opcode byte together");

// The kernel verifier's name for the class of a reserved-field error.
const char *reserved_what(const bpf_opcode_desc &d) {
  switch (d.form) {
  case F_NEG: return "BPF_NEG";
  case F_END: return "BPF_END";
  case F_JA: case F_GOTOL: return "BPF_JA";
  case F_CALL: case F_CALL_KFUNC: case F_CALLX: return "BPF_CALL";
  case F_EXIT: return "BPF_EXIT";
  case F_LDX: return "BPF_LDX";
  case F_ST: return "BPF_ST";
  case F_STX: case F_ATOMIC: case F_ATOMIC_FETCH: case F_ATOMIC_CMPXCHG: return "BPF_STX";
  case F_LDDW: case F_LD_ABS: case F_LD_IND: return "BPF_LD";
  default: break;
  }
  u8 cls = BPF_CLASS(d.code);
  if (cls == BPF_ALU || cls == BPF_ALU64) return "BPF_ALU";
  return "BPF_JMP/JMP32";
}

void set_err(std::string *err, const char *fmt, int a = 0, int b = 0) {
  if (!err) return;
  char buf[160];
  std::snprintf(buf, sizeof(buf), fmt, a, b);
  *err = buf;
}

s32 field_value(const bpf_insn &insn, selector sel) {
  switch (sel) {
  case SEL_OFF: return insn.off;
  case SEL_IMM: return insn.imm;
  case SEL_SRC: return insn.src_reg;
  case SEL_NONE: break;
  }
  return 0;
}

// The decision of bpf_opcode_decode() as masks over the instruction's 64-bit little-endian word
// (byte 0 code, byte 1 dst | src << 4, bytes 2-3 off, bytes 4-7 imm), one entry per row: the
// row matches when (word & sel_mask) == sel_bits, and a matching row is valid (no reserved
// field set) when (word & zero_mask) == 0. Precomputed from the rows and forms at compile
// time, so the fast path below makes the same choice as the field-by-field code with a few
// comparisons per instruction.
struct bpf_opcode_match {
  u64 sel_mask;
  u64 sel_bits;
  u64 zero_mask;
  bool src_is_reg;  // src_reg is an operand register (must be < MAX_BPF_REG)
  u8 cpu;           // the row's cpu version
  bool one_slot;    // not ld_imm64
  u8 branch;        // kBranchNone, kBranchJump (jump, conditional or not), kBranchCall (local)
  bool ends;        // may end a program (exit, unconditional jump)
};

enum : u8 { kBranchNone, kBranchJump, kBranchCall };

constexpr u64 kDstBits = 0x0full << 8;
constexpr u64 kSrcBits = 0xf0ull << 8;
constexpr u64 kOffBits = 0xffffull << 16;
constexpr u64 kImmBits = 0xffffffffull << 32;

constexpr std::array<bpf_opcode_match, BPF_OPC_NR> build_match() {
  std::array<bpf_opcode_match, BPF_OPC_NR> m{};
  for (size_t i = 0; i < BPF_OPC_NR; i++) {
    const bpf_opcode_desc &d = kOpcodeTable[i];
    const bpf_form_desc &f = kFormTable[d.form];
    const u8 fields = f.fields;
    const selector sel = d.sel;
    const u64 v = (u64)(u32)d.sel_value;
    u64 sel_mask = 0, sel_bits = 0;
    switch (sel) {
      case SEL_OFF: sel_mask = kOffBits; sel_bits = (v & 0xffff) << 16; break;
      case SEL_IMM: sel_mask = kImmBits; sel_bits = v << 32; break;
      case SEL_SRC: sel_mask = kSrcBits; sel_bits = (v & 0xf) << 12; break;
      case SEL_NONE: break;
    }
    u64 used = sel_mask;
    if (fields & FLD_DST) used |= kDstBits;
    if (fields & FLD_SRC) used |= kSrcBits;
    if (fields & FLD_OFF) used |= kOffBits;
    if (fields & FLD_IMM) used |= kImmBits;
    const u8 branch = (f.kind == K_JUMP || f.kind == K_COND_JUMP) ? kBranchJump
                      : d.id == BPF_OPC_JMP_CALL_LOCAL                ? kBranchCall
                                                                      : kBranchNone;
    m[i] = {sel_mask, sel_bits, (kDstBits | kSrcBits | kOffBits | kImmBits) & ~used,
            (fields & FLD_SRC) != 0, d.cpu, f.slots == 1, branch,
            f.kind == K_EXIT || f.kind == K_JUMP};
  }
  return m;
}
constexpr std::array<bpf_opcode_match, BPF_OPC_NR> kMatch = build_match();

// The row of a valid one-slot instruction, or nullptr when the full decode must decide (an
// invalid instruction, for its error message, or ld_imm64, which needs its second slot).
inline const bpf_opcode_desc *decode_fast(const bpf_insn &insn, const bpf_opcode_slot slot,
                                          u8 max_cpu) {
  u64 w;
  std::memcpy(&w, &insn, sizeof(w));
  // Raw pointers rather than std::array::operator[]: in sanitizer builds each operator[] is an
  // out-of-line call with its own bounds check, and this runs once per instruction.
  const bpf_opcode_match *const match = kMatch.data();
  const size_t end = (size_t)slot.first + slot.count;
  for (size_t i = slot.first; i < end; i++) {
    const bpf_opcode_match &m = match[i];
    if ((w & m.sel_mask) != m.sel_bits) continue;
    // The first row whose selector matches is the row (as in the full decode).
    const bool bad_src = m.src_is_reg & (insn.src_reg >= MAX_BPF_REG);
    if ((w & m.zero_mask) | bad_src | (insn.dst_reg >= MAX_BPF_REG) | (m.cpu > max_cpu) |
        !m.one_slot)
      return nullptr;
    return bpf_opcode_table.data() + i;
  }
  return nullptr;
}

}  // namespace

const std::array<bpf_opcode_slot, 256> bpf_opcode_index = build_index();

int bpf_opcode_mem_bytes(const bpf_opcode_desc &d) {
  switch (bpf_form_of(d).kind) {
  case K_LOAD: case K_STORE: case K_ATOMIC: case K_PACKET:
    return bpf_size_to_bytes(BPF_SIZE(d.code));
  default:
    return 0;
  }
}

const bpf_opcode_desc *bpf_opcode_decode(const bpf_insn *insns, size_t cnt, size_t idx,
                                         std::string *err, u8 max_cpu) {
  if (idx >= cnt) {
    set_err(err, "no instruction at index %d", (int)idx);
    return nullptr;
  }
  const bpf_insn &insn = insns[idx];
  const bpf_opcode_slot slot = bpf_opcode_index[insn.code];
  if (const bpf_opcode_desc *fast = decode_fast(insn, slot, max_cpu)) return fast;
  if (slot.count == 0) {
    set_err(err, "unknown opcode %02x", insn.code);
    return nullptr;
  }
  const bpf_opcode_desc *d = nullptr;
  for (size_t i = slot.first; i < (size_t)slot.first + slot.count; i++) {
    const bpf_opcode_desc &row = bpf_opcode_table[i];
    if (row.sel == SEL_NONE || field_value(insn, row.sel) == row.sel_value) {
      d = &row;
      break;
    }
  }
  if (!d) {
    const bpf_opcode_desc &row0 = bpf_opcode_table[slot.first];
    if (row0.form == F_ATOMIC || row0.form == F_ATOMIC_FETCH || row0.form == F_ATOMIC_CMPXCHG)
      set_err(err, "BPF_ATOMIC uses invalid atomic opcode %02x", insn.imm & 0xff);
    else if (row0.form == F_LDDW)
      set_err(err, "unrecognized bpf_ld_imm64 insn (src_reg %d)", insn.src_reg);
    else if (err)
      *err = std::string(reserved_what(row0)) + " uses reserved fields";
    return nullptr;
  }
  const bpf_form_desc &f = bpf_form_of(*d);
  const bool dst_used = (f.fields & FLD_DST) != 0;
  const bool src_used = (f.fields & FLD_SRC) != 0 || d->sel == SEL_SRC;
  const bool off_used = (f.fields & FLD_OFF) != 0 || d->sel == SEL_OFF;
  const bool imm_used = (f.fields & FLD_IMM) != 0 || d->sel == SEL_IMM;
  if ((!dst_used && insn.dst_reg) || (!src_used && insn.src_reg) || (!off_used && insn.off) ||
      (!imm_used && insn.imm)) {
    if (err) *err = std::string(reserved_what(*d)) + " uses reserved fields";
    return nullptr;
  }
  if (insn.dst_reg >= MAX_BPF_REG) {
    set_err(err, "R%d is invalid", insn.dst_reg);
    return nullptr;
  }
  if ((f.fields & FLD_SRC) && insn.src_reg >= MAX_BPF_REG) {
    set_err(err, "R%d is invalid", insn.src_reg);
    return nullptr;
  }
  if (d->cpu > max_cpu) {
    set_err(err, "opcode %02x needs cpu v%d", insn.code, d->cpu);
    return nullptr;
  }
  if (f.slots == 2) {
    if (idx + 1 >= cnt) {
      set_err(err, "invalid BPF_LD_IMM insn");
      return nullptr;
    }
    const bpf_insn &hi = insns[idx + 1];
    if (hi.code || hi.dst_reg || hi.src_reg || hi.off) {
      set_err(err, "invalid bpf_ld_imm64 insn");
      return nullptr;
    }
  }
  return d;
}

bool bpf_check_prog_layout(const bpf_insn *insns, size_t cnt, std::string *err, size_t *bad_idx,
                           u8 max_cpu, std::vector<const bpf_opcode_desc *> *descs) {
  auto fail = [&](size_t i, const std::string &why) {
    if (err) *err = why + " at insn " + std::to_string(i);
    if (bad_idx) *bad_idx = i;
    return false;
  };
  if (cnt == 0) return fail(0, "empty program");
  if (cnt > BPF_MAX_PROG_INSNS) return fail(0, "program too large");
  std::string why;
  // Pass 1: decode; the second slots of ld_imm64 keep a nullptr row. Instructions the fast path
  // accepts skip the full decode, which runs for refusals (its message) and ld_imm64.
  std::vector<const bpf_opcode_desc *> local;
  std::vector<const bpf_opcode_desc *> &rows = descs ? *descs : local;
  rows.assign(cnt, nullptr);
  const bpf_opcode_desc **const out = rows.data();
  const bpf_opcode_slot *const index = bpf_opcode_index.data();
  const bpf_opcode_match *const match = kMatch.data();
  const bpf_opcode_desc *last = nullptr;
  size_t last_idx = 0;
  for (size_t i = 0; i < cnt; i++) {
    const bpf_opcode_desc *d = decode_fast(insns[i], index[insns[i].code], max_cpu);
    if (!d) {
      d = bpf_opcode_decode(insns, cnt, i, &why, max_cpu);
      if (!d) return fail(i, why);
    }
    out[i] = d;
    last = d;
    last_idx = i;
    if (!match[d->id].one_slot) i++;
  }
  // Pass 2: control-flow targets.
  for (size_t i = 0; i < cnt; i++) {
    const bpf_opcode_desc *d = out[i];
    if (!d) continue;
    const u8 branch = match[d->id].branch;
    if (branch == kBranchNone) continue;
    s64 t = bpf_jump_target(*d, insns[i], i);
    if (t < 0 || t >= (s64)cnt) {
      if (branch == kBranchCall) return fail(i, "call to invalid destination");
      return fail(i, "jump out of range from insn " + std::to_string(i) + " to " + std::to_string(t));
    }
    if (!out[t]) return fail(i, "jump into the middle of ldimm64 insn " + std::to_string(t - 1));
  }
  if (!match[last->id].ends) return fail(last_idx, "last insn is not an exit or jmp");
  return true;
}

size_t bpf_opcode_by_mnemonic(std::string_view mnemonic, const bpf_opcode_desc **out, size_t max) {
  size_t n = 0;
  for (const bpf_opcode_desc &d : bpf_opcode_table) {
    if (mnemonic == d.mnemonic) {
      if (n < max) out[n] = &d;
      n++;
    }
  }
  return n;
}

}  // namespace umemcg
