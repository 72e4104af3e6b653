// SPDX-License-Identifier: GPL-2.0-only
// tools/fuzz/fuzz.h: `umemcg fuzz OBJ.bpf.o ...`: policy fuzzing. A campaign generates cases
// (fuzz_case.h: cgroup shell scripts with a scheduler seed), runs each in a child process on a
// fresh simulated machine and judges it (fuzz_run.h); the first failure is minimized and
// written as a script that `umemcg sh --seed N` replays.
#pragma once

#include <string>
#include <vector>

namespace umemcg::fuzz {

// The command: the words after `umemcg fuzz`. Exit status 0 (nothing found), 1 (a finding),
// 2 (bad input: options, an object that does not load, an unknown --assert variable).
int fuzz_main(const std::vector<std::string> &args);
const char *fuzz_usage();

}  // namespace umemcg::fuzz
