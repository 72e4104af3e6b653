// SPDX-License-Identifier: GPL-2.0-only
// test/progs/kernfs_lockholder_user.h: user space's view of kernfs_lockholder.bpf.c (seed 000's
// sample policy): its .bss (struct lockholder_state) and its ring buffer record (struct
// defer_event), field for field, for the tests and the kernfs-notify scenario that read them.
#pragma once

#include "shim/types.h"

namespace umemcg::progs::kernfs_lockholder {

// The only .bss variable: the two lock addresses, then the policy's statistics.
struct lockholder_state {
  u64 kernfs_rwsem, kernfs_supers_rwsem;
  u64 tracked_ops, rwsem_ops, deferred, not_deferred, events_lost, depth_errors;
};

// One ring buffer record per deferral.
struct defer_event {
  u64 cgroup_id;
  u64 nr_pages_over_high;
  u32 pid;
  char comm[16];
};

}  // namespace umemcg::progs::kernfs_lockholder
