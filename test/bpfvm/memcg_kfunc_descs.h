// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/memcg_kfunc_descs.h: the signatures of the memcg kfuncs the test objects and the
// verifier tests call (kernel-semantics.md 5.1, 5.5), for the loader's and the verifier's test
// registries, which give them their own (fake) functions.
#pragma once

#include <linux/bpf.h>

#include <vector>

#include "bpfvm/kfunc.h"

namespace umemcg::emu::testing {

// bpf_get_mem_cgroup, bpf_put_mem_cgroup, bpf_mem_cgroup_usage, bpf_mem_cgroup_flush_stats and,
// with_reclaim, bpf_proactive_reclaim (SYSCALL programs only), in this order; fn unset.
inline std::vector<KfuncDesc> memcg_kfunc_descs(bool with_reclaim = true) {
  std::vector<KfuncDesc> v = {
      {"bpf_get_mem_cgroup", KfuncArg::ptr_to("mem_cgroup"),
       {KfuncArg::ptr_to("cgroup_subsys_state")}, KF_ACQUIRE | KF_RET_NULL | KF_RCU},
      {"bpf_put_mem_cgroup", KfuncArg::void_(), {KfuncArg::ptr_to("mem_cgroup")}, KF_RELEASE},
      {"bpf_mem_cgroup_usage", KfuncArg::scalar(8), {KfuncArg::ptr_to("mem_cgroup")},
       KF_TRUSTED_ARGS},
      {"bpf_mem_cgroup_flush_stats", KfuncArg::void_(), {KfuncArg::ptr_to("mem_cgroup")},
       KF_TRUSTED_ARGS | KF_SLEEPABLE},
  };
  if (with_reclaim) {
    KfuncDesc r{"bpf_proactive_reclaim", KfuncArg::scalar(8, true),
                {KfuncArg::ptr_to("mem_cgroup"), KfuncArg::scalar(8), KfuncArg::scalar(4, true)},
                KF_SLEEPABLE};
    r.prog_types = {BPF_PROG_TYPE_SYSCALL};
    v.push_back(std::move(r));
  }
  return v;
}

}  // namespace umemcg::emu::testing
