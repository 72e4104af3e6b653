// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_pcstock.cc: the memcg side of the page_counter stock design (seed 003):
// try_charge_memcg with the stock inside the page counters, the two banks (memory, memsw),
// leaf-only stock on v2, refill and drains.
//
// Mirrors: mm/memcontrol.c of the seed-003 series ("flatten try_charge_memcg control flow",
//   "check PF_MEMALLOC after trying the limits", "move memory stock to page counters", "add
//   stock to the memsw page counter", "restrict memory stock to leaf cgroups on v2")
// Behaviour kept from 6.19: the retry ladder, events, OOM rules, forced charges of exactly
// nr_pages, the memory.high check once per batch actually charged (never on a stock hit).
// Differences from the memcg stock (the series' own): the stock is per counter, so memsw and
// memory hit and miss separately on v1; the batch shrink happens inside the page counter;
// PF_MEMALLOC is checked once both limits were tried (batch and exact).
// Emulation: once a v2 cgroup has had a child its memory counter stays without stock, even if
//   the children go away again (the series does not say).
#include <algorithm>

#include "mm/memcontrol_internal.h"
#include "mm/page_counter_stock.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/preempt.h"

namespace umemcg {

namespace {

page_counter_stock memory_stock;
page_counter_stock memsw_stock;

void memory_owner_get(page_counter *c) { css_get(&mem_cgroup_from_memory_counter(c)->css); }
void memory_owner_put(page_counter *c) { css_put(&mem_cgroup_from_memory_counter(c)->css); }
void memsw_owner_get(page_counter *c) { css_get(&mem_cgroup_from_memsw_counter(c)->css); }
void memsw_owner_put(page_counter *c) { css_put(&mem_cgroup_from_memsw_counter(c)->css); }

}  // namespace

void memcg_pcstock_boot(u64 seed) {
  memory_stock = page_counter_stock{};
  memsw_stock = page_counter_stock{};
  if (!memcg_pcstock()) return;
  page_counter_stock_init(&memory_stock, memcg_wq, seed, memory_owner_get, memory_owner_put);
  page_counter_stock_init(&memsw_stock, memcg_wq, seed + 1, memsw_owner_get, memsw_owner_put);
}

void memcg_pcstock_shutdown() {
  page_counter_stock_destroy(&memory_stock);
  page_counter_stock_destroy(&memsw_stock);
}

/*
 * A new memcg gets stock on its memory (and v1 memsw) counter. On v2 only leaves stock: the
 * parent loses its stock now, and its slots on every CPU are drained right away (leftovers that
 * race with this are drained lazily by later refills).
 */
void memcg_pcstock_online(mem_cgroup *memcg) {
  WRITE_ONCE(memcg->memory.stock, &memory_stock);
  if (do_memsw_account()) {
    WRITE_ONCE(memcg->memsw.stock, &memsw_stock);
    return;
  }
  mem_cgroup *parent = parent_mem_cgroup(memcg);
  if (!parent || mem_cgroup_is_root(parent) || !READ_ONCE(parent->memory.stock)) return;
  page_counter_stock_disable(&parent->memory);

  mutex_lock(&percpu_charge_mutex);
  migrate_disable();
  int curcpu = smp_processor_id();
  int cpu;
  for_each_online_cpu(cpu)
    page_counter_drain_cpu_if_needed(&memory_stock, cpu, curcpu, &parent->memory);
  migrate_enable();
  mutex_unlock(&percpu_charge_mutex);
}

void refill_stock_pcstock(mem_cgroup *memcg, unsigned int nr_pages) {
  WARN_ON_ONCE(mem_cgroup_is_root(memcg));
  page_counter_refill_stock(&memcg->memory, nr_pages);
  if (do_memsw_account()) page_counter_refill_stock(&memcg->memsw, nr_pages);
}

void drain_all_stock_pcstock(mem_cgroup *root_memcg, int cpu, int curcpu) {
  page_counter_drain_cpu_if_needed(&memory_stock, cpu, curcpu, &root_memcg->memory);
  if (do_memsw_account())
    page_counter_drain_cpu_if_needed(&memsw_stock, cpu, curcpu, &root_memcg->memsw);
}

void memcg_pcstock_cpu_dead(int cpu) {
  page_counter_stock_cpu_dead(&memory_stock, cpu);
  page_counter_stock_cpu_dead(&memsw_stock, cpu);
}

namespace {

/*
 * The whole charge of the page_counter-stock design from its first attempt on: memsw (v1) then
 * memory through their stocks, and the failure ladder. @failed: the memory counter at which the
 * caller's first attempt on a v2 hierarchy failed (try_charge_memcg_pcstock() made it, batch
 * and exact size both tried); null: no attempt was made yet. The attempts and their order are
 * the series' either way.
 */
[[gnu::noinline]] int try_charge_memcg_pcstock_ladder(mem_cgroup *memcg, gfp_t gfp_mask,
                                                      unsigned int nr_pages,
                                                      bool memory_stock_missed,
                                                      page_counter *failed) {
  memcg_charge_ladder l;
  mem_cgroup *mem_over_limit;
  page_counter *counter;
  bool allow_spinning = gfpflags_allow_spinning(gfp_mask);
  unsigned int charged = 0;
  pc_charge_result res;

  if (failed) {
    mem_over_limit = mem_cgroup_from_memory_counter(failed);
    goto failed;
  }
retry:
  if (do_memsw_account()) {
    res = page_counter_try_charge_stock(&memcg->memsw, nr_pages, allow_spinning, &counter,
                                        &charged);
    if (res == PC_CHARGE_FAILED) {
      mem_over_limit = mem_cgroup_from_memsw_counter(counter);
      l.reclaim_options &= ~MEMCG_RECLAIM_MAY_SWAP;
      goto failed;
    }
  }
  res = page_counter_try_charge_stock(&memcg->memory, nr_pages, allow_spinning, &counter,
                                      &charged, !memory_stock_missed);
  memory_stock_missed = false;  // retries try the stock again
  if (likely(res == PC_CHARGE_STOCK)) return 0;  // no memory.high check on a stock hit
  if (res == PC_CHARGE_BATCH) {
    memcg_check_high(memcg, gfp_mask, charged);
    return 0;
  }
  // memsw was charged (or consumed): hand it back through its stock.
  if (do_memsw_account()) page_counter_refill_stock(&memcg->memsw, nr_pages);
  mem_over_limit = mem_cgroup_from_memory_counter(counter);

failed:
  // Both the batch and the exact size were tried by the page counter.
  {
    const memcg_charge_next next = memcg_charge_failed(&l, mem_over_limit, gfp_mask, nr_pages);
    if (next == memcg_charge_next::retry) goto retry;
    return memcg_charge_nomem(&l, memcg, mem_over_limit, gfp_mask, nr_pages,
                              next == memcg_charge_next::force);
  }
}

}  // namespace

/*
 * Emulation: the first attempt on a v2 hierarchy (memory only: a batch through the stock, the
 *   memory.high check) is split from the rest (try_charge_memcg_pcstock_ladder()), as the
 *   memcg-stock design's is (try_charge_memcg_slow()), so that the common miss sets up no ladder
 *   state; the series keeps both in try_charge_memcg(). The attempts and their order are the
 *   same.
 */
int try_charge_memcg_pcstock(mem_cgroup *memcg, gfp_t gfp_mask, unsigned int nr_pages,
                             bool memory_stock_missed) {
  if (unlikely(do_memsw_account()))
    return try_charge_memcg_pcstock_ladder(memcg, gfp_mask, nr_pages, memory_stock_missed,
                                           nullptr);
  page_counter *counter;
  unsigned int charged;
  const pc_charge_result res =
      page_counter_try_charge_stock(&memcg->memory, nr_pages, gfpflags_allow_spinning(gfp_mask),
                                    &counter, &charged, !memory_stock_missed);
  if (likely(res == PC_CHARGE_BATCH)) {
    memcg_check_high(memcg, gfp_mask, charged);
    return 0;
  }
  if (res == PC_CHARGE_STOCK) return 0;  // no memory.high check on a stock hit
  return try_charge_memcg_pcstock_ladder(memcg, gfp_mask, nr_pages, false, counter);
}

}  // namespace umemcg

namespace umemcg::emu {
page_counter_stock *memcg_pcstock_bank(bool memsw) { return memsw ? &memsw_stock : &memory_stock; }
}  // namespace umemcg::emu
