// SPDX-License-Identifier: GPL-2.0-only
// shim/emu/sched_sim.cc: the simulated mode's scheduler.
//
// All tasks are fibers on the thread that called run()/exec(); this loop is that thread's own
// context. Each iteration is one scheduling decision: among the tasks that can run (runnable,
// and either holding a vCPU, in user mode, or with a free vCPU they may use) one is drawn with
// the seeded PRNG and resumed until it blocks, yields, or exits. When nothing can run, the
// virtual clock jumps to the earliest pending timer. When nothing can run and no timer is
// pending while non-daemon tasks remain, the machine is deadlocked: the run stops and reports
// every task's wait reason.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "shim/bug.h"
#include "shim/emu/machine_impl.h"
#include "shim/hung_task.h"
#include "shim/timer.h"

namespace umemcg::emu {

void Machine::Impl::sim_make_runnable(TaskImpl *t) {
  if (t->runnable || t->exited) return;
  t->runnable = true;
  runnable.push_back(t);
}

TimerKey Machine::Impl::sim_add_timer(SimTimer::Kind k, std::uint64_t deadline, TaskImpl *t,
                                      timer_list *tl, std::uint64_t gen) {
  TimerKey key{deadline, sim_seq++};
  sim_timers.emplace(key, SimTimer{k, t, tl, gen});
  return key;
}

void Machine::Impl::sim_release_cpu(TaskImpl *t) {
  if (t->vcpu) {
    t->vcpu->curr = nullptr;
    t->vcpu = nullptr;
    if (sim_current == t) set_tls_vcpu(nullptr);
  }
  t->wants_cpu = t->kernel_depth > 0;
}

namespace {
Vcpu *free_cpu_for(const Machine::Impl *m, const TaskImpl *t) {
  auto free_at = [m](int cpu) -> Vcpu * {
    Vcpu *v = m->vcpus[cpu].get();
    return (v->online && !v->curr) ? v : nullptr;
  };
  if (int cpu = m->bound_cpu(t); cpu >= 0) return free_at(cpu);
  if (Vcpu *v = free_at(t->last_cpu)) return v;
  for (int i = 0; i < static_cast<int>(m->vcpus.size()); i++)
    if (Vcpu *v = free_at(i)) return v;
  return nullptr;
}
}  // namespace

bool Machine::Impl::sim_can_run(const TaskImpl *t) const {
  return !t->wants_cpu || t->vcpu || free_cpu_for(this, t);
}

void Machine::Impl::sim_assign_cpu(TaskImpl *t) {
  if (t->vcpu) return;
  Vcpu *v = free_cpu_for(this, t);
  BUG_ON(!v);
  v->curr = &t->task;
  t->vcpu = v;
  t->last_cpu = v->id;
  t->wants_cpu = false;
}

void Machine::Impl::sim_switch_out() {
  TaskImpl *t = sim_current;
  BUG_ON(!t);
  Fiber::switch_to(t->fiber.get(), &sched_fiber);
  // Resumed by the scheduler, which set current and tls_vcpu for us.
}

std::string Machine::Impl::deadlock_report() {
  std::ostringstream os;
  for (auto &tp : tasks) {
    TaskImpl *t = tp.get();
    if (t->exited || t->runnable) continue;
    os << t->task.pid << " " << t->task.comm << (t->opts.daemon ? " (daemon)" : "") << ": "
       << t->wait_reason << "\n";
  }
  return os.str();
}

void Machine::Impl::sim_check_hung_tasks(std::uint64_t limit) {
  for (auto &tp : tasks) {
    TaskImpl *t = tp.get();
    if (t->exited || t->runnable || t->busy || t->opts.daemon || t->opts.kthread ||
        t->hung_reported || t->kernel_depth == 0)
      continue;
    const unsigned int state = t->task.__state.load();
    if (!(state & TASK_UNINTERRUPTIBLE)) continue;  // interruptible: waiting for an event
    if (std::find(idle_wakers.begin(), idle_wakers.end(), t) != idle_wakers.end()) continue;
    if (sim_now - t->kernel_since <= limit) continue;
    t->hung_reported = true;
    record("hung", t);
    // A timed sleep names no wait reason: its state does.
    const char *why = std::strcmp(t->wait_reason, "running") != 0 ? t->wait_reason
                      : (state & TASK_WAKEKILL)                    ? "killable sleep"
                                                                   : "uninterruptible sleep";
    report_warning(__FILE__, __LINE__,
                   format_warning("INFO: task %s:%d blocked for more than %llu seconds (%s)",
                                  t->task.comm, t->task.pid,
                                  static_cast<unsigned long long>(limit / 1000000000ull), why));
  }
}

namespace {
void fire_one(Machine::Impl *m, const SimTimer &ev) {
  switch (ev.kind) {
    case SimTimer::task_wake: {
      TaskImpl *t = ev.task;
      if (t->exited || t->runnable || t->sleep_gen != ev.gen) return;  // woken earlier
      t->task.__state.store(TASK_RUNNING);
      t->timed_out = true;
      m->record("timeout", t);
      m->sim_make_runnable(t);
      break;
    }
    case SimTimer::task_busy:
      ev.task->busy = false;
      m->sim_make_runnable(ev.task);
      break;
    case SimTimer::timer_cb:
      // Deleting a timer erases its entry, so a pending entry always names a live timer.
      m->record("timer", nullptr);
      m->fire_timer(ev.timer);
      break;
  }
}
}  // namespace

RunResult Machine::Impl::sim_run_until(const std::function<bool()> &done) {
  BUG_ON(in_scheduler);
  in_scheduler = true;
  RunResult r;
  std::vector<TaskImpl *> eligible;
  for (;;) {
    for (TaskImpl *t : dead) t->fiber.reset();
    dead.clear();
    if (task_error || done()) break;
    sim_run_rcu_callbacks();
    // Due timers fire before the next decision, so a task they wake competes at once.
    while (!sim_timers.empty() && sim_timers.begin()->first.first <= sim_now) {
      SimTimer ev = sim_timers.begin()->second;
      sim_timers.erase(sim_timers.begin());
      fire_one(this, ev);
    }

    eligible.clear();
    for (TaskImpl *t : runnable)
      if (sim_can_run(t)) eligible.push_back(t);
    if (eligible.empty()) {
      if (!sim_timers.empty()) {
        // Nothing can run: the clock jumps to the next timer.
        sim_now = std::max(sim_now, sim_timers.begin()->first.first);
        if (const std::uint64_t limit = hung_task_timeout_ns()) sim_check_hung_tasks(limit);
        continue;
      }
      if (!sim_rcu_pending.empty()) continue;
      if (!idle_wakers.empty()) {
        // The machine is idle: the tasks that asked to be told wake up (schedule_unless_idle).
        for (TaskImpl *w : idle_wakers) {
          w->idle_woken = true;
          w->task.__state.store(TASK_RUNNING);
          record("idle", w);
          sim_make_runnable(w);
        }
        idle_wakers.clear();
        continue;
      }
      if (!done()) {
        r.deadlock = true;
        r.report = deadlock_report();
        record("deadlock", nullptr);
      }
      break;
    }
    TaskImpl *t = eligible[prng() % eligible.size()];
    if (t->wants_cpu) sim_assign_cpu(t);
    sim_current = t;
    current = &t->task;
    set_tls_vcpu(t->vcpu);
    switches++;
    record("run", t);
    Fiber::switch_to(&sched_fiber, t->fiber.get());
    sim_current = nullptr;
    current = nullptr;
    set_tls_vcpu(nullptr);
  }
  r.switches = switches;
  in_scheduler = false;
  return r;
}

}  // namespace umemcg::emu
