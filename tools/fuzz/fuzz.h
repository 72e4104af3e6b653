// SPDX-License-Identifier: GPL-2.0-only
// tools/fuzz/fuzz.h: `umemcg fuzz OBJ.bpf.o ...`: policy fuzzing. A campaign generates cases
// (fuzz_case.h: cgroup shell scripts with a scheduler seed), runs each in a child process on a
// fresh simulated machine and judges it (fuzz_run.h); the first failure is minimized and
// written as a script that `umemcg sh --seed N` replays.
#pragma once

// shim/thread_annotations.h before abseil (see bpfvm/map.h).
#include "shim/thread_annotations.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bpfvm/object.h"
#include "tools/fuzz/fuzz_case.h"

namespace umemcg::fuzz {

/**
 * fuzz_open_target - open t->object as the shell's `bpf load` will
 * Adds the object's struct_ops maps and fentry/fexit programs to @t; returns the parsed object,
 * or the loader's error.
 */
absl::StatusOr<emu::BpfObject> fuzz_open_target(FuzzTarget *t);

/**
 * fuzz_find_assert_var - find the --assert variable @var in @obj's .bss or .data
 * Sets t->assert_var and t->assert_section, and *@off and *@size (the variable in its section,
 * bytes); false with *@why set when there is no such variable of 1 to 8 bytes.
 */
bool fuzz_find_assert_var(const emu::BpfObject &obj, const std::string &var, FuzzTarget *t,
                          int *off, int *size, std::string *why);

// The command: the words after `umemcg fuzz`. Exit status 0 (nothing found), 1 (a finding),
// 2 (bad input: options, an object that does not load, an unknown --assert variable).
int fuzz_main(const std::vector<std::string> &args);
const char *fuzz_usage();

}  // namespace umemcg::fuzz
