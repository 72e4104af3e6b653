// SPDX-License-Identifier: GPL-2.0-only
// mm/bpf_memcg_ops.cc: cgroup-attached bpf_memcg_ops and the high_policy dispatcher (see
// bpf_memcg_ops.h).
//
// Mirrors: mm/bpf_memcontrol.c (bpf_memcg_high_policy) and kernel/bpf/bpf_struct_ops.c of the
//          posted series (Linux 6.19 base)
// Emulation: see bpf_memcg_ops.h and bpf_cgroup_struct_ops.h.
#include "mm/bpf_memcg_ops.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "bpfvm/kernel_env.h"
#include "bpfvm/runtime.h"
#include "kernel/cgroup.h"
#include "mm/bpf_memcontrol.h"
#include "mm/memcontrol.h"
#include "shim/compiler.h"
#include "shim/errno.h"
#include "shim/preempt.h"
#include "shim/rcupdate.h"
#include "shim/sched.h"

namespace umemcg {

absl::StatusOr<std::unique_ptr<BpfMemcgOpsLink>> BpfMemcgOpsLink::attach(
    emu::BpfLoadedObject &obj, const std::string &map_name, mem_cgroup *memcg, u32 flags) {
  auto l = BpfCgroupStructOpsLink::attach(obj, map_name, "bpf_memcg_ops", memcg, flags);
  if (!l.ok()) return l.status();
  std::unique_ptr<BpfMemcgOpsLink> link(new BpfMemcgOpsLink);
  link->link_ = std::move(*l);
  // The charge path calls the dispatcher from now on (a no-op while nothing is attached).
  memcg_set_high_policy(bpf_memcg_high_policy);
  return link;
}

void BpfMemcgOpsLink::detach() { link_->detach(); }

BpfMemcgOpsLink::~BpfMemcgOpsLink() = default;  // the link detaches

bool BpfMemcgOpsLink::attached() const { return link_->attached(); }

emu::BpfLoadedProg *BpfMemcgOpsLink::high_policy() const {
  return link_->ops().progs[BPF_MEMCG_OPS_HIGH_POLICY].prog;
}

u32 bpf_memcg_high_policy(mem_cgroup *memcg, mem_cgroup *over_limit, gfp_t gfp) {
  if (!cgroup_bpf_enabled(CGROUP_MEMCG_OPS)) return BPF_MEMCG_HIGH_NO_OPINION;
  // A policy may allocate and re-enter the charge path.
  if (current->in_bpf_memcg) return BPF_MEMCG_HIGH_NO_OPINION;
  current->in_bpf_memcg = true;
  u32 acc = BPF_MEMCG_HIGH_NO_OPINION;
  rcu_read_lock();
  migrate_disable();
  cgroup *cgrp = memcg->css.cgroup;
  // Only the v2 hierarchy has cgroup-bpf; the cgroup may be going away while the memcg lives.
  if (cgroup_on_dfl(cgrp) && cgroup_bpf_tryget_live(cgrp->bpf)) {
    bpf_memcg_ctx ctx{};
    ctx.memcg = memcg;
    ctx.memcg_over_limit = over_limit;
    ctx.task = current;
    ctx.cgroup_id = cgrp->id;
    ctx.over_limit_cgroup_id = over_limit ? over_limit->css.cgroup->id : 0;
    ctx.nr_pages_over_high = current->memcg_nr_pages_over_high;
    ctx.gfp_flags = static_cast<u32>(gfp);
    u64 args[1] = {reinterpret_cast<u64>(&ctx)};
    if (const bpf_cgroup_array *a = cgroup_bpf_effective(cgrp->bpf, CGROUP_MEMCG_OPS)) {
      for (const bpf_cgroup_item *item : a->items) {
        const auto *ops = static_cast<const bpf_cgroup_struct_ops *>(item->data);
        const bpf_cgroup_struct_ops::member_prog &m = ops->progs[BPF_MEMCG_OPS_HIGH_POLICY];
        if (!m.prog) continue;
        const u64 r0 = bpf_cgroup_struct_ops_run(m, args, 1);
        // OR: no policy can undo another's request; unknown bits are dropped.
        acc |= static_cast<u32>(r0) & BPF_MEMCG_HIGH_VALID_MASK;
      }
    }
  }
  migrate_enable();
  rcu_read_unlock();
  current->in_bpf_memcg = false;
  return acc;
}

}  // namespace umemcg
