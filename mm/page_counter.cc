// SPDX-License-Identifier: GPL-2.0-only
// mm/page_counter.cc: charging, uncharging, limits, protection tracking and memparse for
// struct page_counter (see page_counter.h).
//
// Mirrors: mm/page_counter.c (Linux 6.19)
// Emulation: max is accessed through std::atomic_ref, and the two loads the try_charge/set_max
//   pairing relies on (max in try_charge, usage after the xchg in set_max) are seq_cst loads: the
//   kernel's value-returning atomics are full barriers around the access, while C++ only orders
//   a seq_cst RMW against later seq_cst accesses. On x86-64 both are the kernel's plain MOV.
// Emulation: the underflow warning's text has no trailing "\n": the shim's WARN adds the line end.
// Emulation: page_counter_memparse() rejects a null buf or max with -EINVAL (the kernel oopses).
// Emulation: a test hook (emu::set_page_counter_set_max_hook) can run code inside set_max's race
//   window; it is null outside tests.
#include "mm/page_counter.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "mm/cmdline.h"
#include "mm/page_counter_internal.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/sched.h"

namespace umemcg {

static_assert(offsetof(page_counter, usage) == 0);
static_assert(offsetof(page_counter, emin) == SMP_CACHE_BYTES, "usage must be alone on its line");
static_assert(offsetof(page_counter, protection_support) == 3 * SMP_CACHE_BYTES,
              "the read-mostly group starts on its own line");
static_assert(offsetof(page_counter, stock) + sizeof(void *) <= 4 * SMP_CACHE_BYTES,
              "the read-mostly group fits one line");
static_assert(sizeof(page_counter) == 4 * SMP_CACHE_BYTES);
static_assert(PAGE_COUNTER_MAX == (1UL << 51) - 1);

namespace {

std::atomic<emu::page_counter_set_max_hook_t> g_set_max_hook{nullptr};

inline std::atomic_ref<unsigned long> max_ref(page_counter *c) {
  return std::atomic_ref<unsigned long>(c->max);
}

bool track_protection(const page_counter *c) { return c->protection_support; }

/*
 * Raise local_watermark, and watermark behind it, to @new_usage. Racy on purpose: two chargers
 * may both pass the check and the smaller may store last, so a peak can be missed by one charge;
 * watermarks are statistics. Because every reset writes local_watermark <= watermark, a value
 * that does not beat local_watermark cannot beat watermark, so the second check is nested.
 */
inline void update_watermarks(page_counter *c, long new_usage) {
  unsigned long nu = static_cast<unsigned long>(new_usage);

  if (nu > READ_ONCE(c->local_watermark)) {
    WRITE_ONCE(c->local_watermark, nu);
    if (nu > READ_ONCE(c->watermark)) WRITE_ONCE(c->watermark, nu);
  }
}

/*
 * One of min/low: make @prot_usage = min(@usage, @setting) and feed the change into the parent's
 * @children_usage. The read before the xchg skips the atomic RMW (and the parent's cache line) in
 * the common case of no change. Two racing updaters each xchg and add their own delta, so the
 * parent's sum stays exact: it ends equal to the last value exchanged in.
 */
inline void propagate_one(unsigned long usage, unsigned long setting, atomic_long_t *prot_usage,
                          atomic_long_t *children_usage) {
  // The common case (no protection configured and none tracked) reads the setting only, on the
  // read-mostly line the charge walk reads anyway: prot_usage's line is not touched.
  if (!setting && !atomic_long_read(prot_usage)) return;

  unsigned long prot = std::min(usage, setting);
  unsigned long old = static_cast<unsigned long>(atomic_long_read(prot_usage));

  if (prot == old) return;
  old = static_cast<unsigned long>(atomic_long_xchg(prot_usage, static_cast<long>(prot)));
  long delta = static_cast<long>(prot - old);  // may be negative
  if (delta) atomic_long_add(delta, children_usage);
}

// The body of propagate_protected_usage(), inlined into the charge and uncharge walks.
[[gnu::always_inline]] inline void propagate_protected_usage_inline(page_counter *c,
                                                                    unsigned long usage) {
  if (!c->parent) return;

  propagate_one(usage, READ_ONCE(c->min), &c->min_usage, &c->parent->children_min_usage);
  propagate_one(usage, READ_ONCE(c->low), &c->low_usage, &c->parent->children_low_usage);
}

}  // namespace

/**
 * propagate_protected_usage - keep the parent's children_{min,low}_usage in step with @c
 * @c: counter whose usage changed (or whose min/low changed)
 * @usage: @c's new usage
 *
 * The root has no parent and feeds nothing upward. Callers decide whether @c tracks protection:
 * the charge paths test the leaf's protection_support, cancel tests @c's own, and set_min/set_low
 * call it unconditionally for @c and every ancestor.
 */
void propagate_protected_usage(page_counter *c, unsigned long usage) {
  propagate_protected_usage_inline(c, usage);
}

/**
 * page_counter_cancel - take pages out of one counter (no hierarchy walk)
 * @counter: counter
 * @nr_pages: number of pages to take out
 *
 * More uncharges than charges is a bug elsewhere: it warns once per boot and clamps usage to 0,
 * so later charges are counted from a sane base.
 */
void page_counter_cancel(page_counter *counter, unsigned long nr_pages) {
  long new_usage = atomic_long_sub_return(static_cast<long>(nr_pages), &counter->usage);

  if (WARN_ONCE(new_usage < 0, "page_counter underflow: %ld nr_pages=%lu", new_usage, nr_pages)) {
    new_usage = 0;
    // Racy against concurrent charges exactly as in the kernel: their adds may be wiped out.
    atomic_long_set(&counter->usage, new_usage);
  }
  if (track_protection(counter))
    propagate_protected_usage_inline(counter, static_cast<unsigned long>(new_usage));
}

/**
 * page_counter_charge - charge pages to a counter and all its ancestors, ignoring limits
 * @counter: counter
 * @nr_pages: number of pages to charge
 *
 * Never fails and never counts failcnt; usage may end above max. Protection tracking follows
 * the flag of @counter (the leaf) on every level.
 */
void page_counter_charge(page_counter *counter, unsigned long nr_pages) {
  bool protection = track_protection(counter);

  for (page_counter *c = counter; c; c = c->parent) {
    long new_usage = atomic_long_add_return(static_cast<long>(nr_pages), &c->usage);

    if (protection) propagate_protected_usage_inline(c, static_cast<unsigned long>(new_usage));
    update_watermarks(c, new_usage);
  }
}

/**
 * page_counter_try_charge - charge pages hierarchically unless a limit is in the way
 * @counter: counter
 * @nr_pages: number of pages to charge
 * @fail: set to the first counter (from @counter upward) whose max the charge would exceed
 *
 * A level accepts the charge when its new usage is <= max (usage == max is allowed). On failure
 * the levels below *@fail are cancelled again; their watermarks keep the raised value. failcnt
 * of the failing level is counted only when @counter has track_failcnt.
 *
 * Returns true on success, false (with *@fail set) if @counter or an ancestor hit its limit.
 */
namespace {

// The failure of page_counter_try_charge() at @c: undo @c's speculative add, count the failure,
// and cancel the levels below @c that took the charge (their watermarks stay raised: cancel never
// lowers a watermark). Out of line, so the charge walk needs no stack frame.
[[gnu::noinline]] bool page_counter_try_charge_failed(page_counter *counter, page_counter *c,
                                                      unsigned long nr_pages, bool track_failcnt,
                                                      page_counter **fail) {
  // Undo only the speculative add: no underflow check, no protection update at this level.
  atomic_long_sub(static_cast<long>(nr_pages), &c->usage);
  // Racy increment, statistics only (data_race() in the kernel): a count may be lost.
  if (track_failcnt) WRITE_ONCE(c->failcnt, READ_ONCE(c->failcnt) + 1);
  *fail = c;
  // Cancel the levels that took the charge: the leaf up to, not including, the failing one.
  for (page_counter *l = counter; l != c; l = l->parent) page_counter_cancel(l, nr_pages);
  return false;
}

}  // namespace

bool page_counter_try_charge(page_counter *counter, unsigned long nr_pages, page_counter **fail) {
  bool protection = track_protection(counter);

  for (page_counter *c = counter; c; c = c->parent) {
    /*
     * Speculative charge: add first, check after, undo on failure. This avoids a cmpxchg loop,
     * at a price: while a failing charge of N pages is in flight, usage reads up to N too high,
     * and a racing smaller charge can fail although it would have fit ("false lockout") and go
     * to reclaim early. The error is limited to the difference between the two sizes: under
     * 2M (512 pages) for a THP locking out a single page.
     *
     * Pairs with page_counter_set_max(): the value-returning add is fully ordered, so the read
     * of max below cannot be satisfied before the add is visible. Either this charger reads the
     * new max, or the setter's re-read of usage (after its xchg of max) sees this add and the
     * setter retries. Emulation: the max load is seq_cst so the C++ model gives that ordering.
     */
    long new_usage = atomic_long_add_return(static_cast<long>(nr_pages), &c->usage);

    if (unlikely(static_cast<unsigned long>(new_usage) >
                 max_ref(c).load(std::memory_order_seq_cst)))
      return page_counter_try_charge_failed(counter, c, nr_pages, counter->track_failcnt, fail);
    if (protection) propagate_protected_usage_inline(c, static_cast<unsigned long>(new_usage));
    update_watermarks(c, new_usage);
  }
  return true;
}

/**
 * page_counter_uncharge - uncharge pages from a counter and all its ancestors
 * @counter: counter
 * @nr_pages: number of pages to uncharge
 *
 * Each level is cancelled (and clamped on underflow) independently.
 */
void page_counter_uncharge(page_counter *counter, unsigned long nr_pages) {
  for (page_counter *c = counter; c; c = c->parent) page_counter_cancel(c, nr_pages);
}

/**
 * page_counter_set_max - set the maximum number of pages a counter may hold
 * @counter: counter
 * @nr_pages: new limit
 *
 * Never leaves the limit below usage: with concurrent chargers it retries until either the limit
 * holds or usage has overtaken it.
 *
 * The caller must serialise calls on the same counter.
 *
 * Returns 0 on success, -EBUSY if usage already exceeds @nr_pages (the limit is then unchanged).
 */
int page_counter_set_max(page_counter *counter, unsigned long nr_pages) {
  for (;;) {
    long usage = atomic_long_read(&counter->usage);

    if (static_cast<unsigned long>(usage) > nr_pages) return -EBUSY;

    /*
     * Pairs with page_counter_try_charge(), which adds to usage before it reads max. The xchg is
     * a full barrier on both sides, so read usage / swap max / re-read usage is ordered: a
     * charger that read the old max had already added, and the re-read below sees its pages.
     * If usage grew and the limit went down, that charger may have passed the old limit: put the
     * old limit back and start over. Raising the limit (nr_pages >= old) can never strand usage
     * above it, so growth then does not matter.
     */
    unsigned long old = max_ref(counter).exchange(nr_pages, std::memory_order_seq_cst);

    if (auto hook = g_set_max_hook.load(std::memory_order_acquire)) hook(counter);

    // Emulation: seq_cst load (see the banner) where the kernel's page_counter_read() suffices.
    // Unsigned, as page_counter_read() returns: a transiently negative usage (an underflow
    // being clamped) compares as huge and forces a retry.
    unsigned long now =
        static_cast<unsigned long>(counter->usage.counter.load(std::memory_order_seq_cst));
    if (now <= static_cast<unsigned long>(usage) || nr_pages >= old) return 0;

    max_ref(counter).store(old, std::memory_order_relaxed);
    cond_resched();
  }
}

/**
 * page_counter_set_min - set memory.min protection
 * @counter: counter
 * @nr_pages: protected amount in pages
 *
 * Recomputes min_usage/low_usage of @counter and every ancestor from their current usage,
 * whether or not they have protection_support.
 *
 * The caller must serialise calls on the same counter.
 */
void page_counter_set_min(page_counter *counter, unsigned long nr_pages) {
  WRITE_ONCE(counter->min, nr_pages);

  for (page_counter *c = counter; c; c = c->parent)
    propagate_protected_usage(c, page_counter_read(c));
}

/**
 * page_counter_set_low - set memory.low protection
 * @counter: counter
 * @nr_pages: protected amount in pages
 *
 * Same propagation as page_counter_set_min().
 *
 * The caller must serialise calls on the same counter.
 */
void page_counter_set_low(page_counter *counter, unsigned long nr_pages) {
  WRITE_ONCE(counter->low, nr_pages);

  for (page_counter *c = counter; c; c = c->parent)
    propagate_protected_usage(c, page_counter_read(c));
}

/**
 * page_counter_memparse - parse a limit written to a control file
 * @buf: the string, already stripped of surrounding whitespace by the caller
 * @max: the token meaning "no limit" ("max" for memcg, "-1" for hugetlb), matched exactly
 * @nr_pages: result in pages
 *
 * Anything but @max goes through memparse() and must be consumed completely. Bytes are rounded
 * down to whole pages and clamped to PAGE_COUNTER_MAX. An empty string is 0.
 *
 * Returns 0 and sets *@nr_pages, or -EINVAL (*@nr_pages untouched).
 */
int page_counter_memparse(const char *buf, const char *max, unsigned long *nr_pages) {
  char *end;
  u64 bytes;

  if (!buf || !max) return -EINVAL;  // Emulation: the kernel would oops.

  if (!std::strcmp(buf, max)) {
    *nr_pages = PAGE_COUNTER_MAX;
    return 0;
  }

  bytes = memparse(buf, &end);
  if (*end != '\0') return -EINVAL;

  *nr_pages = static_cast<unsigned long>(std::min<u64>(bytes / PAGE_SIZE, PAGE_COUNTER_MAX));
  return 0;
}

}  // namespace umemcg

namespace umemcg::emu {

page_counter_set_max_hook_t set_page_counter_set_max_hook(page_counter_set_max_hook_t hook) {
  return g_set_max_hook.exchange(hook, std::memory_order_acq_rel);
}

}  // namespace umemcg::emu
