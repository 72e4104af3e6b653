// SPDX-License-Identifier: GPL-2.0-only
// kernel/cgroup_rstat.cc: see cgroup_rstat.h.
//
// Mirrors: kernel/cgroup/rstat.c (Linux 6.19)
// Emulation: see cgroup_rstat.h.
#include "kernel/cgroup_rstat.h"

#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/sched.h"
#include "shim/smp.h"

namespace umemcg {

namespace {

// The memory controller's rstat lock (the kernel has one per subsystem) and the per-CPU locks
// of the updated trees.
DEFINE_SPINLOCK(rstat_ss_lock);
DEFINE_PER_CPU(spinlock_t, rstat_cpu_lock);

css_rstat_cpu *rstat_cpu(cgroup_subsys_state *css, int cpu) {
  return per_cpu_ptr(css->rstat_cpu, cpu);
}

// Appends the updated subtree below @pos (already unlinked from its parent) and then @pos to
// the flush list ending at *@link, in post-order, unlinking every node. Called under @cpu's
// lock. The recursion depth is the depth of the cgroup tree.
void collect_subtree(cgroup_subsys_state *pos, int cpu, cgroup_subsys_state ***link) {
  css_rstat_cpu *rc = rstat_cpu(pos, cpu);
  cgroup_subsys_state *child = rc->updated_children;
  rc->updated_children = nullptr;
  while (child) {
    css_rstat_cpu *crc = rstat_cpu(child, cpu);
    cgroup_subsys_state *next = crc->updated_next;
    crc->updated_next = nullptr;
    WRITE_ONCE(crc->updated, false);
    collect_subtree(child, cpu, link);
    child = next;
  }
  pos->rstat_flush_next = nullptr;
  **link = pos;
  *link = &pos->rstat_flush_next;
}

// css_rstat_updated_list(): unlinks @root's updated subtree on @cpu and returns it in
// post-order through rstat_flush_next (nullptr if @root has no updates there).
cgroup_subsys_state *css_rstat_updated_list(cgroup_subsys_state *root, int cpu) {
  spinlock_t *cpu_lock = per_cpu_ptr(&rstat_cpu_lock, cpu);
  unsigned long flags;
  spin_lock_irqsave(cpu_lock, flags);
  css_rstat_cpu *rrc = rstat_cpu(root, cpu);
  if (!rrc->updated) {
    spin_unlock_irqrestore(cpu_lock, flags);
    return nullptr;
  }
  // Unlink @root from its parent's list (the parent stays on the tree).
  if (cgroup_subsys_state *parent = root->parent) {
    cgroup_subsys_state **pp = &rstat_cpu(parent, cpu)->updated_children;
    while (*pp && *pp != root) pp = &rstat_cpu(*pp, cpu)->updated_next;
    if (!WARN_ON_ONCE(!*pp)) *pp = rrc->updated_next;
  }
  rrc->updated_next = nullptr;
  WRITE_ONCE(rrc->updated, false);
  cgroup_subsys_state *head = nullptr;
  cgroup_subsys_state **link = &head;
  collect_subtree(root, cpu, &link);
  spin_unlock_irqrestore(cpu_lock, flags);
  // Order the unlinking before the flush callbacks' reads of the per-CPU values: an updater that
  // still found its css on the tree wrote its value before that load. Emulation: as in the
  // kernel, an updater's store and its load of the flag are not fenced, so an update racing with
  // the unlink can stay unflushed until the next update of that css on that CPU.
  smp_mb();
  return head;
}

void __css_rstat_flush(cgroup_subsys_state *css, bool resched);

}  // namespace

int css_rstat_init(cgroup_subsys_state *css) {
  css->rstat_cpu = alloc_percpu<css_rstat_cpu>();
  return css->rstat_cpu ? 0 : -ENOMEM;
}

void css_rstat_exit(cgroup_subsys_state *css) {
  if (!css->rstat_cpu) return;
  // Emulation: no scheduling point between CPUs here (the css has no children left, so this
  // is short), so that freeing a css is one step for observers between scheduling points.
  __css_rstat_flush(css, false);
  int cpu;
  for_each_possible_cpu(cpu) {
    css_rstat_cpu *rc = rstat_cpu(css, cpu);
    // Children are exited first and the flush unlinked this css: nothing may point here.
    WARN_ON_ONCE(rc->updated || rc->updated_children);
  }
  free_percpu(css->rstat_cpu);
  css->rstat_cpu = nullptr;
}

void css_rstat_updated(cgroup_subsys_state *css, int cpu) {
  // Already on the tree: it and every ancestor stay there until a flush unlinks them, and the
  // flush reads the per-CPU values after unlinking (see css_rstat_updated_list for the race).
  if (READ_ONCE(rstat_cpu(css, cpu)->updated)) return;

  spinlock_t *cpu_lock = per_cpu_ptr(&rstat_cpu_lock, cpu);
  unsigned long flags;
  spin_lock_irqsave(cpu_lock, flags);
  for (; css; css = css->parent) {
    css_rstat_cpu *rc = rstat_cpu(css, cpu);
    if (rc->updated) break;  // its ancestors are on the tree too
    WRITE_ONCE(rc->updated, true);
    cgroup_subsys_state *parent = css->parent;
    if (!parent) break;
    css_rstat_cpu *prc = rstat_cpu(parent, cpu);
    rc->updated_next = prc->updated_children;
    prc->updated_children = css;
  }
  spin_unlock_irqrestore(cpu_lock, flags);
}

namespace {

void __css_rstat_flush(cgroup_subsys_state *css, bool resched) {
  int cpu;
  for_each_possible_cpu(cpu) {
    spin_lock_irq(&rstat_ss_lock);
    for (cgroup_subsys_state *pos = css_rstat_updated_list(css, cpu); pos;
         pos = pos->rstat_flush_next)
      pos->ss->css_rstat_flush(pos, cpu);
    spin_unlock_irq(&rstat_ss_lock);
    if (resched) cond_resched();
  }
}

}  // namespace

void css_rstat_flush(cgroup_subsys_state *css) {
  might_sleep();
  __css_rstat_flush(css, true);
}

}  // namespace umemcg
