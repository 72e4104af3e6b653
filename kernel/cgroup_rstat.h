// SPDX-License-Identifier: GPL-2.0-only
// kernel/cgroup_rstat.h: recursive per-CPU statistics: the per-CPU "updated" tree of css and
// the flush that visits it, children before parents.
//
// A controller that keeps per-CPU statistics marks a css as updated on a CPU with
// css_rstat_updated(); the css and each ancestor not yet on that CPU's tree are linked in under
// their parent. css_rstat_flush(css) visits, for every CPU, the updated part of css's subtree in
// post-order (a child before its parent), unlinks it and calls the controller's
// css_rstat_flush(pos, cpu) for each, so that what a child pushes up is absorbed by its parent
// later in the same pass.
//
// Locking: each CPU's tree is protected by that CPU's rstat_cpu_lock (taken by updaters on the
// slow path and by the flusher while it unlinks); the flush itself is serialised by the
// subsystem's rstat lock, held across one CPU at a time, with a scheduling point between CPUs.
//
// Mirrors: kernel/cgroup/rstat.c (css_rstat_updated, css_rstat_flush, css_rstat_init,
//   css_rstat_exit, css_rstat_updated_list) (Linux 6.19)
// Emulation: updaters link themselves in under the per-CPU lock (the 6.12 scheme); 6.19 queues
//   them on a lockless per-CPU list that the flusher links in. Both give the flusher the same set
//   of updated css; the fast path (already on the tree: one load) is the same.
// Emulation: the cgroup's own base statistics (cpu.stat) and BPF rstat flushers are not modelled.
// Emulation: the cgroup core calls css_rstat_init/exit in the kernel; here the controller calls
//   them from css_alloc and first thing in css_free (the same points of the css lifetime).
// Emulation: css_rstat_exit's flush has no scheduling point between CPUs (the css has no
//   children left), so freeing a css is one step for observers between scheduling points.
#pragma once

#include "kernel/cgroup.h"
#include "shim/percpu.h"
#include "shim/spinlock.h"

namespace umemcg {

// One CPU's links of a css in that CPU's updated tree (under that CPU's rstat_cpu_lock). Not
// annotated: the lock is a per-CPU one chosen by the CPU number, which the analysis cannot name.
struct css_rstat_cpu {
  // Children with updates on this CPU: a list linked through their updated_next, ending in
  // nullptr.
  cgroup_subsys_state *updated_children = nullptr;
  cgroup_subsys_state *updated_next = nullptr;
  // On this CPU's tree. Read without the lock by css_rstat_updated()'s fast path.
  bool updated = false;
};

/**
 * css_rstat_init - allocate @css's per-CPU rstat links
 * Returns 0 or -ENOMEM. Context: task context, before the css is visible to updaters.
 */
int css_rstat_init(cgroup_subsys_state *css);
/**
 * css_rstat_exit - flush @css a last time and free its links
 * After it, nothing @css counted is pending any more (its parent absorbs it at its next flush).
 * Context: task context; every child has gone through css_rstat_exit already.
 */
void css_rstat_exit(cgroup_subsys_state *css);

/**
 * css_rstat_updated - @css has new per-CPU statistics on @cpu
 * Context: any, on @cpu; the fast path (already on the tree) is one load.
 */
void css_rstat_updated(cgroup_subsys_state *css, int cpu);

/**
 * css_rstat_flush - flush the updated part of @css's subtree on every CPU
 * Calls css->ss->css_rstat_flush(pos, cpu) for each updated css, children first.
 * Context: task context, may sleep between CPUs.
 */
void css_rstat_flush(cgroup_subsys_state *css);

}  // namespace umemcg
