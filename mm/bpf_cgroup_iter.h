// SPDX-License-Identifier: GPL-2.0-only
// mm/bpf_cgroup_iter.h: the cgroup iterator (SEC("iter/cgroup"), SEC("iter.s/cgroup")) run over
// the emulated cgroup tree (kernel-semantics.md 5.8):
//  - link info: an order, and a start cgroup (the default hierarchy's root when none);
//    BPF_CGROUP_ITER_ORDER_UNSPEC is -EINVAL;
//  - orders: SELF_ONLY, DESCENDANTS_PRE (start first), DESCENDANTS_POST, ANCESTORS_UP (start,
//    then its parents to the root), CHILDREN (immediate children, not the start);
//  - the program runs once per live cgroup with cgroup_mutex held and meta->seq_num counting
//    from 0; a non-zero return ends the walk after that element; then once more with
//    ctx->cgroup == NULL, after cgroup_mutex is released (the epilogue call).
//
// Mirrors: kernel/bpf/cgroup_iter.c (Linux 6.19; CHILDREN from the 7.0 window)
// Emulation: there is no seq_file: the programs' output goes to maps (the usual workaround for
//   the kernel's one-read-session limit); bpf_seq_printf/bpf_seq_write are not helpers here.
//   The walk is one call, not read() calls on an iterator fd. It is registered from mm/ (see
//   bpf_memcontrol.h). Dead (removed) cgroups are not in the tree and are never visited.
#pragma once

#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include "absl/status/statusor.h"
#include "shim/types.h"

namespace umemcg {

struct cgroup;

namespace emu {
class BpfLoadedProg;
}

// uapi enum bpf_cgroup_iter_order values.
enum bpf_cgroup_iter_order_emu : u32 {
  CGROUP_ITER_ORDER_UNSPEC = 0,
  CGROUP_ITER_SELF_ONLY = 1,
  CGROUP_ITER_DESCENDANTS_PRE = 2,
  CGROUP_ITER_DESCENDANTS_POST = 3,
  CGROUP_ITER_ANCESTORS_UP = 4,
  CGROUP_ITER_CHILDREN = 5,
};

struct bpf_cgroup_iter_result {
  u64 visited = 0;     // program calls with a cgroup (the NULL call not counted)
  bool stopped = false;  // a non-zero return ended the walk early
};

/**
 * bpf_cgroup_iter_run - run an iter/cgroup program over the tree
 * @prog: a loaded program of SEC("iter/cgroup") or SEC("iter.s/cgroup"), runnable
 * @start: the start cgroup, or nullptr for the mounted hierarchy's root
 * @order: CGROUP_ITER_*
 * Errors: -EINVAL for UNSPEC or an unknown order, a program that is not a cgroup iterator or
 * that the runtime refuses, a program fault (checked runs). Context: task context.
 */
absl::StatusOr<bpf_cgroup_iter_result> bpf_cgroup_iter_run(emu::BpfLoadedProg &prog,
                                                           cgroup *start, u32 order);

}  // namespace umemcg
