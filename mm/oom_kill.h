// SPDX-License-Identifier: GPL-2.0-only
// mm/oom_kill.h: the OOM killer for a memcg: victim selection among the emulated processes of
// the subtree, the kill, memory.oom.group.
//
// Mirrors: mm/oom_kill.c (out_of_memory for CONSTRAINT_MEMCG, select_bad_process,
//   oom_evaluate_task, oom_badness, oom_kill_process, __oom_kill_process, task_will_free_mem),
//   mm/memcontrol.c (mem_cgroup_get_max, mem_cgroup_get_oom_group) (Linux 6.19)
// Emulation: no OOM reaper thread: a victim is woken by its SIGKILL and frees its memory itself
//   when it exits at its next return to user mode (every emulated sleep is killable); its mm
//   then gets MMF_OOM_SKIP and a new victim may be chosen. No OOM report is printed.
#pragma once

#include "mm/memcontrol.h"

namespace umemcg {

inline constexpr short OOM_SCORE_ADJ_MIN = -1000;
inline constexpr short OOM_SCORE_ADJ_MAX = 1000;

/**
 * mem_cgroup_oom_kill - out_of_memory() constrained to @memcg's subtree
 * @memcg: the OOM domain
 * @gfp_mask: allocation context
 * @order: allocation order
 *
 * Returns true if a victim was killed or one is already on its way out (the charger retries),
 * false if there is no killable process (the charge fails).
 */
bool mem_cgroup_oom_kill(mem_cgroup *memcg, gfp_t gfp_mask, int order);

namespace emu {
struct Process;
}
// oom_badness(): the victim score of @p in a domain of @totalpages, LONG_MIN if unkillable.
long oom_badness(emu::Process *p, unsigned long totalpages);

}  // namespace umemcg
