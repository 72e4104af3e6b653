// SPDX-License-Identifier: GPL-2.0-only
// mm/bpf_tcp_ops.cc: cgroup-attached bpf_tcp_ops and its skmem_charged dispatcher (see
// bpf_tcp_ops.h).
//
// Mirrors: the posted cgroup struct_ops series' bpf_tcp_ops (Linux 6.19 base)
// Emulation: see bpf_tcp_ops.h.
#include "mm/bpf_tcp_ops.h"

#include "kernel/cgroup.h"
#include "mm/memcontrol.h"
#include "shim/preempt.h"
#include "shim/rcupdate.h"
#include "shim/sched.h"

namespace umemcg {

absl::StatusOr<std::unique_ptr<BpfCgroupStructOpsLink>> bpf_tcp_ops_attach(
    emu::BpfLoadedObject &obj, const std::string &map_name, mem_cgroup *memcg, u32 flags) {
  return BpfCgroupStructOpsLink::attach(obj, map_name, "bpf_tcp_ops", memcg, flags);
}

void bpf_tcp_ops_skmem_charged(mem_cgroup *memcg, unsigned int nr_pages, gfp_t gfp,
                               bool charged) {
  if (!cgroup_bpf_enabled(CGROUP_TCP_SOCK_OPS)) return;
  rcu_read_lock();
  migrate_disable();
  cgroup *cgrp = memcg->css.cgroup;
  if (cgroup_on_dfl(cgrp) && cgroup_bpf_tryget_live(cgrp->bpf)) {
    bpf_tcp_sock_ctx ctx{};
    ctx.memcg = memcg;
    ctx.task = current;
    ctx.cgroup_id = cgrp->id;
    ctx.nr_pages = nr_pages;
    ctx.charged = charged ? 1 : 0;
    ctx.gfp_flags = static_cast<u32>(gfp);
    u64 args[1] = {reinterpret_cast<u64>(&ctx)};
    if (const bpf_cgroup_array *a = cgroup_bpf_effective(cgrp->bpf, CGROUP_TCP_SOCK_OPS)) {
      for (const bpf_cgroup_item *item : a->items) {
        const auto *ops = static_cast<const bpf_cgroup_struct_ops *>(item->data);
        const bpf_cgroup_struct_ops::member_prog &m = ops->progs[BPF_TCP_OPS_SKMEM_CHARGED];
        if (m.prog) bpf_cgroup_struct_ops_run(m, args, 1);
      }
    }
  }
  migrate_enable();
  rcu_read_unlock();
}

}  // namespace umemcg
