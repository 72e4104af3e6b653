// SPDX-License-Identifier: GPL-2.0-only
// mm/page_alloc.cc: the machine's RAM, the allocation slow path with global direct reclaim and
// the global OOM killer (see page_alloc.h).
//
// Mirrors: mm/page_alloc.c (Linux 6.19)
// Emulation: see page_alloc.h.
#include "mm/page_alloc.h"

#include <algorithm>
#include <iterator>

#include "kernel/sysctl.h"

#include "mm/oom_kill.h"
#include "mm/page_flags.h"
#include "mm/swapfile.h"
#include "mm/vmscan.h"
#include "mm/vmstat.h"
#include "mm/workingset.h"
#include "shim/atomic.h"
#include "shim/mutex.h"
#include "shim/sched.h"
#include "shim/spinlock.h"

namespace umemcg {

namespace {

// Written at boot and shutdown only.
atomic_long_t g_totalram_pages;
// NR_FREE_PAGES: never negative; taken with a compare-and-exchange so that a reader never sees
// pages that an allocation is about to give back.
atomic_long_t g_nr_free_pages;
// The zone's _watermark[]: written by setup_per_zone_wmarks() (at boot, on a write of
// vm.min_free_kbytes or vm.watermark_scale_factor) and at shutdown, read locklessly.
atomic_long_t g_watermark[NR_WMARK];
// vm.min_free_kbytes, vm.watermark_scale_factor (sysctl ints: the handlers write them with
// WRITE_ONCE, everything else reads them with READ_ONCE), and the last min_free_kbytes a
// write set (-1: none since boot), which a recalculation does not go below.
int g_min_free_kbytes;
int g_watermark_scale_factor = WATERMARK_SCALE_FACTOR_DEFAULT;
int user_min_free_kbytes = -1;
// setup_per_zone_wmarks()'s lock: one recalculation at a time.
DEFINE_SPINLOCK(wmark_lock);

unsigned long int_sqrt(unsigned long x) {
  unsigned long r = 0;
  // Newton's method from above: the integer square root, rounded down.
  if (x < 2) return x;
  unsigned long y = x / 2 + 1;
  r = x;
  while (y < r) {
    r = y;
    y = (r + x / r) / 2;
  }
  return r;
}

// calculate_min_free_kbytes(): int_sqrt(lowmem KiB * 16) clamped to [128, 262144], unless a
// write of vm.min_free_kbytes asked for at least that much.
void calculate_min_free_kbytes(unsigned long managed) {
  unsigned long lowmem_kbytes = managed * (PAGE_SIZE >> 10);
  int new_min_free_kbytes = static_cast<int>(int_sqrt(lowmem_kbytes * 16));
  if (new_min_free_kbytes > READ_ONCE(user_min_free_kbytes))
    WRITE_ONCE(g_min_free_kbytes, std::clamp(new_min_free_kbytes, 128, 262144));
}

// __setup_per_zone_wmarks() for the one (lowmem) zone, under wmark_lock: WMARK_MIN from
// min_free_kbytes, then LOW, HIGH and PROMO each max(min / 4, managed * watermark_scale_factor
// / 10000) pages above the previous one.
void setup_per_zone_wmarks() {
  spin_lock(&wmark_lock);
  unsigned long managed = zone_managed_pages();
  // The zone holds every lowmem page, so its share of pages_min is all of it.
  unsigned long min =
      static_cast<unsigned long>(READ_ONCE(g_min_free_kbytes)) >> (PAGE_SHIFT - 10);
  unsigned long factor = static_cast<unsigned long>(READ_ONCE(g_watermark_scale_factor));
  // mult_frac(managed, factor, 10000): exact for any managed.
  unsigned long scaled = managed / 10000 * factor + managed % 10000 * factor / 10000;
  unsigned long tmp = std::max(min >> 2, scaled);
  atomic_long_set(&g_watermark[WMARK_MIN], static_cast<long>(min));
  atomic_long_set(&g_watermark[WMARK_LOW], static_cast<long>(min + tmp));
  atomic_long_set(&g_watermark[WMARK_HIGH], static_cast<long>(min + 2 * tmp));
  atomic_long_set(&g_watermark[WMARK_PROMO], static_cast<long>(min + 3 * tmp));
  spin_unlock(&wmark_lock);
}

// min_free_kbytes_sysctl_handler(): a new value is kept as the user's and the watermarks are
// recomputed from it.
int min_free_kbytes_sysctl_handler(const ctl_table *table, int write, char *buffer,
                                   size_t *length, loff_t *ppos) {
  int rc = proc_dointvec_minmax(table, write, buffer, length, ppos);
  if (rc) return rc;
  if (write) {
    WRITE_ONCE(user_min_free_kbytes, READ_ONCE(g_min_free_kbytes));
    setup_per_zone_wmarks();
  }
  return 0;
}

// watermark_scale_factor_sysctl_handler(): the watermarks are recomputed with the new factor.
int watermark_scale_factor_sysctl_handler(const ctl_table *table, int write, char *buffer,
                                          size_t *length, loff_t *ppos) {
  int rc = proc_dointvec_minmax(table, write, buffer, length, ppos);
  if (rc) return rc;
  if (write) setup_per_zone_wmarks();
  return 0;
}

// page_alloc_sysctl_table[]: the knobs the one zone has.
// Emulation: watermark_boost_factor, percpu_pagelist_high_fraction, lowmem_reserve_ratio and
// the NUMA ratios are absent (no watermark boosting, per-CPU page lists, lower zones or zone
// reclaim here).
const ctl_table page_alloc_sysctl_table[] = {
    {.procname = "min_free_kbytes",
     .data = &g_min_free_kbytes,
     .maxlen = sizeof(g_min_free_kbytes),
     .mode = 0644,
     .proc_handler = min_free_kbytes_sysctl_handler,
     .extra1 = SYSCTL_ZERO},
    {.procname = "watermark_scale_factor",
     .data = &g_watermark_scale_factor,
     .maxlen = sizeof(g_watermark_scale_factor),
     .mode = 0644,
     .proc_handler = watermark_scale_factor_sysctl_handler,
     .extra1 = SYSCTL_ONE,
     .extra2 = SYSCTL_THREE_THOUSAND},
};

unsigned long wmark_pages(unsigned int alloc_flags) {
  return static_cast<unsigned long>(atomic_long_read(&g_watermark[alloc_flags & ALLOC_WMARK_MASK]));
}

// zone_watermark_fast() for order-0 and higher orders (no highatomic or CMA pages here).
bool zone_watermark_fast(unsigned int order, unsigned long mark, unsigned int alloc_flags,
                         long free) {
  if (!order && free > static_cast<long>(mark)) return true;
  return __zone_watermark_ok(order, mark, alloc_flags, free);
}

// get_page_from_freelist(): takes @nr pages if the free count stays above the watermark that
// @alloc_flags name (any free page will do with ALLOC_NO_WATERMARKS).
bool get_page_from_freelist(unsigned int order, unsigned int alloc_flags) {
  const long nr = 1L << order;
  long free = atomic_long_read(&g_nr_free_pages);
  do {
    if (free < nr) return false;
    if (!(alloc_flags & ALLOC_NO_WATERMARKS) &&
        !zone_watermark_fast(order, wmark_pages(alloc_flags), alloc_flags, free))
      return false;
  } while (!atomic_long_try_cmpxchg(&g_nr_free_pages, &free, free - nr));
  // rmqueue(): PGALLOC of the zone (and zone_statistics' NUMA hit, see mm/vmstat.h).
  __count_vm_events(PGALLOC_NORMAL, static_cast<unsigned long>(nr));
  return true;
}

// gfp_to_alloc_flags(): the min watermark, with the reserves of __GFP_HIGH and of callers that
// cannot block, and kswapd's wake-up when the mask asks for it.
unsigned int gfp_to_alloc_flags(gfp_t gfp_mask, unsigned int order) {
  unsigned int alloc_flags = ALLOC_WMARK_MIN | ALLOC_CPUSET;
  if (gfp_mask & __GFP_HIGH) alloc_flags |= ALLOC_MIN_RESERVE;
  if (gfp_mask & __GFP_KSWAPD_RECLAIM) alloc_flags |= ALLOC_KSWAPD;
  if (!(gfp_mask & __GFP_DIRECT_RECLAIM)) {
    if (!(gfp_mask & __GFP_NOMEMALLOC)) {
      alloc_flags |= ALLOC_NON_BLOCK;
      if (order > 0) alloc_flags |= ALLOC_HIGHATOMIC;
    }
    if (alloc_flags & ALLOC_MIN_RESERVE) alloc_flags &= ~ALLOC_CPUSET;
  }
  return alloc_flags;
}

// __gfp_pfmemalloc_flags(): a reclaiming task (PF_MEMALLOC) and __GFP_MEMALLOC ignore the
// watermarks; an OOM victim may use half of the min reserve.
unsigned int __gfp_pfmemalloc_flags(gfp_t gfp_mask) {
  if (gfp_mask & __GFP_NOMEMALLOC) return 0;
  if (gfp_mask & __GFP_MEMALLOC) return ALLOC_NO_WATERMARKS;
  if (current->flags & PF_MEMALLOC) return ALLOC_NO_WATERMARKS;
  if (current_is_oom_victim()) return ALLOC_OOM;
  return 0;
}

// wake_all_kswapds(): the one node's kswapd.
void wake_all_kswapds(unsigned int order, gfp_t gfp_mask) {
  wakeup_kswapd(gfp_mask, static_cast<int>(order));
}

// zone_reclaimable_pages(): the evictable LRU pages of the machine, anon ones only while swap
// has a free slot.
unsigned long zone_reclaimable_pages() {
  unsigned long nr = lruvec_subtree_lru_pages(root_mem_cgroup, LRU_INACTIVE_FILE) +
                     lruvec_subtree_lru_pages(root_mem_cgroup, LRU_ACTIVE_FILE);
  if (get_nr_swap_pages() > 0)
    nr += lruvec_subtree_lru_pages(root_mem_cgroup, LRU_INACTIVE_ANON) +
          lruvec_subtree_lru_pages(root_mem_cgroup, LRU_ACTIVE_ANON);
  return nr;
}

// should_reclaim_retry(): another round of reclaim is worth it while it made progress (or
// has not failed MAX_RECLAIM_RETRIES times in a row) and the reclaimable plus free pages would
// lift the free count above the min watermark.
bool should_reclaim_retry(unsigned int order, unsigned int alloc_flags, bool did_some_progress,
                          int *no_progress_loops) {
  if (did_some_progress && order <= PAGE_ALLOC_COSTLY_ORDER)
    *no_progress_loops = 0;
  else
    (*no_progress_loops)++;
  if (*no_progress_loops > MAX_RECLAIM_RETRIES) return false;
  long available = static_cast<long>(zone_reclaimable_pages() + nr_free_pages());
  if (!__zone_watermark_ok(order, min_wmark_pages(), alloc_flags, available)) return false;
  cond_resched();
  return true;
}

// __alloc_pages_may_oom(): one more try under oom_lock, at the high watermark (a parallel OOM
// kill may have freed memory; this allocation is not to fail just below it), then the global
// OOM killer. Sets *@did_some_progress when the caller should retry.
bool __alloc_pages_may_oom(gfp_t gfp_mask, unsigned int order, bool *did_some_progress) {
  *did_some_progress = false;
  // Somebody else is killing: back off for a jiffy and retry.
  if (!mutex_trylock(&oom_lock)) {
    *did_some_progress = true;
    schedule_timeout_uninterruptible(1);
    return false;
  }
  bool got = false;
  if (get_page_from_freelist(order, ALLOC_WMARK_HIGH | ALLOC_CPUSET)) {
    got = true;
  } else if (order <= PAGE_ALLOC_COSTLY_ORDER && !(gfp_mask & __GFP_RETRY_MAYFAIL)) {
    oom_control oc;
    oc.memcg = nullptr;
    oc.gfp_mask = gfp_mask;
    oc.order = static_cast<int>(order);
    if (out_of_memory(&oc)) *did_some_progress = true;
  }
  mutex_unlock(&oom_lock);
  return got;
}

bool __alloc_pages_slowpath(gfp_t gfp_mask, unsigned int order) {
  const bool can_direct_reclaim = gfpflags_allow_blocking(gfp_mask);
  int no_progress_loops = 0;
  unsigned int alloc_flags = gfp_to_alloc_flags(gfp_mask, order);

  if (alloc_flags & ALLOC_KSWAPD) wake_all_kswapds(order, gfp_mask);
  // The min watermark (or what gfp_to_alloc_flags grants below it).
  if (get_page_from_freelist(order, alloc_flags)) return true;
retry:
  // kswapd is not to go to sleep while this allocation loops.
  if (alloc_flags & ALLOC_KSWAPD) wake_all_kswapds(order, gfp_mask);
  if (unsigned int reserve_flags = __gfp_pfmemalloc_flags(gfp_mask))
    alloc_flags = reserve_flags | (alloc_flags & ALLOC_KSWAPD);
  if (get_page_from_freelist(order, alloc_flags)) return true;
  // The caller cannot reclaim, or is reclaiming itself (no recursion into reclaim).
  if (!can_direct_reclaim) return false;
  if (current->flags & PF_MEMALLOC) return false;

  // __alloc_pages_direct_reclaim()
  {
    unsigned long progress = try_to_free_pages(gfp_mask, static_cast<int>(order));
    if (get_page_from_freelist(order, alloc_flags)) return true;
    if (gfp_mask & __GFP_NORETRY) return false;
    if (order > PAGE_ALLOC_COSTLY_ORDER && !(gfp_mask & __GFP_RETRY_MAYFAIL)) return false;
    if (should_reclaim_retry(order, alloc_flags, progress > 0, &no_progress_loops)) goto retry;
  }

  // Reclaim has failed: start killing things.
  bool did_some_progress;
  if (__alloc_pages_may_oom(gfp_mask, order, &did_some_progress)) return true;
  // An OOM victim that failed even with its reserves does not loop (it is on its way out).
  if (current_is_oom_victim() && ((alloc_flags & ALLOC_OOM) || (gfp_mask & __GFP_NOMEMALLOC)))
    return false;
  if (did_some_progress) {
    no_progress_loops = 0;
    goto retry;
  }
  return false;
}

}  // namespace

void page_alloc_init(unsigned long totalram) {
  vmstat_init();
  atomic_long_set(&g_totalram_pages, static_cast<long>(totalram));
  atomic_long_set(&g_nr_free_pages, static_cast<long>(totalram));
  // The sysctls' boot values.
  WRITE_ONCE(user_min_free_kbytes, -1);
  WRITE_ONCE(g_watermark_scale_factor, static_cast<int>(WATERMARK_SCALE_FACTOR_DEFAULT));
  init_per_zone_wmark_min();
  register_sysctl_init("vm", page_alloc_sysctl_table, std::size(page_alloc_sysctl_table));
  kswapd_init();
}

void page_alloc_shutdown() {
  kswapd_stop();
  atomic_long_set(&g_totalram_pages, 0);
  atomic_long_set(&g_nr_free_pages, 0);
  for (auto &w : g_watermark) atomic_long_set(&w, 0);
  WRITE_ONCE(g_min_free_kbytes, 0);
}

unsigned long totalram_pages() {
  return static_cast<unsigned long>(atomic_long_read(&g_totalram_pages));
}
unsigned long zone_managed_pages() { return totalram_pages(); }

unsigned long nr_free_pages() {
  return static_cast<unsigned long>(atomic_long_read(&g_nr_free_pages));
}

void init_per_zone_wmark_min() {
  calculate_min_free_kbytes(zone_managed_pages());
  setup_per_zone_wmarks();
}

int min_free_kbytes() { return READ_ONCE(g_min_free_kbytes); }
int watermark_scale_factor() { return READ_ONCE(g_watermark_scale_factor); }
unsigned long min_wmark_pages() { return wmark_pages(ALLOC_WMARK_MIN); }
unsigned long low_wmark_pages() { return wmark_pages(ALLOC_WMARK_LOW); }
unsigned long high_wmark_pages() { return wmark_pages(ALLOC_WMARK_HIGH); }

bool __zone_watermark_ok(unsigned int order, unsigned long mark, unsigned int alloc_flags,
                         long free_pages) {
  long min = static_cast<long>(mark);
  // __zone_watermark_unusable_free(): the pages beyond the first of the allocation.
  free_pages -= (1L << order) - 1;
  if (alloc_flags & ALLOC_RESERVES) {
    // __GFP_HIGH callers may use half of the reserve, non-blocking ones a quarter more.
    if (alloc_flags & ALLOC_MIN_RESERVE) {
      min -= min / 2;
      if (alloc_flags & ALLOC_NON_BLOCK) min -= min / 4;
    }
    // An OOM victim may use half of what is left.
    if (alloc_flags & ALLOC_OOM) min -= min / 2;
  }
  // Emulation: free memory is never fragmented, so a higher order needs no free block of its
  // size (the kernel's per-order free_area check).
  return free_pages > min;
}

bool zone_watermark_ok_safe(unsigned int order, unsigned long mark) {
  return __zone_watermark_ok(order, mark, 0, atomic_long_read(&g_nr_free_pages));
}

bool __alloc_pages(gfp_t gfp_mask, unsigned int order) {
  // The fast path: free pages above the low watermark.
  if (get_page_from_freelist(order, ALLOC_WMARK_LOW)) [[likely]]
    return true;
  return __alloc_pages_slowpath(gfp_mask, order);
}

void __free_pages(unsigned int order) {
  __count_vm_events(PGFREE, 1UL << order);
  atomic_long_add(1L << order, &g_nr_free_pages);
}

folio *folio_alloc(gfp_t gfp) {
  if (!__alloc_pages(gfp, 0)) return nullptr;
  auto *f = new folio;
  atomic_set(&f->_refcount, 1);
  atomic_set(&f->_mapcount, 0);
  return f;
}

void free_unref_folios(folio **folios, unsigned int nr) {
  long pages = 0;
  for (unsigned int i = 0; i < nr; i++) {
    pages += folio_nr_pages(folios[i]);
    delete folios[i];
  }
  __count_vm_events(PGFREE, static_cast<unsigned long>(pages));
  atomic_long_add(pages, &g_nr_free_pages);
}

}  // namespace umemcg
