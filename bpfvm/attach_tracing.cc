// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/attach_tracing.cc: fentry/fexit programs on hook points (see attach_tracing.h).
//
// Mirrors: kernel/bpf/trampoline.c (Linux 6.19)
// Emulation: see attach_tracing.h.
#include "bpfvm/attach_tracing.h"

#include "absl/strings/str_format.h"
#include "bpfvm/runtime.h"
#include "shim/hooks.h"

namespace umemcg::emu {

absl::StatusOr<std::unique_ptr<BpfTracingLink>> BpfTracingLink::attach(BpfLoadedProg &prog) {
  const BpfProgram &spec = prog.spec();
  if (spec.kind != ProgKind::kFentry && spec.kind != ProgKind::kFexit)
    return absl::InvalidArgumentError(absl::StrFormat(
        "program '%s' (%s) is not an fentry/fexit program", prog.name(), spec.section));
  if (!prog.runnable()) return absl::PermissionDeniedError(prog.refusal());
  if (prog.sleepable())
    return absl::InvalidArgumentError(absl::StrFormat(
        "program '%s': sleepable programs cannot attach to hook points", prog.name()));
  HookPoint *point = HookPoint::find(spec.attach_target.c_str());
  if (!point)
    return absl::NotFoundError(absl::StrFormat("program '%s': no hook point %s in the emulator",
                                               prog.name(), spec.attach_target));
  // The verifier typed the context from the registered signature; the hook point must pass as
  // many arguments (at most 5 plus the return value fit the context array below).
  if (point->nargs() > 5)
    return absl::InvalidArgumentError(absl::StrFormat("hook point %s has %u arguments",
                                                      point->name(), point->nargs()));
  std::unique_ptr<BpfTracingLink> link(new BpfTracingLink);
  link->prog_ = &prog;
  link->point_ = point;
  link->exit_ = spec.kind == ProgKind::kFexit;
  link->fast_ = prog.fast();
  link->id_ = point->attach(link->exit_, &BpfTracingLink::hook, link.get());
  return link;
}

BpfTracingLink::~BpfTracingLink() {
  if (point_) point_->detach(id_);  // waits until no CPU still runs the program
}

const std::string &BpfTracingLink::target() const { return prog_->spec().attach_target; }

void BpfTracingLink::hook(void *data, const std::uint64_t *args, unsigned int nargs,
                          std::uint64_t ret) {
  auto *link = static_cast<BpfTracingLink *>(data);
  // The trampoline's stack frame: the arguments, then (fexit) the return value.
  u64 ctx[6];
  for (unsigned int i = 0; i < nargs; i++) ctx[i] = args[i];
  u64 size = nargs * sizeof(u64);
  if (link->exit_) {
    ctx[nargs] = ret;
    size += sizeof(u64);
  }
  link->runs_.fetch_add(1, std::memory_order_relaxed);
  // Hook points run their lists under rcu_read_lock() (preemption off on a vCPU).
  if (link->fast_) {
    link->prog_->run_in_rcu(ctx);
    return;
  }
  const BpfProgRunResult r = link->prog_->run(ctx, size, /*ctx_rdonly=*/true);
  if (!r.ok) link->faults_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace umemcg::emu
