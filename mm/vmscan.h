// SPDX-License-Identifier: GPL-2.0-only
// mm/vmscan.h: memcg reclaim over the per-memcg LRU (try_to_free_mem_cgroup_pages).
//
// Mirrors: mm/vmscan.c (Linux 6.19): try_to_free_mem_cgroup_pages, do_try_to_free_pages,
//   shrink_node, shrink_node_memcgs, get_scan_count, shrink_lruvec, shrink_list,
//   shrink_active_list, shrink_inactive_list, shrink_folio_list, isolate_lru_folios,
//   move_folios_to_lru, inactive_is_low, folio_check_references
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

// inactive_is_low: whether the inactive list of @memcg's subtree is too small against the active.
bool inactive_is_low(mem_cgroup *memcg, lru_list inactive_lru);

}  // namespace umemcg
