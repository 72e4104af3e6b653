// SPDX-License-Identifier: GPL-2.0-only
// mm/page_counter_stock.h: the per-CPU charge stock inside page_counter (seed 003, "move stock
// from mem_cgroup to page_counter", posted series v8; NOT upstream in 6.19).
//
// A stock bank is a per-CPU set of 7 slots, each caching pre-charged pages of one page_counter
// (same layout and rules as the 6.19 memcg stock: u8 counts and pointers in one cache line,
// first match only, whole-slot drain above a batch, random eviction, local trylock, remote
// drains on the memcg workqueue). A counter opts in by pointing counter->stock at a bank;
// page_counter_try_charge_stock() then consumes from the bank, and on a miss charges a batch up
// the hierarchy and refills the bank with the surplus. memcg uses one bank for memory counters
// and one for memsw counters (v1), so the two stock, hit, evict and drain independently.
// counter->stock may be cleared at run time (a v2 cgroup becoming a parent, through
// page_counter_stock_disable()): it is read with READ_ONCE, and slots left behind for such
// counters are drained lazily, by the first refill on each CPU after the clear (the bank counts
// the clears; a refill that sees a count it has not seen yet scans its slots).
//
// Mirrors: mm/page_counter.c, include/linux/page_counter.h of the seed-003 series (Linux 6.19
//   base); the memcg-side half is mm/memcontrol_pcstock.cc.
// Emulation: the series' exact function signatures are not public in the seed; the kernel names
//   are kept where the cover letter gives them (page_counter_try_charge consumes the stock), and
//   the stock-aware variant is a separate function here so that the plain 6.19
//   page_counter_try_charge() keeps its contract.
// Emulation: a slot pins the counter's owner through the bank's get/put callbacks (the series
//   keeps a css pointer next to the stock); they run only when a slot is filled or drained.
#pragma once

#include <algorithm>

#include "mm/page_counter.h"
#include "shim/compiler.h"
#include "shim/local_lock.h"
#include "shim/percpu.h"
#include "shim/thread_annotations.h"
#include "shim/workqueue.h"

namespace umemcg {

inline constexpr int NR_PC_STOCK = 7;
inline constexpr unsigned int PC_STOCK_BATCH = 64;  // MEMCG_CHARGE_BATCH
inline constexpr int PC_FLUSHING_CACHED_CHARGE = 0;

struct page_counter_stock_pcp {
  local_trylock_t lock;
  u8 nr_pages[NR_PC_STOCK] GUARDED_BY(lock);
  page_counter *cached[NR_PC_STOCK] GUARDED_BY(lock);

  work_struct work;
  unsigned long flags;  // PC_FLUSHING_CACHED_CHARGE
  u64 rnd;              // eviction randomness (shim/prandom.h), under lock
  struct page_counter_stock *bank;
  // The bank's lost_gen when this CPU's slots were last scanned for counters without stock.
  unsigned long lost_gen_seen GUARDED_BY(lock);
};
static_assert(offsetof(page_counter_stock_pcp, cached) + sizeof(void *) * NR_PC_STOCK <=
              SMP_CACHE_BYTES);

struct page_counter_stock {
  percpu<page_counter_stock_pcp> *pcp = nullptr;
  // Pin and unpin what owns a cached counter (its cgroup), so it outlives the slot.
  void (*get)(page_counter *) = nullptr;
  void (*put)(page_counter *) = nullptr;
  workqueue_struct *wq = nullptr;
  // How many counters lost their stock (page_counter_stock_disable()); incremented after the
  // counter's stock pointer is cleared, by a fully ordered RMW.
  unsigned long lost_gen = 0;
};

enum pc_charge_result {
  PC_CHARGE_FAILED = 0,  // a limit is in the way (*fail set)
  PC_CHARGE_STOCK,       // served from the stock: nothing was charged now
  PC_CHARGE_BATCH,       // charged up the hierarchy (*charged pages, surplus stocked)
};

// Sets up a bank for the running machine's CPUs. Returns 0 or -ENOMEM.
int page_counter_stock_init(page_counter_stock *bank, workqueue_struct *wq, u64 seed,
                            void (*get)(page_counter *), void (*put)(page_counter *));
// Drains every CPU (each on its own CPU, waited for) and frees the bank.
void page_counter_stock_destroy(page_counter_stock *bank);

/**
 * page_counter_consume_stock - take @nr_pages of @counter from this CPU's bank
 * Returns true on a hit. A miss (no slot, too few pages, or the lock held below us) returns
 * false. No path calls a function, so an inlining caller needs no stack frame for its hit.
 */
// Copies consume_stock() (mm/memcontrol_internal.h) on purpose: seed 003's design beside 6.19's.
inline bool page_counter_consume_stock(page_counter_stock *bank, page_counter *counter,
                                       unsigned int nr_pages) {
  if (nr_pages > PC_STOCK_BATCH) return false;
  page_counter_stock_pcp *stock = this_cpu_ptr(bank->pcp);
  OPTIMIZER_HIDE_VAR(stock);  // one address for the lock, the slot and the unlock (S1)
  if (!local_trylock(&stock->lock)) return false;
  bool ret = false;
  for (size_t i = 0; i < NR_PC_STOCK; ++i) {
    // Written only by this CPU under the lock we hold: plain loads, as in consume_stock()
    // (mm/memcontrol_internal.h); only the store is WRITE_ONCE for the racy remote readers.
    if (counter != stock->cached[i]) continue;
    u8 stock_pages = stock->nr_pages[i];
    if (likely(stock_pages >= nr_pages)) {
      WRITE_ONCE(stock->nr_pages[i], static_cast<u8>(stock_pages - nr_pages));
      ret = true;
    }
    break;
  }
  local_unlock(&stock->lock);
  return ret;
}

// Gives @nr_pages (charged to @counter) back through its stock, or uncharges directly.
void page_counter_refill_stock(page_counter *counter, unsigned int nr_pages);
/**
 * page_counter_refill_stock_bank - give @nr_pages of @counter back through @bank
 * @bank: the bank @counter->stock named when the caller read it
 * The pages are uncharged instead when they do not fit a slot, when this CPU's bank is locked
 * below us, and when @counter has lost its stock since the caller read it (checked under the
 * bank's lock, after the lost-slot scan; see page_counter_stock_disable()).
 */
void page_counter_refill_stock_bank(page_counter_stock *bank, page_counter *counter,
                                    unsigned int nr_pages);
/**
 * page_counter_stock_disable - @counter stops stocking (a v2 cgroup became a parent)
 * Clears @counter->stock. Slots that hold its pages are not drained here: the caller drains
 * the CPUs it can (page_counter_drain_cpu_if_needed()), and a slot that escapes (a refill that
 * raced with this, an isolated CPU) is drained by the next refill on its CPU. Caller serialises
 * against other disables of @counter.
 */
void page_counter_stock_disable(page_counter *counter);

/**
 * page_counter_try_charge_stock - charge @nr_pages to @counter, through its stock if it has one
 * @counter: counter
 * @nr_pages: pages
 * @allow_spinning: false for callers that may not spin (exact charging: no batch, no refill)
 * @fail: the lowest counter over its limit, on failure
 * @charged: pages charged up the hierarchy on PC_CHARGE_BATCH
 *
 * Stock hit first. On a miss, a batch (MEMCG_CHARGE_BATCH or @nr_pages, whichever is larger)
 * is charged with page_counter_try_charge() and the surplus refills the stock; if the batch
 * does not fit, exactly @nr_pages is tried before giving up.
 */
// @try_stock false: the caller already missed the stock (skip the consume attempt).
// Always inline: a caller's miss path (try_charge_memcg_pcstock()) is one frame around the two
// calls a miss makes, the hierarchy charge and the refill.
[[gnu::always_inline]] inline pc_charge_result page_counter_try_charge_stock(page_counter *counter,
                                                      unsigned int nr_pages, bool allow_spinning,
                                                      page_counter **fail, unsigned int *charged,
                                                      bool try_stock = true) {
  page_counter_stock *bank = READ_ONCE(counter->stock);

  if (bank && try_stock && page_counter_consume_stock(bank, counter, nr_pages))
    return PC_CHARGE_STOCK;

  // Without a stock, or for callers that may not spin, charge exactly.
  unsigned int batch = (bank && allow_spinning) ? std::max(PC_STOCK_BATCH, nr_pages) : nr_pages;
  if (page_counter_try_charge(counter, batch, fail)) {
    if (batch > nr_pages) page_counter_refill_stock_bank(bank, counter, batch - nr_pages);
    *charged = batch;
    return PC_CHARGE_BATCH;
  }
  // Never fail because of the optional part of a batch.
  if (batch > nr_pages && page_counter_try_charge(counter, nr_pages, fail)) {
    *charged = nr_pages;
    return PC_CHARGE_BATCH;
  }
  return PC_CHARGE_FAILED;
}
// Queues (or, on @curcpu, runs) the drain of @cpu's bank if it holds pages of counters in
// @root's subtree. Caller serialises (memcg's percpu_charge_mutex).
void page_counter_drain_cpu_if_needed(page_counter_stock *bank, int cpu, int curcpu,
                                      page_counter *root);
// The dead-CPU drain: no locking.
void page_counter_stock_cpu_dead(page_counter_stock *bank, int cpu);

}  // namespace umemcg

namespace umemcg::emu {
// Racy snapshot of one CPU's slots (for the invariant checker).
struct pc_stock_slot {
  page_counter *counter;
  unsigned int nr_pages;
};
void page_counter_stock_snapshot(page_counter_stock *bank, int cpu, pc_stock_slot out[NR_PC_STOCK]);
}  // namespace umemcg::emu
