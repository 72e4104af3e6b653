// SPDX-License-Identifier: GPL-2.0-only
// bench/ref_switch_interp.h: the reference S5 is a ratio against (../shared/spec/targets.md):
// an eBPF interpreter built the way the widely used user-space one is, "a switch loop with
// checks". Measured in the same run as bpfvm's interpreter, on the same programs, it turns
// the S5 target (at most half its time per instruction) into a ratio, as every speed target is.
//
// Design, deliberately the common one and not tuned either way:
//   - the raw bpf_insn array is fetched one instruction at a time (no pre-decoding) and one
//     switch over the opcode byte dispatches it;
//   - registers live in an array indexed by the instruction's fields;
//   - every instruction is counted against a budget and its index range-checked before the
//     fetch (which checks every jump's target);
//   - every load and store is bounds-checked before it happens, against the current frame's
//     stack and the input memory;
//   - helper calls go through a table indexed by imm (the id checked), local calls push a frame
//     (return address, r6-r9) and move r10 down by one 512-byte stack.
// It covers the cpu v1-v3 ALU, jump and load/store opcodes (the S5 loop programs use a subset);
// anything else (atomics, cpu v4 forms) is a fault. Own code, written for the comparison.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "bpfvm/insn.h"
#include "bpfvm/interp.h"

namespace umemcg::bench {

struct RefRunResult {
  bool ok = false;
  u64 r0 = 0;
  u64 executed = 0;
  std::string error;
};

// Runs insns with r1 = mem, r2 = mem_len; helpers[imm] for `call imm`.
RefRunResult ref_switch_run(std::span<const bpf_insn> insns, void *mem, size_t mem_len,
                            std::span<const emu::bpf_func_t> helpers, u64 budget);

}  // namespace umemcg::bench
