// SPDX-License-Identifier: GPL-2.0-only
// tools/scenario/scenario.h: the seed experiments as scenarios of `umemcg scenario`.
//
// A scenario is one seed document's experiment on an emulated machine (simulated mode: a seeded
// scheduler and the virtual clock), in one or more variants (baseline, policy, ...). Its run()
// measures one seed and returns plain numbers; the driver (scenario_main.cc) runs it for one or
// more seeds (several processes with --jobs), summarises each number over the seeds (median and
// spread) and hands the summary to the scenario's report(), which builds the tables printed
// beside the seed document's own numbers. The same seed gives the same numbers, byte for byte.
//
// Mirrors: the seeds' reproducers (seed 000's kernfs-notify-memcg repro, seed 001's
//          memcg_async_reclaim selftest, seed 002's memory.stat vs cgroup iterator comparison,
//          seed 003's anon fault + MADV_DONTNEED benchmark); see ../shared/spec/mission.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "shim/machine.h"

namespace umemcg::scenario {

class TraceWriter;  // tools/scenario/trace.h: Chrome trace-event JSON (Perfetto-loadable)

struct RunOptions {
  // The simulated scheduler's seed (emu::MachineConfig::seed).
  std::uint64_t seed = 1;
  // A shorter run with the same shape and directions, for tests.
  bool quick = false;
  // --trace: where the run records tasks, lock holds and waits, throttling sleeps, reclaim
  // passes and policy decisions; nullptr when no trace was asked for.
  TraceWriter *trace = nullptr;
  // Prints a progress line to stderr (the driver sets it on runs longer than a second).
  std::function<void(const std::string &)> progress;
};

// One seed's measurements: variant -> metric -> value. Metric names are identifiers
// ("max_kernfs_rwsem_hold_ns"); units are in the name's suffix (_ns, _pages, _bytes, _ops).
using Metrics = std::map<std::string, std::map<std::string, double>>;

// One metric over the seeds that were run.
struct Stat {
  double median = 0, min = 0, max = 0;
  int n = 0;  // seeds
  // Each seed's value, in seed order (for plots of the distribution).
  std::vector<double> values;
};
using Summary = std::map<std::string, std::map<std::string, Stat>>;

// A table as printed (Markdown on stdout, an array in the JSON output). Cells are text: the
// scenario formats its numbers with their units.
struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Lines printed under the table: how each comparison with the seed went, caveats.
  std::vector<std::string> notes;
};

// A check of the result against the seed's direction (targets M1-M4 of ../shared/spec/targets.md):
// printed under the tables, in the JSON, and failing `umemcg scenario run` when not met.
struct Verdict {
  std::string what;
  bool met = false;
  // Judged on host CPU time (the *_host_ns metrics): printed and in the JSON, but a miss does
  // not fail the run, since the same seed does not give the same host times (a loaded host
  // moves them).
  bool host_timed = false;
};

struct Report {
  std::vector<Table> tables;
  std::vector<Verdict> verdicts;
};

struct Scenario {
  std::string name;     // "kernfs-notify"
  std::string seed;     // "000"
  std::string summary;  // one line for `umemcg scenario list`
  // Seeds run when the user gives no --seeds (seed 001's benchmark is 10 runs).
  int default_seeds = 1;
  std::function<Metrics(const RunOptions &)> run;
  std::function<Report(const Summary &)> report;
  // The metrics --plot draws (one panel each, a bar per variant that has it); empty: every
  // metric of the summary.
  std::vector<std::string> plot_metrics;
};

// Runs @body as a task of @m (emu::Machine::exec on vCPU @cpu, task name @name) and returns the
// run's result. What @body throws is caught in its task and thrown again here, on the caller's
// stack, as std::runtime_error(@prefix + what()).
inline emu::RunResult exec_rethrow(emu::Machine &m, const std::function<void()> &body, int cpu,
                                   const std::string &name, const std::string &prefix = "") {
  std::string error;
  emu::RunResult rr = m.exec(
      [&] {
        try {
          body();
        } catch (const std::exception &e) {
          error = e.what();
        }
      },
      cpu, name);
  if (!error.empty()) throw std::runtime_error(prefix + error);
  return rr;
}

// Every scenario, in the order `umemcg scenario run all` runs them.
const std::vector<Scenario> &scenarios();

// The scenarios, one file each.
Scenario kernfs_notify_scenario();  // kernfs_notify.cc (seed 000)
Scenario async_reclaim_scenario();  // async_reclaim.cc (seed 001)
Scenario stat_fetch_scenario();     // stat_fetch.cc (seed 002)
Scenario stock_designs_scenario();  // stock_designs.cc (seed 003)

}  // namespace umemcg::scenario
