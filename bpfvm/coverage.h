// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/coverage.h: instruction and branch coverage of loaded programs, for the policy fuzzer.
//
// Off by default. When a process turns it on (bpf_coverage_enable()), every program the runtime
// links afterwards records, in its fast-mode runs, which instructions executed and which
// directions its conditional jumps took (BpfExecProg::set_coverage(): a separate instantiation
// of the interpreter's fast loop). The records live here, one per program name, and outlive the
// objects: a program loaded again (or a callback of it) records into the same one, so that a
// fuzz case's attach, detach and unload cycles add up. bpf_coverage_snapshot() reads them as
// one byte of state bits per instruction, a form that merges by OR across runs and processes.
//
// Mirrors: nothing in the kernel (its interpreter has no coverage; BPF programs are measured
//   with the JIT's perf annotations). The counts follow gcov's: an instruction counts once,
//   ld_imm64 included; a conditional jump has two directions.
// Emulation: checked runs (unverified programs) record nothing.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "bpfvm/insn.h"
#include "bpfvm/interp.h"

namespace umemcg::emu {

// State bits of one instruction slot.
enum : u8 {
  BPF_COV_INSN = 1,   // an instruction (not the second slot of an ld_imm64)
  BPF_COV_COND = 2,   // a conditional jump (two directions)
  BPF_COV_HIT = 4,    // executed
  BPF_COV_TAKEN = 8,  // its jump was taken
  BPF_COV_FALL = 16,  // it fell through
};

struct BpfCoverageProg {
  std::string name;
  std::vector<u8> state;  // per instruction slot: BPF_COV_* bits
};

struct BpfCoverageCounts {
  size_t insns_hit = 0, insns = 0;
  size_t dirs_hit = 0, dirs = 0;
};

// Turns recording on or off for programs linked from now on (process-wide).
void bpf_coverage_enable(bool on);
bool bpf_coverage_enabled();

/**
 * bpf_coverage_attach - record the fast runs of @exec as program @name's coverage
 * @insns: the program's instructions (their kinds give the static bits)
 * @lead: instructions of @exec in front of the program's first (a callback's trampoline: 2),
 *        at most BPF_COV_MAX_LEAD; exec instruction i is program instruction i - lead
 * No-op unless bpf_coverage_enabled(). The record of @name is created on first use; a program
 * of the same name but another length replaces it.
 */
inline constexpr size_t BPF_COV_MAX_LEAD = 2;
void bpf_coverage_attach(BpfExecProg &exec, const std::string &name,
                         std::span<const bpf_insn> insns, size_t lead);

// The records so far, by name.
std::vector<BpfCoverageProg> bpf_coverage_snapshot();
// Clears what every record has seen (the records themselves live as long as the process:
// programs still linked keep recording into them).
void bpf_coverage_reset();

// Counts of one program's state.
BpfCoverageCounts bpf_coverage_count(const std::vector<u8> &state);
// Merges b into a (OR per slot; a grows to b's length).
void bpf_coverage_merge(std::vector<u8> *a, const std::vector<u8> &b);

}  // namespace umemcg::emu
