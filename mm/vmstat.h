// SPDX-License-Identifier: GPL-2.0-only
// mm/vmstat.h: the machine's global statistics: the vm events (count_vm_events), the node and
// zone counts, and /proc/vmstat.
//
// The global vm events are counted per CPU where the kernel counts them, next to (not through)
// the memcg events of the same name: the page fault path (PGFAULT, PGMAJFAULT), swap I/O
// (PSWPIN, PSWPOUT) and the block I/O of swap and page-cache reads (PGPGIN, PGPGOUT, in 512-byte
// sectors as submit_bio counts them; /proc/vmstat prints KiB), the page allocator (PGALLOC_NORMAL
// per page taken, PGFREE per page freed, ALLOCSTALL_NORMAL per global direct reclaim),
// reclaim (PGREFILL, PGSCAN_KSWAPD/DIRECT and PGSTEAL_KSWAPD/DIRECT only for global reclaim, as
// !cgroup_reclaim() has it; PGSCAN_ANON/FILE, PGSTEAL_ANON/FILE, PGACTIVATE and PGDEACTIVATE
// for every reclaim), kswapd (PAGEOUTRUN per balance_pgdat, KSWAPD_LOW/HIGH_WMARK_HIT_QUICKLY
// when it cannot sleep), the LRU (PGACTIVATE of folio_activate), mlock (UNEVICTABLE_PGMLOCKED
// when a page is faulted into a VM_LOCKED mapping, UNEVICTABLE_PGMUNLOCKED when it is unmapped)
// and the OOM killer (OOM_KILL).
//
// The node statistics are those of memcg (mm/memcontrol_stat.h): every page is charged to one
// memcg, the root included, so a node count is the exact sum of every memcg's own count, freed
// memcgs included (what they held when freed). Exact where memory.stat's rstat-flushed numbers
// may lag.
//
// /proc/vmstat (vmstat_start/vmstat_show) lists, in the kernel's order and names, the zone
// items, the NUMA events, the node items, the global vm_stat items and the vm events of the
// emulated config (below), then "nr_unstable 0".
//
// Mirrors: mm/vmstat.c (vmstat_text, vmstat_start, vmstat_show, all_vm_events,
//   global_node_page_state_pages), include/linux/vmstat.h (count_vm_event(s),
//   __count_vm_events, __count_zid_vm_events), include/linux/vm_event_item.h,
//   mm/page-writeback.c (global_dirty_limits, domain_dirty_limits, global_dirtyable_memory)
//   (Linux 6.19)
// Emulation: the config behind the lines of /proc/vmstat is that of mm/memcontrol_stat.h
//   (CONFIG_SWAP, CONFIG_TRANSPARENT_HUGEPAGE, CONFIG_HUGETLB_PAGE, no ZSWAP, no
//   NUMA_BALANCING) plus CONFIG_NUMA (one node), CONFIG_MIGRATION, CONFIG_COMPACTION,
//   CONFIG_CMA, CONFIG_IOMMU_SUPPORT and CONFIG_X86 (x86-64: THP has the PUD line), without
//   ZONE_DMA, ZONE_DMA32, HIGHMEM or ZONE_DEVICE (the one zone is Normal: the per-zone events
//   have _normal and _movable lines),
//   ZSMALLOC, UNACCEPTED_MEMORY, SHADOW_CALL_STACK, MEMORY_BALLOON, DEBUG_TLBFLUSH, KSM,
//   PER_VMA_LOCK_STATS or DEBUG_STACK_USAGE. Lines of machinery the emulation does not have
//   (compaction, migration, THP, CMA, hugetlb allocation, zone reclaim, inode and slab
//   shrinking, drop_caches, swap readahead, direct-map splits, bounce buffers, pin counts,
//   writeback throttling) print 0, as on a kernel where it never happened.
// Emulation: numa_hit and numa_local are pgalloc_normal (one node: every page allocated is a
//   local hit); numa_miss, numa_foreign, numa_interleave and numa_other are 0.
// Emulation: nr_isolated_anon/file are 0 (reclaim does not count the folios it holds
//   isolated: the kernel's count is 0 too whenever no reclaimer runs); workingset_nodes is 0
//   (shadow entries are not kept in xarray nodes); nr_vmscan_write and nr_written are pswpout
//   (the only pages written are those reclaim swaps out, each written once);
//   nr_free_pages_blocks is the free pages rounded down to whole pageblocks (free memory is
//   never fragmented, mm/page_alloc.h); nr_mlock is nr_unevictable (every unevictable page
//   here is mlocked; the kernel counts it at mlock, here once it is on the LRU);
//   nr_memmap_pages and nr_memmap_boot_pages are 0 (the machine's RAM holds no memmap: MemTotal
//   is all of it); nr_dirty_threshold and nr_dirty_background_threshold are
//   global_dirty_limits() with vm.dirty_ratio 20 and vm.dirty_background_ratio 10 (their
//   defaults) over the free pages above the high watermark plus the file LRU pages.
// Emulation: of the unevictable events only unevictable_pgs_mlocked (a page faulted into a
//   VM_LOCKED mapping: mlock_new_folio) and unevictable_pgs_munlocked (its unmap) are counted:
//   a folio is mlocked only at birth, so reclaim never culls or scans one, and a munlocked
//   folio is freed straight from the unevictable list (the kernel moves it to an evictable list
//   first and counts unevictable_pgs_rescued). pglazyfree, pglazyfreed, pgreuse and pgrotated
//   are 0: there is no MADV_FREE, COW reuse or writeback rotation.
// Emulation: contexts without a vCPU (timer and RCU callbacks) count into one atomic set of
//   counters instead of a CPU's.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "mm/memcontrol_stat.h"

namespace umemcg {

// The vm events without a memcg counterpart, numbered after enum vm_event_item so that
// count_vm_events() takes both (one index space, as memcg_stat_item follows node_stat_item).
enum vm_global_event_item {
  PGALLOC_NORMAL = NR_VM_EVENT_ITEMS,  // PGALLOC of ZONE_NORMAL (__count_zid_vm_events)
  ALLOCSTALL_NORMAL,
  PAGEOUTRUN,
  KSWAPD_LOW_WMARK_HIT_QUICKLY,
  KSWAPD_HIGH_WMARK_HIT_QUICKLY,
  NR_VM_GLOBAL_EVENT_ITEMS
};

/**
 * __count_vm_events - count @delta occurrences of a global vm event on this CPU
 * @item: a vm_event_item or vm_global_event_item
 * Context: any; no preemption point inside (the kernel's raw_cpu_add).
 */
void __count_vm_events(int item, unsigned long delta);
// count_vm_events: the same with preemption disabled around it (this_cpu_add).
void count_vm_events(int item, unsigned long delta);
inline void count_vm_event(int item) { count_vm_events(item, 1); }

// The machine's count of a global vm event: every CPU's (all_vm_events for one item).
unsigned long global_vm_event(int item);

// global_node_page_state(): the machine's count of a node item in its native unit (bytes for
// the _B items, KiB for NR_KERNEL_STACK_KB, pages otherwise); 0 for an item memcg does not
// track (see the banner).
unsigned long global_node_page_state(int idx);
// global_node_page_state_pages(): the same in pages for the _B items.
unsigned long global_node_page_state_pages(int idx);

/**
 * vmstat_items - every line of /proc/vmstat as (name, value), in the kernel's order
 * Context: task context (walks the memcg tree).
 */
std::vector<std::pair<const char *, unsigned long>> vmstat_items();
// The text of /proc/vmstat: "name value\n" per item, then "nr_unstable 0\n".
std::string vmstat_text();

// Boot of the machine's statistics: every global vm event back to 0 (called by
// page_alloc_init()).
void vmstat_init();

}  // namespace umemcg
