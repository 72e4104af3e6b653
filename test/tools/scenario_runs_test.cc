// SPDX-License-Identifier: GPL-2.0-only
// test/tools/scenario_runs_test.cc: the scenarios of seeds 002 (stat-fetch) and 003
// (stock-designs) run with --quick and a fixed seed: their tables' shape, the directions the
// seeds state (identical numbers from text and kfuncs; each stock design's overcharge within
// its bound), and determinism: two runs with the same seed give the same metrics but the host
// times (*_host_ns).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "tools/scenario/report.h"
#include "tools/scenario/scenario.h"
#include "test/tools/run_command.h"

#ifndef UMEMCG_PATH
#error "UMEMCG_PATH must name the built umemcg"
#endif

using namespace umemcg::scenario;

namespace {

Metrics run_quick(const Scenario &s, std::uint64_t seed) {
  RunOptions o;
  o.seed = seed;
  o.quick = true;
  return s.run(o);
}

// The metrics without the host times.
Metrics deterministic_part(const Metrics &m) {
  Metrics out;
  for (const auto &[v, ms] : m)
    for (const auto &[name, value] : ms)
      if (!is_host_metric(name)) out[v][name] = value;
  return out;
}

double get(const Metrics &m, const std::string &v, const std::string &name) {
  auto a = m.find(v);
  REQUIRE(a != m.end());
  auto b = a->second.find(name);
  INFO(v << "/" << name);
  REQUIRE(b != a->second.end());
  return b->second;
}

}  // namespace

TEST_CASE("scenario registry: the seeds' order, each once", "[tools][scenario]") {
  const auto &all = scenarios();
  std::vector<std::string> names;
  for (const Scenario &s : all) names.push_back(s.name);
  // The seed documents' order: 000, 001, 002, 003 (each present at most once).
  const std::vector<std::string> order = {"kernfs-notify", "async-reclaim", "stat-fetch",
                                          "stock-designs"};
  std::vector<std::string> expected;
  for (const std::string &n : order)
    if (std::count(names.begin(), names.end(), n)) expected.push_back(n);
  CHECK(names == expected);
  CHECK(std::count(names.begin(), names.end(), "stat-fetch") == 1);
  CHECK(std::count(names.begin(), names.end(), "stock-designs") == 1);
  CHECK(names == order);  // all four
  for (const Scenario &s : all) {
    CHECK(s.run);
    CHECK(s.report);
    CHECK(s.default_seeds >= 1);
  }
}

TEST_CASE("stat-fetch: identical numbers from memory.stat and the kfuncs; deterministic",
          "[tools][scenario][stat-fetch]") {
  const Scenario s = stat_fetch_scenario();
  const Metrics m = run_quick(s, 7);
  CHECK(get(m, "fleet", "cgroups") == 50);
  CHECK(get(m, "fleet", "cgroups_visited") == 50);
  CHECK(get(m, "fleet", "mismatches") == 0);
  // Every memory.stat line the kfuncs give and memory.events are compared, over 50 cgroups,
  // and the fleet's charges make several per cgroup non-zero (anon, file, their LRU lists,
  // pgfault, ...): the comparison is not of zeroes.
  CHECK(get(m, "fleet", "items_compared") >= 50 * 60);
  CHECK(get(m, "fleet", "items_nonzero") >= 50 * 5);
  CHECK(get(m, "text", "fetch_host_ns") > 0);
  CHECK(get(m, "kfunc", "fetch_host_ns") > 0);
  // The direction of the seed: the kfunc path is the cheaper one.
  CHECK(get(m, "kfunc", "fetch_host_ns") < get(m, "text", "fetch_host_ns"));

  const Report r = s.report(summarize({m}));
  REQUIRE(r.tables.size() == 2);
  CHECK(r.tables[0].header.size() == 4);
  CHECK(r.tables[0].rows.size() == 3);
  CHECK(r.tables[0].rows[0][3] == "14.184 s");
  CHECK(r.tables[0].rows[1][3] == "2.916 s");
  CHECK(r.tables[1].rows.size() == 5);
  REQUIRE(r.verdicts.size() == 2);
  CHECK(r.verdicts[0].met);  // identical numbers

  CHECK(deterministic_part(run_quick(s, 7)) == deterministic_part(m));
}

TEST_CASE("stock-designs: the seed's table shape, overcharge within bounds; deterministic",
          "[tools][scenario][stock-designs]") {
  const Scenario s = stock_designs_scenario();
  const Metrics m = run_quick(s, 5);
  for (const char *v : {"v1-base", "v1-patched", "v2-base", "v2-patched"}) {
    INFO(v);
    const double bound = get(m, v, "overcharge_bound_pages");
    CHECK(bound == 4 * 64);
    CHECK(get(m, v, "max_overcharge_pages") > 0);
    CHECK(get(m, v, "max_overcharge_pages") <= bound);
    CHECK(get(m, v, "faults_sampled") == 4 * 60 * 3 + 4 * 3);  // quick: 60 pages, 3 rounds
    CHECK(get(m, v, "stock_before_child_pages") > 0);
    CHECK(get(m, v, "per_page_host_ns") > 0);
  }
  // v1: one stock for both counters in the base design (no drift); separate stocks in the
  // patched one, with usage_in_bytes reporting the smaller and never above memsw.
  CHECK(get(m, "v1-base", "max_usage_drift_pages") == 0);
  CHECK(get(m, "v1-patched", "max_memsw_overcharge_pages") <= 4 * 64);
  CHECK(get(m, "v1-patched", "usage_not_min_samples") == 0);
  CHECK(get(m, "v1-patched", "usage_above_memsw_samples") == 0);
  CHECK(get(m, "host-kernel", "kernel_per_page_host_ns") > 0);
  // v1 with 8 cgroups per vCPU (more than a CPU's stock slots): the patched design's memory
  // and memsw stocks evict independently and the counters drift apart; usage_in_bytes reports
  // the smaller; the base design's one stock keeps them equal.
  CHECK(get(m, "v1-base-32cg", "max_usage_drift_pages") == 0);
  CHECK(get(m, "v1-patched-32cg", "max_usage_drift_pages") > 0);
  CHECK(get(m, "v1-patched-32cg", "max_usage_drift_pages") <= 4 * 64);
  CHECK(get(m, "v1-patched-32cg", "usage_not_min_samples") == 0);
  CHECK(get(m, "v1-patched-32cg", "usage_above_memsw_samples") == 0);
  for (const char *v : {"v1-base-32cg", "v1-patched-32cg"}) {
    CHECK(get(m, v, "max_overcharge_pages") > 0);
    CHECK(get(m, v, "max_overcharge_pages") <= 4 * 64);
  }
  // A cgroup that becomes a parent: the series drains its stock on v2 (leaf-only stock); the
  // 6.19 stock and v1 keep it.
  CHECK(get(m, "v2-patched", "stock_after_child_pages") == 0);
  for (const char *v : {"v1-base", "v1-patched", "v2-base"})
    CHECK(get(m, v, "stock_after_child_pages") == get(m, v, "stock_before_child_pages"));

  const Report r = s.report(summarize({m}));
  REQUIRE(r.tables.size() == 2);
  REQUIRE(r.tables[0].rows.size() == 2);
  CHECK(r.tables[0].rows[0][0] == "cgroup v1");
  CHECK(r.tables[0].rows[1][0] == "cgroup v2");
  CHECK(r.tables[0].rows[0][4] == "890.6");
  CHECK(r.tables[0].rows[0][6] == "+1.2%");
  CHECK(r.tables[0].rows[1][6] == "+1.0%");
  CHECK(r.tables[1].rows.size() == 6);
  // The overcharge and stock verdicts (all but the two delta ones, which are host times) are
  // met.
  REQUIRE(r.verdicts.size() == 2 + (4 + 2 + 1) + (2 + 2));
  for (size_t i = 2; i < r.verdicts.size(); i++) {
    INFO(r.verdicts[i].what);
    CHECK(r.verdicts[i].met);
  }

  CHECK(deterministic_part(run_quick(s, 5)) == deterministic_part(m));
}

namespace {

using Cli = umemcg::test::CommandResult;

Cli umemcg_cli(const std::string &args) { return umemcg::test::run_command(args); }

}  // namespace

TEST_CASE("umemcg scenario: the command line of the built binary", "[tools][scenario]") {
  const std::string umemcg = UMEMCG_PATH;
  Cli l = umemcg_cli(umemcg + " scenario list");
  CHECK(l.status == 0);
  CHECK(l.out.find("stat-fetch") != std::string::npos);
  CHECK(l.out.find("stock-designs") != std::string::npos);
  Cli u = umemcg_cli(umemcg + " scenario run nosuch");
  CHECK(u.status == 2);
  CHECK(u.out.find("unknown scenario 'nosuch'") != std::string::npos);
  CHECK(umemcg_cli(umemcg + " scenario").status == 2);
  // The iterator object cannot be found: the run fails with the path in the message, exit 1.
  Cli b = umemcg_cli("UMEMCG_BPF_PROGS_DIR=/nonexistent " + umemcg +
                     " scenario run stat-fetch --quick");
  CHECK(b.status == 1);
  INFO(b.out);
  CHECK(b.out.find("stat-fetch seed 1 failed") != std::string::npos);
  CHECK(b.out.find("/nonexistent/memcg_stat_iter.bpf.o") != std::string::npos);
}
