// SPDX-License-Identifier: GPL-2.0-only
// test/tools/scenario_async_reclaim_test.cc: the async-reclaim scenario (seed 001) in its quick
// form with a fixed seed: the pressured and the harvested workloads both finish sooner with the
// BPF reclaimer, the dying variant reports TARGET_GONE and still finishes, the same seed gives
// the same numbers, and the report has its tables and verdicts.
#include <catch2/catch.hpp>

#include "tools/scenario/report.h"
#include "tools/scenario/scenario.h"

using namespace umemcg::scenario;

TEST_CASE("scenario async-reclaim: quick run, directions and determinism", "[scenario]") {
  const Scenario sc = async_reclaim_scenario();
  CHECK(sc.name == "async-reclaim");
  CHECK(sc.seed == "001");
  CHECK(sc.default_seeds == 10);
  RunOptions o;
  o.seed = 7;
  o.quick = true;
  const Metrics a = sc.run(o);
  for (const char *v : {"baseline", "bpf", "dying"}) {
    INFO(v);
    REQUIRE(a.count(v));
    CHECK_FALSE(a.at(v).count("error"));
    CHECK(a.at(v).at("high_s") > 0);
  }
  const auto &base = a.at("baseline"), &bpf = a.at("bpf"), &dying = a.at("dying");
  // Both directions of the seed: the pressured workload much sooner, the harvested one sooner.
  CHECK(bpf.at("high_s") * 3 <= base.at("high_s"));
  CHECK(bpf.at("low_s") < base.at("low_s"));
  CHECK(bpf.at("high_refaults") < base.at("high_refaults"));
  CHECK(bpf.at("wq_runs") >= 1);
  CHECK(bpf.at("reclaimed_bytes") > 0);
  CHECK(bpf.at("events_reclaimed") == bpf.at("wq_runs"));
  CHECK(bpf.at("timer_failures") == 0);
  // The low cgroup removed while the reclaimer runs.
  CHECK(dying.at("rmdir_err") == 0);
  CHECK(dying.at("events_target_gone") >= 1);
  // The same seed, the same numbers.
  CHECK(sc.run(o) == a);

  const Report r = sc.report(summarize({a}));
  REQUIRE(r.tables.size() == 2);
  CHECK(r.tables[0].header.size() == 5);
  CHECK(r.tables[0].rows.size() == 2);
  CHECK(r.tables[1].rows.size() == 3);
  REQUIRE(r.verdicts.size() == 3);
  for (const Verdict &v : r.verdicts) {
    INFO(v.what);
    CHECK(v.met);
  }
}
