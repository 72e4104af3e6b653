// SPDX-License-Identifier: GPL-2.0-only
// tools/umemcg.cc: the umemcg command line: a table of command groups, each with its verbs.
#include <cstdio>
#include <cstring>
#include <string>

#include "mm/bpf_memcontrol.h"
#include "tools/cmd_bpf.h"

namespace umemcg::cli {

int dispatch(std::span<const Command> table, const std::string &prefix, std::span<char *const> args) {
  if (args.empty() || !std::strcmp(args[0], "--help") || !std::strcmp(args[0], "help")) {
    print_usage(table, prefix, args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  for (const Command &c : table)
    if (!std::strcmp(c.name, args[0])) return c.fn(args.subspan(1));
  std::fprintf(stderr, "%s: unknown command '%s'\n", prefix.c_str(), args[0]);
  print_usage(table, prefix, stderr);
  return kExitUsage;
}

void print_usage(std::span<const Command> table, const std::string &prefix, FILE *out) {
  std::fprintf(out, "usage: %s <command> [args]\n\ncommands:\n", prefix.c_str());
  for (const Command &c : table) {
    std::string head = std::string(c.name) + " " + c.args;
    std::fprintf(out, "  %-36s %s\n", head.c_str(), c.summary);
  }
}

namespace {

int cmd_bpf(std::span<char *const> args) { return dispatch(bpf_commands(), "umemcg bpf", args); }

const Command kTopLevel[] = {
    {"bpf", "<verb> ...", "BPF objects: verify, disasm, run, dump", cmd_bpf},
};

}  // namespace
}  // namespace umemcg::cli

int main(int argc, char **argv) {
  using namespace umemcg::cli;
  // Boot: the subsystems register their BPF program types, structs and kfuncs.
  umemcg::bpf_memcontrol_init();
  return dispatch(kTopLevel, "umemcg", std::span<char *const>(argv + 1, argc > 0 ? argc - 1 : 0));
}
