// SPDX-License-Identifier: GPL-2.0-only
// tools/scenario/report.h: what `umemcg scenario run` makes of the seeds' measurements: the
// summary over seeds, the Markdown text on stdout and the JSON document of --json.
//
// The JSON document (schema "umemcg-scenario/1", docs/scenarios.md):
//   {"schema": "umemcg-scenario/1", "all_met": bool,
//    "scenarios": [{"scenario": NAME, "seed_doc": "003", "quick": bool, "seeds": [N, ...],
//                   "metrics": {VARIANT: {METRIC: {"median", "min", "max", "n", "values"}}},
//                   "tables": [{"title", "header", "rows", "notes"}],
//                   "verdicts": [{"what", "met"}]}]}
// Metrics whose name ends in "_host_ns" are host CPU or wall times: the only numbers that
// differ between two runs with the same seed.
//
// Mirrors: nothing of the kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/scenario/scenario.h"

namespace umemcg::scenario {

// One scenario as run: its seeds, its summary and the report built from it.
struct ScenarioResult {
  const Scenario *scenario = nullptr;
  std::vector<std::uint64_t> seeds;
  bool quick = false;
  Summary summary;
  Report report;
};

// The median of @v (the mean of the two middle values for an even count); @v not empty.
double median_of(std::vector<double> v);
// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID) in nanoseconds: what the *_host_ns
// metrics measure.
std::uint64_t thread_cpu_ns();

// Median (the mean of the two middle values for an even count), min, max over the seeds, per
// variant and metric. A metric missing from some seeds is summarised over those that have it.
Summary summarize(const std::vector<Metrics> &per_seed);
// Whether a metric is a host time (name ending in "_host_ns"), excluded from determinism.
bool is_host_metric(const std::string &metric);

// Metrics to and from JSON (the pipe from a seed's child process). from_json returns false on
// a document of another shape.
nlohmann::json metrics_to_json(const Metrics &m);
bool metrics_from_json(const nlohmann::json &j, Metrics *out);

// The Markdown text of one scenario: heading, seeds, each table with its notes, the verdicts.
std::string render_markdown(const ScenarioResult &r);
// The JSON document of all scenarios run.
nlohmann::json render_json(const std::vector<ScenarioResult> &results);

// Number formatting for table cells: fixed with @digits decimals; a signed percentage.
std::string fmt(double v, int digits = 1);
std::string fmt_pct(double frac, int digits = 1);
// "median [min..max]" of a Stat, each with @digits decimals (just the median when n == 1).
std::string fmt_stat(const Stat &s, int digits = 1);

}  // namespace umemcg::scenario
