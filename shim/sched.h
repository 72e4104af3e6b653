// SPDX-License-Identifier: GPL-2.0-only
// shim/sched.h: task_struct, current, task states, sleeping and waking, signals.
//
// Mirrors: include/linux/sched.h, include/linux/sched/signal.h, kernel/sched/core.c (the
//   sleep/wake protocol only), include/linux/resume_user_mode.h (Linux 6.19)
// The sleep protocol is the kernel's: set_current_state(TASK_*), check the condition, schedule();
// a waker calls wake_up_process()/wake_up_state(), which sets the task back to TASK_RUNNING, so a
// wake-up between the state change and schedule() is never lost. schedule() in an interruptible
// (or killable) state returns at once when a (fatal) signal is pending, as __schedule() does.
// Emulation: there is no run queue or load balancing; which task runs is decided by the machine
//   (emu::Machine): real OS threads in native mode, a seeded scheduler in simulated mode.
// Emulation: signals are reduced to "some signal pending" and "fatal signal pending" (SIGKILL);
//   there are no handlers.
#pragma once

#include <atomic>
#include <cstdint>

#include "shim/compiler.h"
#include "shim/smp.h"
#include "shim/thread_annotations.h"
#include "shim/types.h"

namespace umemcg {

struct mm_struct;     // mm/: the address space model
struct mem_cgroup;    // mm/: struct mem_cgroup
struct obj_cgroup;    // mm/: struct obj_cgroup
struct css_set;       // kernel/: the task's cgroups
struct CAPABILITY("spinlock") spinlock_t;  // shim/spinlock.h (which includes this header)
// kernel/cgroup.h: guards task_struct::frozen (declared here for its GUARDED_BY).
extern spinlock_t css_set_lock;

namespace emu {
struct TaskImpl;
}

// task_struct::flags (the subset umemcg uses; kernel values).
inline constexpr unsigned int PF_EXITING = 0x00000004;
inline constexpr unsigned int PF_MEMALLOC = 0x00000800;
inline constexpr unsigned int PF_KSWAPD = 0x00020000;
inline constexpr unsigned int PF_MEMALLOC_NOFS = 0x00040000;
inline constexpr unsigned int PF_MEMALLOC_NOIO = 0x00080000;
inline constexpr unsigned int PF_WQ_WORKER = 0x00000020;
inline constexpr unsigned int PF_KTHREAD = 0x00200000;

// Task states (kernel values).
inline constexpr unsigned int TASK_RUNNING = 0x0000;
inline constexpr unsigned int TASK_INTERRUPTIBLE = 0x0001;
inline constexpr unsigned int TASK_UNINTERRUPTIBLE = 0x0002;
inline constexpr unsigned int TASK_WAKEKILL = 0x0100;
inline constexpr unsigned int TASK_KILLABLE = TASK_WAKEKILL | TASK_UNINTERRUPTIBLE;
inline constexpr unsigned int TASK_NORMAL = TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE;

// Thread flags (task_struct::thread_flags bits).
inline constexpr int TIF_SIGPENDING = 2;
inline constexpr int TIF_NOTIFY_RESUME = 1;
inline constexpr int TIF_NEED_RESCHED = 3;

// task_struct::jobctl bits (kernel value): the cgroup freezer's trap, taken on the way back to
// user mode (kernel/cgroup_freezer.cc).
inline constexpr int JOBCTL_TRAP_FREEZE_BIT = 23;

inline constexpr int TASK_COMM_LEN = 16;
inline constexpr long MAX_SCHEDULE_TIMEOUT = __LONG_MAX__;

struct task_struct {
  int pid = 0;
  int tgid = 0;
  char comm[TASK_COMM_LEN] = {};
  unsigned int flags = 0;
  // Sleep state; TASK_RUNNING unless the task is going to sleep or asleep.
  std::atomic<unsigned int> __state{TASK_RUNNING};
  unsigned long thread_flags = 0;          // TIF_* bits, atomic bitops
  std::atomic<bool> fatal_signal{false};   // SIGKILL pending
  // JOBCTL_* bits, atomic bitops; set and cleared under the freezer's siglock
  // (kernel/cgroup_freezer.cc).
  unsigned long jobctl = 0;
  // Counted in its cgroup's nr_frozen_tasks. Written by the task itself only; the task reads
  // its own flag without the lock through cgroup_task_frozen_self() (kernel/cgroup_freezer.cc).
  bool frozen GUARDED_BY(css_set_lock) = false;
  std::atomic<bool> exiting{false};

  // memcg (include/linux/sched.h, CONFIG_MEMCG)
  unsigned int memcg_nr_pages_over_high = 0;
  bool in_bpf_memcg = false;  // inside bpf_memcg_high_policy() (re-entrancy guard)
  struct mem_cgroup *active_memcg = nullptr;
  struct obj_cgroup *objcg = nullptr;
  bool in_user_fault = false;
  // The memcg whose v1 OOM (oom_kill_disable) this task waits out at the end of its page fault
  // (a css reference held), or nullptr.
  struct mem_cgroup *memcg_in_oom = nullptr;
  struct mm_struct *mm = nullptr;
  struct css_set *cgroups = nullptr;
  short oom_score_adj = 0;

  // migrate_disable() depth: the task does not change vCPU while non-zero.
  unsigned short migration_disabled = 0;
  // rcu_read_lock() depth of this task.
  int rcu_read_lock_nesting = 0;

  // BPF task-local storage (BPF_MAP_TYPE_TASK_STORAGE): owned by bpfvm/.
  void *bpf_storage = nullptr;
  // BPF: the running program's context (the kernel's task_struct::bpf_ctx, opaque here).
  void *bpf_ctx = nullptr;

  // Emulator bookkeeping (scheduling, vCPU, wait reason, RCU nesting).
  emu::TaskImpl *emu = nullptr;
};

// The running task. Emulation: a thread-local variable (not the kernel's macro, so that C++
// code naming a member `current` is unaffected) switched by the machine with the vCPU pointer.
// (__thread, not thread_local: a plain TLS slot with no C++ initialisation wrapper on each access.)
extern __thread task_struct *current __attribute__((tls_model("initial-exec")));

inline void set_current_state(unsigned int state) {
  current->__state.store(state, std::memory_order_seq_cst);  // full barrier, as in the kernel
}
inline void __set_current_state(unsigned int state) {
  current->__state.store(state, std::memory_order_relaxed);
}

// Sleeps until woken when the current state is not TASK_RUNNING (see the banner).
void schedule();
// The same with a timeout in jiffies; returns the jiffies left (0 on timeout).
long schedule_timeout(long timeout);
long schedule_timeout_killable(long timeout);
long schedule_timeout_uninterruptible(long timeout);
long schedule_timeout_interruptible(long timeout);

// Wakes the task if its state matches; returns whether it was woken.
bool wake_up_state(task_struct *p, unsigned int state);
inline bool wake_up_process(task_struct *p) { return wake_up_state(p, TASK_NORMAL); }

// A voluntary preemption point: a scheduling decision in simulated mode.
void cond_resched();
// Asserts that the caller may sleep (not atomic, not in an interrupt).
void might_sleep();

inline bool fatal_signal_pending(const task_struct *p) {
  return p->fatal_signal.load(std::memory_order_relaxed);
}
bool signal_pending(task_struct *p);
// Sends SIGKILL: marks it pending and wakes the task from TASK_INTERRUPTIBLE or killable sleeps.
void send_sig_kill(task_struct *p);
// Sends a non-fatal signal (TIF_SIGPENDING only): interrupts TASK_INTERRUPTIBLE sleeps. The
// kernel's signal_wake_up(p, false) is the same.
void send_sig_other(task_struct *p);
inline void signal_wake_up(task_struct *p) { send_sig_other(p); }
void clear_sig_other(task_struct *p);

// TIF_NOTIFY_RESUME: work to do on the way back to user mode.
void set_notify_resume(task_struct *p);
bool test_thread_flag(int flag);

inline bool in_task_flags(unsigned int f) { return current->flags & f; }

}  // namespace umemcg
