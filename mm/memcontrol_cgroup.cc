// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_cgroup.cc: the memory controller's task callbacks for the cgroup core: a task
// joining a cgroup (fork) or moving (attach) has its mm follow it to the cgroup's effective
// memory css. (css_reset, when the controller is disabled above a css that stays, is
// mm/memcontrol_files.cc's.)
//
// Mirrors: mm/memcontrol.c (mem_cgroup_attach, mem_cgroup_fork)
//   (Linux 6.19)
// Charges never move (v2): pages stay charged where they were; new charges of the mm go to the
// new memcg. Emulation: the kernel finds a task's memcg through mm->owner's css_set; here the
// mm records it (emu::mm_attach), so attach re-points the mm.
#include "kernel/cgroup.h"
#include "mm/memcontrol.h"
#include "mm/memcontrol_internal.h"
#include "mm/mm_types.h"
#include "mm/page_counter.h"
#include "shim/sched.h"

namespace umemcg {

namespace {

void mem_cgroup_attach(cgroup_taskset *tset) {
  mem_cgroup *memcg = mem_cgroup_from_css(tset->dst_css);
  for (task_struct *task : tset->tasks)
    if (task->mm) emu::mm_attach(task->mm, memcg);
}

void mem_cgroup_fork(task_struct *task) {
  if (!task->mm) return;
  emu::mm_attach(task->mm, mem_cgroup_from_css(cgroup_e_css(task_dfl_cgroup(task))));
}

}  // namespace

void memcg_cgroup_register(cgroup_subsys *ss) {
  ss->attach = mem_cgroup_attach;
  ss->fork = mem_cgroup_fork;
}

}  // namespace umemcg
