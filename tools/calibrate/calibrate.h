// SPDX-License-Identifier: GPL-2.0-only
// tools/calibrate/calibrate.h: `umemcg calibrate`: the host kernel's cost of each step the
// memory model charges in simulated mode, printed as a cost table (mm/cost_model.h) that
// `umemcg sh --costs FILE` reads back: one `NAME NS` line per cost with a comment saying how it
// was measured, or, for a cost the host cannot show, the built-in figure with the reason.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace umemcg::calibrate {

// The command: the words after `umemcg calibrate`. Exit status 0 (the table printed, whatever
// could not be measured), 2 (bad options).
int calibrate_main(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);
const char *calibrate_usage();

}  // namespace umemcg::calibrate
