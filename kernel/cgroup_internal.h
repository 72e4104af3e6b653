// SPDX-License-Identifier: GPL-2.0-only
// kernel/cgroup_internal.h: what the cgroup core files share, and emulator-only access to the
// cgroup registry (invariant checks).
//
// Mirrors: nothing (the kernel walks css trees with css_for_each_descendant_pre under RCU).
// Emulation: a registry of every allocated css, including dying ones not yet freed, so that the
//   checkers can account for charges still held by removed cgroups.
#pragma once

#include "kernel/cgroup.h"

namespace umemcg {

struct kernfs_syscall_ops;
extern const kernfs_syscall_ops cgroup_kf_syscall_ops;

// kernel/cgroup_fs.cc, called by cgroup.cc with cgroup_mutex held.
int cgroup_fs_setup_root(cgroup_root *root, unsigned int kf_flags) REQUIRES(cgroup_mutex);
void cgroup_fs_destroy_root(cgroup_root *root) REQUIRES(cgroup_mutex);
int cgroup_fs_create_dir(cgroup *cgrp) REQUIRES(cgroup_mutex);
void cgroup_fs_activate_dir(cgroup *cgrp) REQUIRES(cgroup_mutex);
void cgroup_fs_remove_dir(cgroup *cgrp) REQUIRES(cgroup_mutex);
// nr_subsys_descendants of cgrp's ancestors, as cgrp's controller css is shown (+1) or hidden
// (-1). Context: cgroup_mutex held.
void cgroup_adjust_subsys_counts(cgroup *cgrp, int delta) REQUIRES(cgroup_mutex);
// kernel/cgroup_tasks.cc. Context: cgroup_mutex held.
void cgroup_migrate_subtree_to_e_css(cgroup *cgrp) REQUIRES(cgroup_mutex);
// Frees cgrp's css_set (it has no tasks) when cgrp itself is freed: no one else can reach it.
void cgroup_free_cset(cgroup *cgrp);

// --- the v2 freezer (kernel/cgroup_freezer.cc) --------------------------------------------------
// Registers the freezer's trap as the machine's signal hook. At root setup.
void cgroup_freezer_boot();
// Revisits cgrp's frozen state (CGRP_FROZEN), notifying cgroup.events and the ancestors on a
// change. Context: css_set_lock held.
void cgroup_update_frozen(cgroup *cgrp) REQUIRES(css_set_lock);
// A new cgroup takes its parent's e_freeze and, if to be frozen, starts frozen. Context:
// cgroup_mutex held, before cgrp is counted among its ancestors' descendants.
void cgroup_freezer_inherit(cgroup *cgrp) REQUIRES(cgroup_mutex);
// A task forked into cgrp takes the freezer's trap before it runs user code if cgrp is to be
// frozen. After it joined cgrp.
void cgroup_freezer_fork(task_struct *child, cgroup *cgrp);
// A task moved from src to dst is frozen or thawed as dst is; both cgroups' states are
// revisited. Context: css_set_lock held, after the move.
void cgroup_freezer_migrate_task(task_struct *task, cgroup *src, cgroup *dst)
    REQUIRES(css_set_lock);

// --- threaded mode (v2) ------------------------------------------------------------------------
// The controllers that may be enabled inside a threaded subtree (cgrp_dfl_threaded_ss_mask):
// none, as memory is a domain controller.
inline constexpr u16 cgrp_dfl_threaded_ss_mask = 0;

// Readers without cgroup_mutex (cgroup.type, cgroup.procs) read the fields once each; writers
// hold it. These accessors are the lock-free readers of the threaded-mode fields and of the
// populated counts, hence no thread-safety analysis in them (READ_ONCE, racy on purpose).
inline cgroup *cgroup_dom_cgrp(const cgroup *cgrp) NO_THREAD_SAFETY_ANALYSIS {
  return READ_ONCE(cgrp->dom_cgrp);
}
inline bool cgroup_is_threaded(const cgroup *cgrp) { return cgroup_dom_cgrp(cgrp) != cgrp; }
// The root can host domain and threaded children at once (no no-internal-process rule).
inline bool cgroup_is_mixable(const cgroup *cgrp) { return !cgrp->parent; }
// Whether @cgrp has tasks (not counting descendants).
inline bool cgroup_has_tasks_locked(const cgroup *cgrp) NO_THREAD_SAFETY_ANALYSIS {
  return READ_ONCE(cgrp->nr_populated_csets) > 0;
}

// Whether @cgrp could become the threaded domain of threaded children: the root always; a
// threaded cgroup never; a domain without populated domain children and without domain
// controllers enabled for its children.
inline bool cgroup_can_be_thread_root(const cgroup *cgrp) NO_THREAD_SAFETY_ANALYSIS {
  if (cgroup_is_mixable(cgrp)) return true;
  if (cgroup_is_threaded(cgrp)) return false;
  if (READ_ONCE(cgrp->nr_populated_domain_children)) return false;
  if (READ_ONCE(cgrp->subtree_control) & ~cgrp_dfl_threaded_ss_mask) return false;
  return true;
}

// Whether @cgrp is the domain of a threaded subtree: a domain with threaded children, or with
// tasks and threaded controllers enabled.
inline bool cgroup_is_thread_root(const cgroup *cgrp) NO_THREAD_SAFETY_ANALYSIS {
  if (cgroup_is_threaded(cgrp)) return false;
  if (READ_ONCE(cgrp->nr_threaded_children)) return true;
  return cgroup_has_tasks_locked(cgrp) &&
         (READ_ONCE(cgrp->subtree_control) & cgrp_dfl_threaded_ss_mask);
}

// Whether @cgrp can be a resource domain: not threaded, and no ancestor is threaded or a
// (non-root) thread root. A domain child of a threaded subtree is "domain invalid".
inline bool cgroup_is_valid_domain(const cgroup *cgrp) {
  if (cgroup_is_threaded(cgrp)) return false;
  while ((cgrp = cgrp->parent)) {
    if (!cgroup_is_mixable(cgrp) && cgroup_is_thread_root(cgrp)) return false;
    if (cgroup_is_threaded(cgrp)) return false;
  }
  return true;
}

}  // namespace umemcg

namespace umemcg::emu {

// Calls fn for every allocated css (online or dying). The registry is copied first, so fn may
// take locks; the caller must ensure no css is freed meanwhile (e.g. run it from a test with no
// concurrent rmdir, or under rcu_read_lock()).
void for_each_css(void (*fn)(cgroup_subsys_state *, void *), void *arg);

}  // namespace umemcg::emu
