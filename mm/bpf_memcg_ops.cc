// SPDX-License-Identifier: GPL-2.0-only
// mm/bpf_memcg_ops.cc: cgroup-attached bpf_memcg_ops and the high_policy dispatcher (see
// bpf_memcg_ops.h).
//
// Mirrors: mm/bpf_memcontrol.c (bpf_memcg_high_policy) and kernel/bpf/bpf_struct_ops.c of the
//          posted series (Linux 6.19 base)
// Emulation: see bpf_memcg_ops.h. No CFI stub runs during a detach: the detacher waits for
//   a grace period instead, so a dispatcher sees either the policy or nothing.
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

namespace {

constexpr const char *kTypeName = "bpf_memcg_ops";

bool all_zero(const std::vector<u8> &data, u32 off, u32 size) {
  if ((u64)off + size > data.size()) return true;  // beyond the image: nothing set
  return std::all_of(data.begin() + off, data.begin() + off + size, [](u8 b) { return !b; });
}

absl::Status errno_status(int err, const std::string &what) {
  return absl::FailedPreconditionError(absl::StrFormat("%s: %s (%d)", what, strerror(-err), err));
}

}  // namespace

absl::StatusOr<std::unique_ptr<BpfMemcgOpsLink>> BpfMemcgOpsLink::attach(
    emu::BpfLoadedObject &obj, const std::string &map_name, mem_cgroup *memcg, u32 flags) {
  bpf_memcontrol_init();
  const emu::MapSpec *spec = nullptr;
  for (const emu::MapSpec &m : obj.object().maps)
    if (m.name == map_name) spec = &m;
  if (!spec) return absl::NotFoundError("no map '" + map_name + "' in the object");
  if (!spec->st_ops || spec->st_ops->type_name != kTypeName)
    return absl::InvalidArgumentError("map '" + map_name + "' is not a " + kTypeName +
                                      " struct_ops map");
  if (spec->origin != emu::MapOrigin::kStructOpsLink)
    return absl::UnimplementedError("map '" + map_name +
                                    "': a cgroup struct_ops attaches through a link "
                                    "(SEC(\".struct_ops.link\")); -EOPNOTSUPP");
  if (!memcg || !cgroup_on_dfl(memcg->css.cgroup))
    return absl::InvalidArgumentError("cgroup-bpf attaches only to cgroup v2 cgroups");
  const emu::bpf_struct_ops_type *kern = emu::bpf_kernel_env().find_struct_ops(kTypeName);
  if (!kern) return absl::InternalError("bpf_memcg_ops is not registered");

  std::unique_ptr<BpfMemcgOpsLink> link(new BpfMemcgOpsLink);
  for (const emu::StructOpsMember &m : spec->st_ops->members) {
    const bool in_kernel =
        std::any_of(kern->members.begin(), kern->members.end(),
                    [&](const emu::bpf_struct_ops_member &k) { return k.name == m.name; });
    if (!in_kernel) {
      // libbpf: a member the kernel's type lacks must be unused (no program, all zero).
      if (m.prog_idx >= 0 || !all_zero(spec->initial_data, m.offset, m.size))
        return absl::UnimplementedError(absl::StrFormat(
            "struct_ops init_kern %s: Cannot find member %s in kernel BTF", map_name, m.name));
      continue;
    }
    if (m.prog_idx < 0) continue;  // a NULL member: the dispatcher skips it
    const std::string &pname = obj.object().progs[m.prog_idx].name;
    emu::BpfLoadedProg *prog = obj.find_program(pname);
    if (!prog) return absl::InternalError("program '" + pname + "' not linked");
    if (!prog->runnable())
      return absl::PermissionDeniedError(
          absl::StrFormat("map '%s' member %s: %s", map_name, m.name, prog->refusal()));
    if (m.name == "high_policy") {
      link->high_policy_ = prog;
      link->policy_fast_ = prog->fast() && !prog->sleepable();
    }
  }
  link->item_.data = link.get();
  int err = cgroup_bpf_attach(memcg->css.cgroup, CGROUP_MEMCG_OPS, &link->item_, flags);
  if (err) {
    link->detached_ = true;
    return errno_status(err, "attach '" + map_name + "'");
  }
  // The charge path calls the dispatcher from now on (a no-op while nothing is attached).
  memcg_set_high_policy(bpf_memcg_high_policy);
  return link;
}

void BpfMemcgOpsLink::detach() {
  if (detached_) return;
  detached_ = true;
  cgroup_bpf_detach(CGROUP_MEMCG_OPS, &item_);  // returns after a grace period
}

BpfMemcgOpsLink::~BpfMemcgOpsLink() { detach(); }

bool BpfMemcgOpsLink::attached() const {
  return !detached_ && READ_ONCE(item_.cgroup) != nullptr;
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
        const auto *link = static_cast<const BpfMemcgOpsLink *>(item->data);
        if (!link->high_policy_) continue;
        emu::BpfLoadedProg *prog = link->high_policy_;
        u64 r0;
        if (likely(link->policy_fast_)) {
          r0 = prog->run_in_rcu(args);  // verified, not sleepable: the trampoline fast path
        } else {
          const emu::BpfProgRunResult r = prog->run(args, sizeof(args), true);
          r0 = r.ok ? r.r0 : 0;
        }
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
