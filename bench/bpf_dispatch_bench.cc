// SPDX-License-Identifier: GPL-2.0-only
// bench/bpf_dispatch_bench.cc: the cost of cgroup-attached bpf_memcg_ops policies (targets S6
// and S7), on a native machine with a chain of 3 memcgs under the root; a trivial high_policy
// (test/progs/memcg_trivial.bpf.c, no opinion) is attached at every level (ALLOW_MULTI), so a
// leaf's effective array holds 3 policies.
//
// BM_bpf_policy_stock_hit/<p>: try_charge_memcg() of one page served by the stock at the leaf,
//   with p (0 or 3) policies attached: S6 compares /3 with /0 (target: no measurable change,
//   <= 3 %; the dispatcher is only on the over-high path).
// BM_bpf_memcg_high_policy/<p>: one dispatch, bpf_memcg_high_policy(leaf, leaf, GFP_KERNEL),
//   with p (0, 1 or 3) policies in the leaf's effective array. Counter prog_insns: the
//   instructions each policy executes. S7 (<= 30 ns added per dispatch beyond the programs'
//   own instructions) is read by tools/bench_ratios.py as /3 minus 3 x prog_insns x the fast
//   interpreter's ns per instruction on the ALU loop of the same run.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "bench/stock_hit_loop.h"
#include "bpfvm/kernel_env.h"
#include "bpfvm/runtime.h"
#include "kernel/cgroup.h"
#include "mm/bpf_memcg_ops.h"
#include "mm/bpf_memcontrol.h"
#include "mm/memcontrol.h"
#include "mm/memcontrol_internal.h"
#include "shim/machine.h"

namespace {

using namespace umemcg;

#ifdef UMEMCG_BPF_PROGS_DIR

struct PolicySetup {
  std::unique_ptr<emu::Machine> m;
  std::vector<mem_cgroup *> chain;  // depth 1..3
  std::vector<std::unique_ptr<emu::BpfLoadedObject>> objs;
  std::vector<std::unique_ptr<BpfMemcgOpsLink>> links;
  u64 prog_insns = 0;
  bool ok = false;

  // Attaches a trivial policy at the first `levels` levels (deepest first).
  explicit PolicySetup(int levels) {
    emu::MachineConfig cfg;
    cfg.mode = emu::Mode::native;
    cfg.nr_cpus = 2;
    m = std::make_unique<emu::Machine>(cfg);
    m->exec([&] {
      if (mem_cgroup_boot(memcg_boot_params{})) return;
      bpf_memcontrol_init();
      cgroup *parent = root_mem_cgroup->css.cgroup;
      int err = 0;
      for (int i = 0; i < 3; i++) {
        parent = cgroup_mkdir(parent, "l" + std::to_string(i), &err);
        if (!parent) return;
        chain.push_back(mem_cgroup_from_cgroup(parent));
      }
      for (int i = 0; i < levels; i++) {
        auto lo = emu::BpfLoadedObject::open(
            std::string(UMEMCG_BPF_PROGS_DIR) + "/memcg_trivial.bpf.o",
            emu::bpf_kernel_load_options());
        if (!lo.ok()) return;
        auto link = BpfMemcgOpsLink::attach(**lo, "trivial", chain[2 - i],
                                            CGROUP_BPF_F_ALLOW_MULTI);
        if (!link.ok()) return;
        prog_insns = (*link)->high_policy()->insns().size();  // straight-line: all executed
        objs.push_back(std::move(*lo));
        links.push_back(std::move(*link));
      }
      ok = true;
    }, 0);
  }
  ~PolicySetup() {
    m->exec([&] { links.clear(); }, 0);  // detach (task context) before the objects go
    objs.clear();
    m.reset();
  }
};

void BM_bpf_policy_stock_hit(benchmark::State &state) {
  PolicySetup s(static_cast<int>(state.range(0)));
  if (!s.ok) {
    state.SkipWithError("set-up failed");
    return;
  }
  {
    emu::AttachThread t("bench", 0);
    bench::stock_hit_loop(state, s.chain.back());
  }
}

void BM_bpf_memcg_high_policy(benchmark::State &state) {
  const int levels = static_cast<int>(state.range(0));
  PolicySetup s(levels);
  if (!s.ok) {
    state.SkipWithError("set-up failed");
    return;
  }
  {
    emu::AttachThread t("bench", 0);
    mem_cgroup *leaf = s.chain.back();
    u32 acc = 0;
    for (auto _ : state) {
      acc |= bpf_memcg_high_policy(leaf, leaf, GFP_KERNEL);
      benchmark::DoNotOptimize(acc);
    }
    if (acc) state.SkipWithError("a trivial policy had an opinion");
  }
  state.counters["policies"] = levels;
  state.counters["prog_insns"] = static_cast<double>(s.prog_insns);
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_bpf_policy_stock_hit)->Arg(0)->Arg(3);
BENCHMARK(BM_bpf_memcg_high_policy)->Arg(0)->Arg(1)->Arg(3);

#endif

}  // namespace
