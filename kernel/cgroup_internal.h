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
int cgroup_fs_setup_root(cgroup_root *root, unsigned int kf_flags);
void cgroup_fs_destroy_root(cgroup_root *root);
int cgroup_fs_create_dir(cgroup *cgrp);
void cgroup_fs_activate_dir(cgroup *cgrp);
void cgroup_fs_remove_dir(cgroup *cgrp);
// nr_subsys_descendants of cgrp's ancestors, as cgrp's controller css is shown (+1) or hidden
// (-1).
void cgroup_adjust_subsys_counts(cgroup *cgrp, int delta);
// kernel/cgroup_tasks.cc
void cgroup_migrate_subtree_to_e_css(cgroup *cgrp);
void cgroup_free_cset(cgroup *cgrp);

}  // namespace umemcg

namespace umemcg::emu {

// Calls fn for every allocated css (online or dying). The registry is copied first, so fn may
// take locks; the caller must ensure no css is freed meanwhile (e.g. run it from a test with no
// concurrent rmdir, or under rcu_read_lock()).
void for_each_css(void (*fn)(cgroup_subsys_state *, void *), void *arg);

}  // namespace umemcg::emu
