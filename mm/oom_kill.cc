// SPDX-License-Identifier: GPL-2.0-only
// mm/oom_kill.cc: the memcg OOM killer over emulated processes (see oom_kill.h).
//
// Mirrors: mm/oom_kill.c, mm/memcontrol.c (Linux 6.19)
// Emulation: see oom_kill.h.
#include "mm/oom_kill.h"

#include <climits>
#include <cstdint>

#include "mm/mm_types.h"
#include "mm/process.h"
#include "mm/vmscan.h"
#include "shim/atomic.h"
#include "shim/machine.h"
#include "shim/rcupdate.h"
#include "shim/sched.h"

namespace umemcg {

namespace {

// Modelled cost (machine time) of one victim selection: the oom_lock round trip and the walk of
// the memcg's tasks, plus each task's badness. Simulated mode only (emu::consume_time). Without
// it a loop that retries the killer while a victim exits (memory.max's write, a charge) would
// spin in zero machine time, and the timers the victim's exit waits for would never fire.
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
// the OOM domain.
mem_cgroup *mem_cgroup_get_oom_group(mem_cgroup *victim_memcg, mem_cgroup *oom_domain) {
  if (do_memsw_account()) return nullptr;
  if (!victim_memcg || mem_cgroup_is_root(victim_memcg)) return nullptr;
  if (!mem_cgroup_is_descendant(victim_memcg, oom_domain)) return nullptr;
  mem_cgroup *group = nullptr;
  for (mem_cgroup *m = victim_memcg; m; m = parent_mem_cgroup(m)) {
    if (READ_ONCE(m->oom_group)) group = m;
    if (m == oom_domain) break;
  }
  return group;
}

// __oom_kill_process(): counts the kill on the mm owner's memcg, then SIGKILL.
void __oom_kill_process(emu::Process *p) {
  mm_struct *mm = emu::process_mm(p);
  if (test_bit(MMF_OOM_SKIP, &mm->flags)) return;  // already lost its memory
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
  emu::process_mark_oom_victim(p);
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

bool mem_cgroup_oom_kill(mem_cgroup *memcg, gfp_t, int) {
  if (task_will_free_mem(current)) return true;  // the charger itself is on its way out
  unsigned long totalpages = mem_cgroup_get_max(memcg);
  if (!totalpages) totalpages = 1;

  emu::Process *chosen = nullptr;
  long chosen_points = LONG_MIN;
  std::uint64_t scanned = 0;
  int aborted = emu::scan_processes(memcg, [&](emu::Process *p) -> int {
    scanned++;
    if (emu::process_is_oom_victim(p)) {
      // A kill is in flight: wait for it unless its memory is already gone.
      return test_bit(MMF_OOM_SKIP, &emu::process_mm(p)->flags) ? 0 : 1;
    }
    long points = oom_badness(p, totalpages);
    if (points == LONG_MIN || points < chosen_points) return 0;
    // Ties go to the later candidate.
    if (chosen) emu::process_unpin(chosen);
    emu::process_pin(p);
    chosen = p;
    chosen_points = points;
    return 0;
  });
  emu::consume_time(kOomSelectNs + scanned * kOomTaskNs);
  if (aborted) {
    if (chosen) emu::process_unpin(chosen);
    return true;
  }
  if (!chosen) return false;  // no killable processes

  // oom_kill_process()
  if (process_will_free_mem(chosen)) {
    emu::process_mark_oom_victim(chosen);
  } else {
    mm_struct *mm = emu::process_mm(chosen);
    mem_cgroup *oom_group = mem_cgroup_get_oom_group(mm->memcg, memcg);
    __oom_kill_process(chosen);
    if (oom_group) {
      memcg_memory_event(oom_group, MEMCG_OOM_GROUP_KILL);
      emu::scan_processes(oom_group, [](emu::Process *q) -> int {
        if (emu::process_oom_score_adj(q) != OOM_SCORE_ADJ_MIN) __oom_kill_process(q);
        return 0;
      });
    }
  }
  emu::process_unpin(chosen);
  return true;
}

}  // namespace umemcg
