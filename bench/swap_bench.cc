// SPDX-License-Identifier: GPL-2.0-only
// bench/swap_bench.cc: target S13, anon memory through swap in simulated mode.
//
// BM_swap_anon_100M_memmax_30M/<v1>: test/support/swap_anon_run.h's workload, one whole
//   machine (boot, 100 MiB touched under memory.max=30M with a 1 GiB swap device, exit,
//   shutdown) per iteration; the Time column is wall time per run (target: <= 1 s). Counters:
//   pages swapped out and in per run (at least 70 MiB worth must go out).
#include <benchmark/benchmark.h>

#include "test/support/swap_anon_run.h"

namespace {

void BM_swap_anon_100M_memmax_30M(benchmark::State &state) {
  bool v1 = state.range(0) != 0;
  umemcg::test::SwapAnonResult r;
  for (auto _ : state) {
    r = umemcg::test::run_swap_anon(v1, false);
    if (r.boot || r.status) {
      state.SkipWithError("the machine did not boot or the process did not complete");
      return;
    }
  }
  state.counters["pswpout"] = static_cast<double>(r.pswpout);
  state.counters["pswpin"] = static_cast<double>(r.pswpin);
}

BENCHMARK(BM_swap_anon_100M_memmax_30M)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
