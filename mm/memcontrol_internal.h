// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_internal.h: what the memcontrol*.cc files share and the kernel keeps static in
// mm/memcontrol.c: the 6.19 per-CPU charge stock, the obj stock hooks, the memory.high pieces.
//
// Mirrors: mm/memcontrol.c (Linux 6.19): struct memcg_stock_pcp, consume_stock, refill_stock,
//   drain_stock, drain_local_memcg_stock, reclaim_high, calculate_overage, calculate_high_delay,
//   mem_cgroup_oom, mem_cgroup_out_of_memory
// Emulation: these have external linkage (static in the kernel) so that tests can drive them
//   directly; nothing outside mm/memcontrol*.cc and tests may call them.
// Emulation: get_random_u32_below() for the stock's eviction is prandom_u32_below_state()
//   (shim/prandom.h) on a per-CPU state seeded from the machine seed at boot, so simulated runs
//   replay exactly.
#pragma once

#include "mm/memcontrol.h"
#include "shim/compiler.h"
#include "shim/local_lock.h"
#include "shim/mutex.h"
#include "shim/percpu.h"
#include "shim/thread_annotations.h"
#include "shim/workqueue.h"

namespace umemcg {

inline constexpr int NR_MEMCG_STOCK = 7;
inline constexpr int FLUSHING_CACHED_CHARGE = 0;

// One CPU's charge cache: up to 7 memcgs, each with up to MEMCG_CHARGE_BATCH pre-charged pages.
// The lock byte, the seven u8 counts and the seven pointers fill exactly one cache line, which
// is all a stock hit touches. Each occupied slot holds a css reference on its memcg. Only the
// owning CPU writes the slots (under the local lock, or without it once the CPU is dead); other
// CPUs read them racily in drain_all_stock() (READ_ONCE), to decide whether to queue a drain.
struct memcg_stock_pcp {
  local_trylock_t lock;
  u8 nr_pages[NR_MEMCG_STOCK] GUARDED_BY(lock);
  mem_cgroup *cached[NR_MEMCG_STOCK] GUARDED_BY(lock);

  work_struct work;     // drain_local_memcg_stock, queued on this CPU by drain_all_stock()
  unsigned long flags;  // FLUSHING_CACHED_CHARGE: a drain is queued or running
};
static_assert(offsetof(memcg_stock_pcp, cached) + sizeof(mem_cgroup *) * NR_MEMCG_STOCK <=
                  SMP_CACHE_BYTES,
              "lock, counts and pointers share one cache line");

DECLARE_PER_CPU(memcg_stock_pcp, memcg_stock);
// Per-CPU eviction randomness (see the banner); touched only under that CPU's stock lock.
DECLARE_PER_CPU(u64, memcg_stock_rnd);

extern struct mutex percpu_charge_mutex;
extern workqueue_struct *memcg_wq;

/**
 * consume_stock - take @nr_pages from this CPU's stock of @memcg
 * @memcg: memcg to charge
 * @nr_pages: pages wanted
 *
 * Only the first slot caching @memcg is looked at; if it holds too few pages the stock misses
 * (another slot of the same memcg cannot exist: refill_stock reuses a matching slot). Never
 * spins: a held lock (an interrupted holder on this CPU) is a miss.
 *
 * Returns true if the pages came from the stock (they are already charged).
 */
// page_counter_consume_stock() (mm/page_counter_stock.h) copies it on purpose: one per design.
inline bool consume_stock(mem_cgroup *memcg, unsigned int nr_pages) {
  if (nr_pages > MEMCG_CHARGE_BATCH) return false;

  memcg_stock_pcp *stock = this_cpu_ptr(&memcg_stock);
  // gcc 12 otherwise computes &memcg_stock[cpu] three times (before the lock, for the slot and
  // for the unlock): 9 more instructions on the hit (target S1, tools/insn_check.py).
  OPTIMIZER_HIDE_VAR(stock);
  if (!local_trylock(&stock->lock)) return false;

  bool ret = false;
  for (size_t i = 0; i < NR_MEMCG_STOCK; ++i) {
    // Written only by this CPU under the lock we hold, so this CPU's own reads cannot race and
    // are plain loads (the kernel's READ_ONCE is a plain MOV too). Only the store is WRITE_ONCE:
    // drain_all_stock() on other CPUs reads the counts racily.
    // Emulation: plain rather than relaxed-atomic loads: GCC assumes an atomic access may touch
    // any memory, so it would keep the preemption count in memory across the scan.
    if (memcg != stock->cached[i]) continue;
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

// Gives slot i's pages back to its memcg's counters and releases the slot (css_put).
void drain_stock(memcg_stock_pcp *stock, int i) REQUIRES(stock->lock);
void drain_stock_fully(memcg_stock_pcp *stock) REQUIRES(stock->lock);
void drain_local_memcg_stock(work_struct *work);
void memcg_stock_boot(u64 seed);
void memcg_stock_shutdown();

// obj stock (mm/memcontrol_kmem.cc)
void obj_stock_boot();
void obj_stock_shutdown();
// The shim allocator's accounting hook (memcontrol_slab.cc): registered at boot, removed at
// shutdown.
void memcg_slab_register();
void memcg_slab_unregister();
// Sets memory_cgrp_subsys's task callbacks (memcontrol_cgroup.cc).
void memcg_cgroup_register(cgroup_subsys *ss);
// drain_all_stock()'s obj stock step for one CPU.
void obj_stock_drain_cpu_if_needed(int cpu, int curcpu, mem_cgroup *root_memcg);
void obj_stock_cpu_dead(int cpu);
int memcg_online_kmem(mem_cgroup *memcg);
void memcg_offline_kmem(mem_cgroup *memcg);
void memcg_free_kmem(mem_cgroup *memcg);
// Unhooks memcg's objcg_list head before memcg is freed. Only the root can still have objcgs
// there (a non-root memcg moved them to its parent at offline); they stay linked among
// themselves, so their own release unlinks them safely.
void memcg_detach_objcg_list(mem_cgroup *memcg);

// Reclaim and OOM (mm/memcontrol.cc)
unsigned long try_to_free_mem_cgroup_pages(mem_cgroup *memcg, unsigned long nr_pages,
                                           gfp_t gfp_mask, unsigned int reclaim_options,
                                           int *swappiness);
bool mem_cgroup_oom(mem_cgroup *memcg, gfp_t gfp_mask, int order);
bool mem_cgroup_out_of_memory(mem_cgroup *memcg, gfp_t gfp_mask, int order);
bool task_is_dying();
inline int get_order(unsigned long size) {
  int order = 0;
  size = (size - 1) >> PAGE_SHIFT;
  while (size) {
    order++;
    size >>= 1;
  }
  return order;
}

// memory.high (mm/memcontrol_high.cc)
// The over-high check after a batch charge (section 2.5), including the synchronous handling.
void memcg_check_high(mem_cgroup *memcg, gfp_t gfp_mask, unsigned int batch);
unsigned long reclaim_high(mem_cgroup *memcg, unsigned int nr_pages, gfp_t gfp_mask);
void high_work_func(work_struct *work);
u64 calculate_overage(unsigned long usage, unsigned long high);
unsigned long calculate_high_delay(mem_cgroup *memcg, unsigned int nr_pages, u64 max_overage);
u64 mem_find_max_overage(mem_cgroup *memcg);
u64 swap_find_max_overage(mem_cgroup *memcg);

// The failure ladder of try_charge_memcg() (section 2.3), shared by both stock designs: what
// one failing pass decides once the exact-size charge has failed too.
struct memcg_charge_ladder {
  int nr_retries = MAX_RECLAIM_RETRIES;
  bool passed_oom = false;
  bool drained = false;
  bool raised_max_event = false;
  unsigned int reclaim_options = MEMCG_RECLAIM_MAY_SWAP;
};
enum class memcg_charge_next { retry, nomem, force };
memcg_charge_next memcg_charge_failed(memcg_charge_ladder *l, mem_cgroup *mem_over_limit,
                                      gfp_t gfp_mask, unsigned int nr_pages);
// nomem: -ENOMEM unless __GFP_NOFAIL/__GFP_HIGH, which force-charge exactly nr_pages.
int memcg_charge_nomem(const memcg_charge_ladder *l, mem_cgroup *memcg,
                       mem_cgroup *mem_over_limit, gfp_t gfp_mask, unsigned int nr_pages,
                       bool force);

// The page_counter stock design (mm/memcontrol_pcstock.cc)
// memory_stock_missed: the caller's inline consume of memcg->memory's stock already missed.
int try_charge_memcg_pcstock(mem_cgroup *memcg, gfp_t gfp_mask, unsigned int nr_pages,
                             bool memory_stock_missed);
void refill_stock_pcstock(mem_cgroup *memcg, unsigned int nr_pages);
void drain_all_stock_pcstock(mem_cgroup *root_memcg, int cpu, int curcpu);
void memcg_pcstock_boot(u64 seed);
void memcg_pcstock_shutdown();
void memcg_pcstock_online(mem_cgroup *memcg);
void memcg_pcstock_cpu_dead(int cpu);

// The root memcg is a counter's owner when container_of lands on it.
inline mem_cgroup *mem_cgroup_from_memory_counter(page_counter *c) {
  return container_of(c, mem_cgroup, memory);
}
inline mem_cgroup *mem_cgroup_from_memsw_counter(page_counter *c) {
  return container_of(c, mem_cgroup, memsw);
}

}  // namespace umemcg
