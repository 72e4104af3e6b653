// SPDX-License-Identifier: GPL-2.0-only
// mm/page_alloc.cc: the machine's RAM, the allocation slow path with global direct reclaim and
// the global OOM killer (see page_alloc.h).
//
// Mirrors: mm/page_alloc.c (Linux 6.19)
// Emulation: see page_alloc.h.
#include "mm/page_alloc.h"

#include <algorithm>

#include "mm/oom_kill.h"
#include "mm/page_flags.h"
#include "mm/swapfile.h"
#include "mm/vmscan.h"
#include "mm/workingset.h"
#include "shim/atomic.h"
#include "shim/mutex.h"
#include "shim/sched.h"

namespace umemcg {

namespace {

// Written at boot and shutdown only.
atomic_long_t g_totalram_pages;
// NR_FREE_PAGES: never negative; taken with a compare-and-exchange so that a reader never sees
// pages that an allocation is about to give back.
atomic_long_t g_nr_free_pages;
// min_free_kbytes and the zone's _watermark[], written at boot and shutdown only.
atomic_long_t g_min_free_kbytes;
atomic_long_t g_watermark[NR_WMARK];

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

// calculate_min_free_kbytes() and __setup_per_zone_wmarks() for the one (lowmem) zone.
void setup_per_zone_wmarks(unsigned long managed) {
  unsigned long lowmem_kbytes = managed * (PAGE_SIZE >> 10);
  long kbytes = static_cast<long>(int_sqrt(lowmem_kbytes * 16));
  kbytes = std::clamp(kbytes, 128L, 262144L);
  atomic_long_set(&g_min_free_kbytes, kbytes);
  // The zone holds every lowmem page, so its share of pages_min is all of it.
  unsigned long min = static_cast<unsigned long>(kbytes) >> (PAGE_SHIFT - 10);
  unsigned long tmp = std::max(min >> 2, managed * WATERMARK_SCALE_FACTOR_DEFAULT / 10000);
  atomic_long_set(&g_watermark[WMARK_MIN], static_cast<long>(min));
  atomic_long_set(&g_watermark[WMARK_LOW], static_cast<long>(min + tmp));
  atomic_long_set(&g_watermark[WMARK_HIGH], static_cast<long>(min + 2 * tmp));
  atomic_long_set(&g_watermark[WMARK_PROMO], static_cast<long>(min + 3 * tmp));
}

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
  atomic_long_set(&g_totalram_pages, static_cast<long>(totalram));
  atomic_long_set(&g_nr_free_pages, static_cast<long>(totalram));
  setup_per_zone_wmarks(totalram);
  kswapd_init();
}

void page_alloc_shutdown() {
  kswapd_stop();
  atomic_long_set(&g_totalram_pages, 0);
  atomic_long_set(&g_nr_free_pages, 0);
  for (auto &w : g_watermark) atomic_long_set(&w, 0);
  atomic_long_set(&g_min_free_kbytes, 0);
}

unsigned long totalram_pages() {
  return static_cast<unsigned long>(atomic_long_read(&g_totalram_pages));
}
unsigned long zone_managed_pages() { return totalram_pages(); }

unsigned long nr_free_pages() {
  return static_cast<unsigned long>(atomic_long_read(&g_nr_free_pages));
}

int min_free_kbytes() { return static_cast<int>(atomic_long_read(&g_min_free_kbytes)); }
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

void __free_pages(unsigned int order) { atomic_long_add(1L << order, &g_nr_free_pages); }

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
  atomic_long_add(pages, &g_nr_free_pages);
}

}  // namespace umemcg
