// SPDX-License-Identifier: GPL-2.0-only
// bench/stock_hit_loop.h: the timed loop of the stock-hit benchmarks (charge_bench.cc,
// bpf_dispatch_bench.cc): try_charge_memcg() of one page served by this CPU's stock. Every 63
// hits the 63 pages are given back with one refill_stock() (part of the timed loop, ~1/63 of a
// refill per iteration), so the stock never runs dry and no iteration misses. Call it on a
// task attached to a vCPU.
#pragma once

#include <benchmark/benchmark.h>

#include "mm/memcontrol.h"
#include "mm/memcontrol_internal.h"

namespace umemcg::bench {

inline void stock_hit_loop(benchmark::State &state, mem_cgroup *memcg) {
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

}  // namespace umemcg::bench
