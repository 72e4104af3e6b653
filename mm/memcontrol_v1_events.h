// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_v1_events.h: cgroup v1 memory notifications: cgroup.event_control, usage
// thresholds on memory.usage_in_bytes / memory.memsw.usage_in_bytes, OOM notification on
// memory.oom_control (with under_oom), and the page-event ratelimit that checks thresholds.
//
// A user creates an eventfd, opens the control file and writes "<event_fd> <control_fd>
// <args>" to cgroup.event_control of the same cgroup; the eventfd is then signalled:
//   - memory.usage_in_bytes / memory.memsw.usage_in_bytes, args a size (page_counter_memparse,
//     "-1" for the maximum): each time usage crosses the threshold, up or down, as seen at the
//     memcg's (or a descendant's) page events, checked at most every 128 of them per CPU;
//   - memory.oom_control, args ignored: at every OOM of the memcg or of an ancestor (an OOM
//     notifies its whole subtree) that takes the subtree's OOM lock, and at once if the memcg
//     is under OOM when registering (a task waiting out an OOM keeps it under OOM);
//   - memory.pressure_level, args "LEVEL[,MODE]": at the reclaim pressure levels of
//     mm/vmpressure.h;
//   - when the registration goes away: the eventfd closed, or the cgroup removed (one last
//     signal).
// Errnos of the write: -EINVAL (format, unknown control file, a file of another cgroup, a
// removed cgroup, a bad threshold or pressure level), -EBADF (a descriptor that is not open).
//
// Mirrors: mm/memcontrol-v1.c (Linux 6.19): struct mem_cgroup_event, mem_cgroup_threshold(s),
//   __mem_cgroup_threshold, mem_cgroup_threshold, memcg1_charge_statistics,
//   memcg1_event_ratelimit, memcg1_check_events, memcg1_commit_charge, memcg1_swapout's and
//   memcg1_uncharge_batch's event counting, compare_thresholds,
//   __mem_cgroup_usage_(un)register_event, mem_cgroup_oom_(un)register_event,
//   mem_cgroup_oom_notify(_cb), memcg_event_remove, memcg_event_wake,
//   memcg_write_event_control, memcg1_alloc_events, memcg1_memcg_init, memcg1_css_offline,
//   mem_cgroup_oom_trylock/unlock, mem_cgroup_(un)mark_under_oom, memcg1_oom_prepare/finish,
//   oom_wait_info, memcg_oom_wake_function, memcg1_oom_recover, mem_cgroup_oom_synchronize
// Emulation: the page events are counted and checked on v1 only (on v2 nothing can register;
//   the soft-limit tree the kernel also updates there is not modelled).
// The v1 OOM wait: with oom_kill_disable set, a user page fault whose charge meets an OOM
//   fails it (VM_FAULT_OOM) and, at the end of the fault, sleeps on memcg_oom_waitq with
//   under_oom marked (memory.oom_control reads 1) until an uncharge, a limit raise or
//   oom_kill_disable cleared wakes it (memcg1_oom_recover), then retries the fault.
#pragma once

#include "kernel/cftype.h"
#include "kernel/eventfd.h"
#include "mm/memcontrol.h"
#include "shim/list.h"
#include "shim/mutex.h"
#include "shim/percpu.h"
#include "shim/spinlock.h"

namespace umemcg {

// A usage threshold: the eventfd to signal and the usage (pages) it watches.
struct mem_cgroup_threshold {
  eventfd_ctx *eventfd;
  unsigned long threshold;
};

// Thresholds sorted by value; current_threshold is the index of the last one <= usage at the
// last check (-1: none).
// Emulation: the kernel's flexible array is an array that follows the header in the same
//   allocation, reached through entries.
struct mem_cgroup_threshold_ary {
  int current_threshold;
  unsigned int size;
  struct mem_cgroup_threshold *entries;
};

struct mem_cgroup_thresholds {
  // RCU-published, changed under thresholds_lock. Not annotated: the checkers read it under
  // rcu_read_lock() only (rcu_dereference), and the lock is the enclosing memcg1_events'.
  mem_cgroup_threshold_ary *primary = nullptr;
  mem_cgroup_threshold_ary *spare = nullptr;    // for the next unregistration
};

enum mem_cgroup_events_target { MEM_CGROUP_TARGET_THRESH, MEM_CGROUP_NTARGETS };
struct memcg1_events_percpu {
  unsigned long nr_page_events;
  unsigned long targets[MEM_CGROUP_NTARGETS];
};

// Guards every memcg's oom_notify, under_oom and oom_lock (mm/memcontrol_v1_events.cc).
extern spinlock_t memcg_oom_lock;

struct memcg1_events {
  percpu<memcg1_events_percpu> *events_percpu = nullptr;
  mutex thresholds_lock;
  mem_cgroup_thresholds thresholds;        // memory.usage_in_bytes
  mem_cgroup_thresholds memsw_thresholds;  // memory.memsw.usage_in_bytes
  list_head oom_notify GUARDED_BY(memcg_oom_lock);   // mem_cgroup_eventfd_list
  list_head event_list GUARDED_BY(event_list_lock);  // mem_cgroup_event
  spinlock_t event_list_lock{0, "event_list_lock"};
  int under_oom GUARDED_BY(memcg_oom_lock) = 0;
  bool oom_lock GUARDED_BY(memcg_oom_lock) = false;
};

// css_alloc of a v1 memcg: its notification state (false: out of memory). memcg1_free_events
// frees it at css_free.
bool memcg1_alloc_events(mem_cgroup *memcg);
void memcg1_free_events(mem_cgroup *memcg);
// css_offline: every registration is torn down asynchronously, each eventfd signalled once.
void memcg1_css_offline(mem_cgroup *memcg);

/**
 * memcg1_check_events - count @nr_pages page events on this CPU and check the thresholds
 * @memcg: the memcg charged or uncharged (with its v1 state; nothing on v2)
 * Every 128 page events per CPU, the usage thresholds of @memcg and its ancestors are checked.
 * Context: task context with preemption enabled (disables it itself).
 */
void __memcg1_check_events(mem_cgroup *memcg, unsigned long nr_pages);
// On the charge path: one test of the v1 state on v2, inline.
inline void memcg1_check_events(mem_cgroup *memcg, unsigned long nr_pages) {
  if (memcg->v1_events) __memcg1_check_events(memcg, nr_pages);
}

/**
 * memcg1_oom_prepare - mem_cgroup_oom()'s v1 part before the killer
 * @memcg: the memcg at its limit
 * @locked: set when the subtree's OOM lock was taken (memcg1_oom_finish() drops it)
 *
 * With oom_kill_disable set the killer does not run: returns false, and a user page fault
 * records the OOM (current->memcg_in_oom, with a css reference) to wait it out at the end of
 * the fault (mem_cgroup_oom_synchronize()). Otherwise under_oom is marked for the subtree while
 * its OOM lock is tried, the lock taker signals the subtree's OOM eventfds, and returns true.
 * Always true on v2.
 */
bool memcg1_oom_prepare(mem_cgroup *memcg, bool *locked);
void memcg1_oom_finish(mem_cgroup *memcg, bool locked);
/**
 * memcg1_oom_recover - wake the tasks waiting out a v1 OOM related to @memcg
 * @memcg: a memcg whose usage fell or whose limit rose (nullptr or v2: nothing)
 * Wakes, if @memcg is under OOM, every waiter of mem_cgroup_oom_synchronize() whose OOM memcg
 * is an ancestor or a descendant of @memcg. Context: any; takes spinlocks.
 */
void memcg1_oom_recover(mem_cgroup *memcg);
// memory.oom_control's under_oom.
bool memcg1_under_oom(mem_cgroup *memcg);

// The cgroup.event_control row's write handler.
ssize_t memcg_write_event_control(kernfs_open_file *of, char *buf, size_t nbytes, off_t off);

}  // namespace umemcg
