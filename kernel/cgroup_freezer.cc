// SPDX-License-Identifier: GPL-2.0-only
// kernel/cgroup_freezer.cc: the v2 freezer: cgroup.freeze, the frozen state of cgroups and
// tasks that cgroup.events reports, and the trap a task of a freezing cgroup takes on its way
// back to user mode.
//
// A write of 1 to cgroup.freeze raises e_freeze on the cgroup and every live descendant; each
// whose e_freeze becomes 1 gets CGRP_FREEZE and every task in it (kernel threads excepted) gets
// JOBCTL_TRAP_FREEZE with a signal wake-up, so a task sleeping interruptibly in the kernel
// returns to user mode and one in user mode enters the kernel's signal path at its next return.
// There it sleeps in the trap, counted in its cgroup's nr_frozen_tasks. A cgroup is frozen
// (CGRP_FROZEN, "frozen 1" in cgroup.events, notified) when it is to be frozen, all its tasks
// are frozen and all its live descendants are frozen; the state propagates to the ancestors.
// Thawing clears the trap bit and wakes the task, which leaves the frozen state. A fatal signal
// takes a task out of the trap to exit. Tasks moved into (out of) a freezing cgroup are frozen
// (thawed); tasks forked into one freeze before they run user code; a new child of a freezing
// cgroup starts frozen.
//
// Mirrors: kernel/cgroup/freezer.c (cgroup_propagate_frozen, cgroup_update_frozen,
//   cgroup_enter_frozen, cgroup_leave_frozen, cgroup_freeze_task, cgroup_do_freeze,
//   cgroup_freezer_migrate_task, cgroup_freeze), kernel/signal.c (do_freezer_trap and its part
//   of get_signal) (Linux 6.19)
// Emulation: one global spinlock stands for every task's sighand->siglock: it orders the trap's
//   check of JOBCTL_TRAP_FREEZE and its sleep against a thaw's clear and wake-up. Lock order, as
//   the kernel's: css_set_lock, then the siglock.
// Emulation: the trap is reached through the machine's signal hook on return to user mode
//   (emu::register_get_signal_hook); the process layer restarts an interrupted sleep or pause
//   after the trap, as the kernel restarts the system call (mm/process.cc).
#include <vector>

#include "kernel/cgroup.h"
#include "kernel/cgroup_internal.h"
#include "shim/bug.h"
#include "shim/machine.h"
#include "shim/sched.h"
#include "shim/spinlock.h"

namespace umemcg {

namespace {

// Emulation: every task's sighand->siglock (see the banner).
DEFINE_SPINLOCK(freezer_siglock);

int cgroup_task_count(const cgroup *cgrp) REQUIRES(css_set_lock) {
  return cgrp->cset ? static_cast<int>(cgrp->cset->tasks.size()) : 0;
}

// The new frozen state of a cgroup goes up the tree: a frozen cgroup adds itself (and each
// ancestor that becomes frozen by it) to its ancestors' frozen descendants; an unfrozen one
// takes itself out and unfreezes every ancestor that was frozen.
void cgroup_propagate_frozen(cgroup *cgrp, bool frozen) REQUIRES(css_set_lock) {
  int desc = 1;
  while ((cgrp = cgrp->parent)) {
    if (frozen) {
      cgrp->freezer.nr_frozen_descendants += desc;
      if (!test_bit(CGRP_FROZEN, &cgrp->flags) && test_bit(CGRP_FREEZE, &cgrp->flags) &&
          cgrp->freezer.nr_frozen_descendants == cgrp->nr_descendants) {
        set_bit(CGRP_FROZEN, &cgrp->flags);
        cgroup_file_notify(&cgrp->events_file);
        desc++;
      }
    } else {
      cgrp->freezer.nr_frozen_descendants -= desc;
      if (test_bit(CGRP_FROZEN, &cgrp->flags)) {
        clear_bit(CGRP_FROZEN, &cgrp->flags);
        cgroup_file_notify(&cgrp->events_file);
        desc++;
      }
    }
  }
}

void cgroup_inc_frozen_cnt(cgroup *cgrp) REQUIRES(css_set_lock) {
  cgrp->freezer.nr_frozen_tasks++;
}

void cgroup_dec_frozen_cnt(cgroup *cgrp) REQUIRES(css_set_lock) {
  cgrp->freezer.nr_frozen_tasks--;
  WARN_ON_ONCE(cgrp->freezer.nr_frozen_tasks < 0);
}

// A task's frozen flag read without css_set_lock: only the task itself writes it (under the
// lock), so the task reading its own flag, or anyone reading a task that has not run yet (a
// child at fork), sees a stable value. Hence no thread-safety analysis here.
bool cgroup_task_frozen_self(const task_struct *task) NO_THREAD_SAFETY_ANALYSIS {
  return task->frozen;
}

// The task's own cgroup, under css_set_lock (the root's for a task in none).
cgroup *task_dfl_cgroup_locked(task_struct *task) REQUIRES(css_set_lock) {
  return task->cgroups ? task->cgroups->dfl_cgrp : &cgroup_current_root()->cgrp;
}

// The task enters the frozen state, if not yet there.
void cgroup_enter_frozen() {
  if (cgroup_task_frozen_self(current)) return;  // written only by current
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  current->frozen = true;
  cgroup *cgrp = task_dfl_cgroup_locked(current);
  cgroup_inc_frozen_cnt(cgrp);
  cgroup_update_frozen(cgrp);
  spin_unlock_irqrestore(&css_set_lock, flags);
}

// The task leaves the frozen state. Unless always_leave, a task whose cgroup is (again) to be
// frozen stays counted frozen and re-arms its trap, so the cgroup does not flip to unfrozen
// and back.
void cgroup_leave_frozen(bool always_leave) {
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  cgroup *cgrp = task_dfl_cgroup_locked(current);
  if (always_leave || !test_bit(CGRP_FREEZE, &cgrp->flags)) {
    cgroup_dec_frozen_cnt(cgrp);
    cgroup_update_frozen(cgrp);
    WARN_ON_ONCE(!current->frozen);
    current->frozen = false;
  } else if (!test_bit(JOBCTL_TRAP_FREEZE_BIT, &current->jobctl)) {
    spin_lock(&freezer_siglock);
    set_bit(JOBCTL_TRAP_FREEZE_BIT, &current->jobctl);
    set_bit(TIF_SIGPENDING, &current->thread_flags);
    spin_unlock(&freezer_siglock);
  }
  spin_unlock_irqrestore(&css_set_lock, flags);
}

// Sets or clears the task's trap bit and wakes it to act on it.
void cgroup_freeze_task(task_struct *task, bool freeze) {
  unsigned long flags;
  spin_lock_irqsave(&freezer_siglock, flags);
  if (freeze) {
    set_bit(JOBCTL_TRAP_FREEZE_BIT, &task->jobctl);
    signal_wake_up(task);
  } else {
    clear_bit(JOBCTL_TRAP_FREEZE_BIT, &task->jobctl);
    wake_up_process(task);
  }
  spin_unlock_irqrestore(&freezer_siglock, flags);
}

// Sets or clears CGRP_FREEZE on one cgroup and acts on its tasks.
void cgroup_do_freeze(cgroup *cgrp, bool freeze) REQUIRES(cgroup_mutex) {
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  if (freeze)
    set_bit(CGRP_FREEZE, &cgrp->flags);
  else
    clear_bit(CGRP_FREEZE, &cgrp->flags);
  // Emulation: the tasks are collected under css_set_lock and acted on after it (the kernel's
  // css_task_iter drops the lock between tasks too). The task structs stay valid: an exiting
  // task leaves its css_set under css_set_lock before it is freed, and its trap bit is then
  // harmless; migration, which could move it, needs cgroup_mutex, which we hold.
  std::vector<task_struct *> tasks = cgrp->cset ? cgrp->cset->tasks : std::vector<task_struct *>{};
  spin_unlock_irqrestore(&css_set_lock, flags);
  for (task_struct *task : tasks) {
    if (task->flags & PF_KTHREAD) continue;  // freezing kernel threads is not supported
    cgroup_freeze_task(task, freeze);
  }
  // Revisit the state for an empty cgroup and one whose descendants are already there.
  spin_lock_irqsave(&css_set_lock, flags);
  if (cgrp->nr_descendants == cgrp->freezer.nr_frozen_descendants) cgroup_update_frozen(cgrp);
  spin_unlock_irqrestore(&css_set_lock, flags);
}

// The freezer's part of get_signal(), on return to user mode with TIF_SIGPENDING (the
// machine's signal hook).
void cgroup_freezer_get_signal() {
  for (;;) {
    if (fatal_signal_pending(current)) {
      // The task dies: it leaves the frozen state for good.
      if (cgroup_task_frozen_self(current)) cgroup_leave_frozen(true);
      return;
    }
    unsigned long flags;
    spin_lock_irqsave(&freezer_siglock, flags);
    if (test_bit(JOBCTL_TRAP_FREEZE_BIT, &current->jobctl)) {
      // do_freezer_trap(): the state is set under the siglock, so a thaw (clear + wake-up under
      // the same lock) either comes before the check above or wakes this sleep.
      __set_current_state(TASK_INTERRUPTIBLE);
      clear_bit(TIF_SIGPENDING, &current->thread_flags);
      spin_unlock_irqrestore(&freezer_siglock, flags);
      cgroup_enter_frozen();
      emu::set_wait_reason("do_freezer_trap");
      schedule();
      continue;
    }
    spin_unlock_irqrestore(&freezer_siglock, flags);
    if (cgroup_task_frozen_self(current)) {
      cgroup_leave_frozen(false);
      continue;
    }
    return;
  }
}

// Appends cgrp and its live descendants in pre-order (removed cgroups are unlinked from their
// parent's children, so the walk sees live ones only, as css_for_each_descendant_pre skipping
// cgroup_is_dead ones).
void live_descendants_pre(cgroup *cgrp, std::vector<cgroup *> *out) REQUIRES(cgroup_mutex) {
  out->push_back(cgrp);
  for (cgroup *child : cgrp->children) live_descendants_pre(child, out);
}

}  // namespace

void cgroup_update_frozen(cgroup *cgrp) {
  lockdep_assert_held(&css_set_lock);
  bool frozen = test_bit(CGRP_FREEZE, &cgrp->flags) &&
                cgrp->freezer.nr_frozen_tasks == cgroup_task_count(cgrp);
  if (frozen == test_bit(CGRP_FROZEN, &cgrp->flags)) return;
  if (frozen)
    set_bit(CGRP_FROZEN, &cgrp->flags);
  else
    clear_bit(CGRP_FROZEN, &cgrp->flags);
  cgroup_file_notify(&cgrp->events_file);
  cgroup_propagate_frozen(cgrp, frozen);
}

void cgroup_freezer_migrate_task(task_struct *task, cgroup *src, cgroup *dst) {
  lockdep_assert_held(&css_set_lock);
  if (task->flags & PF_KTHREAD) return;
  if (!test_bit(CGRP_FREEZE, &src->flags) && !test_bit(CGRP_FREEZE, &dst->flags) &&
      !task->frozen)
    return;
  // A frozen task moves its count; if dst is not freezing, the task leaves the frozen state
  // itself once woken (its count is taken from dst then).
  if (task->frozen) {
    cgroup_inc_frozen_cnt(dst);
    cgroup_dec_frozen_cnt(src);
  }
  cgroup_update_frozen(dst);
  cgroup_update_frozen(src);
  cgroup_freeze_task(task, test_bit(CGRP_FREEZE, &dst->flags));
}

void cgroup_freeze(cgroup *cgrp, bool freeze) {
  lockdep_assert_held(&cgroup_mutex);
  if (cgrp->freezer.freeze == freeze) return;
  cgrp->freezer.freeze = freeze;
  bool applied = false;
  std::vector<cgroup *> subtree;
  live_descendants_pre(cgrp, &subtree);
  for (cgroup *dsct : subtree) {
    if (freeze) {
      // Already to be frozen by an ancestor's setting?
      if (++dsct->freezer.e_freeze > 1) continue;
    } else {
      // Still to be frozen by an ancestor's setting?
      if (--dsct->freezer.e_freeze > 0) continue;
      WARN_ON_ONCE(dsct->freezer.e_freeze < 0);
    }
    cgroup_do_freeze(dsct, freeze);
    applied = true;
  }
  // Nothing changed state (an ancestor decides it): the writer is told there is nothing to
  // wait for.
  if (!applied) cgroup_file_notify(&cgrp->events_file);
}

void cgroup_freezer_inherit(cgroup *cgrp) {
  lockdep_assert_held(&cgroup_mutex);
  cgrp->freezer.e_freeze = cgrp->parent->freezer.e_freeze;
  if (!cgrp->freezer.e_freeze) return;
  // Unpopulated, so frozen at once; tasks that join it will be frozen. Not yet linked into
  // the counts of its ancestors (the caller does that, under css_set_lock), so no one reads
  // the bits before they are both set.
  set_bit(CGRP_FREEZE, &cgrp->flags);
  set_bit(CGRP_FROZEN, &cgrp->flags);
}

void cgroup_freezer_fork(task_struct *child, cgroup *cgrp) {
  if (child->flags & PF_KTHREAD) return;
  if (!test_bit(CGRP_FREEZE, &cgrp->flags)) return;
  // The child takes the trap before its first user instruction (its cgroup's state is
  // revisited then, from the trap, so it does not flip to unfrozen and back here).
  unsigned long flags;
  spin_lock_irqsave(&freezer_siglock, flags);
  WARN_ON_ONCE(cgroup_task_frozen_self(child));
  set_bit(JOBCTL_TRAP_FREEZE_BIT, &child->jobctl);
  // Emulation: the kernel's recalc_sigpending() sets TIF_SIGPENDING for a pending trap; the
  // machine's signal hook runs only with it set.
  set_bit(TIF_SIGPENDING, &child->thread_flags);
  spin_unlock_irqrestore(&freezer_siglock, flags);
}

void cgroup_freezer_boot() { emu::register_get_signal_hook(cgroup_freezer_get_signal); }

}  // namespace umemcg
