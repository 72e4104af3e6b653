// SPDX-License-Identifier: GPL-2.0-only
// mm/oom_kill.cc: the OOM killer and the OOM reaper over emulated processes (see oom_kill.h).
//
// Mirrors: mm/oom_kill.c, mm/memcontrol.c (Linux 6.19)
// Emulation: see oom_kill.h.
#include "mm/oom_kill.h"

#include <climits>
#include <cstdint>

#include "mm/memory.h"
#include "mm/mm_types.h"
#include "mm/page_alloc.h"
#include "mm/process.h"
#include "mm/vmscan.h"
#include "mm/vmstat.h"
#include "shim/atomic.h"
#include "shim/list.h"
#include "shim/machine.h"
#include "shim/rcupdate.h"
#include "shim/sched.h"
#include "shim/spinlock.h"
#include "shim/workqueue.h"

namespace umemcg {

DEFINE_MUTEX(oom_lock);

namespace {

// Modelled cost (machine time) of one victim selection: the oom_lock round trip and the walk of
// the domain's tasks, plus each task's badness. Simulated mode only (emu::consume_time). Without
// it a loop that retries the killer while a victim exits (memory.max's write, a charge, an
// allocation) would spin in zero machine time, and the timers the victim's exit waits for
// would never fire.
constexpr std::uint64_t kOomSelectNs = 2000;
constexpr std::uint64_t kOomTaskNs = 100;

// mem_cgroup_get_max(): memory.max (+ the swap it may use when swappiness allows).
unsigned long mem_cgroup_get_max(mem_cgroup *memcg) {
  unsigned long max = READ_ONCE(memcg->memory.max);
  if (do_memsw_account()) {
    if (mem_cgroup_swappiness(memcg)) {
      unsigned long swap = READ_ONCE(memcg->memsw.max) - max;
      max += std::min(swap, static_cast<unsigned long>(total_swap_pages()));
    }
  } else if (mem_cgroup_swappiness(memcg)) {
    max += std::min(READ_ONCE(memcg->swap.max), static_cast<unsigned long>(total_swap_pages()));
  }
  return max;
}

// task_will_free_mem(): the task is exiting (or killed) and nothing holds its mm back.
bool task_will_free_mem(task_struct *t) {
  if (!t->mm || test_bit(MMF_OOM_SKIP, &t->mm->flags)) return false;
  return fatal_signal_pending(t) || (t->flags & PF_EXITING);
}
bool process_will_free_mem(emu::Process *p) {
  if (test_bit(MMF_OOM_SKIP, &emu::process_mm(p)->flags)) return false;
  return emu::process_dying(p);
}

// mem_cgroup_get_oom_group(): the highest memory.oom.group memcg between the victim's memcg and
// the OOM domain (the root for a global OOM).
mem_cgroup *mem_cgroup_get_oom_group(mem_cgroup *victim_memcg, mem_cgroup *oom_domain) {
  if (do_memsw_account()) return nullptr;
  if (!oom_domain) oom_domain = root_mem_cgroup;
  if (!victim_memcg || mem_cgroup_is_root(victim_memcg)) return nullptr;
  if (!mem_cgroup_is_descendant(victim_memcg, oom_domain)) return nullptr;
  mem_cgroup *group = nullptr;
  for (mem_cgroup *m = victim_memcg; m; m = parent_mem_cgroup(m)) {
    if (READ_ONCE(m->oom_group)) group = m;
    if (m == oom_domain) break;
  }
  return group;
}

// --- the OOM reaper ------------------------------------------------------------------------------

// A victim waiting for (or being reaped by) the reaper. The list holds the pin on the process:
// whoever takes an item off the list (the work, or oom_reaper_shutdown) unpins and frees it.
struct oom_reap_item {
  delayed_work dwork;
  emu::Process *p = nullptr;
  list_head node;
};

DEFINE_SPINLOCK(oom_reaper_lock);
list_head oom_reaper_list GUARDED_BY(oom_reaper_lock);

// oom_reap_task(): reaps the mm unless the victim's exit got there first, then hides the mm
// from the OOM killer.
void oom_reap_task(emu::Process *p) {
  mm_struct *mm = emu::process_mm(p);
  if (!test_bit(MMF_OOM_SKIP, &mm->flags)) __oom_reap_task_mm(mm);
  set_bit(MMF_OOM_SKIP, &mm->flags);
}

void oom_reap_work(work_struct *w) {
  auto *item = container_of(to_delayed_work(w), oom_reap_item, dwork);
  spin_lock(&oom_reaper_lock);
  bool mine = !list_empty(&item->node);
  list_del_init(&item->node);
  spin_unlock(&oom_reaper_lock);
  if (!mine) return;  // oom_reaper_shutdown() took it and waits for this to return
  oom_reap_task(item->p);
  emu::process_unpin(item->p);
  delete item;
}

// queue_oom_reaper(): reap @p's memory after OOM_REAPER_DELAY (once per mm).
void queue_oom_reaper(emu::Process *p) {
  mm_struct *mm = emu::process_mm(p);
  if (test_and_set_bit(MMF_OOM_REAP_QUEUED, &mm->flags)) return;
  auto *item = new oom_reap_item;
  item->p = p;
  emu::process_pin(p);
  INIT_DELAYED_WORK(&item->dwork, oom_reap_work);
  spin_lock(&oom_reaper_lock);
  list_add_tail(&item->node, &oom_reaper_list);
  queue_delayed_work(system_unbound_wq, &item->dwork, OOM_REAPER_DELAY);
  spin_unlock(&oom_reaper_lock);
}

// mark_oom_victim() and queue_oom_reaper(), as every path that picks a victim does.
void mark_and_reap(emu::Process *p) {
  emu::process_mark_oom_victim(p);
  queue_oom_reaper(p);
}

// __oom_kill_process(): counts the kill (OOM_KILL, and on the mm owner's memcg), SIGKILL, the
// victim marked and queued for the reaper.
void __oom_kill_process(emu::Process *p) {
  mm_struct *mm = emu::process_mm(p);
  if (test_bit(MMF_OOM_SKIP, &mm->flags)) return;  // already lost its memory
  // Raised before the signal, as the kernel does (the reaper must see it).
  count_vm_event(OOM_KILL);
  // The mm may be leaving its memcg right now (exit): count on it only while it is alive.
  rcu_read_lock();
  mem_cgroup *memcg = rcu_dereference(mm->memcg);
  if (!memcg) memcg = root_mem_cgroup;
  bool ok = css_tryget(&memcg->css);
  rcu_read_unlock();
  if (ok) {
    memcg_memory_event(memcg, MEMCG_OOM_KILL);
    css_put(&memcg->css);
  }
  emu::process_kill(p);
  mark_and_reap(p);
}

// select_bad_process() over the processes of the domain: the chosen one (pinned) in *@chosen, or
// true when a victim still on its way out aborts the selection.
bool select_bad_process(const oom_control *oc, unsigned long totalpages, emu::Process **chosen) {
  long chosen_points = LONG_MIN;
  std::uint64_t scanned = 0;
  auto evaluate = [&](emu::Process *p) -> int {
    scanned++;
    if (emu::process_is_oom_victim(p)) {
      // A kill is in flight: wait for it unless its memory is already gone.
      return test_bit(MMF_OOM_SKIP, &emu::process_mm(p)->flags) ? 0 : 1;
    }
    long points = oom_badness(p, totalpages);
    if (points == LONG_MIN || points < chosen_points) return 0;
    // Ties go to the later candidate.
    if (*chosen) emu::process_unpin(*chosen);
    emu::process_pin(p);
    *chosen = p;
    chosen_points = points;
    return 0;
  };
  int aborted = oc->memcg ? emu::scan_processes(oc->memcg, evaluate)
                          : emu::for_each_process(evaluate);
  emu::consume_time(kOomSelectNs + scanned * kOomTaskNs);
  if (aborted && *chosen) {
    emu::process_unpin(*chosen);
    *chosen = nullptr;
  }
  return aborted;
}

// oom_kill_process(): @chosen (pinned by the caller) and its memory.oom.group.
void oom_kill_process(const oom_control *oc, emu::Process *chosen) {
  if (process_will_free_mem(chosen)) {
    mark_and_reap(chosen);
    return;
  }
  mm_struct *mm = emu::process_mm(chosen);
  mem_cgroup *oom_group = mem_cgroup_get_oom_group(mm->memcg, oc->memcg);
  __oom_kill_process(chosen);
  if (oom_group) {
    memcg_memory_event(oom_group, MEMCG_OOM_GROUP_KILL);
    emu::scan_processes(oom_group, [](emu::Process *q) -> int {
      if (emu::process_oom_score_adj(q) != OOM_SCORE_ADJ_MIN) __oom_kill_process(q);
      return 0;
    });
  }
}

}  // namespace

long oom_badness(emu::Process *p, unsigned long totalpages) {
  mm_struct *mm = emu::process_mm(p);
  long adj = emu::process_oom_score_adj(p);
  if (adj == OOM_SCORE_ADJ_MIN || test_bit(MMF_OOM_SKIP, &mm->flags)) return LONG_MIN;
  long points = static_cast<long>(get_mm_rss(mm)) + get_mm_counter(mm, MM_SWAPENTS);
  // The adjustment is in thousandths of the domain, the division first.
  adj *= static_cast<long>(totalpages / 1000);
  return points + adj;
}

bool out_of_memory(oom_control *oc) {
  if (task_will_free_mem(current)) {
    // The allocating task is on its way out: it gets the reaper, nobody else is killed.
    if (emu::Process *self = emu::current_process()) mark_and_reap(self);
    return true;
  }
  // The page allocator does not kill for an allocation that may not enter the file system.
  if (!oc->memcg && oc->gfp_mask && !(oc->gfp_mask & __GFP_FS)) return true;

  // constrained_alloc(): the domain's pages.
  unsigned long totalpages =
      oc->memcg ? mem_cgroup_get_max(oc->memcg)
                : totalram_pages() + static_cast<unsigned long>(total_swap_pages());
  if (!totalpages) totalpages = 1;

  emu::Process *chosen = nullptr;
  if (select_bad_process(oc, totalpages, &chosen)) return true;
  if (!chosen) {
    // No killable process. The kernel panics on a global OOM; see the banner.
    if (!oc->memcg)
      if (emu::Process *self = emu::current_process()) emu::process_kill(self);
    return false;
  }
  oom_kill_process(oc, chosen);
  emu::process_unpin(chosen);
  return true;
}

bool mem_cgroup_oom_kill(mem_cgroup *memcg, gfp_t gfp_mask, int order) {
  // Called through memcg_reclaim_ops, where the analysis cannot see the caller's lock.
  lockdep_assert_held(&oom_lock);
  oom_control oc;
  oc.memcg = memcg;
  oc.gfp_mask = gfp_mask;
  oc.order = order;
  return out_of_memory(&oc);
}

bool current_is_oom_victim() {
  emu::Process *self = emu::current_process();
  return self && emu::process_is_oom_victim(self);
}

void oom_reaper_shutdown() {
  list_head taken;
  spin_lock(&oom_reaper_lock);
  while (!list_empty(&oom_reaper_list)) list_move_tail(oom_reaper_list.next, &taken);
  spin_unlock(&oom_reaper_lock);
  while (!list_empty(&taken)) {
    auto *item = list_entry(taken.next, oom_reap_item, node);
    list_del_init(&item->node);
    cancel_delayed_work_sync(&item->dwork);
    emu::process_unpin(item->p);
    delete item;
  }
}

}  // namespace umemcg
