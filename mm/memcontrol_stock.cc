// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_stock.cc: the 6.19 per-CPU memcg charge stock: refill, drain, drain_all, and the
// dead-CPU drain (consume_stock is inline in memcontrol_internal.h).
//
// Mirrors: mm/memcontrol.c (Linux 6.19): memcg_uncharge, drain_stock, drain_stock_fully,
//   drain_local_memcg_stock, refill_stock, is_memcg_drain_needed, schedule_drain_work,
//   drain_all_stock, memcg_hotplug_cpu_dead
// Emulation: no CPU is isolated (cpu_is_isolated() is false), so every remote drain is queued.
// Emulation: eviction randomness, see memcontrol_internal.h.
#include "mm/memcontrol_internal.h"

#include "shim/hooks.h"
#include "shim/prandom.h"
#include "shim/preempt.h"
#include "shim/rcupdate.h"

namespace umemcg {

DEFINE_PER_CPU(memcg_stock_pcp, memcg_stock);
DEFINE_PER_CPU(u64, memcg_stock_rnd);
DEFINE_MUTEX(percpu_charge_mutex);
workqueue_struct *memcg_wq = nullptr;

namespace {
// fentry point for tests and tracing: (the work item drained for, cpu running the drain).
emu::HookPoint hp_drain_local("drain_local_memcg_stock", 2);
}  // namespace

void memcg_uncharge(mem_cgroup *memcg, unsigned int nr_pages) {
  page_counter_uncharge(&memcg->memory, nr_pages);
  if (do_memsw_account()) page_counter_uncharge(&memcg->memsw, nr_pages);
}

/**
 * drain_stock - return slot @i's pages to its memcg and free the slot
 * @stock: this CPU's stock, locked (or the stock of a dead CPU)
 * @i: slot
 *
 * An occupied slot with no pages left (all consumed) still holds a css reference: it is
 * released too.
 */
void drain_stock(memcg_stock_pcp *stock, int i) {
  mem_cgroup *old = READ_ONCE(stock->cached[i]);

  if (!old) return;
  u8 stock_pages = READ_ONCE(stock->nr_pages[i]);
  if (stock_pages) {
    memcg_uncharge(old, stock_pages);
    WRITE_ONCE(stock->nr_pages[i], 0);
  }
  css_put(&old->css);
  WRITE_ONCE(stock->cached[i], nullptr);
}

void drain_stock_fully(memcg_stock_pcp *stock) {
  for (int i = 0; i < NR_MEMCG_STOCK; ++i) drain_stock(stock, i);
}

/**
 * drain_local_memcg_stock - drain all seven slots of this CPU and clear FLUSHING
 * @work: unused (the stock's work item when run by a worker)
 *
 * Task context only: the lock is taken with local_lock (it cannot be held by a context below
 * a task).
 */
void drain_local_memcg_stock(work_struct *work) {
  if (WARN_ONCE(!in_task(), "drain in non-task context")) return;

  memcg_stock_pcp *stock = this_cpu_ptr(&memcg_stock);
  UMEMCG_FENTRY(hp_drain_local, reinterpret_cast<std::uint64_t>(work),
                static_cast<std::uint64_t>(smp_processor_id()));
  local_lock(&stock->lock);
  drain_stock_fully(stock);
  clear_bit(FLUSHING_CACHED_CHARGE, &stock->flags);
  local_unlock(&stock->lock);
}

namespace {

// refill_stock() found no slot of @memcg: the first empty slot (@empty_slot, or -1), else a
// uniformly random victim drained, takes @memcg and its pages. Out of line: a refill usually
// finds its memcg's slot.
[[gnu::noinline]] void refill_stock_new_slot(memcg_stock_pcp *stock, mem_cgroup *memcg,
                                             unsigned int nr_pages, int empty_slot)
    REQUIRES(stock->lock) {
  int i = empty_slot;
  if (i == -1) {
    i = static_cast<int>(prandom_u32_below_state(this_cpu_ptr(&memcg_stock_rnd), NR_MEMCG_STOCK));
    drain_stock(stock, i);
  }
  css_get(&memcg->css);
  WRITE_ONCE(stock->cached[i], memcg);
  WRITE_ONCE(stock->nr_pages[i], static_cast<u8>(nr_pages));
}

}  // namespace

/**
 * refill_stock - put @nr_pages (already charged to @memcg) into this CPU's stock
 * @memcg: their memcg, never the root
 * @nr_pages: pages
 *
 * More than a batch, or a lock held below us on this CPU: uncharge directly. A slot of @memcg
 * takes the pages; if it then holds more than a batch, the whole slot is drained (not trimmed).
 * Otherwise the first empty slot is used, or, with all seven taken, a uniformly random victim
 * is drained and reused.
 */
void refill_stock(mem_cgroup *memcg, unsigned int nr_pages) {
  if (memcg_pcstock()) {
    refill_stock_pcstock(memcg, nr_pages);
    return;
  }
  WARN_ON_ONCE(mem_cgroup_is_root(memcg));

  memcg_stock_pcp *stock = this_cpu_ptr(&memcg_stock);
  if (nr_pages > MEMCG_CHARGE_BATCH || !local_trylock(&stock->lock)) {
    memcg_uncharge(memcg, nr_pages);
    return;
  }

  int empty_slot = -1;
  for (int i = 0; i < NR_MEMCG_STOCK; ++i) {
    mem_cgroup *cached = READ_ONCE(stock->cached[i]);
    if (!cached && empty_slot == -1) empty_slot = i;
    if (memcg == cached) {
      unsigned int stock_pages = READ_ONCE(stock->nr_pages[i]) + nr_pages;
      // stock_pages <= 2 * MEMCG_CHARGE_BATCH = 128 fits the u8 until the drain below.
      WRITE_ONCE(stock->nr_pages[i], static_cast<u8>(stock_pages));
      if (stock_pages > MEMCG_CHARGE_BATCH) drain_stock(stock, i);
      local_unlock(&stock->lock);
      return;
    }
  }
  refill_stock_new_slot(stock, memcg, nr_pages, empty_slot);
  local_unlock(&stock->lock);
}

namespace {

// Does this (possibly remote) stock hold pages of @root_memcg's subtree? Racy reads: a wrong
// answer only costs a needless drain or a missed one, as in the kernel.
bool is_memcg_drain_needed(memcg_stock_pcp *stock, mem_cgroup *root_memcg)
    NO_THREAD_SAFETY_ANALYSIS {
  bool flush = false;

  rcu_read_lock();  // a cached memcg is freed only after a grace period once its slot drops it
  for (int i = 0; i < NR_MEMCG_STOCK; ++i) {
    mem_cgroup *memcg = READ_ONCE(stock->cached[i]);
    if (!memcg) continue;
    if (READ_ONCE(stock->nr_pages[i]) && mem_cgroup_is_descendant(memcg, root_memcg)) {
      flush = true;
      break;
    }
  }
  rcu_read_unlock();
  return flush;
}

}  // namespace

void schedule_drain_work(int cpu, work_struct *work) {
  // Emulation: cpu_is_isolated() is always false.
  queue_work_on(cpu, memcg_wq, work);
}

/**
 * drain_all_stock - drain every online CPU's stock that holds pages of @root_memcg's subtree
 * @root_memcg: subtree root
 *
 * Gives up at once if another drain runs (mutex_trylock). The local CPU is drained in place; the
 * others get their drain work queued on their own CPU and are NOT waited for, so a charge that
 * retries right after this may still fail.
 */
void drain_all_stock(mem_cgroup *root_memcg) {
  if (!mutex_trylock(&percpu_charge_mutex)) return;

  // CPU hotplug races do not matter: a dead CPU's stock is drained by its hotplug callback and
  // the workers touch local data only.
  migrate_disable();
  int curcpu = smp_processor_id();
  int cpu;
  for_each_online_cpu(cpu) {
    if (memcg_pcstock()) {
      drain_all_stock_pcstock(root_memcg, cpu, curcpu);
    } else {
      memcg_stock_pcp *memcg_st = per_cpu_ptr(&memcg_stock, cpu);
      if (!test_bit(FLUSHING_CACHED_CHARGE, &memcg_st->flags) &&
          is_memcg_drain_needed(memcg_st, root_memcg) &&
          !test_and_set_bit(FLUSHING_CACHED_CHARGE, &memcg_st->flags)) {
        if (cpu == curcpu)
          drain_local_memcg_stock(&memcg_st->work);
        else
          schedule_drain_work(cpu, &memcg_st->work);
      }
    }
    obj_stock_drain_cpu_if_needed(cpu, curcpu, root_memcg);
  }
  migrate_enable();
  mutex_unlock(&percpu_charge_mutex);
}

/**
 * memcg_hotplug_cpu_dead - CPU hotplug "dead" callback
 * @cpu: the CPU that went away
 *
 * Nothing runs on a dead CPU any more, so its stocks are drained without their locks.
 */
int memcg_hotplug_cpu_dead(unsigned int cpu) NO_THREAD_SAFETY_ANALYSIS {
  obj_stock_cpu_dead(static_cast<int>(cpu));
  if (memcg_pcstock()) {
    memcg_pcstock_cpu_dead(static_cast<int>(cpu));
  } else {
    memcg_stock_pcp *stock = per_cpu_ptr(&memcg_stock, static_cast<int>(cpu));
    drain_stock_fully(stock);
  }
  return 0;
}

void memcg_stock_boot(u64 seed) NO_THREAD_SAFETY_ANALYSIS {
  int cpu;
  for (cpu = 0; cpu < NR_CPUS; cpu++) {
    memcg_stock_pcp *stock = per_cpu_ptr(&memcg_stock, cpu);
    local_trylock_init(&stock->lock);
    for (int i = 0; i < NR_MEMCG_STOCK; i++) {
      stock->nr_pages[i] = 0;
      stock->cached[i] = nullptr;
    }
    stock->work = work_struct{};
    INIT_WORK(&stock->work, drain_local_memcg_stock);
    stock->flags = 0;
    // Any non-zero state works for xorshift; mix the cpu in so CPUs differ.
    *per_cpu_ptr(&memcg_stock_rnd, cpu) =
        (seed + 1) * 0x9E3779B97F4A7C15ull ^ (static_cast<u64>(cpu + 1) << 32) ^ 0xA5A5A5A5ull;
  }
}

// Drains every CPU's stock (shutdown): each CPU's drain runs on that CPU, and is waited for.
void memcg_stock_shutdown() {
  int cpu;
  for_each_online_cpu(cpu) {
    memcg_stock_pcp *stock = per_cpu_ptr(&memcg_stock, cpu);
    queue_work_on(cpu, memcg_wq, &stock->work);
  }
  flush_workqueue(memcg_wq);
}

}  // namespace umemcg
