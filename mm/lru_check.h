// SPDX-License-Identifier: GPL-2.0-only
// mm/lru_check.h: the memory model's consistency check of the per-memcg LRU, the kind a
// CONFIG_DEBUG_VM kernel makes as it updates LRU sizes, made whole on a quiescent machine.
//
// For every memcg mem_cgroup_iter() walks (online, and dying ones still referenced): each list's folios belong to the memcg and to
// that list (folio_lru_list), their pages add up to the list's lru_zone_size, and that size is
// the memcg's own LRU statistic (NR_LRU_BASE + lru, the exact per-CPU sum that memory.stat's
// anon/file lines flush from). Folios waiting in the per-CPU lru_add batches are on no list
// and counted in no size, as in the kernel.
// Mirrors: mm/memcontrol.c (mem_cgroup_update_lru_size's lru_size check), include/linux/
//   mm_inline.h (update_lru_size) (Linux 6.19)
// Emulation: the kernel only checks that a size does not go negative; this walks every list.
#pragma once

#include <string>

namespace umemcg::emu {

/**
 * lru_check_memcgs - check every allocated memcg's LRU lists against their sizes and stats
 * Returns "" when all agree, else one line naming the memcg, the list and the three figures.
 * Takes each lruvec's lru_lock; call between steps, with no fault, charge or reclaim running
 * (the statistics lag a list update by the few instructions between them).
 */
std::string lru_check_memcgs();

}  // namespace umemcg::emu
