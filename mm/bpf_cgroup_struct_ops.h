// SPDX-License-Identifier: GPL-2.0-only
// mm/bpf_cgroup_struct_ops.h: the cgroup struct_ops layer of the posted series
// (kernel-semantics.md 5.3), common to every cgroup-attached struct_ops type: a struct_ops
// map of a loaded object attached to a cgroup through a link, for the type's attach type
// (struct bpf_struct_ops.cgroup_atype), with link update (replace the map in place), detach,
// and query per attach type. A type's dispatcher walks the cgroup's effective array of its
// attach type and runs the member programs (bpf_cgroup_struct_ops::progs, by kernel member
// index). Users: bpf_tcp_ops (CGROUP_TCP_SOCK_OPS, mm/bpf_tcp_ops.h) and bpf_memcg_ops
// (CGROUP_MEMCG_OPS, mm/bpf_memcg_ops.h).
//
// Mirrors: kernel/bpf/bpf_struct_ops.c (map update checks: members by name, non-function
//          members zero, programs of the member's type; bpf_struct_ops_map_link_update) and
//          kernel/bpf/cgroup.c (__cgroup_bpf_query) of the posted series (Linux 6.19 base)
// Emulation: the link is a C++ object (no fd); attach takes the memcg, not a cgroup fd. Only
//   SEC(".struct_ops.link") maps attach: a cgroup struct_ops type has no reg(), so a plain
//   .struct_ops map has nowhere to register (-EOPNOTSUPP) (inferred from the series: the
//   cgroup layer does attach and detach). Query names the attached maps instead of program
//   ids.
#pragma once

#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bpfvm/runtime.h"
#include "kernel/cgroup_bpf.h"
#include "shim/compiler.h"
#include "shim/types.h"

namespace umemcg {

struct mem_cgroup;

// One attached struct_ops map (the kernel's bpf_struct_ops_map kdata): the cgroup-bpf item
// (item.data points here) and its member programs. Immutable while attached; a link update
// attaches a new one in its place.
struct bpf_cgroup_struct_ops {
  struct member_prog {
    emu::BpfLoadedProg *prog = nullptr;  // nullptr: the member is NULL (dispatchers skip it)
    bool fast = false;                   // verified and not sleepable: run_in_rcu()
  };
  bpf_cgroup_item item;
  std::string map_name;
  std::vector<member_prog> progs;  // by the kernel type's member index
};

// A member program that is not fast (run in the checked interpreter): r0, or 0 on a fault.
u64 bpf_cgroup_struct_ops_run_checked(const bpf_cgroup_struct_ops::member_prog &m, u64 *args,
                                      size_t nr_args);

/**
 * bpf_cgroup_struct_ops_run - run member program @m with the u64 arguments @args
 * Under rcu_read_lock() with migration disabled (the dispatchers' context). Returns r0, or 0
 * if the program faulted. Inline: the fast path is the trampoline's call of the program.
 */
inline u64 bpf_cgroup_struct_ops_run(const bpf_cgroup_struct_ops::member_prog &m, u64 *args,
                                     size_t nr_args) {
  if (likely(m.fast)) return m.prog->run_in_rcu(args);  // the trampoline fast path
  return bpf_cgroup_struct_ops_run_checked(m, args, nr_args);
}

/**
 * bpf_cgroup_struct_ops_atype - the attach type of cgroup struct_ops type @type_name (its
 *   descriptor's cgroup_atype): bpf_tcp_ops CGROUP_TCP_SOCK_OPS, bpf_memcg_ops
 *   CGROUP_MEMCG_OPS; false if @type_name is not a cgroup struct_ops type
 */
bool bpf_cgroup_struct_ops_atype(const std::string &type_name, cgroup_bpf_attach_type *atype);

class BpfCgroupStructOpsLink {
 public:
  /**
   * attach - attach the struct_ops map @map_name of @obj, of type @type_name, to @memcg's
   *   cgroup for the type's attach type (bpf_cgroup_struct_ops_atype())
   * @flags: 0, CGROUP_BPF_F_ALLOW_OVERRIDE or CGROUP_BPF_F_ALLOW_MULTI (cgroup-bpf rules)
   * Errors name the map or member at fault: not a @type_name map, a member the kernel type
   * lacks, a non-zero data member, a member program the verifier rejected, a plain
   * (non-link) map, a type that is not a cgroup struct_ops type, or the cgroup-bpf attach
   * error. Context: task context.
   */
  static absl::StatusOr<std::unique_ptr<BpfCgroupStructOpsLink>> attach(
      emu::BpfLoadedObject &obj, const std::string &map_name, const std::string &type_name,
      mem_cgroup *memcg, u32 flags);
  ~BpfCgroupStructOpsLink();  // detach; waits until no dispatcher still runs the programs
  BpfCgroupStructOpsLink(const BpfCgroupStructOpsLink &) = delete;
  BpfCgroupStructOpsLink &operator=(const BpfCgroupStructOpsLink &) = delete;

  /**
   * update - link update: the map @map_name of @obj replaces the attached one in place (same
   *   position in the cgroup's list, same flags)
   * Errors: the map checks of attach(); a map of another type (-EINVAL); a detached or
   * defunct link (-ENOLINK). On error the attached map stays. Context: task context.
   */
  absl::Status update(emu::BpfLoadedObject &obj, const std::string &map_name);
  // Detaches now (idempotent). Context: task context.
  void detach();
  // False once detached, replaced by a non-MULTI attach, or when the cgroup went offline.
  bool attached() const;
  const bpf_cgroup_struct_ops &ops() const { return *ops_; }

  /**
   * query - BPF_PROG_QUERY on @memcg's cgroup for @atype: the names of the attached maps
   *   (@query_flags 0) or of the effective ones (CGROUP_BPF_F_QUERY_EFFECTIVE), in order
   * @attach_flags: if not nullptr, the flags of the cgroup's own attachments
   * Errors: cgroup_bpf_query()'s. Context: task context; the names are read after
   * cgroup_mutex is dropped, so the queried links must not be freed concurrently.
   */
  static absl::StatusOr<std::vector<std::string>> query(mem_cgroup *memcg,
                                                        cgroup_bpf_attach_type atype,
                                                        u32 query_flags, u32 *attach_flags);

 private:
  BpfCgroupStructOpsLink() = default;

  std::unique_ptr<bpf_cgroup_struct_ops> ops_;
  std::string type_name_;
  cgroup_bpf_attach_type atype_ = CGROUP_MEMCG_OPS;
  bool detached_ = false;
};

}  // namespace umemcg
