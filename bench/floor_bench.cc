// SPDX-License-Identifier: GPL-2.0-only
// bench/floor_bench.cc: hardware floors under targets S1 and S2, measured in the same run as
// BM_atomic_add_uncontended, so that a missed ratio can be told apart from slow code.
//
// BM_floor_stock_u8_dec: the one memory dependency every consecutive stock hit carries. A hit
//   decrements the slot's u8 nr_pages in this CPU's stock line, and the next hit of the same
//   memcg reads that byte again: a store-to-load chain through the cache, one per charge, whatever
//   else the code does. No lock, no slot scan, no call: only the chain (plus the benchmark loop).
//   If this alone is above 0.5x the atomic, no faithful stock hit can reach S1's 0.5x on this CPU.
// BM_floor_atomic_chain/<n>: n uncontended fetch_adds per iteration, each on its own cache line
//   (the page counters of a depth n - 1 hierarchy): the locked additions a stock miss cannot
//   avoid, with nothing around them. Compare a miss at depth d with n = d + 1.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>

namespace {

// The 6.19 stock's first cache line: u8 counts first, then the cached memcg pointers.
struct alignas(64) stock_line {
  std::uint8_t nr_pages[8];
  void *cached[7];
};
stock_line g_stock_lines[4];
// Read through a volatile pointer each iteration, as this_cpu_ptr() reads the CPU number.
volatile int g_this_cpu = 1;

void BM_floor_stock_u8_dec(benchmark::State &state) {
  stock_line *line = &g_stock_lines[g_this_cpu];
  line->nr_pages[0] = 64;
  unsigned int n = 0;
  for (auto _ : state) {
    line = &g_stock_lines[g_this_cpu];
    benchmark::DoNotOptimize(line);
    line->nr_pages[0] -= 1;     // the hit's decrement, stored ...
    benchmark::ClobberMemory();  // ... and read again by the next hit
    if (++n == 63) {             // given back every 63 hits, as BM_try_charge_memcg_stock_hit
      line->nr_pages[0] += 63;
      n = 0;
    }
  }
}
BENCHMARK(BM_floor_stock_u8_dec);

struct alignas(64) padded_counter {
  std::atomic<long> v{0};
};
padded_counter g_chain[9];

void BM_floor_atomic_chain(benchmark::State &state) {
  const int n = static_cast<int>(state.range(0));
  for (auto _ : state) {
    for (int i = 0; i < n; i++) g_chain[i].v.fetch_add(64);
  }
}
BENCHMARK(BM_floor_atomic_chain)->DenseRange(2, 9);

}  // namespace
