// SPDX-License-Identifier: GPL-2.0-only
// tools/scenario/scenario_main.h: the `umemcg scenario` command (docs/scenarios.md).
//
//   umemcg scenario list
//   umemcg scenario run NAME|all [--seed N] [--seeds K] [--jobs J] [--json FILE]
//                                [--trace FILE] [--plot FILE] [--quick]
//
// Seeds N, N+1, ..., N+K-1 (K: the scenario's default_seeds unless given). With --jobs J > 1
// each seed runs in a forked child process that sends its Metrics (and, for the first seed of
// a traced run, its trace) back as JSON over a pipe; results are kept in seed order, so the
// output does not depend on J. Exit status: 0, 1 when a verdict is not met or a seed's run
// failed (after printing everything), 2 on usage errors (unknown scenario, bad number, an
// output file that cannot be written).
//
// Mirrors: nothing of the kernel.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tools/scenario/scenario.h"

namespace umemcg::scenario {

// Runs the command on @registry (scenarios() for umemcg; tests pass their own). @args are the
// words after "scenario". Tables go to @out, errors to @err, progress lines to stderr.
int scenario_command(const std::vector<Scenario> &registry, const std::vector<std::string> &args,
                     std::ostream &out, std::ostream &err);

// The usage text.
const char *scenario_usage();

}  // namespace umemcg::scenario
