// SPDX-License-Identifier: GPL-2.0-only
// shim/workqueue.h: workqueues: work items, delayed work, per-CPU and unbound queues.
//
// Mirrors: include/linux/workqueue.h, kernel/workqueue.c (the API and its guarantees)
//   (Linux 6.19)
// Guarantees reproduced: queueing a pending work item does nothing and returns false (several
// queueings before it runs coalesce into one execution); the PENDING bit is cleared just before
// the function runs, so the function may re-queue itself; queue_work_on() on a per-CPU workqueue
// runs the function on that vCPU (by a worker holding that vCPU, like any task); queue_work() on a
// per-CPU queue picks the caller's vCPU; flush_work() waits for the last queueing's execution;
// cancel_work_sync() removes a pending item and waits for a running one; delayed work arms a
// timer on the machine clock and queues the item when it fires; an item is non-reentrant: queued
// again while it runs, it runs again after, by the same worker, never at the same time.
// Emulation: each vCPU has one worker pool shared by all per-CPU workqueues, plus one unbound
//   pool; a pool gets a new worker whenever work is queued and no worker is idle (up to 32),
//   instead of the kernel's concurrency management on sleeping workers.
// max_active is the kernel's: at most that many items of one queue are active at once per pool
// (per vCPU for a per-CPU queue, over the whole queue for an unbound one, which has one pool
// here as on a one-node machine); the others wait, in queueing order, until one finishes.
// alloc_ordered_workqueue() runs one item at a time, in queueing order.
// Emulation: flush_workqueue() waits until the queue has nothing in flight, including work
//   queued after the flush began.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "shim/smp.h"
#include "shim/timer.h"

namespace umemcg {

struct work_struct;
using work_func_t = void (*)(work_struct *);

namespace emu {
struct WorkPool;
}

struct work_struct {
  unsigned long data = 0;  // WORK_STRUCT_PENDING_BIT, atomic bitops
  work_func_t func = nullptr;
  // Emulation: the pool bookkeeping the kernel keeps in data's high bits. Both are written only
  // under the lock of the pool the item is queued on; emu_pool is also read without a lock (as a
  // hint of where to look first, READ_ONCE), emu_wq only under the lock.
  emu::WorkPool *emu_pool = nullptr;  // the pool it was last queued on
  struct workqueue_struct *emu_wq = nullptr;  // the queue it is queued on; null once taken off
};

struct delayed_work {
  work_struct work;
  timer_list timer;
  struct workqueue_struct *wq = nullptr;
  int cpu = -1;
};

inline constexpr int WORK_STRUCT_PENDING_BIT = 0;
inline constexpr int WORK_CPU_UNBOUND = NR_CPUS;

// alloc_workqueue() flags (kernel values).
inline constexpr unsigned int WQ_UNBOUND = 1 << 1;
inline constexpr unsigned int WQ_FREEZABLE = 1 << 2;
inline constexpr unsigned int WQ_MEM_RECLAIM = 1 << 3;
inline constexpr unsigned int WQ_HIGHPRI = 1 << 4;
inline constexpr unsigned int WQ_PERCPU = 1 << 8;
inline constexpr unsigned int __WQ_ORDERED = 1 << 17;  // internal: alloc_ordered_workqueue()

inline constexpr int WQ_MAX_ACTIVE = 512;
inline constexpr int WQ_DFL_ACTIVE = WQ_MAX_ACTIVE / 2;  // max_active 0 asks for this

struct workqueue_struct;

extern workqueue_struct *system_wq;
extern workqueue_struct *system_percpu_wq;
extern workqueue_struct *system_unbound_wq;
extern workqueue_struct *system_dfl_wq;

void INIT_WORK(work_struct *work, work_func_t func);
void INIT_DELAYED_WORK(delayed_work *dwork, work_func_t func);
inline delayed_work *to_delayed_work(work_struct *work) {
  return reinterpret_cast<delayed_work *>(reinterpret_cast<char *>(work) -
                                          offsetof(delayed_work, work));
}

// max_active: items of the queue active at once per pool (see the banner); 0 for the default,
// WQ_DFL_ACTIVE; out of [1, WQ_MAX_ACTIVE] it is clamped, with a warning.
workqueue_struct *alloc_workqueue(const char *name, unsigned int flags, int max_active);
inline workqueue_struct *alloc_ordered_workqueue(const char *name, unsigned int flags) {
  return alloc_workqueue(name, WQ_UNBOUND | __WQ_ORDERED | flags, 1);
}
void destroy_workqueue(workqueue_struct *wq);
void flush_workqueue(workqueue_struct *wq);

// Returns false if the work was already pending.
bool queue_work_on(int cpu, workqueue_struct *wq, work_struct *work);
bool queue_work(workqueue_struct *wq, work_struct *work);
inline bool schedule_work(work_struct *work) { return queue_work(system_wq, work); }
bool queue_delayed_work_on(int cpu, workqueue_struct *wq, delayed_work *dwork,
                           unsigned long delay);
inline bool queue_delayed_work(workqueue_struct *wq, delayed_work *dwork, unsigned long delay) {
  return queue_delayed_work_on(WORK_CPU_UNBOUND, wq, dwork, delay);
}
inline bool schedule_delayed_work(delayed_work *dwork, unsigned long delay) {
  return queue_delayed_work(system_wq, dwork, delay);
}
// Queues (or re-arms a pending delayed work for) delay jiffies from now. Returns whether it was
// pending before.
bool mod_delayed_work_on(int cpu, workqueue_struct *wq, delayed_work *dwork,
                         unsigned long delay);
inline bool mod_delayed_work(workqueue_struct *wq, delayed_work *dwork, unsigned long delay) {
  return mod_delayed_work_on(WORK_CPU_UNBOUND, wq, dwork, delay);
}

// Waits for the last queueing of work to finish executing. Returns whether it had to wait.
bool flush_work(work_struct *work);
bool flush_delayed_work(delayed_work *dwork);
// Removes pending work, waits for a running instance. Returns whether it was pending.
bool cancel_work_sync(work_struct *work);
bool cancel_work(work_struct *work);
bool cancel_delayed_work(delayed_work *dwork);
bool cancel_delayed_work_sync(delayed_work *dwork);
bool work_pending(const work_struct *work);
inline bool delayed_work_pending(const delayed_work *dwork) { return work_pending(&dwork->work); }
bool work_busy(work_struct *work);

// The work item the current task is executing (workers only), or nullptr.
work_struct *current_work();

}  // namespace umemcg
