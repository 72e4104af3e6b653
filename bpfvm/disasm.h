// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/disasm.h: eBPF disassembler printing the kernel verifier log's syntax.
//
//   r1 = 5              w1 += w2            r1 s/= r2          r1 = (s8)r2        r1 = -r1
//   r1 = be16 r1        r1 = bswap32 r1     r0 = *(u32 *)(r1 +4)   r0 = *(s16 *)(r1 -2)
//   *(u64 *)(r10 -8) = r1                   *(u32 *)(r10 -8) = 5
//   lock *(u64 *)(r10 -8) += r1             r1 = atomic64_fetch_add((u64 *)(r10 -8), r1)
//   r1 = atomic_xchg((u32 *)(r2 +0), r1)    r0 = atomic64_cmpxchg((u64 *)(r2 +0), r0, r3)
//   r1 = 0x1122334455667788                 r1 = map[fd:3]      r1 = map[idx:0][0]+8
//   goto pc+2   gotol pc-100   if r1 > 0x5 goto pc+2   if w1 s< w2 goto pc-3
//   call bpf_map_lookup_elem#1   call pc+5   call kfunc#1234   callx r2   exit
// Instructions the opcode table rejects print as "invalid: <reason>".
//
// Mirrors: kernel/bpf/disasm.c (print_bpf_insn(), Linux 6.19)
// Emulation: own code; pseudo ld_imm64 and kfunc names are printed without the kernel's
//   verifier callbacks (map[fd:N] instead of map[id:N], kfunc#<btf id> unless a name callback
//   is given).
#pragma once

#include <span>
#include <string>

#include "bpfvm/insn.h"

namespace umemcg::emu {

struct BpfDisasmOpts {
  bool show_code = false;  // "(b7) r0 = 1", as the verifier log prints
  // The verifier log's forms (bpfvm/verifier_log.cc): a map named by its index in the object
  // (map[idx:N]), a ksym as ksym#N, an unresolved kfunc as "kernel-function" (the kernel's
  // name without a callback), a callback address as its raw immediate ("0x19"), an
  // undecodable opcode as "(invalid XX)".
  bool verifier_log = false;
  // Optional kfunc namer: returns nullptr for unknown ids.
  const char *(*kfunc_name)(s32 btf_id, s16 btf_fd_idx, void *opaque) = nullptr;
  void *opaque = nullptr;
};

// The uapi name of helper `id` ("bpf_map_lookup_elem"), or nullptr.
const char *bpf_helper_name(s32 id);

// One instruction (idx may be the first slot of a ld_imm64).
std::string bpf_disasm_insn(std::span<const bpf_insn> prog, size_t idx,
                            const BpfDisasmOpts &opts = {});
// The whole program, one "<idx>: <insn>" line each, the ld_imm64 second slots skipped.
std::string bpf_disasm_prog(std::span<const bpf_insn> prog, const BpfDisasmOpts &opts = {});

}  // namespace umemcg::emu
