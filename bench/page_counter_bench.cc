// SPDX-License-Identifier: GPL-2.0-only
// bench/page_counter_bench.cc: the page_counter charge path, uncontended.
//
// BM_page_counter_try_charge_uncharge/<depth>: one single-page page_counter_try_charge() and
// page_counter_uncharge() on the leaf of a chain of <depth> counters (depth 1 = a lone root),
// as a memcg->memory counter on cgroup v2: protection_support on, min/low 0, no limit reached.
// Read it against BM_atomic_add_uncontended from the same run: each level costs two fully
// ordered atomic RMWs (add_return, sub_return) plus the watermark and protection checks.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "mm/page_counter.h"

namespace {

using umemcg::page_counter;

void BM_page_counter_try_charge_uncharge(benchmark::State &state) {
  const auto depth = static_cast<int>(state.range(0));
  // One allocation per counter, as each memcg is its own allocation in the kernel.
  std::vector<std::unique_ptr<page_counter>> chain;
  page_counter *parent = nullptr;
  for (int i = 0; i < depth; i++) {
    chain.push_back(std::make_unique<page_counter>());
    umemcg::page_counter_init(chain.back().get(), parent, /*protection_support=*/true);
    parent = chain.back().get();
  }
  page_counter *leaf = parent;

  for (auto _ : state) {
    page_counter *fail = nullptr;
    bool ok = umemcg::page_counter_try_charge(leaf, 1, &fail);
    benchmark::DoNotOptimize(ok);
    umemcg::page_counter_uncharge(leaf, 1);
  }
  if (umemcg::page_counter_read(chain.front().get()) != 0) state.SkipWithError("usage leaked");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_page_counter_try_charge_uncharge)->DenseRange(1, 8);

}  // namespace
