// SPDX-License-Identifier: GPL-2.0-only
// mm/vmstat.cc: the global vm events, the node counts and /proc/vmstat (see vmstat.h).
//
// Mirrors: mm/vmstat.c, mm/page-writeback.c (global_dirty_limits) (Linux 6.19)
// Emulation: see vmstat.h.
#include "mm/vmstat.h"

#include <algorithm>
#include <climits>

#include "mm/memcontrol.h"
#include "mm/memcontrol_iter.h"
#include "mm/page_alloc.h"
#include "shim/atomic.h"
#include "shim/percpu.h"
#include "shim/preempt.h"

namespace umemcg {

namespace {

// struct vm_event_state: one CPU's counts.
struct vm_event_state {
  unsigned long event[NR_VM_GLOBAL_EVENT_ITEMS];
};
DEFINE_PER_CPU(vm_event_state, vm_event_states);
// Emulation: the counts of contexts without a vCPU (see the banner).
atomic_long_t g_vm_events_nocpu[NR_VM_GLOBAL_EVENT_ITEMS];

// Pages per pageblock (pageblock_order 9 on x86-64 with THP).
constexpr unsigned long pageblock_nr_pages = 512;
// HPAGE_PMD_NR: the THP items are printed in huge pages.
constexpr unsigned long HPAGE_PMD_NR = 512;

// The vm.dirty_ratio and vm.dirty_background_ratio defaults.
constexpr unsigned long vm_dirty_ratio = 20;
constexpr unsigned long dirty_background_ratio = 10;

// global_dirty_limits(): *@thresh and *@bg_thresh in pages (see the banner).
void global_dirty_limits(unsigned long *bg_thresh, unsigned long *thresh) {
  // global_dirtyable_memory(): the free pages above totalreserve_pages (the high watermark of
  // the one zone, which has no lowmem_reserve) plus the file LRU, at least 1.
  unsigned long x = nr_free_pages();
  x -= std::min(x, high_wmark_pages());
  x += global_node_page_state(NR_INACTIVE_FILE) + global_node_page_state(NR_ACTIVE_FILE);
  const unsigned long available_memory = x + 1;
  // domain_dirty_limits(): the ratios in 1/PAGE_SIZE units for precision.
  const unsigned long ratio = (vm_dirty_ratio * PAGE_SIZE) / 100;
  const unsigned long bg_ratio = (dirty_background_ratio * PAGE_SIZE) / 100;
  unsigned long t = (ratio * available_memory) / PAGE_SIZE;
  unsigned long bg = (bg_ratio * available_memory) / PAGE_SIZE;
  t = std::min<unsigned long>(t, UINT_MAX);
  if (bg >= t) bg = t / 2;
  *thresh = t;
  *bg_thresh = bg;
}

}  // namespace

void __count_vm_events(int item, unsigned long delta) {
  if (static_cast<unsigned int>(item) >= NR_VM_GLOBAL_EVENT_ITEMS) return;
  int cpu = emu::tls_cpu;
  if (unlikely(cpu < 0)) {
    atomic_long_add(static_cast<long>(delta), &g_vm_events_nocpu[item]);
    return;
  }
  unsigned long *p = &per_cpu_ptr(&vm_event_states, cpu)->event[item];
  WRITE_ONCE(*p, READ_ONCE(*p) + delta);
}

void count_vm_events(int item, unsigned long delta) {
  preempt_disable();
  __count_vm_events(item, delta);
  preempt_enable();
}

unsigned long global_vm_event(int item) {
  if (static_cast<unsigned int>(item) >= NR_VM_GLOBAL_EVENT_ITEMS) return 0;
  unsigned long sum = static_cast<unsigned long>(atomic_long_read(&g_vm_events_nocpu[item]));
  for (int cpu = 0; cpu < NR_CPUS; cpu++)
    sum += READ_ONCE(per_cpu_ptr(&vm_event_states, cpu)->event[item]);
  return sum;
}

void vmstat_init() {
  for (int cpu = 0; cpu < NR_CPUS; cpu++)
    for (unsigned long &e : per_cpu_ptr(&vm_event_states, cpu)->event) WRITE_ONCE(e, 0UL);
  for (auto &e : g_vm_events_nocpu) atomic_long_set(&e, 0);
}

unsigned long global_node_page_state(int idx) {
  if (idx < 0 || idx >= NR_VM_NODE_STAT_ITEMS || !memcg_stat_item_valid(idx)) return 0;
  long n = emu::memcg_freed_stat(idx);
  for (mem_cgroup *m = mem_cgroup_iter(nullptr, nullptr, nullptr); m;
       m = mem_cgroup_iter(nullptr, m, nullptr))
    n += emu::memcg_page_state_local_sum(m, idx);
  return n > 0 ? static_cast<unsigned long>(n) : 0;
}

unsigned long global_node_page_state_pages(int idx) {
  unsigned long v = global_node_page_state(idx);
  return memcg_page_state_unit(idx) == 1 ? v >> PAGE_SHIFT : v;
}

std::vector<std::pair<const char *, unsigned long>> vmstat_items() {
  auto node = [](int idx) { return global_node_page_state_pages(idx); };
  auto ev = [](int item) { return global_vm_event(item); };
  const unsigned long free = nr_free_pages();
  const unsigned long pgalloc = ev(PGALLOC_NORMAL);
  const unsigned long pswpout = ev(PSWPOUT);
  unsigned long dirty_bg, dirty;
  global_dirty_limits(&dirty_bg, &dirty);
  return {
      // enum zone_stat_item
      {"nr_free_pages", free},
      {"nr_free_pages_blocks", free / pageblock_nr_pages * pageblock_nr_pages},
      {"nr_zone_inactive_anon", node(NR_INACTIVE_ANON)},
      {"nr_zone_active_anon", node(NR_ACTIVE_ANON)},
      {"nr_zone_inactive_file", node(NR_INACTIVE_FILE)},
      {"nr_zone_active_file", node(NR_ACTIVE_FILE)},
      {"nr_zone_unevictable", node(NR_UNEVICTABLE)},
      {"nr_zone_write_pending", node(NR_FILE_DIRTY) + node(NR_WRITEBACK)},
      {"nr_mlock", node(NR_UNEVICTABLE)},
      {"nr_bounce", 0},
      {"nr_free_cma", 0},
      // enum numa_stat_item (CONFIG_NUMA)
      {"numa_hit", pgalloc},
      {"numa_miss", 0},
      {"numa_foreign", 0},
      {"numa_interleave", 0},
      {"numa_local", pgalloc},
      {"numa_other", 0},
      // enum node_stat_item
      {"nr_inactive_anon", node(NR_INACTIVE_ANON)},
      {"nr_active_anon", node(NR_ACTIVE_ANON)},
      {"nr_inactive_file", node(NR_INACTIVE_FILE)},
      {"nr_active_file", node(NR_ACTIVE_FILE)},
      {"nr_unevictable", node(NR_UNEVICTABLE)},
      {"nr_slab_reclaimable", node(NR_SLAB_RECLAIMABLE_B)},
      {"nr_slab_unreclaimable", node(NR_SLAB_UNRECLAIMABLE_B)},
      {"nr_isolated_anon", 0},
      {"nr_isolated_file", 0},
      {"workingset_nodes", 0},
      {"workingset_refault_anon", node(WORKINGSET_REFAULT_ANON)},
      {"workingset_refault_file", node(WORKINGSET_REFAULT_FILE)},
      {"workingset_activate_anon", node(WORKINGSET_ACTIVATE_ANON)},
      {"workingset_activate_file", node(WORKINGSET_ACTIVATE_FILE)},
      {"workingset_restore_anon", node(WORKINGSET_RESTORE_ANON)},
      {"workingset_restore_file", node(WORKINGSET_RESTORE_FILE)},
      {"workingset_nodereclaim", node(WORKINGSET_NODERECLAIM)},
      {"nr_anon_pages", node(NR_ANON_MAPPED)},
      {"nr_mapped", node(NR_FILE_MAPPED)},
      {"nr_file_pages", node(NR_FILE_PAGES)},
      {"nr_dirty", node(NR_FILE_DIRTY)},
      {"nr_writeback", node(NR_WRITEBACK)},
      {"nr_writeback_temp", 0},
      {"nr_shmem", node(NR_SHMEM)},
      {"nr_shmem_hugepages", node(NR_SHMEM_THPS) / HPAGE_PMD_NR},
      {"nr_shmem_pmdmapped", 0},
      {"nr_file_hugepages", node(NR_FILE_THPS) / HPAGE_PMD_NR},
      {"nr_file_pmdmapped", 0},
      {"nr_anon_transparent_hugepages", node(NR_ANON_THPS) / HPAGE_PMD_NR},
      {"nr_vmscan_write", pswpout},
      {"nr_vmscan_immediate_reclaim", 0},
      {"nr_dirtied", 0},
      {"nr_written", pswpout},
      {"nr_throttled_written", 0},
      {"nr_kernel_misc_reclaimable", 0},
      {"nr_foll_pin_acquired", 0},
      {"nr_foll_pin_released", 0},
      {"nr_kernel_stack", node(NR_KERNEL_STACK_KB)},
      {"nr_page_table_pages", node(NR_PAGETABLE)},
      {"nr_sec_page_table_pages", node(NR_SECONDARY_PAGETABLE)},
      {"nr_iommu_pages", 0},
      {"nr_swapcached", node(NR_SWAPCACHE)},
      {"pgdemote_kswapd", node(PGDEMOTE_KSWAPD)},
      {"pgdemote_direct", node(PGDEMOTE_DIRECT)},
      {"pgdemote_khugepaged", node(PGDEMOTE_KHUGEPAGED)},
      {"pgdemote_proactive", node(PGDEMOTE_PROACTIVE)},
      {"nr_hugetlb", node(NR_HUGETLB)},
      {"nr_balloon_pages", 0},
      // enum vm_stat_item
      {"nr_dirty_threshold", dirty},
      {"nr_dirty_background_threshold", dirty_bg},
      {"nr_memmap_pages", 0},
      {"nr_memmap_boot_pages", 0},
      // enum vm_event_item (sectors -> KiB for pgpgin/pgpgout)
      {"pgpgin", ev(PGPGIN) / 2},
      {"pgpgout", ev(PGPGOUT) / 2},
      {"pswpin", ev(PSWPIN)},
      {"pswpout", pswpout},
      {"pgalloc_normal", pgalloc},
      {"pgalloc_movable", 0},
      {"allocstall_normal", ev(ALLOCSTALL_NORMAL)},
      {"allocstall_movable", 0},
      {"pgskip_normal", 0},
      {"pgskip_movable", 0},
      {"pgfree", ev(PGFREE)},
      {"pgactivate", ev(PGACTIVATE)},
      {"pgdeactivate", ev(PGDEACTIVATE)},
      {"pglazyfree", ev(PGLAZYFREE)},
      {"pgfault", ev(PGFAULT)},
      {"pgmajfault", ev(PGMAJFAULT)},
      {"pglazyfreed", ev(PGLAZYFREED)},
      {"pgrefill", ev(PGREFILL)},
      {"pgreuse", ev(PGREUSE)},
      {"pgsteal_kswapd", ev(PGSTEAL_KSWAPD)},
      {"pgsteal_direct", ev(PGSTEAL_DIRECT)},
      {"pgsteal_khugepaged", ev(PGSTEAL_KHUGEPAGED)},
      {"pgsteal_proactive", ev(PGSTEAL_PROACTIVE)},
      {"pgscan_kswapd", ev(PGSCAN_KSWAPD)},
      {"pgscan_direct", ev(PGSCAN_DIRECT)},
      {"pgscan_khugepaged", ev(PGSCAN_KHUGEPAGED)},
      {"pgscan_proactive", ev(PGSCAN_PROACTIVE)},
      {"pgscan_direct_throttle", ev(PGSCAN_DIRECT_THROTTLE)},
      {"pgscan_anon", ev(PGSCAN_ANON)},
      {"pgscan_file", ev(PGSCAN_FILE)},
      {"pgsteal_anon", ev(PGSTEAL_ANON)},
      {"pgsteal_file", ev(PGSTEAL_FILE)},
      {"zone_reclaim_success", 0},
      {"zone_reclaim_failed", 0},
      {"pginodesteal", 0},
      {"slabs_scanned", 0},
      {"kswapd_inodesteal", 0},
      {"kswapd_low_wmark_hit_quickly", ev(KSWAPD_LOW_WMARK_HIT_QUICKLY)},
      {"kswapd_high_wmark_hit_quickly", ev(KSWAPD_HIGH_WMARK_HIT_QUICKLY)},
      {"pageoutrun", ev(PAGEOUTRUN)},
      {"pgrotated", ev(PGROTATED)},
      {"drop_pagecache", 0},
      {"drop_slab", 0},
      {"oom_kill", ev(OOM_KILL)},
      // CONFIG_MIGRATION
      {"pgmigrate_success", 0},
      {"pgmigrate_fail", 0},
      {"thp_migration_success", 0},
      {"thp_migration_fail", 0},
      {"thp_migration_split", 0},
      // CONFIG_COMPACTION
      {"compact_migrate_scanned", 0},
      {"compact_free_scanned", 0},
      {"compact_isolated", 0},
      {"compact_stall", 0},
      {"compact_fail", 0},
      {"compact_success", 0},
      {"compact_daemon_wake", 0},
      {"compact_daemon_migrate_scanned", 0},
      {"compact_daemon_free_scanned", 0},
      // CONFIG_HUGETLB_PAGE
      {"htlb_buddy_alloc_success", 0},
      {"htlb_buddy_alloc_fail", 0},
      // CONFIG_CMA
      {"cma_alloc_success", 0},
      {"cma_alloc_fail", 0},
      {"unevictable_pgs_culled", ev(UNEVICTABLE_PGCULLED)},
      {"unevictable_pgs_scanned", ev(UNEVICTABLE_PGSCANNED)},
      {"unevictable_pgs_rescued", ev(UNEVICTABLE_PGRESCUED)},
      {"unevictable_pgs_mlocked", ev(UNEVICTABLE_PGMLOCKED)},
      {"unevictable_pgs_munlocked", ev(UNEVICTABLE_PGMUNLOCKED)},
      {"unevictable_pgs_cleared", 0},
      {"unevictable_pgs_stranded", 0},
      // CONFIG_TRANSPARENT_HUGEPAGE
      {"thp_fault_alloc", ev(THP_FAULT_ALLOC)},
      {"thp_fault_fallback", 0},
      {"thp_fault_fallback_charge", 0},
      {"thp_collapse_alloc", ev(THP_COLLAPSE_ALLOC)},
      {"thp_collapse_alloc_failed", 0},
      {"thp_file_alloc", 0},
      {"thp_file_fallback", 0},
      {"thp_file_fallback_charge", 0},
      {"thp_file_mapped", 0},
      {"thp_split_page", 0},
      {"thp_split_page_failed", 0},
      {"thp_deferred_split_page", 0},
      {"thp_underused_split_page", 0},
      {"thp_split_pmd", 0},
      {"thp_scan_exceed_none_pte", 0},
      {"thp_scan_exceed_swap_pte", 0},
      {"thp_scan_exceed_share_pte", 0},
      {"thp_split_pud", 0},  // CONFIG_HAVE_ARCH_TRANSPARENT_HUGEPAGE_PUD (x86-64)
      {"thp_zero_page_alloc", 0},
      {"thp_zero_page_alloc_failed", 0},
      {"thp_swpout", ev(THP_SWPOUT)},
      {"thp_swpout_fallback", ev(THP_SWPOUT_FALLBACK)},
      // CONFIG_SWAP
      {"swap_ra", 0},
      {"swap_ra_hit", 0},
      {"swpin_zero", ev(SWPIN_ZERO)},
      {"swpout_zero", ev(SWPOUT_ZERO)},
      // CONFIG_X86
      {"direct_map_level2_splits", 0},
      {"direct_map_level3_splits", 0},
      {"direct_map_level2_collapses", 0},
      {"direct_map_level3_collapses", 0},
  };
}

std::string vmstat_text() {
  std::string text;
  for (const auto &[name, value] : vmstat_items()) {
    text += name;
    text += ' ';
    text += std::to_string(value);
    text += '\n';
  }
  // vmstat_show(): the deprecated counter kept for userspace.
  text += "nr_unstable 0\n";
  return text;
}

}  // namespace umemcg
