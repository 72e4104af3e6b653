// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_files.h: the memory controller's control files: the v2 table (memory_files[])
// and the v1 table (mem_cgroup_legacy_files[]), css_reset, memory.reclaim's parser and loop,
// and the swappiness knobs they share.
//
// Every row is a kernel/cftype.h cftype with the kernel's name (without the "memory." prefix),
// flags and handler kind; the cgroup core creates the files from memory_cgrp_subsys's
// dfl_cftypes / legacy_cftypes. Handlers take the kernel's locks and follow its write loops
// (see mm/memcontrol_files.cc and mm/memcontrol_v1_files.cc).
//
// Mirrors: mm/memcontrol.c (memory_files[], swap_files[], mem_cgroup_css_reset), mm/vmscan.c
//   (user_proactive_reclaim, vm_swappiness), mm/memcontrol-v1.c (mem_cgroup_legacy_files[],
//   memsw_files[]), include/linux/swap.h (mem_cgroup_swappiness) (Linux 6.19)
// Emulation: the kernel registers swap_files[] (v2) and memsw_files[] (v1) as separate tables at
//   subsys_initcall; here they are the tail rows of memory_files[] and mem_cgroup_legacy_files[]
//   (swap support and v1 swap accounting are always built in).
// Emulation: CONFIG_ZSWAP is off: there are no memory.zswap.* files.
// The show handlers of memory.stat and memory.numa_stat (both hierarchies) live with the
// statistics (mm/memcontrol_stat.h); their rows are in these tables.
#pragma once

#include "kernel/cftype.h"
#include "mm/memcontrol.h"

namespace umemcg {

inline constexpr int MIN_SWAPPINESS = 0;
inline constexpr int MAX_SWAPPINESS = 200;
// memory.reclaim "swappiness=max": reclaim anonymous pages only.
inline constexpr int SWAPPINESS_ANON_ONLY = MAX_SWAPPINESS + 1;

// The global swappiness (/proc/sys/vm/swappiness); v1's root memory.swappiness writes it.
extern int vm_swappiness;

// mem_cgroup_swappiness(): the global value on v2 and for the v1 root, else the memcg's own.
inline int mem_cgroup_swappiness(mem_cgroup *memcg) {
  if (!do_memsw_account() || mem_cgroup_is_root(memcg)) return READ_ONCE(vm_swappiness);
  return READ_ONCE(memcg->swappiness);
}

// The tables, each ending in an empty row (cgroup_subsys::dfl_cftypes / legacy_cftypes).
extern const cftype memory_files[];
extern const cftype mem_cgroup_legacy_files[];

/**
 * mem_cgroup_css_reset - forget every limit and protection of @css
 * @css: a memcg whose controller is being disabled in its parent's subtree_control (the css
 *       stays pinned by charges)
 *
 * max, swap.max (v1: memsw, kmem and tcpmem max too) = max; min = low = 0; high = swap.high =
 * max; the v1 soft limit = max.
 */
void mem_cgroup_css_reset(cgroup_subsys_state *css);

/**
 * user_proactive_reclaim - memory.reclaim's parser and loop
 * @buf: the written text, NUL-terminated and writable (it is cut into tokens)
 * @memcg: the target memcg
 *
 * "<size>[ swappiness=<0..200>| swappiness=max]...": see mm/memcontrol_files.cc.
 * Returns 0 once at least size bytes were reclaimed; -EINVAL (bad argument), -EINTR (a signal
 * is pending) or -EAGAIN (16 reclaim passes without progress after the first).
 */
int user_proactive_reclaim(char *buf, mem_cgroup *memcg);

}  // namespace umemcg
