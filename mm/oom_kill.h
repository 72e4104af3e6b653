// SPDX-License-Identifier: GPL-2.0-only
// mm/oom_kill.h: the OOM killer: victim selection among the emulated processes of an OOM domain
// (a memcg's subtree, or the whole machine for the page allocator), the kill, memory.oom.group,
// and the OOM reaper that frees a victim's anonymous memory without waiting for its exit.
//
// out_of_memory() picks the process with the highest oom_badness() (RSS plus swap entries, plus
// oom_score_adj in thousandths of the domain's pages: memory.max (+ swap) for a memcg, RAM +
// swap for the machine; -1000 is never chosen; ties go to the later process in scan order:
// memcg pre-order for a memcg domain, start order for the machine). A victim still on its way
// out (killed, its mm not yet MMF_OOM_SKIP) aborts the selection: the caller retries. The kill
// counts MEMCG_OOM_KILL on the victim's memcg (hierarchically, as memory.events shows it, for a
// global OOM as for a memcg one), sends SIGKILL, marks the victim and queues it for the OOM
// reaper; memory.oom.group (v2) of the highest such ancestor between the victim's memcg and the
// domain kills every process of that subtree (oom_score_adj -1000 spared) and counts
// MEMCG_OOM_GROUP_KILL there.
//
// The OOM reaper runs OOM_REAPER_DELAY (2 s) after the kill, unless the victim has exited by
// then: it unmaps every private mapping of the victim's mm (mlocked ones too: the zap munlocks),
// freeing its anonymous folios and swap entries and their charges, marks the mm MMF_UNSTABLE
// (a fault of the victim then fails with SIGBUS instead of mapping a new page) and sets
// MMF_OOM_SKIP, so that a later OOM picks another victim instead of waiting for this one. A
// victim blocked in the kernel (an uninterruptible sleep) loses its memory this way.
//
// Mirrors: mm/oom_kill.c (out_of_memory, constrained_alloc, select_bad_process,
//   oom_evaluate_task, oom_badness, oom_kill_process, __oom_kill_process, task_will_free_mem,
//   mark_oom_victim, queue_oom_reaper, wake_oom_reaper, oom_reaper, oom_reap_task,
//   oom_reap_task_mm, __oom_reap_task_mm), mm/memcontrol.c (mem_cgroup_get_max,
//   mem_cgroup_get_oom_group) (Linux 6.19)
// Emulation: the oom_reaper kthread is a delayed work item per victim on system_unbound_wq
//   (the kernel's per-task timer hands the victim to the kthread after the same delay). There
//   is no mmap_lock: the reaper zaps under the page table lock, so oom_reap_task_mm never
//   fails and is never retried.
// Emulation: no OOM report is printed; no oom_notify_list, sysrq OOM or
//   oom_kill_allocating_task. A global OOM with no eligible process does not panic: it fails
//   the allocation and sends SIGKILL to the allocating process (see mm/page_alloc.h).
#pragma once

#include "mm/memcontrol.h"
#include "shim/jiffies.h"
#include "shim/mutex.h"

namespace umemcg {

inline constexpr short OOM_SCORE_ADJ_MIN = -1000;
inline constexpr short OOM_SCORE_ADJ_MAX = 1000;
// The delay between a kill and the reaping of the victim's memory.
inline constexpr unsigned long OOM_REAPER_DELAY = 2 * HZ;

// Serializes OOM kills (memcg and global).
extern mutex oom_lock;

namespace emu {
struct Process;
}

struct oom_control {
  mem_cgroup *memcg = nullptr;  // the OOM domain; nullptr: the whole machine
  gfp_t gfp_mask = 0;
  int order = 0;
};

/**
 * out_of_memory - kill the worst process of the OOM domain of @oc
 * @oc: the domain (a memcg, or nullptr for a global OOM), allocation context
 *
 * Returns true if a victim was killed or one is already on its way out (the caller retries),
 * false if there is no killable process. Context: task context, oom_lock held.
 */
bool out_of_memory(oom_control *oc) REQUIRES(oom_lock);

/**
 * mem_cgroup_oom_kill - out_of_memory() constrained to @memcg's subtree
 * @memcg: the OOM domain
 * @gfp_mask: allocation context
 * @order: allocation order
 *
 * The default memcg_reclaim_ops::out_of_memory. Returns as out_of_memory(). Context: oom_lock
 * held (mem_cgroup_out_of_memory takes it and calls this through the ops pointer).
 */
bool mem_cgroup_oom_kill(mem_cgroup *memcg, gfp_t gfp_mask, int order) REQUIRES(oom_lock);

// oom_badness(): the victim score of @p in a domain of @totalpages, LONG_MIN if unkillable.
long oom_badness(emu::Process *p, unsigned long totalpages);

// tsk_is_oom_victim(current): the current task is a process the OOM killer chose.
bool current_is_oom_victim();

// Cancels the reaping still queued and drops the victims it pins (memcg shutdown).
void oom_reaper_shutdown();

}  // namespace umemcg
