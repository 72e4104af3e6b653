// SPDX-License-Identifier: GPL-2.0-only
// test/tools/scenario_kernfs_notify_test.cc: scenario `kernfs-notify` (seed 000) in its short
// form: every variant runs, the table has the seed's shape, the policy and the fix move the
// numbers the seed's way (M1), and the same seed gives the same numbers.
#include <catch2/catch.hpp>

#include <cstdio>

#include "tools/scenario/report.h"
#include "tools/scenario/scenario.h"

using namespace umemcg::scenario;

namespace {

// Host-time metrics differ from run to run; everything else must not.
Metrics deterministic(Metrics m) {
  for (auto &[variant, metrics] : m)
    for (auto it = metrics.begin(); it != metrics.end();)
      it = it->first.ends_with("_host_ns") ? metrics.erase(it) : std::next(it);
  return m;
}

}  // namespace

TEST_CASE("scenario kernfs-notify: the seed's table and directions, deterministically",
          "[scenario][kernfs-notify]") {
  const Scenario sc = kernfs_notify_scenario();
  RunOptions o;
  o.seed = 7;
  o.quick = true;
  const Metrics m = sc.run(o);
  REQUIRE(m.size() == 4);
  const Report r = sc.report(summarize({m}));
  REQUIRE(r.tables.size() == 2);
  CHECK(r.tables[0].header.size() == 7);
  CHECK(r.tables[0].rows.size() == 7);
  for (const Verdict &v : r.verdicts) {
    INFO(v.what);
    CHECK(v.met);
  }
  // The baseline's worker stalls while holding kernfs_rwsem; the fix's does not hold it.
  CHECK(m.at("baseline").at("worker_kernfs_rwsem_max_hold_ns") >= 1e9);
  CHECK(m.at("upstream-fix").at("worker_kernfs_rwsem_max_hold_ns") == 0);
  CHECK(m.at("upstream-fix").at("worker_kernfs_supers_rwsem_max_hold_ns") >= 1e9);
  CHECK(m.at("policy").at("policy_deferrals") > 0);
  CHECK(m.at("policy").at("policy_depth_errors") == 0);
  CHECK(m.at("policy+reclaimer").at("reclaimer_notices") > 0);
  CHECK(deterministic(sc.run(o)) == deterministic(m));
}
