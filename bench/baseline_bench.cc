// SPDX-License-Identifier: GPL-2.0-only
// bench/baseline_bench.cc: the reference baselines every speed target is a ratio against.
#include <benchmark/benchmark.h>

#include <atomic>

namespace {

// One uncontended std::atomic<long>::fetch_add per iteration: the unit of targets S1-S3.
void BM_atomic_add_uncontended(benchmark::State &state) {
  static std::atomic<long> counter{0};
  for (auto _ : state) {
    counter.fetch_add(1);
  }
  benchmark::DoNotOptimize(counter.load());
}
BENCHMARK(BM_atomic_add_uncontended);

// The same atomic, hammered by two threads at once.
std::atomic<long> g_contended{0};
void BM_atomic_add_contended(benchmark::State &state) {
  for (auto _ : state) {
    g_contended.fetch_add(1);
  }
}
BENCHMARK(BM_atomic_add_contended)->Threads(2);

}  // namespace

BENCHMARK_MAIN();
