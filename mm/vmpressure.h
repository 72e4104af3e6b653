// SPDX-License-Identifier: GPL-2.0-only
// mm/vmpressure.h: memory pressure levels from reclaim efficiency (vmpressure), and their
// cgroup v1 listeners (memory.pressure_level through cgroup.event_control).
//
// Reclaim reports, for the memcg it reclaims from (the target of a limit's reclaim, the root
// for the machine's direct reclaim), the pages it scanned and reclaimed in each pass over the
// subtree (vmpressure(), tree accounting). Once a memcg's window has seen vmpressure_win
// (SWAP_CLUSTER_MAX * 16 = 512) scanned pages, a work item on system_wq computes the level of
// the window: pressure = 100 * (1 - reclaimed / scanned) (0 when reclaimed >= scanned), "low"
// below 60, "medium" below 95, "critical" from 95; and signals the listeners of the memcg and
// then of each ancestor whose registration's level is at or below it:
//   - mode "default": signalled unless a listener lower in the walk (this memcg or a
//     descendant) was signalled already;
//   - mode "hierarchy": always;
//   - mode "local": only for the memcg's own window, never an ancestor's.
// A reclaim pass that reaches priority vmpressure_level_critical_prio (ilog2(10) = 3) or lower
// (vmpressure_prio()) reports a full window of nothing reclaimed: critical.
// Registration arguments: "LEVEL[,MODE]" (at most the first 19 characters are read, as the
// kernel's kstrndup(args, MAX_VMPRESSURE_ARGS_LEN); a third field is ignored); an unknown level
// or mode is -EINVAL.
//
// Mirrors: mm/vmpressure.c, include/linux/vmpressure.h (Linux 6.19): vmpressure_win,
//   vmpressure_level_med, vmpressure_level_critical, vmpressure_level_critical_prio,
//   vmpressure_level, vmpressure_calc_level, vmpressure_event, vmpressure_work_fn, vmpressure,
//   vmpressure_prio, vmpressure_register_event, vmpressure_unregister_event, vmpressure_init,
//   vmpressure_cleanup, memcg_to_vmpressure, vmpressure_to_memcg
// Emulation: the per-memcg (!tree) accounting, kept on v2 for socket pressure only
//   (mem_cgroup_set_socket_pressure), is not kept: there is no socket pressure in the
//   emulation. Tree accounting and its listeners are the kernel's on both hierarchies (on v2
//   nothing can register).
// Emulation: MGLRU's reclaim (lru_gen) is not modelled, so only the classic LRU's calls report.
#pragma once

#include "shim/gfp.h"
#include "shim/list.h"
#include "shim/mutex.h"
#include "shim/spinlock.h"
#include "shim/thread_annotations.h"
#include "shim/workqueue.h"

namespace umemcg {

struct mem_cgroup;
struct eventfd_ctx;

struct vmpressure {
  // The subtree's window: pages scanned and reclaimed since the last work item took them.
  spinlock_t sr_lock{0, "vmpressure_sr_lock"};
  unsigned long tree_scanned GUARDED_BY(sr_lock) = 0;
  unsigned long tree_reclaimed GUARDED_BY(sr_lock) = 0;
  // vmpressure_event registrations.
  mutex events_lock;
  list_head events GUARDED_BY(events_lock);
  work_struct work;
};

// The scan window, in pages.
inline constexpr unsigned long vmpressure_win = 32 * 16;  // SWAP_CLUSTER_MAX * 16

/**
 * vmpressure - account reclaim efficiency for @memcg's subtree
 * @gfp: the reclaim's allocation context (only reclaim that may do I/O, FS or allocates
 *   highmem/movable memory counts)
 * @memcg: the memcg reclaimed from (nullptr: the root)
 * @tree: true for the subtree's window (the only one kept; see the banner)
 * @scanned: pages scanned in this pass
 * @reclaimed: pages reclaimed in this pass
 * Queues the level computation once the window is full. Context: task context; takes a
 * spinlock.
 */
void vmpressure(gfp_t gfp, mem_cgroup *memcg, bool tree, unsigned long scanned,
                unsigned long reclaimed);
// A reclaim pass at priority @prio: at vmpressure_level_critical_prio or below, a full window
// with nothing reclaimed (critical).
void vmpressure_prio(gfp_t gfp, mem_cgroup *memcg, int prio);

void vmpressure_init(struct vmpressure *vmpr);
// css_free: waits for a queued level computation.
void vmpressure_cleanup(struct vmpressure *vmpr);
struct vmpressure *memcg_to_vmpressure(mem_cgroup *memcg);
mem_cgroup *vmpressure_to_memcg(struct vmpressure *vmpr);

// memory.pressure_level's cgroup.event_control handlers: 0, -EINVAL (bad LEVEL[,MODE]) or
// -ENOMEM.
int vmpressure_register_event(mem_cgroup *memcg, eventfd_ctx *eventfd, const char *args);
void vmpressure_unregister_event(mem_cgroup *memcg, eventfd_ctx *eventfd);

}  // namespace umemcg
