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
//   up the hierarchy and refills the slot with 63. Seven leaves at depth d, each with its own
//   slot (holding 0 pages), are charged back to back and timed together with the TSC
//   (manual time: the Time column is that chunk / 7, two TSC reads included); then,
//   untimed, the stocked pages are taken back (consumed and uncharged). So every timed charge
//   is a real miss with a refill and no eviction. PauseTiming() is not used: its own cost
//   (CPU-time clock reads) would dominate a ~50 ns operation.
// BM_uncharge/<d>: __mem_cgroup_uncharge() of a one-page folio (directly on the counters, as
//   freed user pages are); 64 folios are charged untimed, then freed in one timed chunk
//   (manual time, Time = chunk / 64).
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bench/stock_hit_loop.h"
#include "kernel/cgroup.h"
#include "mm/memcontrol.h"
#include "mm/memcontrol_folio.h"
#include "shim/machine.h"

namespace {

using namespace umemcg;

// A cheap clock for the manual-time benchmarks: the TSC, calibrated once against
// steady_clock (clock_gettime costs ~65 ns on this kind of VM, too much next to a ~50 ns
// operation timed in chunks of 7).
double tsc_ns_per_tick() {
  static const double v = [] {
    auto t0 = std::chrono::steady_clock::now();
    unsigned long long c0 = __builtin_ia32_rdtsc();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(20)) {
    }
    auto t1 = std::chrono::steady_clock::now();
    unsigned long long c1 = __builtin_ia32_rdtsc();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / double(c1 - c0);
  }();
  return v;
}
inline unsigned long long ticks() { return __builtin_ia32_rdtsc(); }

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
    bench::stock_hit_loop(state, s->chain.back());
  }
  release();
}

void stock_miss(benchmark::State &state, bool pcstock) {
  constexpr int kLeaves = 7;
  tsc_ns_per_tick();
  Setup *s = acquire(pcstock, static_cast<int>(state.range(0)), kLeaves);
  {
    emu::AttachThread t("bench", 0);
    int i = 0;
    double per = 0;
    for (auto _ : state) {
      if (i == 0) {
        unsigned long long t0 = ticks();
        for (mem_cgroup *leaf : s->leaves) {
          int ret = try_charge_memcg(leaf, GFP_KERNEL, 1);
          benchmark::DoNotOptimize(ret);
        }
        unsigned long long t1 = ticks();
        per = double(t1 - t0) * tsc_ns_per_tick() * 1e-9 / kLeaves;
        // Untimed: take the stocked pages back (63 consumed from each slot, 64 uncharged).
        for (mem_cgroup *leaf : s->leaves) {
          try_charge_memcg(leaf, GFP_KERNEL, 63);
          memcg_uncharge(leaf, 64);
        }
      }
      state.SetIterationTime(per);
      if (++i == kLeaves) i = 0;
    }
    state.SetItemsProcessed(state.iterations());
  }
  release();
}

void uncharge(benchmark::State &state, bool pcstock) {
  tsc_ns_per_tick();
  Setup *s = acquire(pcstock, static_cast<int>(state.range(0)));
  {
    emu::AttachThread t("bench", 0);
    mem_cgroup *memcg = s->chain.back();
    constexpr int kFolios = 64;
    folio folios[kFolios];
    int i = 0;
    double per = 0;
    for (auto _ : state) {
      if (i == 0) {
        for (folio &f : folios) charge_memcg(&f, memcg, GFP_KERNEL);  // untimed
        unsigned long long t0 = ticks();
        for (folio &f : folios) __mem_cgroup_uncharge(&f);
        unsigned long long t1 = ticks();
        per = double(t1 - t0) * tsc_ns_per_tick() * 1e-9 / kFolios;
      }
      state.SetIterationTime(per);
      if (++i == kFolios) i = 0;
    }
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
BENCHMARK(BM_try_charge_memcg_stock_miss)->DenseRange(1, 8)->UseManualTime();
BENCHMARK(BM_try_charge_memcg_stock_miss_pcstock)->DenseRange(1, 8)->UseManualTime();
BENCHMARK(BM_uncharge)->DenseRange(1, 8)->UseManualTime();
BENCHMARK(BM_uncharge_pcstock)->DenseRange(1, 8)->UseManualTime();

}  // namespace
