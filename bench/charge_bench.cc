// SPDX-License-Identifier: GPL-2.0-only
// bench/charge_bench.cc: try_charge_memcg() and uncharge on a native machine, both stock
// designs (suffix _pcstock: the page_counter stock of seed 003). Targets S1-S3: read each
// against BM_atomic_add_uncontended from the same run.
//
// Depth d: a chain of d memcgs under the root (a charge walks d + 1 page counters).
// BM_try_charge_memcg_stock_hit/<d>: one page served by the per-CPU stock. Every 63 hits the
//   63 pages are given back with one refill_stock() (part of the timed loop, ~1/63 of a
//   refill per iteration), so the stock never runs dry and no iteration misses.
// BM_try_charge_memcg_stock_hit_mt/3: the same on two threads, each on its own vCPU, one memcg.
// BM_try_charge_memcg_stock_miss/<d>: one page that misses the stock, charges a batch of 64
//   up the hierarchy and refills the slot with 63. Seven leaves at depth d take turns, each
//   with its own slot; every 7 iterations the timer is paused and the stocked pages are taken
//   back (consumed and uncharged), so every timed charge is a real miss with no eviction.
// BM_uncharge/<d>: __mem_cgroup_uncharge() of a one-page folio (directly on the counters, as
//   freed user pages are); 64 folios are charged with the timer paused, then freed timed.
#include <benchmark/benchmark.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernel/cgroup.h"
#include "mm/memcontrol.h"
#include "mm/memcontrol_folio.h"
#include "shim/machine.h"

namespace {

using namespace umemcg;

// One machine with memcg booted and a chain of memcgs; shared by the threads of one run.
struct Setup {
  std::unique_ptr<emu::Machine> m;
  std::vector<mem_cgroup *> chain;   // chain[i] at depth i + 1
  std::vector<mem_cgroup *> leaves;  // siblings at the deepest level (chain.back() is one)
};

std::mutex g_mu;
Setup *g_setup = nullptr;
int g_users = 0;

Setup *acquire(bool pcstock, int depth, int nr_leaves = 1) {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_users++ == 0) {
    g_setup = new Setup;
    emu::MachineConfig cfg;
    cfg.mode = emu::Mode::native;
    cfg.nr_cpus = 4;
    g_setup->m = std::make_unique<emu::Machine>(cfg);
    g_setup->m->exec([&] {
      memcg_boot_params p;
      p.stock = pcstock ? memcg_stock_design::page_counter_stock : memcg_stock_design::memcg_stock;
      if (mem_cgroup_boot(p)) return;
      cgroup *parent = root_mem_cgroup->css.cgroup;
      int err;
      for (int i = 0; i < depth - 1; i++) {
        parent = cgroup_mkdir(parent, "d" + std::to_string(i), &err);
        g_setup->chain.push_back(mem_cgroup_from_cgroup(parent));
      }
      for (int i = 0; i < nr_leaves; i++)
        g_setup->leaves.push_back(
            mem_cgroup_from_cgroup(cgroup_mkdir(parent, "leaf" + std::to_string(i), &err)));
      g_setup->chain.push_back(g_setup->leaves.front());
    }, 0);
  }
  return g_setup;
}

void release() {
  std::lock_guard<std::mutex> g(g_mu);
  if (--g_users == 0) {
    delete g_setup;  // the machine's shutdown drains and frees everything
    g_setup = nullptr;
  }
}

void stock_hit(benchmark::State &state, bool pcstock) {
  Setup *s = acquire(pcstock, static_cast<int>(state.range(0)));
  {
    emu::AttachThread t("bench", state.thread_index());
    mem_cgroup *memcg = s->chain.back();
    // Prime: one batch charged, all 64 pages in this CPU's stock.
    try_charge_memcg(memcg, GFP_KERNEL, 1);
    refill_stock(memcg, 1);
    unsigned int n = 0;
    for (auto _ : state) {
      int ret = try_charge_memcg(memcg, GFP_KERNEL, 1);
      benchmark::DoNotOptimize(ret);
      if (++n == 63) {
        refill_stock(memcg, 63);
        n = 0;
      }
    }
    refill_stock(memcg, n);
    state.SetItemsProcessed(state.iterations());
  }
  release();
}

void stock_miss(benchmark::State &state, bool pcstock) {
  constexpr int kLeaves = 7;
  Setup *s = acquire(pcstock, static_cast<int>(state.range(0)), kLeaves);
  {
    emu::AttachThread t("bench", 0);
    int i = 0;
    for (auto _ : state) {
      int ret = try_charge_memcg(s->leaves[i], GFP_KERNEL, 1);
      benchmark::DoNotOptimize(ret);
      if (++i == kLeaves) {
        state.PauseTiming();
        // Take the stocked pages back: 63 consumed from each slot, 64 uncharged per leaf.
        for (mem_cgroup *leaf : s->leaves) {
          try_charge_memcg(leaf, GFP_KERNEL, 63);
          memcg_uncharge(leaf, 64);
        }
        i = 0;
        state.ResumeTiming();
      }
    }
    for (int j = 0; j < i; j++) {
      try_charge_memcg(s->leaves[j], GFP_KERNEL, 63);
      memcg_uncharge(s->leaves[j], 64);
    }
    state.SetItemsProcessed(state.iterations());
  }
  release();
}

void uncharge(benchmark::State &state, bool pcstock) {
  Setup *s = acquire(pcstock, static_cast<int>(state.range(0)));
  {
    emu::AttachThread t("bench", 0);
    mem_cgroup *memcg = s->chain.back();
    constexpr int kFolios = 64;
    folio folios[kFolios];
    int i = kFolios;
    for (auto _ : state) {
      if (i == kFolios) {
        state.PauseTiming();
        for (folio &f : folios) charge_memcg(&f, memcg, GFP_KERNEL);
        i = 0;
        state.ResumeTiming();
      }
      __mem_cgroup_uncharge(&folios[i++]);
    }
    for (; i < kFolios; i++) __mem_cgroup_uncharge(&folios[i]);
    state.SetItemsProcessed(state.iterations());
  }
  release();
}

void BM_try_charge_memcg_stock_hit(benchmark::State &s) { stock_hit(s, false); }
void BM_try_charge_memcg_stock_hit_pcstock(benchmark::State &s) { stock_hit(s, true); }
void BM_try_charge_memcg_stock_hit_mt(benchmark::State &s) { stock_hit(s, false); }
void BM_try_charge_memcg_stock_hit_mt_pcstock(benchmark::State &s) { stock_hit(s, true); }
void BM_try_charge_memcg_stock_miss(benchmark::State &s) { stock_miss(s, false); }
void BM_try_charge_memcg_stock_miss_pcstock(benchmark::State &s) { stock_miss(s, true); }
void BM_uncharge(benchmark::State &s) { uncharge(s, false); }
void BM_uncharge_pcstock(benchmark::State &s) { uncharge(s, true); }

BENCHMARK(BM_try_charge_memcg_stock_hit)->Arg(1)->Arg(3);
BENCHMARK(BM_try_charge_memcg_stock_hit_pcstock)->Arg(1)->Arg(3);
BENCHMARK(BM_try_charge_memcg_stock_hit_mt)->Arg(3)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_try_charge_memcg_stock_hit_mt_pcstock)->Arg(3)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_try_charge_memcg_stock_miss)->DenseRange(1, 8);
BENCHMARK(BM_try_charge_memcg_stock_miss_pcstock)->DenseRange(1, 8);
BENCHMARK(BM_uncharge)->DenseRange(1, 8);
BENCHMARK(BM_uncharge_pcstock)->DenseRange(1, 8);

}  // namespace
