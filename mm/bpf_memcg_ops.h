// SPDX-License-Identifier: GPL-2.0-only
// mm/bpf_memcg_ops.h: cgroup-attached bpf_memcg_ops (the posted series, kernel-semantics.md
// 5.3-5.4): a struct_ops map of a loaded object attached to a cgroup through a link, and the
// dispatcher try_charge_memcg's memory.high block calls before the synchronous over-high
// handling.
//
// bpf_memcg_high_policy(memcg, over_limit, gfp):
//  1. nothing attached anywhere (the CGROUP_MEMCG_OPS static key): NO_OPINION;
//  2. re-entrancy guard: a policy that allocates re-enters the charge path; the inner call
//     returns NO_OPINION;
//  3. under RCU with migration disabled, a cgroup that is going away gives NO_OPINION;
//  4. the read-only bpf_memcg_ctx snapshot; every high_policy in the memcg's cgroup's
//     effective array (its own, then its ancestors' when they allow MULTI) runs; results are
//     ORed and masked with BPF_MEMCG_HIGH_VALID_MASK, so no policy undoes another's request.
//
// The link is the cgroup struct_ops layer's (mm/bpf_cgroup_struct_ops.h) for CGROUP_MEMCG_OPS.
//
// Mirrors: mm/bpf_memcontrol.c and include/linux/bpf_memcontrol.h of the posted series
//          (Linux 6.19 base)
// Emulation: see mm/bpf_cgroup_struct_ops.h for the link.
// Emulation: cgroup_bpf_tryget_live() is a flag test and takes no reference (see
//   kernel/cgroup_bpf.h).
#pragma once

#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "kernel/cgroup_bpf.h"
#include "mm/bpf_cgroup_struct_ops.h"
#include "shim/gfp.h"
#include "shim/types.h"

namespace umemcg {

struct mem_cgroup;

namespace emu {
class BpfLoadedObject;
class BpfLoadedProg;
}  // namespace emu

class BpfMemcgOpsLink {
 public:
  /**
   * attach - attach the bpf_memcg_ops map @map_name of @obj to @memcg's cgroup
   * @flags: 0, CGROUP_BPF_F_ALLOW_OVERRIDE or CGROUP_BPF_F_ALLOW_MULTI (cgroup-bpf rules)
   * Errors name the map or member at fault: not a bpf_memcg_ops map, a member the kernel type
   * lacks, a non-zero data member, a member program the verifier rejected, a plain
   * (non-link) map, or the cgroup-bpf attach error. Context: task context.
   */
  static absl::StatusOr<std::unique_ptr<BpfMemcgOpsLink>> attach(emu::BpfLoadedObject &obj,
                                                                 const std::string &map_name,
                                                                 mem_cgroup *memcg, u32 flags);
  ~BpfMemcgOpsLink();  // detach; waits until no dispatcher still runs the programs
  BpfMemcgOpsLink(const BpfMemcgOpsLink &) = delete;
  BpfMemcgOpsLink &operator=(const BpfMemcgOpsLink &) = delete;

  // Detaches now (idempotent). Context: task context.
  void detach();
  // False once detached, replaced, or when the cgroup went offline (defunct).
  bool attached() const;
  emu::BpfLoadedProg *high_policy() const;
  // Link update, query: as BpfCgroupStructOpsLink's.
  BpfCgroupStructOpsLink &link() { return *link_; }

 private:
  BpfMemcgOpsLink() = default;

  std::unique_ptr<BpfCgroupStructOpsLink> link_;
};

// bpf_memcg_ops's member indexes (the registration's order, mm/bpf_memcontrol.cc).
inline constexpr size_t BPF_MEMCG_OPS_HIGH_POLICY = 0;

// The dispatcher (installed with memcg_set_high_policy() at the first attach).
u32 bpf_memcg_high_policy(mem_cgroup *memcg, mem_cgroup *over_limit, gfp_t gfp);

}  // namespace umemcg
