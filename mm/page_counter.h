// SPDX-License-Identifier: GPL-2.0-only
// mm/page_counter.h: lockless hierarchical page accounting and limiting.
//
// A page_counter counts pages charged to one cgroup resource (memcg memory, swap, v1 kmem and
// tcpmem, hugetlb) and to each ancestor's counter of the same resource. Charges walk from the
// counter up to the root; try_charge refuses a charge that would take any level above its max.
// memory.min/low bookkeeping (children_*_usage) rides on the same walk for counters that support
// protection, and effective protection (emin/elow) is computed top-down by reclaim.
//
// Mirrors: include/linux/page_counter.h, mm/page_counter.c (Linux 6.19)
// Emulation: `max` is read and exchanged through std::atomic_ref (the kernel uses a plain read
//   and xchg()); the two loads that the try_charge/set_max pairing depends on are seq_cst loads,
//   which compile to the kernel's plain MOV on x86-64 (see page_counter.cc).
// Emulation: failcnt++ is a relaxed load and store (the kernel's data_race(c->failcnt++)): updates
//   may still be lost under a race, as in the kernel, but the access is race-free C++.
// Emulation: page_counter_init leaves min/low/high/watermarks/failcnt alone, like the kernel,
//   which relies on the zeroed memcg allocation; here the member initialisers give those zeroes.
// Emulation: the per-CPU stock of the "move stock to page_counter" series (seed 003) lives in
//   mm/page_counter_stock.{h,cc}; `stock` is non-null only when memcg boots with that design.
#pragma once

#include <climits>

#include "shim/atomic.h"
#include "shim/compiler.h"
#include "shim/types.h"

namespace umemcg {

// Per-CPU charge stock of seed 003 ("mm/page_counter: introduce per-CPU stock"; the posted series
// calls the per-CPU bank struct page_counter_stock_pcp and adds a stock_css next to it).
// Defined in mm/page_counter_stock.h.
struct page_counter_stock;

// Largest value a counter can hold: a byte count derived from it must still fit in a long.
inline constexpr unsigned long PAGE_COUNTER_MAX =
    sizeof(long) == 4 ? static_cast<unsigned long>(LONG_MAX)
                      : static_cast<unsigned long>(LONG_MAX) / PAGE_SIZE;

// struct page_counter: three groups, each starting on its own cache line (x86-64, 64 bytes).
//
//   offset   0  usage                       written by every charge and uncharge of this cgroup
//                                           and of every descendant: alone on its line, so the
//                                           hottest write in memcg does not bounce the limits.
//   offset  64  emin .. failcnt             protection tracking and statistics: written by the
//                                           charge walk only when they change (min_usage,
//                                           watermarks), by reclaim (emin/elow) and on limit
//                                           failures (failcnt). 9 longs = 72 bytes, so failcnt
//                                           spills onto the next line, as in 6.19 (a 2026
//                                           proposal moves failcnt next to usage).
//   offset 192  protection_support .. stock read-mostly: the flags, the limits and the parent
//                                           pointer, read on every level of every charge.
//
// sizeof == 256, and the struct itself is cache-line aligned (____cacheline_internodealigned_in_smp
// in the kernel; an internode line is 64 bytes on x86-64).
struct ____cacheline_aligned page_counter {
  // --- hot line ---------------------------------------------------------------------------
  // Pages charged, including those charged on behalf of descendants. Never negative once the
  // underflow clamp in page_counter_cancel() has run.
  atomic_long_t usage;

  // --- protection and statistics line(s) ---------------------------------------------------
  // Effective memory.min and the min-protected part of usage (min(usage, min)), plus the sum of
  // the children's min_usage.
  alignas(SMP_CACHE_BYTES) unsigned long emin = 0;
  atomic_long_t min_usage;
  atomic_long_t children_min_usage;

  // Effective memory.low and its usage tracking, as above.
  unsigned long elow = 0;
  atomic_long_t low_usage;
  atomic_long_t children_low_usage;

  // Global peak (memory.peak for fds that never reset it; v1 max_usage_in_bytes) and the peak
  // since the last cgroup-v2 memory.peak reset. Invariant: watermark >= local_watermark.
  unsigned long watermark = 0;
  unsigned long local_watermark = 0;
  // Charges refused at this level. v1 only: counted only when the charging leaf has
  // track_failcnt set.
  unsigned long failcnt = 0;

  // --- read-mostly line ----------------------------------------------------------------------
  // Maintain min_usage/low_usage on charge and uncharge (v2 memcg memory and the root's memory).
  alignas(SMP_CACHE_BYTES) bool protection_support = false;
  // Count failcnt when this counter is the charged leaf (v1 memcg memory, v1 hugetlb).
  bool track_failcnt = false;
  unsigned long min = 0;
  unsigned long low = 0;
  unsigned long high = 0;
  unsigned long max = PAGE_COUNTER_MAX;
  page_counter *parent = nullptr;
  // Seed 003's per-CPU stock bank, or nullptr (no stock). Changes at run time (a v2 cgroup
  // becoming a parent loses it): read with READ_ONCE.
  page_counter_stock *stock = nullptr;
};

/**
 * page_counter_init - initialise a counter
 * @counter: counter, zero-initialised beforehand (the member initialisers do that)
 * @parent: the same resource's counter of the parent cgroup, or nullptr for the root
 * @protection_support: maintain min/low usage tracking on charge and uncharge
 *
 * Sets usage to 0, max to PAGE_COUNTER_MAX and track_failcnt to false. Like the kernel it does
 * not touch min, low, high, the watermarks or failcnt.
 */
inline void page_counter_init(page_counter *counter, page_counter *parent,
                              bool protection_support) {
  atomic_long_set(&counter->usage, 0);
  WRITE_ONCE(counter->max, PAGE_COUNTER_MAX);
  counter->parent = parent;
  counter->protection_support = protection_support;
  counter->track_failcnt = false;
}

/**
 * page_counter_read - current usage of a counter, in pages
 * @counter: counter
 *
 * A relaxed read: the value may be stale by any concurrent charge in flight.
 */
inline unsigned long page_counter_read(const page_counter *counter) {
  return static_cast<unsigned long>(atomic_long_read(&counter->usage));
}

void page_counter_cancel(page_counter *counter, unsigned long nr_pages);
void page_counter_charge(page_counter *counter, unsigned long nr_pages);
bool page_counter_try_charge(page_counter *counter, unsigned long nr_pages,
                             page_counter **fail);
void page_counter_uncharge(page_counter *counter, unsigned long nr_pages);
void page_counter_set_min(page_counter *counter, unsigned long nr_pages);
void page_counter_set_low(page_counter *counter, unsigned long nr_pages);

/**
 * page_counter_set_high - set the high (throttling) threshold
 * @counter: counter
 * @nr_pages: threshold in pages
 *
 * A plain store: no propagation and no reclaim (the memory.high handler does the reclaim).
 */
inline void page_counter_set_high(page_counter *counter, unsigned long nr_pages) {
  WRITE_ONCE(counter->high, nr_pages);
}

int page_counter_set_max(page_counter *counter, unsigned long nr_pages);
int page_counter_memparse(const char *buf, const char *max, unsigned long *nr_pages);

/**
 * page_counter_reset_watermark - restart both peaks from the current usage
 * @counter: counter
 *
 * local_watermark is written first so that watermark >= local_watermark keeps holding for a
 * concurrent charge (modulo reordering, which the charge path tolerates: watermarks are
 * statistics). Used by v1's max_usage_in_bytes reset.
 */
inline void page_counter_reset_watermark(page_counter *counter) {
  unsigned long usage = page_counter_read(counter);

  WRITE_ONCE(counter->local_watermark, usage);
  WRITE_ONCE(counter->watermark, usage);
}

void page_counter_calculate_protection(page_counter *root, page_counter *counter,
                                       bool recursive_protection);

}  // namespace umemcg

namespace umemcg::emu {

// Test hook: called by page_counter_set_max() between its xchg of max and its re-read of usage,
// which is the window where a racing charge makes the setter retry. nullptr (the default) means
// no call. Returns the previous hook. Not for use outside tests.
using page_counter_set_max_hook_t = void (*)(page_counter *counter);
page_counter_set_max_hook_t set_page_counter_set_max_hook(page_counter_set_max_hook_t hook);

}  // namespace umemcg::emu
