// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/attach_tracing.h: fentry/fexit programs attached to the emulator's hook points
// (shim/hooks.h), the BPF trampoline's job: on entry (fentry) or exit (fexit) of the hooked
// function, the program runs with its context = the function's arguments as u64s, plus the
// return value after them for fexit. The program's own return value is ignored (the verifier
// made it 0).
//
// Mirrors: kernel/bpf/trampoline.c (bpf_trampoline_link_prog, the fentry/fexit calling
//          convention), kernel/bpf/syscall.c (bpf_tracing_prog_attach) (Linux 6.19)
// Emulation: a hook point is found by the program's attach target name (the kernel resolves
//   attach_btf_id); sleepable fentry.s/fexit.s programs are refused (-EINVAL): hook points run
//   their programs under rcu_read_lock(). A program that faults in a checked run (only
//   unverified programs linked with run_unverified run checked) is counted, not fatal.
#pragma once

#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "shim/types.h"

namespace umemcg::emu {

class BpfLoadedProg;
class HookPoint;

class BpfTracingLink {
 public:
  ~BpfTracingLink();  // detaches (task context: waits for a grace period)
  BpfTracingLink(const BpfTracingLink &) = delete;
  BpfTracingLink &operator=(const BpfTracingLink &) = delete;

  // Attaches prog (fentry/... or fexit/..., runnable). Errors: not a tracing program, no such
  // hook point, an argument count that differs from the hook point's, a sleepable program, a
  // program the runtime refuses to run (the verifier's reason).
  static absl::StatusOr<std::unique_ptr<BpfTracingLink>> attach(BpfLoadedProg &prog);

  BpfLoadedProg &prog() const { return *prog_; }
  const std::string &target() const;
  u64 runs() const { return runs_.load(std::memory_order_relaxed); }
  u64 faults() const { return faults_.load(std::memory_order_relaxed); }

 private:
  BpfTracingLink() = default;
  static void hook(void *data, const std::uint64_t *args, unsigned int nargs, std::uint64_t ret);

  BpfLoadedProg *prog_ = nullptr;
  HookPoint *point_ = nullptr;
  int id_ = 0;
  bool exit_ = false;
  bool fast_ = false;  // verified: the trampoline fast path (run_in_rcu)
  // Relaxed counters: statistics only.
  std::atomic<u64> runs_{0};
  std::atomic<u64> faults_{0};
};

}  // namespace umemcg::emu
