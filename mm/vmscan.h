// SPDX-License-Identifier: GPL-2.0-only
// mm/vmscan.h: reclaim over the per-memcg LRU: memcg reclaim (try_to_free_mem_cgroup_pages),
// the global direct reclaim of the page allocator (try_to_free_pages) and kswapd, the node's
// background reclaim thread, which allocations wake below the low watermark (wakeup_kswapd) and
// which reclaims until the free pages are above the high watermark (balance_pgdat).
//
// Mirrors: mm/vmscan.c (Linux 6.19): try_to_free_mem_cgroup_pages, try_to_free_pages,
//   do_try_to_free_pages,
//   shrink_node, shrink_node_memcgs, get_scan_count, shrink_lruvec, shrink_list,
//   shrink_active_list, shrink_inactive_list, shrink_folio_list, isolate_lru_folios,
//   move_folios_to_lru, inactive_is_low, folio_check_references, kswapd, kswapd_try_to_sleep,
//   prepare_kswapd_sleep, wakeup_kswapd, balance_pgdat, kswapd_shrink_node, kswapd_age_node,
//   pgdat_balanced, kswapd_run, kswapd_stop
// Emulation: see vmscan.cc.
#pragma once

#include "mm/memcontrol.h"
#include "mm/memcontrol_files.h"
#include "mm/mmzone.h"
#include "mm/swapfile.h"

namespace umemcg {

inline constexpr int DEF_PRIORITY = 12;
// MAX_SWAPPINESS, SWAPPINESS_ANON_ONLY, vm_swappiness and mem_cgroup_swappiness():
// mm/memcontrol_files.h.

// total_swap_pages(), get_nr_swap_pages(): mm/swapfile.h. Without a swap device anon pages are
// never reclaimed (reclaim is file-only, as on a kernel without swap).

/**
 * try_to_free_mem_cgroup_pages - reclaim pages from @memcg's subtree
 * @memcg: reclaim target
 * @nr_pages: pages wanted (at least SWAP_CLUSTER_MAX are tried for)
 * @gfp_mask: allocation context of the caller
 * @reclaim_options: MEMCG_RECLAIM_MAY_SWAP, MEMCG_RECLAIM_PROACTIVE
 * @swappiness: proactive reclaim's swappiness (0..200, or SWAPPINESS_ANON_ONLY), or nullptr
 *
 * The priority loop from DEF_PRIORITY down to 0 over the subtree with effective protection,
 * then the retries (full walk, forced deactivation, below-low memcgs). Runs with PF_MEMALLOC set.
 * Context: task context, may sleep. Returns the number of pages reclaimed.
 */
unsigned long vmscan_try_to_free_mem_cgroup_pages(mem_cgroup *memcg, unsigned long nr_pages,
                                                  gfp_t gfp_mask, unsigned int reclaim_options,
                                                  int *swappiness);

/**
 * try_to_free_pages - global direct reclaim for an allocation that found no free page
 * @gfp_mask: allocation context
 * @order: allocation order
 *
 * do_try_to_free_pages() with no target memcg (the root): every memcg is walked with its
 * effective protection (memory.min, memory.low with the low-override retry) for
 * SWAP_CLUSTER_MAX pages; anon is scanned while swap has room. Runs with PF_MEMALLOC set.
 * Context: task context, may sleep. Returns the number of pages reclaimed.
 */
unsigned long try_to_free_pages(gfp_t gfp_mask, int order);

/**
 * wakeup_kswapd - wake the node's kswapd for an allocation below the low watermark
 * @gfp_flags: the allocation's context
 * @order: the allocation's order
 *
 * Records @order for kswapd and wakes it, unless it is awake already (not on kswapd_wait), the
 * node is hopeless (kswapd_failures at MAX_RECLAIM_RETRIES) or the free pages are above the
 * high watermark. The first call starts the thread (see vmscan_kswapd.cc).
 * Context: any; does not sleep.
 */
void wakeup_kswapd(gfp_t gfp_flags, int order);

// kswapd_init(): the node's kswapd state at boot (no thread yet) and vmscan's sysctl
// (vmscan_sysctl_init); kswapd_stop(): stops the thread, if it was started, and waits for it
// (machine shutdown, memcg shutdown).
void kswapd_init();
// vmscan_sysctl_table[]: /proc/sys/vm/swappiness (vm_swappiness, 0..MAX_SWAPPINESS), back at
// its boot value 60; registered at boot.
void vmscan_sysctl_init();
void kswapd_stop();
// The node (NODE_DATA(0)).
pglist_data *node_data();
// current_is_kswapd(): the current task is the node's kswapd (PF_KSWAPD).
inline bool current_is_kswapd() { return current && (current->flags & PF_KSWAPD); }

/**
 * balance_pgdat - kswapd's reclaim of the node until the free pages are above the high watermark
 * @pgdat: the node
 * @order: the order the waking allocations asked for
 *
 * The priority loop from DEF_PRIORITY down to 1 over every memcg (a full walk, protection as
 * for direct reclaim: memory.min and memory.low are skipped, with no low-override pass), each
 * round first aging the active anon lists (kswapd_age_node) and asking for the high watermark
 * in pages (kswapd_shrink_node); a run that reclaimed nothing counts a kswapd failure.
 * Context: the kswapd thread (PF_MEMALLOC | PF_KSWAPD). Returns the order reclaimed for.
 */
int balance_pgdat(pglist_data *pgdat, int order);
// pgdat_balanced(): the free pages are above the high watermark for @order.
bool pgdat_balanced(pglist_data *pgdat, int order);

namespace emu {
// Waits until kswapd sleeps until woken (after its nap on a balanced or hopeless node), or is
// not running: it isolates no folio and reclaims nothing more until an allocation wakes it, so
// the machine's page counts add up. For tests (MemcgEnv::run ends with it).
// Context: task context, may sleep.
void kswapd_wait_idle();
}  // namespace emu

// inactive_is_low: whether the inactive list of @memcg's subtree is too small against the active.
bool inactive_is_low(mem_cgroup *memcg, lru_list inactive_lru);

}  // namespace umemcg
