// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/opcodes.h: the eBPF opcode table as data, and the one function that decides whether an
// instruction is valid.
//
// Overview. The rows of bpfvm/opcodes.def describe every instruction variant of RFC 9669 (cpu
// v1-v4) plus callx. Each row becomes
//   - an id (enum bpf_opc_id, BPF_OPC_<name>): the interpreter's handler index and the key the
//     verifier switches on;
//   - a bpf_opcode_desc: opcode byte, selector (which field picks the variant, and its value),
//     ISA version, conformance groups, operand form, mnemonic.
// bpf_form_table[form] says which fields a form uses as operands (all others must be zero), its
// register data flow (read/write of dst, src, r0) and its control-flow kind; the verifier and the
// interpreter's checked mode read it instead of re-deriving the semantics from opcode bits.
// bpf_opcode_decode() is the only place that decides validity: the verifier, the interpreter's
// load step, the assembler (for its output) and the disassembler all call it.
//
// Mirrors: kernel/bpf/verifier.c (the opcode and reserved-field checks of do_check() and
//          check_subprogs()), Documentation/bpf/standardization/instruction-set.rst (Linux 6.19)
// Emulation: the kernel spreads validity over switch statements in the verifier, the interpreter
//   jump table and the JITs; here it is one table. Reserved-field errors use the kernel's
//   wording ("BPF_ALU uses reserved fields", ...) where one exists.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>
#include <string_view>

#include "bpfvm/insn.h"

namespace umemcg {

// ISA versions (clang -mcpu=v1..v4).
enum bpf_isa_cpu : u8 { BPF_CPU_V1 = 1, BPF_CPU_V2 = 2, BPF_CPU_V3 = 3, BPF_CPU_V4 = 4 };

namespace bpf_opc {
// RFC 9669 conformance groups (section 2.4), plus the suite's "callx".
enum group : u16 {
  G_BASE32 = 1u << 0,
  G_BASE64 = 1u << 1,
  G_ATOMIC32 = 1u << 2,
  G_ATOMIC64 = 1u << 3,
  G_DIVMUL32 = 1u << 4,
  G_DIVMUL64 = 1u << 5,
  G_PACKET = 1u << 6,
  G_CALLX = 1u << 7,
};

// Which field tells the variants of one opcode byte apart.
enum selector : u8 { SEL_NONE, SEL_OFF, SEL_IMM, SEL_SRC };

// Operand forms. Each names the operand fields and the data flow (see bpf_form_table).
enum form : u8 {
  F_ALU_K,           // dst op= imm                 (reads and writes dst)
  F_ALU_X,           // dst op= src
  F_MOV_K,           // dst = imm                   (writes dst only)
  F_MOV_X,           // dst = src, dst = (sN)src
  F_NEG,             // dst = -dst
  F_END,             // dst = bswap/to_le/to_be(dst), width in imm
  F_JA,              // pc += off
  F_GOTOL,           // pc += imm
  F_JCC_K,           // if dst cc imm: pc += off
  F_JCC_X,           // if dst cc src: pc += off
  F_CALL,            // helper call (imm = id) or local call (imm = pc-relative)
  F_CALL_KFUNC,      // kfunc call: imm = BTF id, off = BTF fd index (0 = vmlinux)
  F_CALLX,           // call the helper whose id is in dst
  F_EXIT,            // return r0 from the current frame
  F_LDDW,            // dst = 64-bit immediate (two slots)
  F_LD_ABS,          // legacy packet load, r0 = skb[imm]
  F_LD_IND,          // legacy packet load, r0 = skb[src + imm]
  F_LDX,             // dst = *(size *)(src + off)
  F_ST,              // *(size *)(dst + off) = imm
  F_STX,             // *(size *)(dst + off) = src
  F_ATOMIC,          // lock *(size *)(dst + off) op= src
  F_ATOMIC_FETCH,    // src = atomic_fetch_op((size *)(dst + off), src), xchg
  F_ATOMIC_CMPXCHG,  // r0 = atomic_cmpxchg((size *)(dst + off), r0, src)
  F_NR,
};

// Control-flow and memory kind of a form.
enum kind : u8 { K_ALU, K_JUMP, K_COND_JUMP, K_CALL, K_EXIT, K_LD_IMM64, K_LOAD, K_STORE,
                 K_ATOMIC, K_PACKET };

// Operand fields of a form.
enum field : u8 { FLD_DST = 1u << 0, FLD_SRC = 1u << 1, FLD_OFF = 1u << 2, FLD_IMM = 1u << 3 };

// Register data flow of a form (register roles, not register numbers).
enum flow : u8 {
  RD_DST = 1u << 0,
  WR_DST = 1u << 1,
  RD_SRC = 1u << 2,
  WR_SRC = 1u << 3,
  RD_R0 = 1u << 4,
  WR_R0 = 1u << 5,
  CLOBBER_CALLER_SAVED = 1u << 6,  // calls: r0 written, r1-r5 scratched
};
}  // namespace bpf_opc

enum bpf_opc_id : u16 {
#define BPF_OPCODE(name, code, sel, selval, cpu, groups, form, mnemonic, sym) BPF_OPC_##name,
#include "bpfvm/opcodes.def"
#undef BPF_OPCODE
  BPF_OPC_NR
};

struct bpf_opcode_desc {
  bpf_opc_id id;
  u8 code;              // the opcode byte
  bpf_opc::selector sel;
  s32 sel_value;        // value the selector field must hold for this row
  u8 cpu;               // bpf_isa_cpu that introduced the variant
  u16 groups;           // bpf_opc::group bits
  bpf_opc::form form;
  const char *mnemonic; // assembler mnemonic (bpf_conformance syntax)
  const char *sym;      // operator symbol as the kernel's disassembler prints it ("s/=", "s<")
  const char *name;     // row name, e.g. "ALU64_ADD_K"
};

struct bpf_form_desc {
  bpf_opc::kind kind;
  u8 fields;  // bpf_opc::field bits used as operands
  u8 flow;    // bpf_opc::flow bits
  u8 slots;   // 1, or 2 for ld_imm64
};

extern const std::array<bpf_opcode_desc, BPF_OPC_NR> bpf_opcode_table;
extern const std::array<bpf_form_desc, bpf_opc::F_NR> bpf_form_table;

// Rows of one opcode byte: bpf_opcode_table[first .. first + count). count == 0: invalid byte.
struct bpf_opcode_slot {
  u16 first;
  u8 count;
};
extern const std::array<bpf_opcode_slot, 256> bpf_opcode_index;

inline const bpf_form_desc &bpf_form_of(const bpf_opcode_desc &d) { return bpf_form_table[d.form]; }

// The operator symbol of an opcode byte's first row ("?" for an invalid byte): what the kernel's
// verifier messages print for an ALU operation (bpf_alu_string[], indexed by BPF_OP alone, so
// sdiv prints as "/=").
inline const char *bpf_opcode_sym(u8 code) {
  const bpf_opcode_slot s = bpf_opcode_index[code];
  return s.count ? bpf_opcode_table[s.first].sym : "?";
}

// Access width in bytes of a load/store/atomic row (0 for others).
int bpf_opcode_mem_bytes(const bpf_opcode_desc &d);

// Decides whether insns[idx] is a valid instruction of ISA version <= max_cpu and returns its row,
// or nullptr with *err (if non-null) set to the reason (without the index). Checks: known opcode
// byte, selector value, reserved (non-operand) fields zero, register numbers < MAX_BPF_REG, and
// for ld_imm64 that the second slot exists and is a zero pseudo instruction. Program-level rules
// (jump targets, call targets, last instruction) are bpf_check_prog_layout()'s.
const bpf_opcode_desc *bpf_opcode_decode(const bpf_insn *insns, size_t cnt, size_t idx,
                                         std::string *err, u8 max_cpu = BPF_CPU_V4);

// Program-level layout checks shared by the verifier and the interpreter's load step: every
// instruction decodes (bpf_opcode_decode), jump and local-call targets are inside the program
// and not in the middle of a ld_imm64, and the last instruction is an exit or a jump.
// Returns true, or false with *err = "<reason> at insn <idx>" style text and *bad_idx set.
// With descs, a successful check leaves each instruction's row there (nullptr for the second
// slot of a ld_imm64), so that callers need not decode again.
bool bpf_check_prog_layout(const bpf_insn *insns, size_t cnt, std::string *err, size_t *bad_idx,
                           u8 max_cpu = BPF_CPU_V4,
                           std::vector<const bpf_opcode_desc *> *descs = nullptr);

// Target index of a jump (K_JUMP/K_COND_JUMP) or local call row at idx.
inline s64 bpf_jump_target(const bpf_opcode_desc &d, const bpf_insn &insn, size_t idx) {
  s64 delta = (d.form == bpf_opc::F_GOTOL || d.form == bpf_opc::F_CALL) ? insn.imm : insn.off;
  return (s64)idx + 1 + delta;
}

// Rows whose mnemonic is exactly `mnemonic` (several when K and X share one), for assemblers.
// Writes up to `max` row pointers, returns the count found.
size_t bpf_opcode_by_mnemonic(std::string_view mnemonic, const bpf_opcode_desc **out, size_t max);

}  // namespace umemcg
