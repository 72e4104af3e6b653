// SPDX-License-Identifier: GPL-2.0-only
// kernel/cgroup_bpf.cc: cgroup-bpf attachments and effective arrays (see cgroup_bpf.h).
//
// Mirrors: kernel/bpf/cgroup.c (Linux 6.19)
// Emulation: see cgroup_bpf.h.
#include "kernel/cgroup_bpf.h"

#include <algorithm>

#include "kernel/cgroup.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/mutex.h"
#include "shim/rcupdate.h"

namespace umemcg {

std::atomic<long> cgroup_bpf_enabled_key[MAX_CGROUP_BPF_ATTACH_TYPE];

namespace {

// Whether a new attachment below the ancestors of @cgrp is allowed: the nearest ancestor with
// an attachment decides (MULTI or OVERRIDE allow it, NONE forbids it).
bool hierarchy_allows_attach(const cgroup *cgrp, cgroup_bpf_attach_type atype)
    REQUIRES(cgroup_mutex) {
  for (const cgroup *p = cgrp->parent; p; p = p->parent) {
    const u32 flags = p->bpf.flags[atype];
    if (flags & CGROUP_BPF_F_ALLOW_MULTI) return true;
    const size_t cnt = p->bpf.progs[atype].size();
    WARN_ON_ONCE(cnt > 1);
    if (cnt == 1) return flags & CGROUP_BPF_F_ALLOW_OVERRIDE;
  }
  return true;
}

// @cgrp's effective array: its own attachments, then each ancestor's while the collected set
// is empty or the ancestor allows MULTI. nullptr when empty.
const bpf_cgroup_array *compute_effective(const cgroup *cgrp, cgroup_bpf_attach_type atype)
    REQUIRES(cgroup_mutex) {
  auto *arr = new bpf_cgroup_array;
  for (const cgroup *p = cgrp; p; p = p->parent) {
    if (!arr->items.empty() && !(p->bpf.flags[atype] & CGROUP_BPF_F_ALLOW_MULTI)) continue;
    for (const bpf_cgroup_item *item : p->bpf.progs[atype]) arr->items.push_back(item);
  }
  if (arr->items.empty()) {
    delete arr;
    return nullptr;
  }
  return arr;
}

// Recomputes and publishes the effective arrays of @cgrp's subtree (pre-order); the replaced
// arrays go to @old, to be freed after a grace period.
void update_effective(cgroup *cgrp, cgroup_bpf_attach_type atype,
                      std::vector<const bpf_cgroup_array *> &old) REQUIRES(cgroup_mutex) {
  const bpf_cgroup_array *arr = compute_effective(cgrp, atype);
  // rcu_assign_pointer: the array is complete before readers can see it.
  const bpf_cgroup_array *prev = cgrp->bpf.effective[atype].exchange(arr, std::memory_order_acq_rel);
  if (prev) old.push_back(prev);
  for (cgroup *child : cgrp->children) update_effective(child, atype, old);
}

void free_after_gp(std::vector<const bpf_cgroup_array *> &old) {
  if (old.empty()) return;
  synchronize_rcu();  // no reader still walks an old array
  for (const bpf_cgroup_array *a : old) delete a;
  old.clear();
}

}  // namespace

int cgroup_bpf_attach(cgroup *cgrp, cgroup_bpf_attach_type atype, bpf_cgroup_item *item,
                      u32 flags) {
  if (!cgrp || !item || atype >= MAX_CGROUP_BPF_ATTACH_TYPE) return -EINVAL;
  if (flags & ~(CGROUP_BPF_F_ALLOW_OVERRIDE | CGROUP_BPF_F_ALLOW_MULTI)) return -EINVAL;
  if ((flags & CGROUP_BPF_F_ALLOW_OVERRIDE) && (flags & CGROUP_BPF_F_ALLOW_MULTI)) return -EINVAL;
  std::vector<const bpf_cgroup_array *> old;
  bpf_cgroup_item *replaced = nullptr;
  {
    mutex_guard g(&cgroup_mutex);
    if (cgrp->removed || !cgroup_bpf_tryget_live(cgrp->bpf)) return -ENOENT;
    if (item->cgroup) return -EEXIST;
    if (!hierarchy_allows_attach(cgrp, atype)) return -EPERM;
    std::vector<bpf_cgroup_item *> &progs = cgrp->bpf.progs[atype];
    // Attachments of one cgroup share their flags.
    if (!progs.empty() && cgrp->bpf.flags[atype] != flags) return -EPERM;
    if (progs.size() >= BPF_CGROUP_MAX_PROGS) return -E2BIG;
    if (!(flags & CGROUP_BPF_F_ALLOW_MULTI) && !progs.empty()) {
      replaced = progs.front();  // a non-MULTI attach replaces the one attachment
      replaced->cgroup = nullptr;
      progs.clear();
      cgroup_bpf_enabled_key[atype].fetch_sub(1, std::memory_order_relaxed);
    }
    progs.push_back(item);
    item->cgroup = cgrp;
    cgrp->bpf.flags[atype] = flags;
    cgroup_bpf_enabled_key[atype].fetch_add(1, std::memory_order_relaxed);
    update_effective(cgrp, atype, old);
  }
  free_after_gp(old);
  return 0;
}

int cgroup_bpf_detach(cgroup_bpf_attach_type atype, bpf_cgroup_item *item) {
  if (!item || atype >= MAX_CGROUP_BPF_ATTACH_TYPE) return -EINVAL;
  std::vector<const bpf_cgroup_array *> old;
  {
    mutex_guard g(&cgroup_mutex);
    // A defunct item (replaced, or its cgroup went offline) has nothing to undo, but readers
    // that saw it before may still run it.
    if (cgroup *cgrp = item->cgroup) {
      std::vector<bpf_cgroup_item *> &progs = cgrp->bpf.progs[atype];
      auto it = std::find(progs.begin(), progs.end(), item);
      if (it == progs.end()) return -ENOENT;
      progs.erase(it);
      item->cgroup = nullptr;
      if (progs.empty()) cgrp->bpf.flags[atype] = 0;
      cgroup_bpf_enabled_key[atype].fetch_sub(1, std::memory_order_relaxed);
      update_effective(cgrp, atype, old);
    }
  }
  // The caller may free @item's data on return: no reader may still see it.
  synchronize_rcu();
  for (const bpf_cgroup_array *a : old) delete a;
  return 0;
}

int cgroup_bpf_replace(cgroup_bpf_attach_type atype, bpf_cgroup_item *old_item,
                       bpf_cgroup_item *new_item) {
  if (!old_item || !new_item || atype >= MAX_CGROUP_BPF_ATTACH_TYPE) return -EINVAL;
  std::vector<const bpf_cgroup_array *> old;
  {
    mutex_guard g(&cgroup_mutex);
    cgroup *cgrp = old_item->cgroup;
    if (!cgrp) return -ENOLINK;
    if (new_item->cgroup) return -EEXIST;
    std::vector<bpf_cgroup_item *> &progs = cgrp->bpf.progs[atype];
    auto it = std::find(progs.begin(), progs.end(), old_item);
    if (it == progs.end()) return -ENOLINK;  // attached under another type
    *it = new_item;  // same position, same flags; the enabled count is unchanged
    new_item->cgroup = cgrp;
    old_item->cgroup = nullptr;
    update_effective(cgrp, atype, old);
  }
  // The caller may free @old_item's data on return.
  synchronize_rcu();
  for (const bpf_cgroup_array *a : old) delete a;
  return 0;
}

int cgroup_bpf_query(cgroup *cgrp, cgroup_bpf_attach_type atype, u32 query_flags,
                     u32 *attach_flags, std::vector<const bpf_cgroup_item *> *items, u32 max,
                     u32 *count) {
  if (!cgrp || atype >= MAX_CGROUP_BPF_ATTACH_TYPE) return -EINVAL;
  if (query_flags & ~CGROUP_BPF_F_QUERY_EFFECTIVE) return -EINVAL;
  mutex_guard g(&cgroup_mutex);
  std::vector<const bpf_cgroup_item *> all;
  if (query_flags & CGROUP_BPF_F_QUERY_EFFECTIVE) {
    // Under cgroup_mutex the published array cannot be replaced or freed.
    if (const bpf_cgroup_array *a = cgroup_bpf_effective(cgrp->bpf, atype)) all = a->items;
  } else {
    all.assign(cgrp->bpf.progs[atype].begin(), cgrp->bpf.progs[atype].end());
  }
  if (attach_flags) *attach_flags = cgrp->bpf.flags[atype];
  if (count) *count = static_cast<u32>(all.size());
  if (!items) return 0;
  items->assign(all.begin(), all.begin() + std::min<size_t>(all.size(), max));
  return all.size() > max ? -ENOSPC : 0;
}

void cgroup_bpf_inherit(cgroup *cgrp) {
  for (int t = 0; t < MAX_CGROUP_BPF_ATTACH_TYPE; t++) {
    const auto atype = static_cast<cgroup_bpf_attach_type>(t);
    cgrp->bpf.effective[atype].store(compute_effective(cgrp, atype), std::memory_order_release);
  }
}

void cgroup_bpf_offline(cgroup *cgrp) {
  cgrp->bpf.dead.store(true, std::memory_order_release);
  for (int t = 0; t < MAX_CGROUP_BPF_ATTACH_TYPE; t++) {
    for (bpf_cgroup_item *item : cgrp->bpf.progs[t]) {
      item->cgroup = nullptr;
      cgroup_bpf_enabled_key[t].fetch_sub(1, std::memory_order_relaxed);
    }
    cgrp->bpf.progs[t].clear();
    cgrp->bpf.flags[t] = 0;
    // The effective arrays stay until the cgroup is freed (after a grace period): readers that
    // saw the cgroup live may still walk them.
  }
}

void cgroup_bpf_free(cgroup *cgrp) {
  for (int t = 0; t < MAX_CGROUP_BPF_ATTACH_TYPE; t++)
    delete cgrp->bpf.effective[t].exchange(nullptr, std::memory_order_acq_rel);
}

}  // namespace umemcg
