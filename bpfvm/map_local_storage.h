// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/map_local_storage.h: BPF local storage: BPF_MAP_TYPE_TASK_STORAGE (one value per map and
// emulated task, reached through task_struct::bpf_storage) and BPF_MAP_TYPE_CGRP_STORAGE (one
// value per map and cgroup, keyed by the cgroup pointer the program passes, as an opaque id).
//
// A value exists once a program asks for it with BPF_LOCAL_STORAGE_GET_F_CREATE (zeroed, or
// copied from the helper's value argument) or user space creates it; it goes away on delete, when
// its map is freed, or when its owner goes away. Values are freed after an RCU grace period, so a
// program that got a pointer keeps a valid (possibly stale) value until it finishes.

//
// Mirrors: kernel/bpf/bpf_local_storage.c (bpf_local_storage_map_alloc_check,
//          bpf_local_storage_lookup, bpf_local_storage_update, bpf_selem_unlink),
//          kernel/bpf/bpf_task_storage.c (bpf_task_storage_get, bpf_task_storage_delete,
//          bpf_task_storage_free), kernel/bpf/bpf_cgrp_storage.c (Linux 6.19)
// Emulation:
//  - one lock serialises every local-storage list (the kernel has one per owner storage and per
//    map bucket); lookups take it too.
//  - no BTF is required at creation; the user-side commands take the owner (a task_struct, a
//    cgroup id) instead of a pidfd/cgroup fd, and the key-based sys_map_*() commands return
//    -EOPNOTSUPP on these maps.
//  - the shim has no task-exit hook: a task's storage is freed when the machine shuts down (or
//    by bpf_task_storage_free()), not when the task exits.
//  - a cgroup's storage hangs off a table keyed by its id, not off struct cgroup (bpfvm/ does
//    not see kernel/'s cgroup); the memory controller calls bpf_cgrp_storage_free() when it
//    frees the cgroup's css (mm/memcontrol.cc).
#pragma once

#include "bpfvm/map.h"
#include "shim/sched.h"

namespace umemcg {

struct bpf_run_ctx;

// Program side (the helpers). nullptr / -errno as the kernel's helpers.
void *bpf_task_storage_get(bpf_map *map, task_struct *task, const void *value, u64 flags);
long bpf_task_storage_delete(bpf_map *map, task_struct *task);
void *bpf_cgrp_storage_get(bpf_map *map, u64 cgroup_id, const void *value, u64 flags);
long bpf_cgrp_storage_delete(bpf_map *map, u64 cgroup_id);

// User side: lookup copies the value out (BPF_F_LOCK: under its lock); update takes
// BPF_ANY/BPF_NOEXIST/BPF_EXIST (| BPF_F_LOCK).
int sys_task_storage_lookup(bpf_map *map, task_struct *task, void *value, u64 flags = 0);
int sys_task_storage_update(bpf_map *map, task_struct *task, const void *value, u64 flags = BPF_ANY);
int sys_task_storage_delete(bpf_map *map, task_struct *task);
int sys_cgrp_storage_lookup(bpf_map *map, u64 cgroup_id, void *value, u64 flags = 0);
int sys_cgrp_storage_update(bpf_map *map, u64 cgroup_id, const void *value, u64 flags = BPF_ANY);
int sys_cgrp_storage_delete(bpf_map *map, u64 cgroup_id);

// Owner teardown: frees every value the owner holds in any map.
void bpf_task_storage_free(task_struct *task);
void bpf_cgrp_storage_free(u64 cgroup_id);

// Number of values a local-storage map holds (for tests and dumps).
u32 bpf_local_storage_count(bpf_map *map);

}  // namespace umemcg
