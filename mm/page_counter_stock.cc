// SPDX-License-Identifier: GPL-2.0-only
// mm/page_counter_stock.cc: the page_counter per-CPU stock of seed 003 (see
// page_counter_stock.h).
//
// Mirrors: mm/page_counter.c of the seed-003 series ("mm/page_counter: introduce per-CPU stock",
//   "make page_counter_try_charge() stock-aware", "restrict memory stock to leaf cgroups")
// Emulation: see page_counter_stock.h.
#include "mm/page_counter_stock.h"

#include <algorithm>

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
 * every refill, which follows every miss that charged a batch: the hit path stays call-free.
 */
void pc_drain_lost_slots(page_counter_stock_pcp *stock) REQUIRES(stock->lock) {
  for (int i = 0; i < NR_PC_STOCK; ++i) {
    page_counter *c = READ_ONCE(stock->cached[i]);
    if (c && !READ_ONCE(c->stock)) pc_drain_slot(stock->bank, stock, i);
  }
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
  if (!bank || nr_pages > PC_STOCK_BATCH) {
    page_counter_uncharge(counter, nr_pages);
    return;
  }
  page_counter_stock_pcp *stock = this_cpu_ptr(bank->pcp);
  if (!local_trylock(&stock->lock)) {
    page_counter_uncharge(counter, nr_pages);
    return;
  }
  pc_drain_lost_slots(stock);
  int empty_slot = -1;
  int i;
  for (i = 0; i < NR_PC_STOCK; ++i) {
    page_counter *cached = READ_ONCE(stock->cached[i]);
    if (!cached && empty_slot == -1) empty_slot = i;
    if (cached == counter) {
      unsigned int n = READ_ONCE(stock->nr_pages[i]) + nr_pages;
      WRITE_ONCE(stock->nr_pages[i], static_cast<u8>(n));
      if (n > PC_STOCK_BATCH) pc_drain_slot(bank, stock, i);
      local_unlock(&stock->lock);
      return;
    }
  }
  i = empty_slot;
  if (i == -1) {
    i = static_cast<int>(prandom_u32_below_state(&stock->rnd, NR_PC_STOCK));
    pc_drain_slot(bank, stock, i);
  }
  bank->get(counter);
  WRITE_ONCE(stock->cached[i], counter);
  WRITE_ONCE(stock->nr_pages[i], static_cast<u8>(nr_pages));
  local_unlock(&stock->lock);
}

pc_charge_result page_counter_try_charge_stock(page_counter *counter, unsigned int nr_pages,
                                               bool allow_spinning, page_counter **fail,
                                               unsigned int *charged, bool try_stock) {
  page_counter_stock *bank = READ_ONCE(counter->stock);

  if (bank && try_stock && page_counter_consume_stock(bank, counter, nr_pages))
    return PC_CHARGE_STOCK;

  // Without a stock, or for callers that may not spin, charge exactly.
  unsigned int batch = (bank && allow_spinning) ? std::max(PC_STOCK_BATCH, nr_pages) : nr_pages;
  if (page_counter_try_charge(counter, batch, fail)) {
    if (batch > nr_pages) page_counter_refill_stock(counter, batch - nr_pages);
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
