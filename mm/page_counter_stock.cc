// SPDX-License-Identifier: GPL-2.0-only
// mm/page_counter_stock.cc: the page_counter per-CPU stock of seed 003 (see
// page_counter_stock.h).
//
// Mirrors: mm/page_counter.c of the seed-003 series ("mm/page_counter: introduce per-CPU stock",
//   "make page_counter_try_charge() stock-aware", "restrict memory stock to leaf cgroups")
// Emulation: see page_counter_stock.h.
#include "mm/page_counter_stock.h"

#include <atomic>

#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/prandom.h"
#include "shim/preempt.h"
#include "shim/rcupdate.h"

namespace umemcg {

namespace {

void pc_drain_slot(page_counter_stock *bank, page_counter_stock_pcp *stock, int i)
    NO_THREAD_SAFETY_ANALYSIS {
  page_counter *old = READ_ONCE(stock->cached[i]);
  if (!old) return;
  u8 n = READ_ONCE(stock->nr_pages[i]);
  if (n) {
    page_counter_uncharge(old, n);
    WRITE_ONCE(stock->nr_pages[i], 0);
  }
  WRITE_ONCE(stock->cached[i], nullptr);
  bank->put(old);
}

void pc_drain_all_slots(page_counter_stock_pcp *stock) NO_THREAD_SAFETY_ANALYSIS {
  for (int i = 0; i < NR_PC_STOCK; ++i) pc_drain_slot(stock->bank, stock, i);
}

void pc_drain_local(work_struct *work) {
  if (WARN_ONCE(!in_task(), "drain in non-task context")) return;
  page_counter_stock_pcp *stock = container_of(work, page_counter_stock_pcp, work);
  // The work runs on the CPU that owns this copy (queued there with queue_work_on).
  WARN_ON_ONCE(stock != this_cpu_ptr(stock->bank->pcp));
  local_lock(&stock->lock);
  pc_drain_all_slots(stock);
  clear_bit(PC_FLUSHING_CACHED_CHARGE, &stock->flags);
  local_unlock(&stock->lock);
}

bool is_descendant(page_counter *c, page_counter *root) {
  for (; c; c = c->parent)
    if (c == root) return true;
  return false;
}

/*
 * Drains the slots of counters that no longer have a stock (v2 cgroups that became parents after
 * the slot was filled: leftovers of isolated CPUs or of refills racing with the switch). Runs on
 * the first refill of this CPU after a counter of the bank lost its stock (a refill follows
 * every miss that charged a batch, so the drain is lazy on misses): the hit path stays
 * call-free, and a refill while nothing was lost compares one number instead of scanning.
 */
[[gnu::noinline]] void pc_drain_lost_slots_scan(page_counter_stock_pcp *stock, unsigned long gen)
    REQUIRES(stock->lock) {
  for (int i = 0; i < NR_PC_STOCK; ++i) {
    page_counter *c = READ_ONCE(stock->cached[i]);
    if (c && !READ_ONCE(c->stock)) pc_drain_slot(stock->bank, stock, i);
  }
  stock->lost_gen_seen = gen;
}

inline void pc_drain_lost_slots(page_counter_stock_pcp *stock) REQUIRES(stock->lock) {
  // Pairs with page_counter_stock_disable(): every clear counted in the generation read here is
  // visible to the scan's READ_ONCE(c->stock) and to the caller's re-check (a relaxed load, then
  // an acquire fence).
  const unsigned long gen = READ_ONCE(stock->bank->lost_gen);
  smp_rmb();
  if (unlikely(gen != stock->lost_gen_seen)) pc_drain_lost_slots_scan(stock, gen);
}

/*
 * Puts @nr_pages of @counter, which has no slot in @stock, into the first empty slot, or into a
 * random one after draining it (the 6.19 stock's eviction). Out of line: a refill into the
 * counter's own slot, the common case, then calls nothing.
 */
[[gnu::noinline]] void pc_fill_new_slot(page_counter_stock *bank, page_counter_stock_pcp *stock,
                                        page_counter *counter, unsigned int nr_pages)
    REQUIRES(stock->lock) {
  int i = 0;
  while (i < NR_PC_STOCK && READ_ONCE(stock->cached[i])) ++i;
  if (i == NR_PC_STOCK) {
    i = static_cast<int>(prandom_u32_below_state(&stock->rnd, NR_PC_STOCK));
    pc_drain_slot(bank, stock, i);
  }
  bank->get(counter);
  WRITE_ONCE(stock->cached[i], counter);
  WRITE_ONCE(stock->nr_pages[i], static_cast<u8>(nr_pages));
}

}  // namespace

int page_counter_stock_init(page_counter_stock *bank, workqueue_struct *wq, u64 seed,
                            void (*get)(page_counter *), void (*put)(page_counter *))
    NO_THREAD_SAFETY_ANALYSIS {
  bank->pcp = alloc_percpu<page_counter_stock_pcp>();
  if (!bank->pcp) return -ENOMEM;
  bank->get = get;
  bank->put = put;
  bank->wq = wq;
  int cpu;
  for_each_possible_cpu(cpu) {
    page_counter_stock_pcp *s = per_cpu_ptr(bank->pcp, cpu);
    local_trylock_init(&s->lock);
    INIT_WORK(&s->work, pc_drain_local);
    s->flags = 0;
    s->bank = bank;
    s->rnd = (seed + 7) * 0x9E3779B97F4A7C15ull ^ (static_cast<u64>(cpu + 1) << 40) ^
             reinterpret_cast<std::uintptr_t>(bank);
    s->rnd = s->rnd ? s->rnd : 1;
    s->lost_gen_seen = bank->lost_gen;
  }
  return 0;
}

void page_counter_stock_destroy(page_counter_stock *bank) {
  if (!bank->pcp) return;
  int cpu;
  for_each_online_cpu(cpu) queue_work_on(cpu, bank->wq, &per_cpu_ptr(bank->pcp, cpu)->work);
  flush_workqueue(bank->wq);
  free_percpu(bank->pcp);
  bank->pcp = nullptr;
}

void page_counter_refill_stock(page_counter *counter, unsigned int nr_pages) {
  page_counter_stock *bank = READ_ONCE(counter->stock);
  if (!bank) {
    page_counter_uncharge(counter, nr_pages);
    return;
  }
  page_counter_refill_stock_bank(bank, counter, nr_pages);
}

void page_counter_refill_stock_bank(page_counter_stock *bank, page_counter *counter,
                                    unsigned int nr_pages) {
  if (nr_pages > PC_STOCK_BATCH) {
    page_counter_uncharge(counter, nr_pages);
    return;
  }
  page_counter_stock_pcp *stock = this_cpu_ptr(bank->pcp);
  if (!local_trylock(&stock->lock)) {
    page_counter_uncharge(counter, nr_pages);
    return;
  }
  pc_drain_lost_slots(stock);
  // The caller read counter->stock before the scan. A clear counted in the generation the scan
  // read is seen here, and the pages do not go into a slot the scan would have drained; a clear
  // after that read is counted in a newer generation, so the next refill here drains the slot.
  if (unlikely(!READ_ONCE(counter->stock))) {
    local_unlock(&stock->lock);
    page_counter_uncharge(counter, nr_pages);
    return;
  }
  // The counter's own slot (the first match, as consume finds it); else a new one.
  for (int i = 0; i < NR_PC_STOCK; ++i) {
    if (READ_ONCE(stock->cached[i]) != counter) continue;
    unsigned int n = READ_ONCE(stock->nr_pages[i]) + nr_pages;
    WRITE_ONCE(stock->nr_pages[i], static_cast<u8>(n));
    if (unlikely(n > PC_STOCK_BATCH)) pc_drain_slot(bank, stock, i);
    local_unlock(&stock->lock);
    return;
  }
  pc_fill_new_slot(bank, stock, counter, nr_pages);
  local_unlock(&stock->lock);
}

void page_counter_stock_disable(page_counter *counter) {
  page_counter_stock *bank = READ_ONCE(counter->stock);
  if (!bank) return;
  WRITE_ONCE(counter->stock, nullptr);
  // A fully ordered RMW: the clear above is visible to any refill that reads the new count
  // (pc_drain_lost_slots()).
  std::atomic_ref<unsigned long>(bank->lost_gen).fetch_add(1);
}

void page_counter_drain_cpu_if_needed(page_counter_stock *bank, int cpu, int curcpu,
                                      page_counter *root) NO_THREAD_SAFETY_ANALYSIS {
  if (!bank->pcp) return;
  page_counter_stock_pcp *stock = per_cpu_ptr(bank->pcp, cpu);
  if (test_bit(PC_FLUSHING_CACHED_CHARGE, &stock->flags)) return;
  bool needed = false;
  rcu_read_lock();  // a cached counter's owner is freed only after a grace period
  for (int i = 0; i < NR_PC_STOCK && !needed; ++i) {
    page_counter *c = READ_ONCE(stock->cached[i]);
    needed = c && READ_ONCE(stock->nr_pages[i]) && is_descendant(c, root);
  }
  rcu_read_unlock();
  if (!needed || test_and_set_bit(PC_FLUSHING_CACHED_CHARGE, &stock->flags)) return;
  if (cpu == curcpu)
    pc_drain_local(&stock->work);
  else
    queue_work_on(cpu, bank->wq, &stock->work);
}

void page_counter_stock_cpu_dead(page_counter_stock *bank, int cpu) {
  if (bank->pcp) pc_drain_all_slots(per_cpu_ptr(bank->pcp, cpu));
}

}  // namespace umemcg

namespace umemcg::emu {

void page_counter_stock_snapshot(page_counter_stock *bank, int cpu,
                                 pc_stock_slot out[NR_PC_STOCK]) NO_THREAD_SAFETY_ANALYSIS {
  for (int i = 0; i < NR_PC_STOCK; i++) {
    if (!bank->pcp) {
      out[i] = {nullptr, 0};
      continue;
    }
    auto *s = per_cpu_ptr(bank->pcp, cpu);
    out[i] = {READ_ONCE(s->cached[i]), READ_ONCE(s->nr_pages[i])};
  }
}

}  // namespace umemcg::emu
