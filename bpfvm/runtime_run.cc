// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/runtime_run.cc: running a loaded program on the current task (fast or checked), its
// bpf_loop and async (bpf_wq) callbacks, and BPF_PROG_TEST_RUN for SYSCALL programs.
// Mirrors: include/linux/filter.h (bpf_prog_run, bpf_prog_run_pin_on_cpu), net/bpf/test_run.c
//          (bpf_prog_test_run_syscall), kernel/bpf/syscall.c (bpf_prog_test_run) (Linux 6.19)
// Emulation: see bpfvm/runtime.h.
#include <cstring>

#include "bpfvm/helpers_impl.h"
#include "bpfvm/ringbuf.h"
#include "bpfvm/runtime.h"

#include <optional>
#include "shim/errno.h"
#include "shim/preempt.h"
#include "shim/rcupdate.h"
#include "shim/sched.h"

namespace umemcg::emu {

namespace {

// The checked interpreter's oracle: memory the helpers handed out, and (inside a callback) the
// host stack window of the runs below.
bool run_mem_ok(void *opaque, u64 addr, u64 len, bool write) {
  auto *rc = static_cast<bpf_run_ctx *>(opaque);
  return bpf_run_mem_ok(rc, addr, len, write, true);
}

}  // namespace

u64 bpf_run_callback(bpf_run_ctx *rc, u64 value, const u64 args[5]) {
  const auto *prog = static_cast<const BpfLoadedProg *>(rc->prog);
  const BpfCallback *cb = prog->find_callback(value);
  if (!cb) {
    bpf_run_fault(rc, "callback_fn is not a callback of the program");
    return 0;
  }
  if (!rc->chk) return cb->exec->run_fast(args);
  BpfCheckedRunOpts o;
  for (int i = 0; i < 5; i++) o.args[i] = args[i];
  o.nargs = 5;
  o.regions = rc->chk->regions;
  o.mem_ok = run_mem_ok;
  o.mem_ok_opaque = rc;
  o.insn_budget =
      rc->chk->insn_budget > rc->chk->executed ? rc->chk->insn_budget - rc->chk->executed : 1;
  // bpf_loop keeps the nesting below MAX_CALL_FRAMES runs.
  if (rc->chk->nr_stacks >= MAX_CALL_FRAMES) {
    bpf_run_fault(rc, "callbacks nested too deep");
    return 0;
  }
  o.stack_out = rc->chk->stacks[rc->chk->nr_stacks++];
  BpfRunResult r = cb->exec->run_checked(o);
  rc->chk->nr_stacks--;
  rc->chk->executed += r.executed;
  if (!r.ok) {
    // Trampoline index - 2 = program index.
    bpf_run_fault(rc, "callback " + cb->name + ": " + r.reason + " at insn " +
                          std::to_string(r.insn >= 2 ? r.insn - 2 : r.insn));
  }
  return r.r0;
}

namespace {

// What a checked run must not leave behind: the verifier proves both for verified programs.
void release_leftovers(bpf_run_ctx *rc) {
  if (!rc->chk->locks.empty()) {
    bpf_run_fault(rc, "bpf_spin_lock is still held at exit");
    while (!rc->chk->locks.empty()) {
      __bpf_spin_unlock_irqrestore(rc->chk->locks.back());
      rc->chk->locks.pop_back();
    }
  }
  if (!rc->chk->records.empty()) {
    bpf_run_fault(rc, "ring buffer record reserved and neither submitted nor discarded");
    for (u64 rec : rc->chk->records)
      bpf_ringbuf_commit(reinterpret_cast<void *>((uintptr_t)rec), BPF_RB_NO_WAKEUP, true);
    rc->chk->records.clear();
  }
}

}  // namespace

bool BpfLoadedProg::sleepable() const {
  // libbpf loads SEC("syscall") programs sleepable.
  return spec_->sleepable || spec_->prog_type == BPF_PROG_TYPE_SYSCALL;
}

const BpfCallback *BpfLoadedProg::find_callback(u64 value) const {
  for (const BpfCallback &c : callbacks_)
    if ((u64)(uintptr_t)&c == value) return &c;
  return nullptr;
}

std::string BpfLoadedProg::refusal() const {
  if (runnable()) return "";
  if (!link_error_.empty()) return link_error_;
  if (!verdict_.available)
    return "program '" + name() + "' was not verified (link with run_unverified to run it checked)";
  return "the verifier rejected program '" + name() + "': " + verdict_.error;
}

u64 BpfLoadedProg::run_async_callback(const BpfCallback &cb, const u64 args[3]) const {
  if (!fast()) return 0;  // bpf_async.cc refuses unverified programs the async kfuncs
  bpf_run_ctx rc;
  rc.prog = this;
  rc.run_callback = bpf_run_callback;
  bpf_run_ctx *old = bpf_set_run_ctx(&rc);
  const u64 a[5] = {args[0], args[1], args[2], 0, 0};
  const u64 r0 = cb.exec->run_fast(a);
  bpf_reset_run_ctx(old);
  return r0;
}

BpfProgRunResult BpfLoadedProg::run(void *ctx, u64 ctx_size, bool ctx_rdonly) {
  if (!runnable()) {
    // Emulation: the kernel would not have loaded it (see runtime.h).
    BpfProgRunResult refused;
    refused.fault = refusal();
    return refused;
  }
  bpf_run_ctx rc;
  std::optional<bpf_run_checked> chk;  // constructed for checked runs only
  if (!fast()) rc.chk = &chk.emplace();
  rc.prog = this;
  rc.run_callback = bpf_run_callback;
  if (rc.chk) {
    rc.chk->regions = obj_->static_regions();
    if (ctx && ctx_size) rc.chk->regions.push_back({(u64)(uintptr_t)ctx, ctx_size, !ctx_rdonly});
    for (const auto &m : obj_->maps()) rc.chk->maps.insert(m.get());
  }
  bpf_run_ctx *old = bpf_set_run_ctx(&rc);
  const bool sleep = sleepable();
  if (sleep) {
    migrate_disable();
    bpf_rcu_tasks_trace_read_lock();
  } else {
    rcu_read_lock();
  }

  BpfProgRunResult res;
  if (!rc.chk) {
    const u64 args[5] = {(u64)(uintptr_t)ctx, 0, 0, 0, 0};
    res.r0 = exec_->run_fast(args);
    res.ok = true;
  } else {
    BpfCheckedRunOpts o;
    o.args[0] = (u64)(uintptr_t)ctx;
    o.nargs = 1;
    o.regions = rc.chk->regions;
    o.mem_ok = run_mem_ok;
    o.mem_ok_opaque = &rc;
    o.insn_budget = rc.chk->insn_budget;
    o.stack_out = rc.chk->stacks[rc.chk->nr_stacks++];
    BpfRunResult r = exec_->run_checked(o);
    rc.chk->nr_stacks--;
    res.executed = r.executed + rc.chk->executed;
    res.r0 = r.r0;
    release_leftovers(&rc);
    if (!rc.chk->fault.empty()) {
      res.fault = rc.chk->fault;
    } else if (!r.ok) {
      res.fault = r.reason + " at insn " + std::to_string(r.insn);
    }
    res.ok = res.fault.empty();
    if (!res.ok) res.r0 = 0;
  }

  if (sleep) {
    bpf_rcu_tasks_trace_read_unlock();
    migrate_enable();
  } else {
    rcu_read_unlock();
  }
  bpf_reset_run_ctx(old);
  return res;
}

BpfTestRunResult bpf_prog_test_run(BpfLoadedProg &prog, BpfTestRunOpts &opts) {
  BpfTestRunResult res;
  auto fail = [&](int err, std::string why) {
    res.err = err;
    res.error = std::move(why);
    return res;
  };
  if (prog.prog_type() != BPF_PROG_TYPE_SYSCALL)
    return fail(-ENOTSUPP, "program '" + prog.name() + "' is not a SYSCALL program: no test run");
  if (prog.spec().expected_attach_type)
    return fail(-EINVAL, "SYSCALL programs take no expected_attach_type");
  if (!opts.data_in.empty() || opts.data_out || opts.ctx_out || opts.duration || opts.repeat ||
      opts.flags || opts.batch_size)
    return fail(-EINVAL, "SYSCALL programs take no data_in, data_out, ctx_out, duration, "
                         "repeat, flags or batch_size");
  if (opts.ctx_in.size() > 0xffff)
    return fail(-EINVAL, "ctx_in of " + std::to_string(opts.ctx_in.size()) +
                             " bytes is larger than 65535");
  if (opts.ctx_in.size() < prog.verdict().max_ctx_offset)
    return fail(-EINVAL, "ctx_in of " + std::to_string(opts.ctx_in.size()) +
                             " bytes is smaller than the program reads (" +
                             std::to_string(prog.verdict().max_ctx_offset) + ")");
  // The command's own checks come first; then a program the kernel would not have loaded.
  if (!prog.runnable())
    return fail(prog.verdict().available && prog.verdict().err ? prog.verdict().err : -EACCES,
                prog.refusal());
  if (!current) return fail(-EINVAL, "no task context: run it on a machine task");

  // memdup_user(): an 8-byte aligned kernel copy of the context.
  const size_t n = opts.ctx_in.size();
  std::vector<u64> ctx((n + 7) / 8, 0);
  if (n) std::memcpy(ctx.data(), opts.ctx_in.data(), n);
  BpfProgRunResult r = prog.run(n ? ctx.data() : nullptr, n);
  res.executed = r.executed;
  if (!r.ok) return fail(-EFAULT, "program '" + prog.name() + "' faulted: " + r.fault);
  res.retval = (u32)r.r0;
  if (n) std::memcpy(opts.ctx_in.data(), ctx.data(), n);
  return res;
}

}  // namespace umemcg::emu
