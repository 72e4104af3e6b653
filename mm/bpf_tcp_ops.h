// SPDX-License-Identifier: GPL-2.0-only
// mm/bpf_tcp_ops.h: bpf_tcp_ops, the cgroup-attached struct_ops type (attach type
// CGROUP_TCP_SOCK_OPS) beside which the posted series adds bpf_memcg_ops: attached to a
// cgroup through the cgroup struct_ops layer (mm/bpf_cgroup_struct_ops.h), its programs run
// for the sockets of that cgroup and its descendants (the cgroup's effective array).
//
// Its one member here, int skmem_charged(ctx), is called by mem_cgroup_sk_charge() after
// every socket-memory charge of a non-root v2 memcg, successful or not, with the read-only
// struct bpf_tcp_sock_ctx: every skmem_charged of the memcg's cgroup's effective array runs
// (its own attachments, then its ancestors' when they allow MULTI), under RCU with migration
// disabled. It observes the charge and cannot change it: programs return 0, and the
// dispatcher ignores the result. Sleepable programs are refused (socket charges happen in
// softirq context).
//
// Mirrors: the posted cgroup struct_ops series' bpf_tcp_ops registration (name "bpf_tcp_ops",
//          cgroup_atype CGROUP_TCP_SOCK_OPS, no reg/unreg), net/core/sock.c's
//          __sk_mem_raise_allocated -> mem_cgroup_sk_charge() call site (Linux 6.19 base)
// Emulation: the emulator has no TCP stack, so the series' TCP members are not modelled;
//   skmem_charged is the emulator's member, called from the socket-memory charge, the one
//   point where the emulator sees a socket. It exists so that the cgroup struct_ops layer
//   serves two attach types, as in the series.
#pragma once

#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "mm/bpf_cgroup_struct_ops.h"
#include "shim/gfp.h"
#include "shim/types.h"

namespace umemcg {

struct mem_cgroup;
struct task_struct;

// The read-only context of bpf_tcp_ops.skmem_charged.
struct bpf_tcp_sock_ctx {
  struct mem_cgroup *memcg;   // the socket's memcg
  struct task_struct *task;   // current
  u64 cgroup_id;              // the memcg's cgroup
  u32 nr_pages;               // pages the charge asked for
  u32 charged;                // 1 if the charge succeeded, 0 if it failed
  u32 gfp_flags;
};

// bpf_tcp_ops's member indexes (the registration's order, mm/bpf_memcontrol.cc).
inline constexpr size_t BPF_TCP_OPS_SKMEM_CHARGED = 0;

/**
 * bpf_tcp_ops_attach - attach the bpf_tcp_ops map @map_name of @obj to @memcg's cgroup
 * As BpfCgroupStructOpsLink::attach() for "bpf_tcp_ops" and CGROUP_TCP_SOCK_OPS.
 */
absl::StatusOr<std::unique_ptr<BpfCgroupStructOpsLink>> bpf_tcp_ops_attach(
    emu::BpfLoadedObject &obj, const std::string &map_name, mem_cgroup *memcg, u32 flags);

/**
 * bpf_tcp_ops_skmem_charged - the dispatcher mem_cgroup_sk_charge() calls
 * Runs every skmem_charged of @memcg's cgroup's effective CGROUP_TCP_SOCK_OPS array. Returns
 * at once when nothing is attached anywhere (the static key) or the cgroup is going away.
 * Context: any (no sleeping).
 */
void bpf_tcp_ops_skmem_charged(mem_cgroup *memcg, unsigned int nr_pages, gfp_t gfp,
                               bool charged);

}  // namespace umemcg
