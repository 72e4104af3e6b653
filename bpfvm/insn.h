// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/insn.h: the eBPF instruction encoding (RFC 9669, cpu v1-v4) and its field accessors.
//
// The encoding is the uapi `struct bpf_insn` with the opcode macros of <linux/bpf.h>; this header
// adds the constants newer than the installed uapi header (Debian 12 ships Linux 6.1 headers,
// before BPF_MEMSX), the machine limits the kernel keeps in private headers, and small accessors
// every pass (opcode table, verifier, interpreter, assembler, disassembler) shares.
//
// Mirrors: include/uapi/linux/bpf.h, include/linux/filter.h, include/linux/bpf_verifier.h,
//          include/linux/bpf.h (Linux 6.19)
// Emulation: the limits are plain constexpr values here instead of kernel #defines so they are
//   visible to C++ code without pulling in kernel-only headers; the names are the kernel's.
#pragma once

#include <linux/bpf.h>

#include <cstddef>

#include "shim/types.h"

// Newer than the installed uapi header (include/uapi/linux/bpf.h in Linux 6.6+).
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80 /* load with sign extension */
#endif

namespace umemcg {

// include/linux/filter.h: the frame pointer register and the per-frame stack size.
inline constexpr int BPF_REG_FP = BPF_REG_10;
inline constexpr int MAX_BPF_STACK = 512;
// include/linux/bpf_verifier.h: at most 8 nested bpf-to-bpf call frames (main program included).
inline constexpr int MAX_CALL_FRAMES = 8;
// The verifier's "processed instructions" complexity limit (BPF_COMPLEXITY_LIMIT_INSNS).
inline constexpr u32 BPF_COMPLEXITY_LIMIT_INSNS = 1000000;
// include/uapi/linux/bpf.h: the size of a program in instructions is limited to 1M for privileged
// loaders (BPF_MAXINSNS is the unprivileged 4096).
inline constexpr u32 BPF_MAX_PROG_INSNS = 1000000;

// Pseudo sources of BPF_LD | BPF_IMM | BPF_DW (src_reg of the first slot), re-exported with
// their uapi names for readability at the use sites.
inline constexpr u8 BPF_LD_IMM64_PLAIN = 0;  // dst = (next_imm << 32) | imm
static_assert(BPF_PSEUDO_MAP_FD == 1 && BPF_PSEUDO_MAP_VALUE == 2 && BPF_PSEUDO_BTF_ID == 3 &&
              BPF_PSEUDO_FUNC == 4 && BPF_PSEUDO_MAP_IDX == 5 && BPF_PSEUDO_MAP_IDX_VALUE == 6);
// Sources of BPF_JMP | BPF_CALL (src_reg).
inline constexpr u8 BPF_HELPER_CALL = 0;
static_assert(BPF_PSEUDO_CALL == 1 && BPF_PSEUDO_KFUNC_CALL == 2);

// --- accessors (include/linux/filter.h, kernel/bpf/verifier.c) -------------------------------

inline constexpr u8 bpf_class(u8 code) { return BPF_CLASS(code); }
inline constexpr u8 bpf_op(u8 code) { return BPF_OP(code); }
inline constexpr u8 bpf_src(u8 code) { return BPF_SRC(code); }
inline constexpr u8 bpf_size(u8 code) { return BPF_SIZE(code); }
inline constexpr u8 bpf_mode(u8 code) { return BPF_MODE(code); }

// Bytes moved by a load/store of size BPF_B/H/W/DW (kernel: bpf_size_to_bytes()).
inline constexpr int bpf_size_to_bytes(int bpf_size) {
  return bpf_size == BPF_W ? 4 : bpf_size == BPF_H ? 2 : bpf_size == BPF_B ? 1 : 8;
}

inline constexpr bool bpf_is_ldimm64(const bpf_insn &insn) {
  return insn.code == (BPF_LD | BPF_IMM | BPF_DW);
}
// kernel: bpf_pseudo_call(), bpf_pseudo_kfunc_call(), bpf_helper_call().
inline constexpr bool bpf_pseudo_call(const bpf_insn &insn) {
  return insn.code == (BPF_JMP | BPF_CALL) && insn.src_reg == BPF_PSEUDO_CALL;
}
inline constexpr bool bpf_pseudo_kfunc_call(const bpf_insn &insn) {
  return insn.code == (BPF_JMP | BPF_CALL) && insn.src_reg == BPF_PSEUDO_KFUNC_CALL;
}
inline constexpr bool bpf_helper_call(const bpf_insn &insn) {
  return insn.code == (BPF_JMP | BPF_CALL) && insn.src_reg == BPF_HELPER_CALL;
}

// The 64-bit immediate of a ld_imm64 pair (insn[0].imm low, insn[1].imm high).
inline constexpr u64 bpf_ldimm64_value(const bpf_insn &lo, const bpf_insn &hi) {
  return (u64)(u32)lo.imm | ((u64)(u32)hi.imm << 32);
}

// Builds one instruction (the kernel's BPF_RAW_INSN()).
inline constexpr bpf_insn bpf_raw_insn(u8 code, u8 dst, u8 src, s16 off, s32 imm) {
  bpf_insn insn{};
  insn.code = code;
  insn.dst_reg = dst & 0xf;
  insn.src_reg = src & 0xf;
  insn.off = off;
  insn.imm = imm;
  return insn;
}

}  // namespace umemcg
