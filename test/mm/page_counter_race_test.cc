// SPDX-License-Identifier: GPL-2.0-only
// test/mm/page_counter_race_test.cc: page_counter on real threads.
//
// These tests use std::thread directly, not the emulated machine: page_counter is pure atomics
// with no per-CPU state, so host threads exercise exactly the code the vCPUs will run. The seed
// of each run is printed on failure (INFO) and can be forced with UMEMCG_TEST_SEED.
#include <catch2/catch.hpp>

#include "test/mm/warn_scope.h"  // first: see the WARN note there

#include <atomic>
#include <cstdlib>
#include <deque>
#include <random>
#include <thread>
#include <vector>

#include "mm/page_counter.h"
#include "test/mm/page_counter_fixtures.h"

namespace umemcg {
namespace {

using test::children_low_of;
using test::children_min_of;
using test::low_usage_of;
using test::min_usage_of;
using test::WarnScope;

unsigned seed_for_test() {
  if (const char *s = std::getenv("UMEMCG_TEST_SEED"))
    return static_cast<unsigned>(std::strtoul(s, nullptr, 0));
  return std::random_device{}();
}

TEST_CASE("try_charge/uncharge hammered by threads on a limited 3-level hierarchy",
          "[page_counter][race][threads]") {
  WarnScope ws;
  const unsigned seed = seed_for_test();
  INFO("seed " << seed);

  constexpr int kThreads = 4;
  constexpr int kIters = 60000;
  constexpr unsigned long kMax = 64;  // limit on the middle level
  constexpr unsigned long kBig = 8;   // largest single charge
  // Each thread has at most one speculative add in flight at the middle level.
  constexpr unsigned long kSpeculativeBound = kMax + kThreads * kBig;

  page_counter root, mid, leaf[2];
  page_counter_init(&root, nullptr, true);
  page_counter_init(&mid, &root, true);
  for (page_counter &l : leaf) {
    page_counter_init(&l, &mid, true);
    l.track_failcnt = true;
  }
  page_counter_set_min(&mid, 32);
  page_counter_set_min(&leaf[0], 16);
  page_counter_set_low(&leaf[1], 16);
  REQUIRE(page_counter_set_max(&mid, kMax) == 0);

  std::atomic<bool> stop{false};
  std::atomic<long> committed{0};  // <= the committed charge at every instant (see below)
  std::atomic<long> successes{0}, failures{0}, wrong_fail{0};
  std::atomic<long> over_speculative{0}, over_committed{0}, watermark_over{0};

  auto worker = [&](int id) {
    std::minstd_rand rng(seed + static_cast<unsigned>(id));
    page_counter *l = &leaf[id % 2];
    std::deque<unsigned long> held;
    for (int i = 0; i < kIters; i++) {
      unsigned long n = rng() % 8 == 0 ? kBig : 1;
      page_counter *fail = nullptr;
      bool ok = page_counter_try_charge(l, n, &fail);
      if (ok) {
        committed.fetch_add(static_cast<long>(n));  // after the charge: lags behind it
        held.push_back(n);
        successes.fetch_add(1, std::memory_order_relaxed);
      } else {
        failures.fetch_add(1, std::memory_order_relaxed);
        if (fail != &mid) wrong_fail.fetch_add(1);
      }
      if (!held.empty() && (!ok || rng() % 2 == 0)) {
        unsigned long m = held.front();
        held.pop_front();
        committed.fetch_sub(static_cast<long>(m));  // before the uncharge: leads it
        page_counter_uncharge(l, m);
      }
    }
    for (unsigned long m : held) {
      committed.fetch_sub(static_cast<long>(m));
      page_counter_uncharge(l, m);
    }
  };
  auto monitor = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (page_counter_read(&mid) > kSpeculativeBound) over_speculative.fetch_add(1);
      if (committed.load() > static_cast<long>(kMax)) over_committed.fetch_add(1);
      // Watermarks are only raised by levels that accepted the charge, i.e. with new <= max.
      if (READ_ONCE(mid.watermark) > kMax) watermark_over.fetch_add(1);
    }
  };

  std::thread mon(monitor);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; i++) threads.emplace_back(worker, i);
  for (std::thread &t : threads) t.join();
  stop.store(true);
  mon.join();

  INFO("successes " << successes.load() << ", failures " << failures.load());
  CHECK(successes.load() > 0);
  CHECK(failures.load() > 0);  // the limit was actually in play
  CHECK(wrong_fail.load() == 0);
  CHECK(over_speculative.load() == 0);
  CHECK(over_committed.load() == 0);
  CHECK(watermark_over.load() == 0);
  CHECK(mid.watermark <= kMax);
  CHECK(mid.watermark > kMax - kBig);

  CHECK(page_counter_read(&leaf[0]) == 0);
  CHECK(page_counter_read(&leaf[1]) == 0);
  CHECK(page_counter_read(&mid) == 0);
  CHECK(page_counter_read(&root) == 0);
  CHECK(committed.load() == 0);

  // failcnt is a racy statistic: it may lose increments, never gain them.
  CHECK(mid.failcnt > 0);
  CHECK(mid.failcnt <= static_cast<unsigned long>(failures.load()));
  CHECK(leaf[0].failcnt == 0);

  // Racing propagations can leave a min_usage stale against its usage (as in the kernel), but
  // each exchange adds exactly its own delta, so the parents' sums stay exact.
  CHECK(children_min_of(mid) == min_usage_of(leaf[0]) + min_usage_of(leaf[1]));
  CHECK(children_low_of(mid) == low_usage_of(leaf[0]) + low_usage_of(leaf[1]));
  CHECK(children_min_of(root) == min_usage_of(mid));
  CHECK(min_usage_of(leaf[0]) <= 16);
  CHECK(low_usage_of(leaf[1]) <= 16);
  ws.expect(0);
}

// Counts set_max passes through the xchg (the hook runs once per pass).
std::atomic<long> g_set_max_passes{0};
void count_pass(page_counter *) { g_set_max_passes.fetch_add(1, std::memory_order_relaxed); }

// Chargers charge one page at a time on the leaf and never uncharge, so the root's usage only
// grows and never runs ahead of what the limited middle level accepted (the root is charged
// after the middle level passed its check, and a failure there never reaches the root). Hence,
// once set_max(mid, nr) has returned 0, the root must stay <= nr until the limit changes again:
// a charge that passed the old limit unseen by the setter would break that.
TEST_CASE("set_max racing with try_charge never strands usage above the new limit",
          "[page_counter][race][threads]") {
  WarnScope ws;
  const unsigned seed = seed_for_test();
  INFO("seed " << seed);
  std::minstd_rand rng(seed);

  constexpr int kChargers = 2;
  constexpr int kRounds = 3000;
  long set_ok = 0, set_busy = 0, violations = 0, bad_busy = 0;
  g_set_max_passes.store(0);
  emu::set_page_counter_set_max_hook(&count_pass);

  test::Chain3 t;
  std::atomic<bool> stop{false};
  std::atomic<long> attempts{0};
  auto charger = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      page_counter *fail = nullptr;
      page_counter_try_charge(&t.leaf, 1, &fail);
      attempts.fetch_add(1, std::memory_order_relaxed);
    }
  };
  auto wait_attempts = [&](long n) {
    const long until = attempts.load() + n;
    while (attempts.load() < until) std::this_thread::yield();
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kChargers; i++) threads.emplace_back(charger);

  for (int round = 0; round < kRounds; round++) {
    // Open the limit and let usage grow a little.
    REQUIRE(page_counter_set_max(&t.mid, PAGE_COUNTER_MAX) == 0);
    const unsigned long grow_to = page_counter_read(&t.mid) + 1 + rng() % 32;
    while (page_counter_read(&t.mid) < grow_to) std::this_thread::yield();

    // Close it just above the current usage, while the chargers are still charging.
    const unsigned long nr = page_counter_read(&t.mid) + rng() % 3;
    const int ret = page_counter_set_max(&t.mid, nr);
    wait_attempts(64);  // let any charge that slipped through reach the root

    if (ret == 0) {
      set_ok++;
      if (page_counter_read(&t.root) > nr || t.mid.max != nr) violations++;
    } else {
      set_busy++;
      if (ret != -EBUSY || t.mid.max != PAGE_COUNTER_MAX) bad_busy++;
    }
  }
  stop.store(true);
  for (std::thread &th : threads) th.join();
  emu::set_page_counter_set_max_hook(nullptr);

  INFO("set_max ok " << set_ok << ", -EBUSY " << set_busy << ", passes through the xchg "
                     << g_set_max_passes.load() - kRounds);  // minus the opening calls
  CHECK(violations == 0);
  CHECK(bad_busy == 0);
  CHECK(set_ok > 0);
  // Quiescent: every level holds exactly the pages that passed all limits.
  CHECK(page_counter_read(&t.leaf) == page_counter_read(&t.root));
  CHECK(page_counter_read(&t.mid) == page_counter_read(&t.root));
  ws.expect(0);
}

}  // namespace
}  // namespace umemcg
