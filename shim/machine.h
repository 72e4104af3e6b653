// SPDX-License-Identifier: GPL-2.0-only
// shim/machine.h: the emulated machine: virtual CPUs, tasks, and the two execution modes.
//
// A Machine has N virtual CPUs (MachineConfig::nr_cpus, independent of the host) and runs tasks
// (task_struct) on them in one of two modes, chosen at creation:
//   - native: every task is an OS thread; time is real (CLOCK_MONOTONIC since boot). For
//     benchmarks and stress tests under TSan.
//   - simulated: deterministic. All tasks are fibers on the thread that calls run(); exactly
//     one runs at a time. Every blocking point and every explicit preemption point is a
//     scheduling decision drawn from a PRNG seeded by MachineConfig::seed. Time is a virtual
//     clock that advances only by modelled costs (emu::consume_time) and jumps to the next timer
//     when no task can run. The same seed gives the same run, event for event (trace_hash()).
//     When every task is blocked and no timer is pending the run stops with a deadlock report
//     listing each task's wait reason.
// The kernel code (shim primitives, mm/, kernel/) is the same in both modes: only blocking,
// waking and time go through the mode.
//
// Kernel entry: a task holds a vCPU while its kernel code runs ("being on a CPU" is exclusive);
// it gives the vCPU up when it sleeps, at cond_resched() (if it is made to) and on return to user
// mode. User-mode code (a task body outside emu::KernelEntry) holds no vCPU. Kernel threads and
// workqueue workers run in kernel mode all the time.
//
// One machine exists at a time in a process (the kernel's globals are process globals here).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "shim/sched.h"
#include "shim/types.h"

namespace umemcg::emu {

enum class Mode { native, simulated };

struct MachineConfig {
  unsigned int nr_cpus = 4;
  Mode mode = Mode::native;
  // Seed of the simulated scheduler's PRNG.
  std::uint64_t seed = 1;
  // Simulated mode: fiber stack size.
  std::size_t stack_size = 256 * 1024;
  // Simulated mode: record every scheduling event in trace() (the hash is always kept).
  bool keep_trace = false;
};

struct TaskOptions {
  // vCPU the task is pinned to, or -1 for "any vCPU".
  int cpu = -1;
  // Kernel thread (PF_KTHREAD): runs in kernel mode for its whole life.
  bool kthread = false;
  // A daemon does not keep run() going and is not counted in a deadlock (idle workers).
  bool daemon = false;
};

// One scheduling event, as recorded in simulated mode.
struct TraceEvent {
  std::uint64_t time_ns;
  int pid;
  int cpu;
  const char *what;  // "run", "block", "wake", "exit", "timer", ...
};

struct RunResult {
  bool deadlock = false;
  // One line per blocked task: "<pid> <comm>: <wait reason>".
  std::string report;
  std::uint64_t switches = 0;
};

class Machine {
 public:
  explicit Machine(const MachineConfig &cfg);
  ~Machine();
  Machine(const Machine &) = delete;
  Machine &operator=(const Machine &) = delete;

  // The running machine, or nullptr.
  static Machine *get();

  Mode mode() const { return cfg_.mode; }
  bool simulated() const { return cfg_.mode == Mode::simulated; }
  unsigned int nr_cpus() const { return cfg_.nr_cpus; }
  const MachineConfig &config() const { return cfg_; }

  // Creates a task running fn. In native mode it starts at once on its own thread; in simulated
  // mode it becomes runnable and runs inside run().
  task_struct *spawn(const std::string &name, std::function<void()> fn, TaskOptions opts = {});

  // Simulated: runs the scheduler until every non-daemon task has exited or the machine is
  // deadlocked. Native: waits until every non-daemon task has exited.
  RunResult run();

  // Runs fn in a new kernel-mode task (on vCPU `cpu`, or any) and waits for it to finish
  // (simulated: runs the scheduler until it has). Returns the run result (deadlock or not).
  RunResult exec(std::function<void()> fn, int cpu = -1, const std::string &name = "exec");

  // Simulated mode: the hash of every scheduling event so far, and the events themselves when
  // MachineConfig::keep_trace is set. Stable across runs and hosts for the same seed.
  std::uint64_t trace_hash() const;
  const std::vector<TraceEvent> &trace() const;
  // Adds an event of the caller's own to the trace (e.g. "acquired lock A").
  void trace_event(const char *what);

  // Machine clock in nanoseconds since boot (virtual in simulated mode).
  std::uint64_t now_ns() const;

  // Shutdown hooks run (in reverse order of registration) when the machine is destroyed, in a
  // kernel-mode task, before the workqueues and kthreads are stopped.
  void add_shutdown_hook(std::function<void()> fn);

  struct Impl;
  Impl *impl() { return impl_.get(); }

 private:
  MachineConfig cfg_;
  std::unique_ptr<Impl> impl_;
};

// Kernel entry from user mode (a system call, a page fault): takes a vCPU for the current task
// and, on destruction, leaves through exit_to_user_mode(): the pending work of
// resume_user_mode_work() runs (memcg's over-high throttling among it), then the vCPU is given
// up. Nesting is allowed (inner entries do nothing).
class KernelEntry {
 public:
  KernelEntry();
  ~KernelEntry();
  KernelEntry(const KernelEntry &) = delete;
  KernelEntry &operator=(const KernelEntry &) = delete;

 private:
  bool outer_;
};

// Attaches the calling OS thread to the (native) machine as a task on vCPU `cpu`, in kernel
// mode, for its lifetime. For benchmarks and native tests driven from their own threads.
class AttachThread {
 public:
  AttachThread(const std::string &name, int cpu);
  ~AttachThread();
  AttachThread(const AttachThread &) = delete;
  AttachThread &operator=(const AttachThread &) = delete;
  task_struct *task() const { return task_; }

 private:
  task_struct *task_;
};

// Modelled cost: the current task is busy on its vCPU for ns of machine time. Simulated mode:
// the clock advances (other vCPUs' tasks run meanwhile). Native mode: nothing (the real work
// is the cost).
void consume_time(std::uint64_t ns);

// The work run on return to user mode when TIF_NOTIFY_RESUME is set. Emulation: the kernel
// calls each subsystem from resume_user_mode_work() directly; shim/ cannot name mm/, so
// subsystems register here at boot (mem_cgroup_handle_over_high() among them).
using resume_hook_t = void (*)();
void register_resume_user_mode_hook(resume_hook_t fn);

// Signal delivery on return to user mode (the kernel's arch_do_signal_or_restart -> get_signal),
// run when TIF_SIGPENDING is set, before the TIF_NOTIFY_RESUME work, as in the kernel's
// exit_to_user_mode_loop. Emulation: shim/ cannot name kernel/, so the cgroup core registers
// its part (the freezer's trap) at boot. Without a hook, or after it, a pending non-fatal
// signal is discarded (emulated processes install no handlers: the default action of the
// signals the machine sends is to ignore them, or, for SIGKILL, to exit, which the process's
// own loop does when it sees fatal_signal_pending()).
using signal_hook_t = void (*)();
void register_get_signal_hook(signal_hook_t fn);

// schedule() for a task that must not sleep through the end of the run: in simulated mode, when
// nothing else can run and no timer is pending while the caller sleeps (the machine is idle:
// nothing could ever wake it), the caller is woken, and true returned, instead of the run
// stopping as deadlocked. Native mode: schedule(), false. The caller has set its task state
// and re-tests its condition, as around schedule(). (The cgroup shell's `wait` reports a wait
// nothing can end with it.)
bool schedule_unless_idle();

// Reason recorded for the current task's next sleep (shown in deadlock reports and traces).
void set_wait_reason(const char *reason);

// Pid of the current task, or 0.
int current_pid();

// The OS threads the shim has started in this process so far (native-mode tasks and the
// native-mode timer thread). Simulated mode runs every task on the calling thread, so a test
// case that leaves this unchanged ran on one OS thread; the test runner uses it to pick the
// cases worth running under ThreadSanitizer (test/catch_main.cc).
unsigned long os_threads_started();

}  // namespace umemcg::emu

namespace umemcg {
// Runs the work pending for the current task on its way back to user mode.
void resume_user_mode_work();
}  // namespace umemcg
