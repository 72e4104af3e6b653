// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_workload.h: the words of a workload (`run`/`spawn CGROUP WORKLOAD...`) checked
// into a WorkloadSpec (../shared/spec/cgroup-shell.md, Workloads):
//   anon SIZE [--hold]
//   pagecache SIZE [--file NAME] [--hold]
//   mlock SIZE
//   sleep SECONDS
// and for each, --oom-score-adj N (-1000..1000). SIZE is memparse syntax and above 0; options
// may come before or after the operand.
#pragma once

#include <string>
#include <vector>

#include "tools/sh/sh_os.h"

namespace umemcg::sh {

/**
 * parse_workload - check a workload's words
 * @words: the workload's name and its arguments
 * @spec: (output) the workload
 * @why: (output) on failure, what is wrong, naming the word ("anon: bad size 12Q")
 */
bool parse_workload(const std::vector<std::string> &words, WorkloadSpec *spec, std::string *why);

// The inotify mask as names joined by '|' ("IN_MODIFY", "IN_IGNORED"); unknown bits in hex.
std::string inotify_mask_names(uint32_t mask);

}  // namespace umemcg::sh
