// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/interp_safe.h: the prepare-time static analyses behind the interpreter's safe mode
// (bpfvm/interp.h, run_safe()): facts that let it skip per-access work on unverified programs
// without losing memory safety.
//
//   - bpf_subprogs_closed(): control stays inside each subprogram, so the fast mode's call and
//     exit forms that skip the r6-r9 save are correct for the safe mode too.
//   - bpf_ctx_regs(): which registers hold the context pointer (r1 at entry) on every path to
//     each instruction, so that a load or store at a constant offset from it is checked once per
//     run (against the first declared region) instead of at every execution.
//
// Mirrors: nothing in the kernel (its verifier proves far more; check_subprogs() is the closest
//   relative of bpf_subprogs_closed()).
// Emulation: the kernel runs no unverified programs; these analyses exist for the safe mode.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "bpfvm/insn.h"
#include "bpfvm/opcodes.h"

namespace umemcg::emu {

// starts: the sorted start indices of the subprograms (0 and every local call's target). True
// when every jump targets its own subprogram and no subprogram falls through into the next (the
// instruction before each start is an exit or an unconditional jump). The verifier proves this
// for the programs it accepts.
bool bpf_subprogs_closed(const bpf_insn *insns, size_t cnt,
                         std::span<const bpf_opcode_desc *const> rows,
                         const std::vector<u32> &starts);

// For each instruction, the registers (bit n = rn) that equal the run's r1 at entry on every
// path from the entry to it (a must-analysis over the control-flow graph); 0 for unreachable
// instructions and the second slots of ld_imm64. Only a 64-bit register move copies the
// value; every other write ends it; a call keeps r6-r9 (the caller's, restored or untouched on
// return) and passes r1-r5 on to the callee.
std::vector<u16> bpf_ctx_regs(const bpf_insn *insns, size_t cnt,
                              std::span<const bpf_opcode_desc *const> rows);

}  // namespace umemcg::emu
