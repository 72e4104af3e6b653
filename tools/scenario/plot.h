// SPDX-License-Identifier: GPL-2.0-only
// tools/scenario/plot.h: the SVG of `umemcg scenario run --plot FILE`.
//
// For each scenario, one panel per plotted metric (Scenario::plot_metrics, or all): a bar per
// variant at the median over the seeds, a whisker from min to max, and with more than one seed
// each seed's value as a dot. Written by hand as plain SVG 1.1 (no dependency).
//
// Mirrors: nothing of the kernel.
#pragma once

#include <string>
#include <vector>

#include "tools/scenario/report.h"

namespace umemcg::scenario {

std::string render_svg(const std::vector<ScenarioResult> &results);

}  // namespace umemcg::scenario
