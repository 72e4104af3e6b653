// SPDX-License-Identifier: GPL-2.0-only
// kernel/cgroup_bpf.h: cgroup-bpf: what is attached to each cgroup per attach type, and the
// effective arrays the hooks run, with the classic attach semantics:
//  - flags 0 (NONE): one attachment, and no descendant may attach below it;
//  - BPF_F_ALLOW_OVERRIDE: one attachment; a descendant's attachment replaces it for that
//    subtree;
//  - BPF_F_ALLOW_MULTI: several attachments; a cgroup's effective array holds its own first,
//    then its ancestors' (each level in attach order), walking up while levels allow MULTI.
// Effective arrays are recomputed for the whole subtree on attach and detach and published
// under RCU; hooks read them under rcu_read_lock(). A static key per attach type says whether
// anything is attached anywhere. An offlined cgroup's attachments become defunct (their
// `cgroup` is cleared) and cgroup_bpf_tryget_live() fails on it.
//
// The attach types are the posted cgroup struct_ops series' (kernel-semantics.md 5.3): a
// struct_ops map attached to a cgroup is an item whose `data` the subsystem interprets
// (mm/bpf_tcp_ops.cc for CGROUP_TCP_SOCK_OPS, mm/bpf_memcg_ops.cc for CGROUP_MEMCG_OPS).
// Every operation takes the attach type and touches only that type's state: query counts and
// lists one type's attachments (the posted series' patch 1 fixes a query that did not, which
// only a second struct_ops attach type exposes).
//
// Mirrors: kernel/bpf/cgroup.c (hierarchy_allows_attach, compute_effective_progs,
//          update_effective_progs, __cgroup_bpf_attach/detach, cgroup_bpf_offline),
//          include/linux/bpf-cgroup-defs.h (Linux 6.19; the struct_ops attach types from the
//          posted series)
// Emulation: items are opaque (kernel/ does not see bpfvm/); there is no BPF_F_REPLACE
//   attach flag or BPF_F_PREORDER (a link's replacement is cgroup_bpf_replace). Attaching a
//   second item to a non-MULTI cgroup replaces the first, which becomes defunct, as the kernel
//   replaces a non-MULTI program. Query returns the items, not program ids, and no revision.
// Emulation: tryget_live is a flag test (no percpu_ref): readers that saw the cgroup live
//   finish under RCU, and whoever frees an item's data waits for a grace period first.
#pragma once

#include <atomic>
#include <vector>

#include "shim/compiler.h"
#include "shim/mutex.h"
#include "shim/types.h"

namespace umemcg {

struct cgroup;
// The cgroup core's mutex (kernel/cgroup.h): attachments change under it.
extern struct mutex cgroup_mutex;

enum cgroup_bpf_attach_type {
  CGROUP_TCP_SOCK_OPS = 0,  // bpf_tcp_ops (the cgroup struct_ops series' first user)
  CGROUP_MEMCG_OPS,         // bpf_memcg_ops (posted series)
  MAX_CGROUP_BPF_ATTACH_TYPE,
};

// BPF_F_ALLOW_OVERRIDE / BPF_F_ALLOW_MULTI (uapi values).
inline constexpr u32 CGROUP_BPF_F_ALLOW_OVERRIDE = 1u << 0;
inline constexpr u32 CGROUP_BPF_F_ALLOW_MULTI = 1u << 1;
inline constexpr u32 BPF_CGROUP_MAX_PROGS = 64;
// BPF_F_QUERY_EFFECTIVE (uapi value): query the effective array instead of the attachments.
inline constexpr u32 CGROUP_BPF_F_QUERY_EFFECTIVE = 1u << 0;

// One attachment. `cgroup` is where it is attached; nullptr while detached or once defunct
// (the cgroup went offline). Lock-free readers use cgroup_bpf_item_cgroup().
struct bpf_cgroup_item {
  void *data = nullptr;
  struct cgroup *cgroup GUARDED_BY(cgroup_mutex) = nullptr;
};

// @item's cgroup read without cgroup_mutex (a snapshot: the item may be detached or go defunct
// right after), hence no thread-safety analysis.
inline struct cgroup *cgroup_bpf_item_cgroup(const bpf_cgroup_item *item)
    NO_THREAD_SAFETY_ANALYSIS {
  return READ_ONCE(item->cgroup);
}

// An effective array: immutable once published.
struct bpf_cgroup_array {
  std::vector<const bpf_cgroup_item *> items;
};

struct cgroup_bpf {
  // Attached here, in attach order; flags as attached.
  std::vector<bpf_cgroup_item *> progs[MAX_CGROUP_BPF_ATTACH_TYPE] GUARDED_BY(cgroup_mutex);
  u32 flags[MAX_CGROUP_BPF_ATTACH_TYPE] GUARDED_BY(cgroup_mutex) = {};
  // Published under RCU; nullptr = empty.
  std::atomic<const bpf_cgroup_array *> effective[MAX_CGROUP_BPF_ATTACH_TYPE] = {};
  std::atomic<bool> dead{false};  // offlined: hooks skip the cgroup
};

/**
 * cgroup_bpf_attach - attach @item to @cgrp for @atype with @flags
 * Returns 0, -EINVAL (bad flags), -ENOENT (cgroup removed), -EPERM (an ancestor forbids it,
 * or the cgroup has attachments with other flags), -EEXIST (@item already attached), -E2BIG.
 * Context: task context (takes cgroup_mutex, waits for an RCU grace period).
 */
int cgroup_bpf_attach(cgroup *cgrp, cgroup_bpf_attach_type atype, bpf_cgroup_item *item,
                      u32 flags);
// Detaches @item (0, or -ENOENT if it is not attached; a defunct item gives 0). On return no
// reader still sees @item. Context: task context.
int cgroup_bpf_detach(cgroup_bpf_attach_type atype, bpf_cgroup_item *item);

/**
 * cgroup_bpf_replace - put @new_item in @old_item's place (link update)
 * @new_item takes @old_item's position, cgroup and flags; @old_item becomes detached. Readers
 * see either item, never neither. Returns 0, -EINVAL, -ENOLINK (@old_item is not attached:
 * detached, replaced or defunct), -EEXIST (@new_item is attached). On return no reader still
 * sees @old_item. Context: task context.
 */
int cgroup_bpf_replace(cgroup_bpf_attach_type atype, bpf_cgroup_item *old_item,
                       bpf_cgroup_item *new_item);

/**
 * cgroup_bpf_query - what is attached to @cgrp for @atype (BPF_PROG_QUERY)
 * @query_flags: 0 (@cgrp's own attachments) or CGROUP_BPF_F_QUERY_EFFECTIVE (its effective
 *   array)
 * @attach_flags: set to the flags @cgrp's own attachments were made with (0 if none), for
 *   either query, as the kernel reports them
 * @items: if not nullptr, filled with at most @max items (attach or effective order)
 * @count: set to the total count, which may exceed @max
 * Returns 0, -EINVAL (bad type or flags), or -ENOSPC when @items could not hold them all (the
 * first @max are filled), as the kernel returns -ENOSPC for a short prog_ids buffer.
 * Context: task context (takes cgroup_mutex).
 */
int cgroup_bpf_query(cgroup *cgrp, cgroup_bpf_attach_type atype, u32 query_flags,
                     u32 *attach_flags, std::vector<const bpf_cgroup_item *> *items, u32 max,
                     u32 *count);

// Under rcu_read_lock(): @cgrp's effective array, or nullptr if empty.
inline const bpf_cgroup_array *cgroup_bpf_effective(const cgroup_bpf &bpf,
                                                    cgroup_bpf_attach_type atype) {
  return bpf.effective[atype].load(std::memory_order_acquire);  // rcu_dereference
}
// The static keys (the kernel's cgroup_bpf_enabled_key[]): per attach type, the number of
// attachments anywhere; changed under cgroup_mutex.
// Emulation: a counter read with one relaxed load where the kernel patches a jump.
extern std::atomic<long> cgroup_bpf_enabled_key[MAX_CGROUP_BPF_ATTACH_TYPE];
// The static key test: true while anything is attached for @atype anywhere. Inline, as the
// kernel's static_branch_unlikely(): hooks test it before anything else.
inline bool cgroup_bpf_enabled(cgroup_bpf_attach_type atype) {
  return cgroup_bpf_enabled_key[atype].load(std::memory_order_relaxed) > 0;
}
inline bool cgroup_bpf_tryget_live(const cgroup_bpf &bpf) {
  return !bpf.dead.load(std::memory_order_acquire);
}

// cgroup core hooks (kernel/cgroup.cc): a new cgroup inherits its parent's effective arrays
// and an offlined one drops its attachments (Context: cgroup_mutex held); a freed one drops its
// arrays (Context: the cgroup's free work, no lock).
void cgroup_bpf_inherit(cgroup *cgrp) REQUIRES(cgroup_mutex);
void cgroup_bpf_offline(cgroup *cgrp) REQUIRES(cgroup_mutex);
void cgroup_bpf_free(cgroup *cgrp);

}  // namespace umemcg
