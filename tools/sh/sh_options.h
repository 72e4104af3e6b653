// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_options.h: the options of `umemcg sh` (../shared/spec/cgroup-shell.md,
// Invocation), parsed into ShOptions with the contract's defaults.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mm/cost_model.h"

namespace umemcg::sh {

struct ShOptions {
  int cpus = 4;
  uint64_t memory = 4ull << 30;  // bytes
  uint64_t swap = 0;             // bytes; 0: no swap device
  enum class Mode { kSim, kNative } mode = Mode::kSim;
  uint64_t seed = 1;
  int cgroup_version = 2;
  bool memory_localevents = false;   // --mount-opts memory_localevents
  bool memory_recursiveprot = false; // --mount-opts memory_recursiveprot
  enum class Stock { kMemcg, kPcstock } stock = Stock::kMemcg;
  // Emulation: warn when a high_policy defers more memory.high debt (pages; 0: never); see
  // memcg_boot_params::high_debt_limit.
  uint64_t high_debt_limit = 0;
  // Emulation: the simulated machine's hung-task check (ns of machine time; 0: off); see
  // shim/hung_task.h.
  uint64_t hung_task_timeout_ns = 0;
  // Emulation: the simulated-mode cost table (--costs FILE, mm/cost_model.h); the built-in one
  // by default. A file that does not parse is an option error naming its line.
  emu::CostModel costs;
  bool errexit = false;              // -e
  bool help = false;                 // --help or -h: print sh_usage() and exit 0
  std::string script;                // empty or "-": standard input
  std::vector<std::string> args;     // words after SCRIPT: $1, $2, ...
};

/**
 * parse_sh_options - parse the words after `umemcg sh`
 * @argv: the words
 * @opts: (output) the options, defaults where a word does not set one
 * @error: (output) on failure, one line saying which word is wrong and why
 *
 * Options take their value as the next word or after '=' (`--cpus 2`, `--cpus=2`); `--` ends
 * the options. Returns true, or false with *@error set (the caller exits with status 2).
 */
bool parse_sh_options(const std::vector<std::string> &argv, ShOptions *opts, std::string *error);

// The usage text (options and defaults).
const char *sh_usage();

// A SIZE in memparse syntax ("4096", "50M", "1G"): at least one digit, an optional K/M/G/T/P/E
// suffix and nothing after it, no overflow of 64 bits. Returns false on anything else.
bool parse_size(const std::string &s, uint64_t *bytes);

// A duration in seconds with an optional fraction ("2", "0.5", ".25"), at most 10^9 seconds:
// nanoseconds, or false.
bool parse_seconds(const std::string &s, uint64_t *ns);

// A decimal integer with an optional sign, within [lo, hi] (kstrtoint's strictness: no blanks,
// nothing after the digits).
bool parse_int(const std::string &s, long long lo, long long hi, long long *out);

}  // namespace umemcg::sh
