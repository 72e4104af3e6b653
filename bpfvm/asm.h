// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/asm.h: an eBPF assembler for the bpf_conformance test syntax.
//
// Accepts one instruction per line, `#` comments, `label:` lines, registers with or without
// `%` (`%r1`, `r1`), decimal or 0x-hex immediates (negative allowed):
//   mov %r0, 1            add32 %r1, %r2         neg %r1          sdiv32 %r1, 3   smod %r1, %r2
//   movsx864 %r1, %r2     movsx1632 %r1, %r2     le16 %r1  be64 %r1  bswap32 %r1 (or swap32)
//   ldxw %r0, [%r1+4]     ldxsh %r0, [%r1-2]     stw [%r10-8], 5  stxdw [%r10-8], %r1
//   lddw %r0, 0x1122334455667788                 lddw %r1, map_by_fd(3)   (and map_by_idx(N),
//     map_val(map_by_fd(N)) + M, map_val(map_by_idx(N)) + M, var_addr(N), code_addr(label))
//   ja +2  ja label  ja32 label (gotol)   jeq %r1, 0x5, +3   jslt32 %r1, %r2, label
//   call 1  call helper 1  call local label  call runtime 42 (kfunc)  call %r2 / callx %r2  exit
//   lock add [%r10-8], %r1   lock fetch or32 [%r1+0], %r2   lock xchg [..], %r1  lock cmpxchg32 ..
//   ldabsw 12  ldindh %r2, 4   (legacy packet loads)
// Mnemonic -> encoding comes from the opcode table (bpfvm/opcodes.h); ALU64/JMP mnemonics also
// accept a "64" suffix (add64). Errors are "line N: <reason>".
//
// Emulation: emulator tooling, no kernel counterpart (the kernel's selftests use the C macros of
//   include/linux/filter.h and LLVM's assembler).
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "bpfvm/insn.h"

namespace umemcg::emu {

absl::StatusOr<std::vector<bpf_insn>> bpf_assemble(std::string_view text);

}  // namespace umemcg::emu
