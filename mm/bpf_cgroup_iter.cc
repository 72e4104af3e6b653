// SPDX-License-Identifier: GPL-2.0-only
// mm/bpf_cgroup_iter.cc: the cgroup iterator walk (see bpf_cgroup_iter.h).
//
// Mirrors: kernel/bpf/cgroup_iter.c (cgroup_iter_seq_start/next/show/stop) (Linux 6.19)
// Emulation: see bpf_cgroup_iter.h.
#include "mm/bpf_cgroup_iter.h"

#include <vector>

#include "absl/strings/str_format.h"
#include "bpfvm/runtime.h"
#include "kernel/cgroup.h"
#include "mm/bpf_memcontrol.h"
#include "shim/mutex.h"

namespace umemcg {

namespace {

void pre_order(cgroup *c, std::vector<cgroup *> &out) REQUIRES(cgroup_mutex) {
  out.push_back(c);
  for (cgroup *child : c->children) pre_order(child, out);
}

void post_order(cgroup *c, std::vector<cgroup *> &out) REQUIRES(cgroup_mutex) {
  for (cgroup *child : c->children) post_order(child, out);
  out.push_back(c);
}

}  // namespace

absl::StatusOr<bpf_cgroup_iter_result> bpf_cgroup_iter_run(emu::BpfLoadedProg &prog,
                                                           cgroup *start, u32 order) {
  const emu::BpfProgram &spec = prog.spec();
  if (spec.kind != emu::ProgKind::kIter || spec.attach_target != "cgroup")
    return absl::InvalidArgumentError(absl::StrFormat(
        "program '%s' (%s) is not a cgroup iterator", prog.name(), spec.section));
  if (!prog.runnable()) return absl::PermissionDeniedError(prog.refusal());
  if (order == CGROUP_ITER_ORDER_UNSPEC || order > CGROUP_ITER_CHILDREN)
    return absl::InvalidArgumentError(absl::StrFormat("cgroup iterator order %u: -EINVAL", order));

  bpf_cgroup_iter_result res;
  bpf_iter_meta meta{};
  meta.session_id = 1;
  struct {
    bpf_iter_meta *meta;
    cgroup *cgrp;
  } ctx{&meta, nullptr};
  std::string fault;
  auto show = [&](cgroup *c) -> bool {  // true: go on
    ctx.cgrp = c;
    const emu::BpfProgRunResult r = prog.run(&ctx, sizeof(ctx), /*ctx_rdonly=*/true);
    if (!r.ok) {
      fault = r.fault;
      return false;
    }
    if (c) {
      meta.seq_num++;
      res.visited++;
    }
    return r.r0 == 0;
  };
  {
    mutex_guard g(&cgroup_mutex);
    cgroup_root *root = cgroup_current_root();
    if (!start) start = root ? &root->cgrp : nullptr;
    if (!start) return absl::FailedPreconditionError("no cgroup hierarchy is mounted");
    std::vector<cgroup *> walk;
    switch (order) {
      case CGROUP_ITER_SELF_ONLY: walk.push_back(start); break;
      case CGROUP_ITER_DESCENDANTS_PRE: pre_order(start, walk); break;
      case CGROUP_ITER_DESCENDANTS_POST: post_order(start, walk); break;
      case CGROUP_ITER_ANCESTORS_UP:
        for (cgroup *c = start; c; c = c->parent) walk.push_back(c);
        break;
      case CGROUP_ITER_CHILDREN:
        for (cgroup *c : start->children) walk.push_back(c);
        break;
    }
    for (cgroup *c : walk) {
      if (c->removed) continue;  // a dead start cgroup
      if (!show(c)) {
        res.stopped = fault.empty();
        break;
      }
    }
  }
  // The epilogue call, outside cgroup_mutex.
  if (fault.empty()) show(nullptr);
  if (!fault.empty())
    return absl::InternalError("program '" + prog.name() + "' faulted: " + fault);
  return res;
}

}  // namespace umemcg
