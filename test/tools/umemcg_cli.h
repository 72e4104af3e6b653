// SPDX-License-Identifier: GPL-2.0-only
// test/tools/umemcg_cli.h: the built umemcg command run from a test (UMEMCG_PATH), the compiled
// test/progs objects given to it (UMEMCG_BPF_PROGS_DIR), and a look into its output.
#pragma once

#include <string>

#include "test/tools/run_command.h"

#ifndef UMEMCG_PATH
#error "UMEMCG_PATH must name the built umemcg"
#endif
#ifndef UMEMCG_BPF_PROGS_DIR
#error "UMEMCG_BPF_PROGS_DIR must name the compiled test programs"
#endif

namespace umemcg::test {

// `umemcg ARGS` through the shell, standard error joined to standard output. args reach the
// shell as written: single-quote what it must not split.
inline CommandResult run_umemcg(const std::string &args) {
  return run_command(std::string(UMEMCG_PATH) + " " + args);
}

// The path of the compiled test/progs object `name` ("memcg_policy.bpf.o").
inline std::string prog(const std::string &name) {
  return std::string(UMEMCG_BPF_PROGS_DIR) + "/" + name;
}

// Whether the command's output holds s.
inline bool has(const CommandResult &r, const std::string &s) {
  return r.out.find(s) != std::string::npos;
}

}  // namespace umemcg::test
