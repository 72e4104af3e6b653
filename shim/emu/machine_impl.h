// SPDX-License-Identifier: GPL-2.0-only
// shim/emu/machine_impl.h: machine internals shared by the shim's .cc files. Not for mm/ or
// kernel/: they use the kernel-style primitives only.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "shim/emu/fiber.h"
#include "shim/emu/vcpu.h"
#include "shim/machine.h"
#include "shim/sched.h"

namespace umemcg {
struct timer_list;
struct rcu_head;
struct work_struct;
}

namespace umemcg::emu {

struct TaskImpl {
  task_struct task;
  Machine::Impl *m = nullptr;
  std::function<void()> fn;
  TaskOptions opts;
  std::string name;
  int last_cpu = 0;
  Vcpu *vcpu = nullptr;       // the vCPU held, if any
  int kernel_depth = 0;       // KernelEntry nesting (kthreads: always >= 1)
  const char *wait_reason = "running";
  bool exited = false;
  bool attached = false;      // an AttachThread task (native)
  bool timed_out = false;     // the last timed sleep ended by its deadline
  bool idle_woken = false;    // woken by schedule_unless_idle()'s idle rule (simulated)
  // The hung-task check (simulated): machine time of the outer kernel entry, and whether the
  // task was reported.
  std::uint64_t kernel_since = 0;
  bool hung_reported = false;
  // kthread_run() state (shim/kthread.cc).
  std::shared_ptr<void> kthread;
  // Workqueue worker: the pool served and the item being executed.
  struct WorkPool *pool = nullptr;
  work_struct *current_work = nullptr;
  // Read locks held (rwsem, acquisition time): reader hold-time statistics.
  std::vector<std::pair<const void *, std::uint64_t>> held_reads;

  // Native mode.
  std::thread thread;
  std::mutex sleep_mu;
  std::condition_variable sleep_cv;

  // Simulated mode.
  std::unique_ptr<Fiber> fiber;
  bool runnable = false;      // in the run list
  bool wants_cpu = false;     // runnable, but needs a vCPU before it can continue
  bool busy = false;          // in consume_time()
  std::uint64_t sleep_gen = 0;
};

// A pending timed event of the machine clock, keyed by (deadline, sequence number): FIFO among
// equal deadlines keeps simulated runs deterministic.
using TimerKey = std::pair<std::uint64_t, std::uint64_t>;
struct SimTimer {
  enum Kind { task_wake, task_busy, timer_cb } kind;
  TaskImpl *task;
  timer_list *timer;
  std::uint64_t gen;
};

struct Machine::Impl {
  Machine *machine = nullptr;
  MachineConfig cfg;
  std::vector<std::unique_ptr<Vcpu>> vcpus;
  std::chrono::steady_clock::time_point boot_time;

  // All tasks ever created (task_structs stay valid until the machine goes away).
  std::mutex tasks_mu;
  std::vector<std::unique_ptr<TaskImpl>> tasks;
  int next_pid = 1;
  int live_nondaemon = 0;            // guarded by tasks_mu
  std::condition_variable tasks_cv;  // native: a non-daemon task exited
  std::exception_ptr task_error;     // first exception that escaped a task

  std::vector<std::function<void()>> shutdown_hooks;

  // ---- simulated mode ----
  Fiber sched_fiber;                 // the scheduler's context (the run() caller's thread)
  TaskImpl *sim_current = nullptr;
  std::vector<TaskImpl *> runnable;  // insertion order: deterministic
  // Tasks sleeping in schedule_unless_idle(): woken, instead of a deadlock, when nothing else
  // can run and no timer is pending.
  std::vector<TaskImpl *> idle_wakers;
  std::map<TimerKey, SimTimer> sim_timers;
  std::uint64_t sim_seq = 0;
  std::uint64_t sim_now = 0;
  std::mt19937_64 prng;
  std::uint64_t trace_hash = 0xcbf29ce484222325ull;
  std::vector<TraceEvent> trace;
  std::uint64_t switches = 0;
  std::vector<TaskImpl *> dead;      // exited fibers whose stacks can be freed
  bool in_scheduler = false;

  // ---- native mode ----
  std::thread timer_thread;
  std::mutex timer_mu;
  std::condition_variable timer_cv;
  std::map<TimerKey, timer_list *> native_timers;  // guarded by timer_mu
  std::uint64_t native_timer_seq = 0;              // guarded by timer_mu
  timer_list *native_timer_running = nullptr;      // guarded by timer_mu
  bool timer_stop = false;

  // ---- helpers ----
  bool sim() const { return cfg.mode == Mode::simulated; }
  std::uint64_t now() const;
  void record(const char *what, const TaskImpl *t);
  TaskImpl *create_task(const std::string &name, std::function<void()> fn, TaskOptions opts);
  void start_task(TaskImpl *t);
  void task_body(TaskImpl *t);
  void task_exited(TaskImpl *t);

  // vCPU ownership.
  // The vCPU @t is bound to (pinned, or its last one while migration is disabled), or -1. A
  // binding to an offline vCPU is broken, as the kernel does for tasks on a dead CPU.
  int bound_cpu(const TaskImpl *t) const;
  void native_acquire_cpu(TaskImpl *t);
  void native_release_cpu(TaskImpl *t);
  void sim_release_cpu(TaskImpl *t);
  bool sim_can_run(const TaskImpl *t) const;
  void sim_assign_cpu(TaskImpl *t);

  // Simulated scheduler.
  RunResult sim_run_until(const std::function<bool()> &done);
  void sim_switch_out();             // from a task fiber to the scheduler
  void sim_make_runnable(TaskImpl *t);
  TimerKey sim_add_timer(SimTimer::Kind k, std::uint64_t deadline, TaskImpl *t, timer_list *tl,
                         std::uint64_t gen);
  std::string deadlock_report();
  // The hung-task check (shim/hung_task.h) with the bound @limit, at the current machine time.
  void sim_check_hung_tasks(std::uint64_t limit);

  // Sleeping (both modes). Returns after the task is TASK_RUNNING again (woken, signalled or
  // timed out). deadline_ns == 0: no deadline.
  void sleep(TaskImpl *t, std::uint64_t deadline_ns);
  void wake(TaskImpl *t);

  // Timers (timer.cc).
  void timer_start_native();
  void timer_stop_native();
  void fire_timer(timer_list *t);  // runs t's callback (t no longer pending)

  // RCU (rcu.cc): simulated-mode callback queue, run by the scheduler between task switches.
  std::vector<rcu_head *> sim_rcu_pending;
  std::uint64_t sim_rcu_completed = 0;
  void sim_run_rcu_callbacks();

  // Workqueues (workqueue.cc).
  void *wq_state = nullptr;
};

// The live machine's internals (nullptr if none).
extern Machine::Impl *g_machine;

inline TaskImpl *task_impl(task_struct *t) { return t ? t->emu : nullptr; }

// Boot and shutdown pieces implemented in their own files.
// Counts an OS thread the shim starts (os_threads_started(), shim/machine.h).
void note_os_thread_started();

void workqueue_boot(Machine::Impl *m);
void workqueue_shutdown(Machine::Impl *m);
void rcu_boot(Machine::Impl *m);
void rcu_shutdown(Machine::Impl *m);

// Raises BUG if the current context may not sleep.
void check_may_sleep(const char *what);

}  // namespace umemcg::emu
