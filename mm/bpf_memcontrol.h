// SPDX-License-Identifier: GPL-2.0-only
// mm/bpf_memcontrol.h: memcg's BPF surface, registered into the process's BPF kernel
// environment (bpfvm/kernel_env.h) at boot:
//  - the memcg kfuncs (kernel-semantics.md 5.1): bpf_get_root_mem_cgroup, bpf_get_mem_cgroup,
//    bpf_put_mem_cgroup, bpf_mem_cgroup_usage, bpf_mem_cgroup_memory_events,
//    bpf_mem_cgroup_vm_events, bpf_mem_cgroup_page_state, bpf_mem_cgroup_flush_stats, and
//    bpf_proactive_reclaim (5.5, SYSCALL programs only), and kernel/bpf/helpers.c's
//    bpf_cgroup_from_id / bpf_cgroup_release (a cgroup by its id, as programs find the memcg
//    of a cgroup id: bpf_cgroup_from_id + bpf_get_mem_cgroup(&cgrp->self));
//  - the struct_ops type bpf_memcg_ops with its high_policy member and the read-only
//    struct bpf_memcg_ctx (5.4, the posted series), and bpf_tcp_ops with its skmem_charged
//    member and struct bpf_tcp_sock_ctx (mm/bpf_tcp_ops.h);
//  - the kernel objects programs reach (mem_cgroup, cgroup, cgroup_subsys_state, task_struct,
//    rw_semaphore, bpf_iter_meta), the cgroup iterator target (5.8) and the fentry/fexit
//    targets: the rwsem primitives and the charge path's over-high handling.
//
// Mirrors: mm/bpf_memcontrol.c, include/linux/bpf_memcontrol.h (posted series),
//          kernel/bpf/cgroup_iter.c (Linux 6.19)
// Emulation: bpf_cgroup_from_id() finds the cgroup through memcg's id table (every cgroup has
//   the memory css, whose id is the cgroup's id) and holds a reference on that css (the cgroup
//   itself is not reference counted here); a cgroup being removed is not found, as the kernel's
//   lookup fails once rmdir() deactivated its kernfs node.
// Emulation: the cgroup iterator target and the rwsem tracing targets belong to kernel/ and
//   shim/ in the kernel's layout, but only mm/ sees both them and bpfvm/, so they are
//   registered here. Registration describes programs for the verifier; attaching struct_ops
//   maps to cgroups and calling the programs from the hooks is the dispatch layer's work.
// bpf_mem_cgroup_page_state and bpf_mem_cgroup_vm_events return what memory.stat prints for the
//   same flush state (memcg_page_state_output, memcg_events), or (unsigned long)-1 for an id
//   memcg does not track; the item ids are those of mm/memcontrol_stat.h.
#pragma once

#include "shim/types.h"

namespace umemcg {

struct mem_cgroup;
struct task_struct;
struct cgroup_subsys_state;
struct cgroup;

// The posted series' read-only context of bpf_memcg_ops.high_policy (same layout).
struct bpf_memcg_ctx {
  struct mem_cgroup *memcg;             // the charged memcg
  struct mem_cgroup *memcg_over_limit;  // first memcg over memory.high/swap.high, or NULL
  struct task_struct *task;             // current
  u64 cgroup_id;
  u64 over_limit_cgroup_id;             // 0 if none
  u64 nr_pages_over_high;               // current->memcg_nr_pages_over_high
  u32 gfp_flags;
};

// The iterator's meta argument (uapi layout of struct bpf_iter_meta).
struct bpf_iter_meta {
  void *seq;
  u64 session_id;
  u64 seq_num;
};

// Registers everything above into emu::bpf_kernel_env(). Idempotent; aborts with a message if
// a registration is refused (a programming error, as the kernel's init failing hard).
void bpf_memcontrol_init();

// The kfuncs themselves (also called directly by tests and by the dispatch layer).
mem_cgroup *bpf_get_root_mem_cgroup();
mem_cgroup *bpf_get_mem_cgroup(struct cgroup_subsys_state *css);
void bpf_put_mem_cgroup(mem_cgroup *memcg);
unsigned long bpf_mem_cgroup_usage(mem_cgroup *memcg);
unsigned long bpf_mem_cgroup_memory_events(mem_cgroup *memcg, int event);
unsigned long bpf_mem_cgroup_vm_events(mem_cgroup *memcg, int event);
unsigned long bpf_mem_cgroup_page_state(mem_cgroup *memcg, int idx);
void bpf_mem_cgroup_flush_stats(mem_cgroup *memcg);
long bpf_proactive_reclaim(mem_cgroup *memcg, unsigned long size, int swappiness);
struct cgroup *bpf_cgroup_from_id(u64 cgid);
void bpf_cgroup_release(struct cgroup *cgrp);

}  // namespace umemcg
