// SPDX-License-Identifier: GPL-2.0-only
// kernel/cgroup_tasks.cc: tasks in cgroups: membership (each task's css_set), fork and exit,
// migration through cgroup.procs with the controller's can_attach/attach, populated counting
// with cgroup.events notification, and cgroup.kill; the freezer's hooks on fork, exit and
// migration (kernel/cgroup_freezer.cc).
//
// Mirrors: kernel/cgroup/cgroup.c (Linux 6.19): css_set_move_task, cgroup_update_populated,
//   cgroup_post_fork, cgroup_exit, cgroup_migrate_vet_dst, cgroup_attach_task /
//   cgroup_migrate_execute (can_attach, then the move, then attach), cgroup_procs_write_start,
//   cgroup_kill / __cgroup_kill, css_task_iter (the order of cgroup.procs,
//   CSS_TASK_ITER_THREADED), cgroup_attach_permissions (threads move only within their
//   threaded domain)
// Emulation: one css_set per cgroup (the kernel shares a css_set among cgroups with the same
//   css combination); a task's css_set names its cgroup. Only tasks that joined through
//   cgroup_post_fork are known (find_task_by_vpid looks among them).
// Emulation: a task whose tgid is 0 or equal to its pid is a thread-group leader; the others
//   are threads of the leader whose pid is their tgid.
// Emulation: the threaded csets of a threaded domain are visited in pre-order of their cgroups
//   (the kernel visits them in the order the css_sets were created).
// Emulation: cgroup_threadgroup_rwsem is a plain rw_semaphore (the kernel's is a
//   percpu_rw_semaphore: readers are fork/exit, the writer is migration).
#include <algorithm>

#include "kernel/cgroup.h"
#include "kernel/cgroup_internal.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/rwsem.h"
#include "shim/sched.h"

namespace umemcg {

DEFINE_SPINLOCK(css_set_lock);
DECLARE_RWSEM(cgroup_threadgroup_rwsem);

namespace {

int task_tgid(const task_struct *t) { return t->tgid ? t->tgid : t->pid; }
bool thread_group_leader(const task_struct *t) { return !t->tgid || t->tgid == t->pid; }

css_set *cgroup_cset(cgroup *cgrp) REQUIRES(css_set_lock) {
  if (!cgrp->cset) {
    cgrp->cset = new css_set;
    cgrp->cset->dfl_cgrp = cgrp;
  }
  return cgrp->cset;
}

// cgroup_update_populated: propagate a flip of cgrp's populated state up the tree; every
// cgroup whose state flips gets cgroup.events notified.
void cgroup_update_populated(cgroup *cgrp, bool populated) REQUIRES(css_set_lock) {
  cgroup *child = nullptr;
  int adj = populated ? 1 : -1;
  do {
    bool was_populated = cgroup_is_populated(cgrp);
    if (!child)
      cgrp->nr_populated_csets += adj;
    else if (cgroup_is_threaded(child))
      cgrp->nr_populated_threaded_children += adj;
    else
      cgrp->nr_populated_domain_children += adj;
    if (was_populated == cgroup_is_populated(cgrp)) break;
    cgroup_file_notify(&cgrp->events_file);
    child = cgrp;
    cgrp = cgrp->parent;
  } while (cgrp);
}

// css_set_move_task: moves task from its css_set to to (either may be nullptr).
void css_set_move_task(task_struct *task, css_set *from, css_set *to) REQUIRES(css_set_lock) {
  if (from) {
    auto &v = from->tasks;
    v.erase(std::find(v.begin(), v.end(), task));
    if (v.empty()) cgroup_update_populated(from->dfl_cgrp, false);
  }
  if (to) {
    if (to->tasks.empty()) cgroup_update_populated(to->dfl_cgrp, true);
    to->tasks.push_back(task);
  }
  task->cgroups = to;
}

// Calls fn on cgrp and its live descendants in pre-order.
template <typename F>
void for_each_cgroup_pre(cgroup *cgrp, F fn) REQUIRES(cgroup_mutex) {
  fn(cgrp);
  for (cgroup *child : cgrp->children) for_each_cgroup_pre(child, fn);
}

// The same walk by a holder of css_set_lock alone (cgroup.procs, pid lookup): children are
// linked and unlinked under css_set_lock as well as cgroup_mutex (kernel/cgroup.cc), so the
// list is stable under either. The analysis knows children by their cgroup_mutex rule only,
// hence none here; fn runs with css_set_lock held (it asserts it: the kernel's idiom for a
// callback whose caller holds the lock).
template <typename F>
void for_each_cgroup_pre_cset_locked(cgroup *cgrp, F fn) NO_THREAD_SAFETY_ANALYSIS {
  lockdep_assert_held(&css_set_lock);
  fn(cgrp);
  for (cgroup *child : cgrp->children) for_each_cgroup_pre_cset_locked(child, fn);
}

// The tasks of the thread group led by leader (or leader alone).
std::vector<task_struct *> group_tasks(cgroup_root *root, task_struct *leader, bool threadgroup)
    REQUIRES(css_set_lock) {
  std::vector<task_struct *> out;
  if (!threadgroup) {
    out.push_back(leader);
    return out;
  }
  int tgid = task_tgid(leader);
  for_each_cgroup_pre_cset_locked(&root->cgrp, [&](cgroup *c) {
    lockdep_assert_held(&css_set_lock);
    if (!c->cset) return;
    for (task_struct *t : c->cset->tasks)
      if (task_tgid(t) == tgid) out.push_back(t);
  });
  return out;
}

// Moves tasks to dst with the controller's callbacks when their effective css changes.
int migrate_tasks(cgroup *dst, std::vector<task_struct *> &tasks) REQUIRES(cgroup_mutex) {
  cgroup_subsys *ss = dst->root->ss;
  cgroup_taskset tset;
  tset.dst_cgrp = dst;
  tset.dst_css = cgroup_e_css(dst);
  for (task_struct *t : tasks) {
    cgroup *src = t->cgroups ? t->cgroups->dfl_cgrp : &dst->root->cgrp;
    if (cgroup_e_css(src) != tset.dst_css) tset.tasks.push_back(t);
  }
  if (!tset.tasks.empty() && ss->can_attach) {
    int ret = ss->can_attach(&tset);
    if (ret) return ret;
  }
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  css_set *to = cgroup_cset(dst);
  for (task_struct *t : tasks) {
    if (t->cgroups == to) continue;
    cgroup *src = t->cgroups->dfl_cgrp;
    css_set_move_task(t, t->cgroups, to);
    if (cgroup_on_dfl(dst)) cgroup_freezer_migrate_task(t, src, dst);
  }
  spin_unlock_irqrestore(&css_set_lock, flags);
  if (!tset.tasks.empty() && ss->attach) ss->attach(&tset);
  return 0;
}

}  // namespace

// Both read the populated counts without css_set_lock when their caller does not hold it (a
// racy snapshot, as the kernel's cgroup_is_populated()), hence no thread-safety analysis.
bool cgroup_has_tasks(cgroup *cgrp) NO_THREAD_SAFETY_ANALYSIS {
  return cgrp->nr_populated_csets > 0;
}

bool cgroup_is_populated(cgroup *cgrp) NO_THREAD_SAFETY_ANALYSIS {
  return cgrp->nr_populated_csets + cgrp->nr_populated_domain_children +
             cgrp->nr_populated_threaded_children >
         0;
}

cgroup *task_dfl_cgroup(task_struct *task) {
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  cgroup *c = task->cgroups ? task->cgroups->dfl_cgrp : nullptr;
  spin_unlock_irqrestore(&css_set_lock, flags);
  if (!c && cgroup_current_root()) c = &cgroup_current_root()->cgrp;
  return c;
}

task_struct *find_task_by_vpid(int pid) {
  cgroup_root *root = cgroup_current_root();
  if (!root) return nullptr;
  task_struct *found = nullptr;
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  for_each_cgroup_pre_cset_locked(&root->cgrp, [&](cgroup *c) {
    lockdep_assert_held(&css_set_lock);
    if (found || !c->cset) return;
    for (task_struct *t : c->cset->tasks)
      if (t->pid == pid) found = t;
  });
  spin_unlock_irqrestore(&css_set_lock, flags);
  return found;
}

void cgroup_post_fork(task_struct *child, task_struct *parent) {
  cgroup_root *root = cgroup_current_root();
  if (WARN_ON(!root) || WARN_ON(child->cgroups)) return;
  down_read(&cgroup_threadgroup_rwsem);
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  css_set *cset = parent && parent->cgroups ? parent->cgroups : cgroup_cset(&root->cgrp);
  css_set_move_task(child, nullptr, cset);
  spin_unlock_irqrestore(&css_set_lock, flags);
  cgroup_freezer_fork(child, cset->dfl_cgrp);
  up_read(&cgroup_threadgroup_rwsem);
  if (root->ss->fork) root->ss->fork(child);
}

void cgroup_exit(task_struct *task) {
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  if (css_set *from = task->cgroups) {
    css_set_move_task(task, from, nullptr);
    // A task leaves the frozen state before it exits; its going may complete a freeze.
    WARN_ON_ONCE(task->frozen);
    if (!(task->flags & PF_KTHREAD) && test_bit(CGRP_FREEZE, &from->dfl_cgrp->flags))
      cgroup_update_frozen(from->dfl_cgrp);
  }
  spin_unlock_irqrestore(&css_set_lock, flags);
}

int cgroup_migrate_vet_dst(cgroup *dst) {
  if (!cgroup_on_dfl(dst)) return 0;  // v1 has no restriction
  // The destination must be able to host resources: not below a threaded subtree's domain.
  if (!cgroup_is_valid_domain(dst->dom_cgrp)) return -EOPNOTSUPP;
  // A thread root (or one it could become: the root among others) and a threaded cgroup take
  // tasks whatever their subtree_control.
  if (cgroup_can_be_thread_root(dst) || cgroup_is_threaded(dst)) return 0;
  // The no-internal-process rule: a domain with controllers enabled for its children.
  if (dst->subtree_control) return -EBUSY;
  return 0;
}

int cgroup_attach_task(cgroup *dst, task_struct *leader, bool threadgroup) {
  lockdep_assert_held(&cgroup_mutex);
  int ret = cgroup_migrate_vet_dst(dst);
  if (ret) return ret;
  down_write(&cgroup_threadgroup_rwsem);
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  std::vector<task_struct *> tasks = group_tasks(dst->root, leader, threadgroup);
  spin_unlock_irqrestore(&css_set_lock, flags);
  ret = migrate_tasks(dst, tasks);
  up_write(&cgroup_threadgroup_rwsem);
  return ret;
}

int cgroup_attach_pid(cgroup *dst, int pid, bool threadgroup) {
  lockdep_assert_held(&cgroup_mutex);
  task_struct *task = pid ? find_task_by_vpid(pid) : current;
  if (!task) return -ESRCH;
  if (!task->cgroups) return -ESRCH;  // not a task the cgroup core knows (never forked in)
  if (threadgroup && !thread_group_leader(task)) {
    task_struct *leader = find_task_by_vpid(task->tgid);
    if (!leader) return -ESRCH;
    task = leader;
  }
  if (task->flags & PF_KTHREAD) return -EINVAL;  // kernel threads are not migrated
  if (cgroup_on_dfl(dst)) {
    // cgroup_attach_permissions: a thread (cgroup.threads) moves only within its threaded
    // domain.
    int ret = cgroup_migrate_vet_dst(dst);
    if (ret) return ret;
    cgroup *src = task->cgroups->dfl_cgrp;
    if (!threadgroup && src->dom_cgrp != dst->dom_cgrp) return -EOPNOTSUPP;
  }
  return cgroup_attach_task(dst, task, threadgroup);
}

void cgroup_migrate_subtree_to_e_css(cgroup *cgrp) {
  lockdep_assert_held(&cgroup_mutex);
  // Tasks stay in their cgroup; those whose effective css changed get the controller's attach.
  cgroup_subsys *ss = cgrp->root->ss;
  for_each_cgroup_pre(cgrp, [&](cgroup *c) {
    if (!ss->attach) return;
    cgroup_taskset tset;
    tset.dst_cgrp = c;
    tset.dst_css = cgroup_e_css(c);
    unsigned long flags;
    spin_lock_irqsave(&css_set_lock, flags);
    if (c->cset) tset.tasks = c->cset->tasks;
    spin_unlock_irqrestore(&css_set_lock, flags);
    if (!tset.tasks.empty()) ss->attach(&tset);
  });
}

std::vector<int> cgroup_procs_pids(cgroup *cgrp, bool procs, bool sorted) {
  std::vector<int> pids;
  auto add = [&](cgroup *c) REQUIRES(css_set_lock) {
    if (!c->cset) return;
    for (task_struct *t : c->cset->tasks) {
      // cgroup.procs lists thread-group leaders (CSS_TASK_ITER_PROCS), tasks every task.
      if (procs && !thread_group_leader(t)) continue;
      pids.push_back(procs ? task_tgid(t) : t->pid);
    }
  };
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  add(cgrp);
  // v2 cgroup.procs of a threaded domain lists the processes of its whole threaded subtree
  // (CSS_TASK_ITER_THREADED); v1 and cgroup.threads list the cgroup's own tasks.
  // (cgrp itself is not threaded, so the walk adds its threaded descendants only.)
  if (procs && cgroup_on_dfl(cgrp) && !cgroup_is_threaded(cgrp)) {
    for_each_cgroup_pre_cset_locked(cgrp, [&](cgroup *c) {
      lockdep_assert_held(&css_set_lock);
      if (cgroup_dom_cgrp(c) == cgrp && cgroup_is_threaded(c)) add(c);
    });
  }
  spin_unlock_irqrestore(&css_set_lock, flags);
  if (sorted) {
    std::sort(pids.begin(), pids.end());
    pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  }
  return pids;
}

void cgroup_kill(cgroup *cgrp) {
  lockdep_assert_held(&cgroup_mutex);
  // Every live descendant, self first; kernel threads and tasks already dying are skipped.
  for_each_cgroup_pre(cgrp, [](cgroup *c) {
    unsigned long flags;
    spin_lock_irqsave(&css_set_lock, flags);
    if (c->cset) {
      for (task_struct *t : c->cset->tasks) {
        if ((t->flags & PF_KTHREAD) || fatal_signal_pending(t)) continue;
        send_sig_kill(t);
      }
    }
    spin_unlock_irqrestore(&css_set_lock, flags);
  });
}

// The cgroup is being freed: nothing else can reach it or its css_set any more (as in a
// destructor, which the analysis does not check either), hence no thread-safety analysis.
void cgroup_free_cset(cgroup *cgrp) NO_THREAD_SAFETY_ANALYSIS {
  WARN_ON(cgrp->cset && !cgrp->cset->tasks.empty());
  delete cgrp->cset;
  cgrp->cset = nullptr;
}

}  // namespace umemcg
