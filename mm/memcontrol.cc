// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol.cc: memcg boot and shutdown, the css callbacks, ids, task association, memory
// events, margins, the reclaim/OOM entry points and socket charging.
//
// Mirrors: mm/memcontrol.c (Linux 6.19): mem_cgroup_css_alloc/online/offline/released/free,
//   memory_cgrp_subsys (its control files: mm/memcontrol_files.{h,cc}, memcontrol_v1_files.cc),
//   mem_cgroup_id_*, get_mem_cgroup_from_mm, get_mem_cgroup_from_current, __memcg_memory_event,
//   mem_cgroup_margin, mem_cgroup_usage (v1), mem_cgroup_oom, mem_cgroup_out_of_memory,
//   mem_cgroup_sk_charge/uncharge
// Emulation: see memcontrol.h (ops table, task association, stats).
// Emulation: the interrupt-context active memcg (int_active_memcg) is a per-CPU variable read
//   when !in_task(), as in the kernel.
// v1's oom_kill_disable: mem_cgroup_oom() does not kill; the OOM is waited out at the end of a
//   user page fault (mm/memcontrol_v1_events.h).
#include "mm/memcontrol.h"

#include <algorithm>
#include <atomic>
#include <new>

#include "bpfvm/map_local_storage.h"
#include "kernel/cgroup_rstat.h"
#include "kernel/kernfs/kernfs.h"
#include "mm/bpf_tcp_ops.h"
#include "mm/memcontrol_files.h"
#include "mm/memcontrol_internal.h"
#include "mm/memcontrol_v1_events.h"
#include "mm/filemap.h"
#include "mm/memcontrol_iter.h"
#include "mm/mm_types.h"
#include "mm/oom_kill.h"
#include "mm/page_alloc.h"
#include "mm/swap.h"
#include "mm/swapfile.h"
#include "mm/vmscan.h"
#include "shim/bug.h"
#include "shim/cpuhotplug.h"
#include "shim/errno.h"
#include "shim/machine.h"
#include "shim/preempt.h"
#include "shim/rcupdate.h"

namespace umemcg {

mem_cgroup *root_mem_cgroup = nullptr;

namespace memcg_internal {
bool g_v1 = false;
bool g_pcstock = false;
}  // namespace memcg_internal

namespace {

cgroup_root *g_cgroup_root = nullptr;
std::atomic<const memcg_reclaim_ops *> g_ops{nullptr};
DEFINE_PER_CPU(mem_cgroup *, int_active_memcg);

// mem_cgroup_ids: private id -> memcg, read under RCU.
mem_cgroup **g_ids = nullptr;

// The reclaim model (mm/vmscan.cc) and the OOM killer (mm/oom_kill.cc).
const memcg_reclaim_ops default_ops = {vmscan_try_to_free_mem_cgroup_pages, mem_cgroup_oom_kill};

const memcg_reclaim_ops *ops() { return g_ops.load(std::memory_order_acquire); }

void mem_cgroup_id_remove(mem_cgroup *memcg) {
  if (memcg->id > 0) {
    std::atomic_ref<mem_cgroup *>(g_ids[memcg->id]).store(nullptr, std::memory_order_release);
    memcg->id = 0;
  }
}

void mem_cgroup_id_put_many(mem_cgroup *memcg, unsigned int n) {
  if (atomic_long_sub_return(n, &memcg->id_ref) == 0) {
    mem_cgroup_id_remove(memcg);
    css_put(&memcg->css);  // the id's reference on the css
  }
}

// mem_cgroup_id_get_online(): the nearest ancestor whose id is still live.
mem_cgroup *mem_cgroup_id_get_online(mem_cgroup *memcg) {
  for (;;) {
    long v = atomic_long_read(&memcg->id_ref);
    bool got = false;
    while (v > 0)
      if (atomic_long_try_cmpxchg(&memcg->id_ref, &v, v + 1)) {
        got = true;
        break;
      }
    if (got) return memcg;
    if (WARN_ON_ONCE(mem_cgroup_is_root(memcg))) return memcg;
    memcg = parent_mem_cgroup(memcg);
    if (!memcg) memcg = root_mem_cgroup;
  }
}

// --- css callbacks -----------------------------------------------------------------------------

cgroup_subsys_state *mem_cgroup_css_alloc(cgroup_subsys_state *parent_css) {
  mem_cgroup *parent = mem_cgroup_from_css(parent_css);
  auto *memcg = new (std::nothrow) mem_cgroup;
  if (!memcg) return nullptr;
  bool dfl = !do_memsw_account();
  // memcg1_alloc_events (v1 only), then the statistics.
  if ((!dfl && !memcg1_alloc_events(memcg)) ||
      !memcg_internal::memcg_vmstats_alloc(memcg) || css_rstat_init(&memcg->css)) {
    memcg_internal::memcg_vmstats_free(memcg);
    memcg1_free_events(memcg);
    delete memcg;
    return nullptr;
  }

  page_counter_set_high(&memcg->memory, PAGE_COUNTER_MAX);
  page_counter_set_high(&memcg->swap, PAGE_COUNTER_MAX);
  page_counter_set_high(&memcg->memsw, PAGE_COUNTER_MAX);
  if (parent) {
    memcg->swappiness = mem_cgroup_swappiness(parent);
    memcg->oom_kill_disable = READ_ONCE(parent->oom_kill_disable);
    page_counter_init(&memcg->memory, &parent->memory, dfl);
    page_counter_init(&memcg->swap, &parent->swap, false);
    page_counter_init(&memcg->memsw, &parent->memsw, false);
    page_counter_init(&memcg->kmem, &parent->kmem, false);
    page_counter_init(&memcg->tcpmem, &parent->tcpmem, false);
    if (!dfl) memcg->memory.track_failcnt = true;
  } else {
    // The root's memory counter tracks protection on both hierarchies.
    page_counter_init(&memcg->memory, nullptr, true);
    page_counter_init(&memcg->swap, nullptr, false);
    page_counter_init(&memcg->memsw, nullptr, false);
    page_counter_init(&memcg->kmem, nullptr, false);
    page_counter_init(&memcg->tcpmem, nullptr, false);
    root_mem_cgroup = memcg;
  }
  INIT_WORK(&memcg->high_work, high_work_func);
  vmpressure_init(&memcg->vmpressure);
  mem_cgroup_tree_link(memcg, parent);
  return &memcg->css;
}

int mem_cgroup_css_online(cgroup_subsys_state *css) {
  mem_cgroup *memcg = mem_cgroup_from_css(css);

  if (memcg_online_kmem(memcg)) return -ENOMEM;
  memcg->id = css->id;
  if (memcg->id <= 0 || memcg->id > MEM_CGROUP_ID_MAX) {
    memcg_free_kmem(memcg);
    return -ENOSPC;
  }
  if (memcg_pcstock() && !mem_cgroup_is_root(memcg)) memcg_pcstock_online(memcg);
  if (mem_cgroup_is_root(memcg)) memcg_internal::memcg_stats_root_online();
  // The online id reference, which pins the css until every swap record is gone.
  atomic_long_set(&memcg->id_ref, 1);
  css_get(css);
  std::atomic_ref<mem_cgroup *>(g_ids[memcg->id]).store(memcg, std::memory_order_release);
  return 0;
}

void mem_cgroup_css_offline(cgroup_subsys_state *css) {
  mem_cgroup *memcg = mem_cgroup_from_css(css);

  memcg1_css_offline(memcg);
  page_counter_set_min(&memcg->memory, 0);
  page_counter_set_low(&memcg->memory, 0);
  memcg_offline_kmem(memcg);
  drain_all_stock(memcg);
  mem_cgroup_id_put_many(memcg, 1);
}

void mem_cgroup_css_released(cgroup_subsys_state *) {}

void mem_cgroup_css_free(cgroup_subsys_state *css) {
  mem_cgroup *memcg = mem_cgroup_from_css(css);

  // The last flush: what this memcg counted reaches the parent's pending deltas, so a removed
  // child's statistics stay in its ancestors' hierarchical totals.
  css_rstat_exit(css);
  cancel_work_sync(&memcg->high_work);
  vmpressure_cleanup(&memcg->vmpressure);
  memcg_free_kmem(memcg);
  memcg_detach_objcg_list(memcg);
  mem_cgroup_tree_unlink(memcg);
  // Emulation: bookkeeping for the invariant checker. A memcg can be freed with pages still in
  // its counters (kmem uncharged from the parent after reparenting): the kernel leaves them in
  // the ancestors' counters; remember them on the parent, and the freed statistics globally.
  if (mem_cgroup *parent = parent_mem_cgroup(memcg)) {
    atomic_long_add(static_cast<long>(page_counter_read(&memcg->memory)),
                    &parent->emu_orphaned[0]);
    atomic_long_add(static_cast<long>(page_counter_read(&memcg->memsw)), &parent->emu_orphaned[1]);
    atomic_long_add(static_cast<long>(page_counter_read(&memcg->swap)), &parent->emu_orphaned[2]);
  }
  memcg1_free_events(memcg);
  memcg_internal::memcg_vmstats_free(memcg);
  // The cgroup goes with its one css (kernel/cgroup.h), and its BPF cgroup storage with it.
  // Emulation: the kernel frees that storage from the cgroup's own css_free_rwork_fn(); here
  // memcg frees it, as bpfvm/ keys it by the cgroup's address (which a later cgroup may reuse)
  // and kernel/ may not call into bpfvm/.
  bpf_cgrp_storage_free(reinterpret_cast<u64>(css->cgroup));
  if (memcg == root_mem_cgroup) root_mem_cgroup = nullptr;
  delete memcg;
}

void mem_cgroup_resume_hook() { mem_cgroup_handle_over_high(GFP_KERNEL); }

}  // namespace

mem_cgroup *mem_cgroup_id_get_online_for_swap(mem_cgroup *memcg) {
  return mem_cgroup_id_get_online(memcg);
}
void mem_cgroup_id_put_many_for_swap(mem_cgroup *memcg, unsigned int n) {
  mem_cgroup_id_put_many(memcg, n);
}
void mem_cgroup_id_get_many_for_swap(mem_cgroup *memcg, unsigned int n) {
  atomic_long_add(n, &memcg->id_ref);
}

cgroup_subsys memory_cgrp_subsys = {
    .name = "memory",
    .css_alloc = mem_cgroup_css_alloc,
    .css_online = mem_cgroup_css_online,
    .css_offline = mem_cgroup_css_offline,
    .css_released = mem_cgroup_css_released,
    .css_free = mem_cgroup_css_free,
    .css_became_parent = nullptr,
    .dfl_cftypes = memory_files,
    .legacy_cftypes = mem_cgroup_legacy_files,
    // can_attach, attach, fork: memcg_cgroup_register() (mm/memcontrol_cgroup.cc)
    .css_reset = mem_cgroup_css_reset,
    .css_rstat_flush = memcg_internal::mem_cgroup_css_rstat_flush,
};

// --- boot --------------------------------------------------------------------------------------

const memcg_reclaim_ops *memcg_set_reclaim_ops(const memcg_reclaim_ops *o) {
  return g_ops.exchange(o ? o : &default_ops, std::memory_order_acq_rel);
}

bool mem_cgroup_booted() { return g_cgroup_root != nullptr; }

int mem_cgroup_boot(const memcg_boot_params &params) {
  emu::Machine *m = emu::Machine::get();
  if (!m || !current) return -EINVAL;
  if (g_cgroup_root) return -EBUSY;

  memcg_internal::g_v1 = params.v1;
  memcg_internal::g_pcstock = params.stock == memcg_stock_design::page_counter_stock;
  memcg_internal::g_high_debt_limit = params.high_debt_limit;
  emu::set_cost_model(params.costs);
  g_ops.store(params.ops ? params.ops : &default_ops, std::memory_order_release);
  g_ids = new mem_cgroup *[MEM_CGROUP_ID_MAX + 1]();
  int cpu;
  for (cpu = 0; cpu < NR_CPUS; cpu++) *per_cpu_ptr(&int_active_memcg, cpu) = nullptr;

  memcg_internal::memcg_stats_boot();
  memcg_wq = alloc_workqueue("memcg", WQ_PERCPU, 0);
  memcg_stock_boot(m->config().seed);
  memcg_pcstock_boot(m->config().seed);
  obj_stock_boot();
  memcg_slab_register();
  lru_boot();

  unsigned int flags = 0;
  if (!params.v1 && params.memory_localevents) flags |= CGRP_ROOT_MEMORY_LOCAL_EVENTS;
  if (!params.v1 && params.memory_recursiveprot) flags |= CGRP_ROOT_MEMORY_RECURSIVE_PROT;
  if (params.kernfs_notify_no_rwsem) flags |= CGRP_ROOT_EMU_KERNFS_NOTIFY_NO_RWSEM;
  memcg_cgroup_register(&memory_cgrp_subsys);
  // Undoes the set-up above when a later step fails (swapoff_all() is a no-op without swap).
  auto unwind = [](int e) {
    swapoff_all();
    page_alloc_shutdown();
    memcg_pcstock_shutdown();
    destroy_workqueue(memcg_wq);
    memcg_wq = nullptr;
    delete[] g_ids;
    g_ids = nullptr;
    return e;
  };
  int err = 0;
  page_alloc_init(params.totalram_pages ? params.totalram_pages : DEFAULT_TOTALRAM_PAGES);
  if (params.swap_pages && (err = swapon(params.swap_pages))) return unwind(err);
  g_cgroup_root = cgroup_setup_root(!params.v1, flags, &memory_cgrp_subsys, &err);
  if (!g_cgroup_root) return unwind(err);
  // A CPU going offline has its stocks drained by the CPU doing the hotplug.
  cpuhp_setup_state_nocalls(CPUHP_MM_MEMCQ_DEAD, "mm/memctrl:dead", nullptr,
                            memcg_hotplug_cpu_dead);
  emu::register_resume_user_mode_hook(mem_cgroup_resume_hook);
  m->add_shutdown_hook([] { mem_cgroup_shutdown(); });
  return 0;
}

void mem_cgroup_shutdown() {
  if (!g_cgroup_root) return;
  // Emulation: the kernel never unregisters; here memcg can be shut down and booted again.
  // kswapd reclaims over the hierarchy: it stops first.
  kswapd_stop();
  cpuhp_remove_state_nocalls(CPUHP_MM_MEMCQ_DEAD);
  // A notification still being delivered holds a reference on its watcher's memcg (and may
  // sleep in over-high handling without kernfs_rwsem, under kernfs_notify_no_rwsem): let it end
  // before the hierarchy goes.
  emu::kernfs_flush_notify();
  memcg_slab_unregister();
  // Victims still waiting for the OOM reaper are let go (their processes have exited).
  oom_reaper_shutdown();
  // Named files live until the machine stops: their cached pages go now, and so do the pages
  // still waiting in lru_add batches.
  emu::file_release_all();
  lru_shutdown();
  // Give every stocked page back first, so that removed cgroups do not stay pinned by slots.
  obj_stock_shutdown();
  memcg_stock_shutdown();
  memcg_pcstock_shutdown();
  memcg_internal::memcg_stats_shutdown();
  cgroup_destroy_root(g_cgroup_root);
  g_cgroup_root = nullptr;
  swapoff_all();
  page_alloc_shutdown();
  destroy_workqueue(memcg_wq);
  memcg_wq = nullptr;
  delete[] g_ids;
  g_ids = nullptr;
  memcg_internal::g_pcstock = false;
  memcg_internal::g_v1 = false;
}

mem_cgroup *mem_cgroup_from_id(unsigned short id) {
  if (!g_ids || id == 0) return nullptr;
  return std::atomic_ref<mem_cgroup *>(g_ids[id]).load(std::memory_order_acquire);
}

// --- task association --------------------------------------------------------------------------

mem_cgroup *mem_cgroup_from_task(task_struct *p) {
  mm_struct *mm = p ? p->mm : nullptr;
  mem_cgroup *memcg = mm ? rcu_dereference(mm->memcg) : nullptr;
  return memcg ? memcg : root_mem_cgroup;
}

mem_cgroup *active_memcg() {
  if (!in_task()) return this_cpu_read(int_active_memcg);
  return current->active_memcg;
}

mem_cgroup *set_active_memcg(mem_cgroup *memcg) {
  mem_cgroup *old;
  if (!in_task()) {
    old = this_cpu_read(int_active_memcg);
    this_cpu_write(int_active_memcg, memcg);
  } else {
    old = current->active_memcg;
    current->active_memcg = memcg;
  }
  return old;
}

/**
 * get_mem_cgroup_from_mm - the memcg to charge for @mm, with a reference
 * @mm: address space, or nullptr (then: the active memcg, else current's mm, else the root)
 *
 * The root needs no reference (CSS_NO_REF). A memcg being released between the lookup and the
 * tryget is skipped by looking again: the mm has been moved on by then.
 */
mem_cgroup *get_mem_cgroup_from_mm(mm_struct *mm) {
  mem_cgroup *memcg;

  if (unlikely(!mm)) {
    memcg = active_memcg();
    if (unlikely(memcg)) {
      css_get(&memcg->css);  // a remote memcg must hold a reference already
      return memcg;
    }
    mm = current ? current->mm : nullptr;
    if (unlikely(!mm)) return root_mem_cgroup;
  }
  rcu_read_lock();
  do {
    memcg = rcu_dereference(mm->memcg);
    if (unlikely(!memcg)) memcg = root_mem_cgroup;
  } while (!css_tryget(&memcg->css));
  rcu_read_unlock();
  return memcg;
}

mem_cgroup *get_mem_cgroup_from_current() {
  mem_cgroup *memcg;
  for (;;) {
    rcu_read_lock();
    memcg = mem_cgroup_from_task(current);
    bool ok = css_tryget(&memcg->css);
    rcu_read_unlock();
    if (ok) return memcg;
  }
}

// --- events ------------------------------------------------------------------------------------

/**
 * __memcg_memory_event - count a memory event on @memcg, locally and hierarchically
 * @memcg: where it happened
 * @event: MEMCG_*
 * @allow_spinning: false in contexts that may not take locks (no file notification then)
 *
 * memory.events.local counts on @memcg only. memory.events counts on @memcg and each ancestor
 * below the root, except on v1 or with memory_localevents, where it stays local too.
 */
void __memcg_memory_event(mem_cgroup *memcg, enum memcg_memory_event event, bool allow_spinning) {
  bool swap_event =
      event == MEMCG_SWAP_HIGH || event == MEMCG_SWAP_MAX || event == MEMCG_SWAP_FAIL;

  // Only MEMCG_MAX can be raised from a context that may not spin.
  WARN_ON_ONCE(!allow_spinning && event != MEMCG_MAX);

  atomic_long_inc(&memcg->memory_events_local[event]);
  if (!swap_event && allow_spinning) cgroup_file_notify(&memcg->events_local_file);

  do {
    atomic_long_inc(&memcg->memory_events[event]);
    if (allow_spinning) cgroup_file_notify(swap_event ? &memcg->swap_events_file
                                                      : &memcg->events_file);
    if (do_memsw_account()) break;
    if (g_cgroup_root->flags & CGRP_ROOT_MEMORY_LOCAL_EVENTS) break;
  } while ((memcg = parent_mem_cgroup(memcg)) && !mem_cgroup_is_root(memcg));
}

// --- margins and usage -------------------------------------------------------------------------

unsigned long mem_cgroup_margin(mem_cgroup *memcg) {
  unsigned long margin = 0, count, limit;

  count = page_counter_read(&memcg->memory);
  limit = READ_ONCE(memcg->memory.max);
  if (count < limit) margin = limit - count;

  if (do_memsw_account()) {
    count = page_counter_read(&memcg->memsw);
    limit = READ_ONCE(memcg->memsw.max);
    if (count < limit)
      margin = std::min(margin, limit - count);
    else
      margin = 0;
  }
  return margin;
}

unsigned long mem_cgroup_usage(mem_cgroup *memcg, bool swap) {
  // Emulation: the root's v1 usage is its page counter (the kernel sums statistics there).
  if (!do_memsw_account()) return page_counter_read(swap ? &memcg->swap : &memcg->memory);
  if (swap) return page_counter_read(&memcg->memsw);
  unsigned long mem = page_counter_read(&memcg->memory);
  // Seed 003: memory and memsw stock separately and drift apart by what each holds in stock;
  // report the smaller so that usage_in_bytes <= memsw.usage_in_bytes keeps holding.
  if (memcg_pcstock()) mem = std::min(mem, page_counter_read(&memcg->memsw));
  return mem;
}

// --- reclaim and OOM ---------------------------------------------------------------------------

unsigned long try_to_free_mem_cgroup_pages(mem_cgroup *memcg, unsigned long nr_pages,
                                           gfp_t gfp_mask, unsigned int reclaim_options,
                                           int *swappiness) {
  return ops()->try_to_free_mem_cgroup_pages(memcg, nr_pages, gfp_mask, reclaim_options,
                                             swappiness);
}

bool task_is_dying() {
  // tsk_is_oom_victim() is implied: every OOM victim has SIGKILL pending or is exiting
  // (mm/oom_kill.h), so the charge path skips current_is_oom_victim()'s process lookup.
  return fatal_signal_pending(current) || (current->flags & PF_EXITING);
}

/**
 * mem_cgroup_out_of_memory - run the OOM killer in @memcg's subtree
 * Returns true if progress can be expected: interrupted while waiting for oom_lock, enough
 * margin appeared meanwhile, the caller is dying, or a victim was chosen.
 */
bool mem_cgroup_out_of_memory(mem_cgroup *memcg, gfp_t gfp_mask, int order) {
  bool ret = true;

  if (mutex_lock_killable(&oom_lock)) return true;
  if (mem_cgroup_margin(memcg) >= (1UL << order)) goto unlock;
  // Check again under oom_lock: a task that did not wait at the lock may still be dying.
  ret = task_is_dying() || ops()->out_of_memory(memcg, gfp_mask, order);
unlock:
  mutex_unlock(&oom_lock);
  return ret;
}

bool mem_cgroup_oom(mem_cgroup *memcg, gfp_t gfp_mask, int order) {
  if (order > PAGE_ALLOC_COSTLY_ORDER) return false;
  memcg_memory_event(memcg, MEMCG_OOM);
  bool locked;
  if (!memcg1_oom_prepare(memcg, &locked)) return false;
  bool ret = mem_cgroup_out_of_memory(memcg, gfp_mask, order);
  memcg1_oom_finish(memcg, locked);
  return ret;
}

// --- sockets -----------------------------------------------------------------------------------

bool mem_cgroup_sk_charge(mem_cgroup *memcg, unsigned int nr_pages, gfp_t gfp_mask) {
  // Emulation: sockets of the root have no sk_memcg in the kernel; here the caller passes the
  // memcg, and the root is accepted without charging.
  if (mem_cgroup_is_root(memcg)) return true;
  // Emulation: the v1 tcpmem path (memcg1_charge_skmem) is not modelled; v2 only.
  const bool charged = try_charge_memcg(memcg, gfp_mask, nr_pages) == 0;
  if (charged) mod_memcg_state(memcg, MEMCG_SOCK, nr_pages);
  // bpf_tcp_ops.skmem_charged (mm/bpf_tcp_ops.h): one static-key test while nothing is
  // attached.
  bpf_tcp_ops_skmem_charged(memcg, nr_pages, gfp_mask, charged);
  return charged;
}

void mem_cgroup_sk_uncharge(mem_cgroup *memcg, unsigned int nr_pages) {
  if (mem_cgroup_is_root(memcg)) return;
  mod_memcg_state(memcg, MEMCG_SOCK, -static_cast<int>(nr_pages));
  refill_stock(memcg, nr_pages);
}

}  // namespace umemcg

namespace umemcg::emu {

void mm_attach(mm_struct *mm, mem_cgroup *memcg) {
  if (memcg && mem_cgroup_is_root(memcg)) memcg = nullptr;
  mem_cgroup *old = mm->memcg;
  if (old == memcg) return;
  if (memcg) {
    css_get(&memcg->css);
    cgroup_inc_populated(memcg->css.cgroup);
  }
  rcu_assign_pointer(mm->memcg, memcg);
  if (old) {
    cgroup_dec_populated(old->css.cgroup);
    css_put(&old->css);
  }
}

}  // namespace umemcg::emu
