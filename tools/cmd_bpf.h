// SPDX-License-Identifier: GPL-2.0-only
// tools/cmd_bpf.h: the umemcg command table (shared by every verb group) and the `bpf` verbs.
// Each command is a name, a one-line summary and a function taking the arguments after its name;
// it returns the process exit status. New verb groups (scenarios, the cgroup shell, bench) add a
// table of their own and one line in umemcg.cc.
#pragma once

#include <cstdio>
#include <span>
#include <string>

namespace umemcg::cli {

struct Command {
  const char *name;
  const char *args;     // "FILE.o PROG [--ctx HEX]"
  const char *summary;
  int (*fn)(std::span<char *const> args);
  const char *help;     // more lines for `<verb> --help` (options, exit statuses), or nullptr
};

// Exit statuses shared by the commands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // the command ran and its subject failed (rejected, faulted)
inline constexpr int kExitUsage = 2;   // bad arguments, or the input cannot be loaded

// Runs the command named args[0] from table (prefix: "umemcg bpf" for messages).
int dispatch(std::span<const Command> table, const std::string &prefix, std::span<char *const> args);
void print_usage(std::span<const Command> table, const std::string &prefix, FILE *out);

// The `bpf` verbs (tools/cmd_bpf*.cc).
std::span<const Command> bpf_commands();

}  // namespace umemcg::cli
