// SPDX-License-Identifier: GPL-2.0-only
// shim/sched.cc: sleeping and waking (schedule, schedule_timeout, wake_up_state), cond_resched,
// signals, interrupt-context emulation. See sched.h for the protocol.
#include "shim/sched.h"

#include <algorithm>
#include <utility>

#include "shim/atomic.h"
#include "shim/bug.h"
#include "shim/emu/machine_impl.h"
#include "shim/jiffies.h"
#include "shim/preempt.h"

namespace umemcg::emu {

void check_may_sleep(const char *what) {
  if (!current) report_bug(__FILE__, __LINE__, "sleeping outside task context");
  if (preempt_count() != 0 || irqs_disabled() || in_interrupt()) {
    std::fprintf(stderr, "BUG: scheduling while atomic: %s (preempt_count %d)\n", what,
                 preempt_count());
    report_bug(__FILE__, __LINE__, "scheduling while atomic");
  }
}

void Machine::Impl::sleep(TaskImpl *t, std::uint64_t deadline_ns) {
  t->timed_out = false;
  if (sim()) {
    sim_release_cpu(t);
    auto it = std::find(runnable.begin(), runnable.end(), t);
    if (it != runnable.end()) runnable.erase(it);
    t->runnable = false;
    t->sleep_gen++;
    if (deadline_ns) sim_add_timer(SimTimer::task_wake, deadline_ns, t, nullptr, t->sleep_gen);
    record("block", t);
    sim_switch_out();
    return;
  }
  const bool had_cpu = t->vcpu != nullptr;
  native_release_cpu(t);
  {
    std::unique_lock<std::mutex> lk(t->sleep_mu);
    while (t->task.__state.load() != TASK_RUNNING) {
      if (!deadline_ns) {
        t->sleep_cv.wait(lk);
        continue;
      }
      auto tp = boot_time + std::chrono::nanoseconds(deadline_ns);
      if (t->sleep_cv.wait_until(lk, tp) == std::cv_status::timeout) {
        unsigned int s = t->task.__state.load();
        if (s != TASK_RUNNING && t->task.__state.compare_exchange_strong(s, TASK_RUNNING))
          t->timed_out = true;
      }
    }
  }
  if (had_cpu || t->kernel_depth > 0) native_acquire_cpu(t);
}

void Machine::Impl::wake(TaskImpl *t) {
  if (sim()) {
    if (t->runnable || t->busy || t->exited || t == sim_current) return;
    record("wake", t);
    sim_make_runnable(t);
    return;
  }
  { std::lock_guard<std::mutex> g(t->sleep_mu); }
  t->sleep_cv.notify_one();
}

namespace {
bool signal_pending_state(unsigned int state, task_struct *p) {
  if (!(state & (TASK_INTERRUPTIBLE | TASK_WAKEKILL))) return false;
  if (!signal_pending(p)) return false;
  return (state & TASK_INTERRUPTIBLE) || fatal_signal_pending(p);
}

// Sleeps in the current state until woken or until deadline_ns (0: none). Returns false when the
// sleep did not happen because the task was already running or a signal was pending.
bool do_sleep(std::uint64_t deadline_ns) {
  TaskImpl *t = task_impl(current);
  check_may_sleep("schedule");
  unsigned int st = t->task.__state.load();
  if (st == TASK_RUNNING) return false;
  if (signal_pending_state(st, &t->task)) {
    t->task.__state.store(TASK_RUNNING);
    return false;
  }
  t->m->sleep(t, deadline_ns);
  return true;
}

long timeout_sleep(long timeout) {
  if (timeout == MAX_SCHEDULE_TIMEOUT) {
    schedule();
    return timeout;
  }
  if (timeout < 0) {
    WARN(1, "schedule_timeout: wrong timeout value %lx", static_cast<unsigned long>(timeout));
    current->__state.store(TASK_RUNNING);
    return 0;
  }
  Machine::Impl *m = g_machine;
  const std::uint64_t deadline = m->now() + static_cast<std::uint64_t>(timeout) * NSEC_PER_JIFFY;
  // A zero timeout still expires "now": the deadline keeps the sleep finite.
  do_sleep(deadline ? deadline : 1);
  const std::uint64_t now = m->now();
  if (now >= deadline) return 0;
  return static_cast<long>((deadline - now + NSEC_PER_JIFFY - 1) / NSEC_PER_JIFFY);
}
}  // namespace

}  // namespace umemcg::emu

namespace umemcg {

using emu::task_impl;

void schedule() {
  if (!emu::do_sleep(0) && emu::g_machine && emu::g_machine->sim() &&
      current->__state.load() == TASK_RUNNING)
    cond_resched();  // schedule() while running is still a scheduling point
}

namespace emu {
bool schedule_unless_idle() {
  TaskImpl *t = task_impl(current);
  if (!t || !t->m->sim()) {
    schedule();
    return false;
  }
  t->idle_woken = false;
  t->m->idle_wakers.push_back(t);
  schedule();
  // Woken normally: leave the list (the idle rule empties it itself).
  std::erase(t->m->idle_wakers, t);
  return std::exchange(t->idle_woken, false);
}
}  // namespace emu

long schedule_timeout(long timeout) { return emu::timeout_sleep(timeout); }

long schedule_timeout_killable(long timeout) {
  set_current_state(TASK_KILLABLE);
  return schedule_timeout(timeout);
}
long schedule_timeout_uninterruptible(long timeout) {
  set_current_state(TASK_UNINTERRUPTIBLE);
  return schedule_timeout(timeout);
}
long schedule_timeout_interruptible(long timeout) {
  set_current_state(TASK_INTERRUPTIBLE);
  return schedule_timeout(timeout);
}

bool wake_up_state(task_struct *p, unsigned int state) {
  unsigned int s = p->__state.load();
  do {
    if (!(s & state)) return false;
  } while (!p->__state.compare_exchange_weak(s, TASK_RUNNING));
  emu::TaskImpl *t = task_impl(p);
  t->m->wake(t);
  return true;
}

void cond_resched() {
  emu::TaskImpl *t = task_impl(current);
  if (!t) return;
  if (!preemptible()) {
    WARN_ON_ONCE(in_task() && preempt_count() == 0 && irqs_disabled());
    return;
  }
  emu::Machine::Impl *m = t->m;
  if (m->sim()) {
    // A scheduling decision: the task gives its vCPU up and competes again (it may come back
    // on another vCPU, or another task may take this one).
    m->sim_release_cpu(t);
    m->record("yield", t);
    m->sim_switch_out();
    return;
  }
  if (t->vcpu && t->vcpu->run_waiters.load(std::memory_order_relaxed) > 0) {
    m->native_release_cpu(t);
    std::this_thread::yield();
    m->native_acquire_cpu(t);
  }
}

void might_sleep() {
  if (!current || preempt_count() != 0 || irqs_disabled() || in_interrupt())
    WARN(1, "BUG: sleeping function called from invalid context (preempt_count %d)",
         preempt_count());
}

bool signal_pending(task_struct *p) {
  return test_bit(TIF_SIGPENDING, &p->thread_flags) || fatal_signal_pending(p);
}

void send_sig_kill(task_struct *p) {
  p->fatal_signal.store(true);
  set_bit(TIF_SIGPENDING, &p->thread_flags);
  wake_up_state(p, TASK_INTERRUPTIBLE | TASK_WAKEKILL);
}

void send_sig_other(task_struct *p) {
  set_bit(TIF_SIGPENDING, &p->thread_flags);
  wake_up_state(p, TASK_INTERRUPTIBLE);
}

void clear_sig_other(task_struct *p) { clear_bit(TIF_SIGPENDING, &p->thread_flags); }

void set_notify_resume(task_struct *p) { set_bit(TIF_NOTIFY_RESUME, &p->thread_flags); }

bool test_thread_flag(int flag) { return test_bit(flag, &current->thread_flags); }

// ---- interrupts ----

void local_irq_disable() { this_vcpu_or_die("local_irq_disable")->irqs_disabled++; }
void local_irq_enable() { this_vcpu_or_die("local_irq_enable")->irqs_disabled--; }

namespace emu {
// Emulation: without a vCPU (timer and RCU callbacks) there is no interrupt state to save.
unsigned long irq_save() {
  Vcpu *v = tls_vcpu;
  return v ? static_cast<unsigned long>(v->irqs_disabled++) : 0;
}
void irq_restore(unsigned long flags) {
  if (Vcpu *v = tls_vcpu) v->irqs_disabled = static_cast<int>(flags);
}

namespace {
bool run_nested(int Vcpu::*depth, void (*fn)(void *), void *arg) {
  Vcpu *v = umemcg::this_vcpu_or_die("run_in_irq");
  if (v->irqs_disabled) return false;
  // An interrupt runs with its own preemption state on top of the interrupted context.
  const int saved_preempt = tls_preempt_count;
  v->*depth += 1;
  tls_preempt_count = saved_preempt + 1;
  fn(arg);
  WARN_ON(tls_preempt_count != saved_preempt + 1);
  tls_preempt_count = saved_preempt;
  v->*depth -= 1;
  return true;
}
}  // namespace

bool run_in_irq(void (*fn)(void *), void *arg) { return run_nested(&Vcpu::hardirq_depth, fn, arg); }
bool run_in_softirq(void (*fn)(void *), void *arg) {
  return run_nested(&Vcpu::softirq_depth, fn, arg);
}
}  // namespace emu

}  // namespace umemcg
