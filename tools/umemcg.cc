// SPDX-License-Identifier: GPL-2.0-only
// tools/umemcg.cc: the umemcg command line: a table of command groups, each with its verbs.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "mm/bpf_memcontrol.h"
#ifndef UMEMCG_VERSION
#error "UMEMCG_VERSION must name the project version (tools/meson.build)"
#endif
#include "tools/calibrate/calibrate.h"
#include "tools/cmd_bpf.h"
#include "tools/fuzz/fuzz.h"
#include "tools/scenario/scenario.h"
#include "tools/scenario/scenario_main.h"
#include "tools/sh/machine_os.h"
#include "tools/sh/sh_options.h"

namespace umemcg::cli {

bool is_help(const char *arg) {
  return !std::strcmp(arg, "--help") || !std::strcmp(arg, "-h") || !std::strcmp(arg, "help");
}

int dispatch(std::span<const Command> table, const std::string &prefix, std::span<char *const> args) {
  if (args.empty() || is_help(args[0])) {
    print_usage(table, prefix, args.empty() ? stderr : stdout);
    return args.empty() ? kExitUsage : kExitOk;
  }
  for (const Command &c : table) {
    if (std::strcmp(c.name, args[0])) continue;
    // A verb's own help (a group, "<verb> ...", prints its table when called).
    const bool group = c.args[0] == '<';
    if (!group && args.size() > 1 && (!std::strcmp(args[1], "--help") || !std::strcmp(args[1], "-h"))) {
      std::printf("usage: %s %s %s\n\n%s\n", prefix.c_str(), c.name, c.args, c.summary);
      if (c.help) std::printf("\n%s", c.help);
      return kExitOk;
    }
    return c.fn(args.subspan(1));
  }
  std::fprintf(stderr, "%s: unknown command '%s'\n", prefix.c_str(), args[0]);
  print_usage(table, prefix, stderr);
  return kExitUsage;
}

void print_usage(std::span<const Command> table, const std::string &prefix, FILE *out) {
  std::fprintf(out, "usage: %s <command> [args]%s\n\ncommands:\n", prefix.c_str(),
               prefix == "umemcg" ? " | --version" : "");
  for (const Command &c : table) {
    std::string head = std::string(c.name) + " " + c.args;
    std::fprintf(out, "  %-36s %s\n", head.c_str(), c.summary);
  }
}

namespace {

int cmd_bpf(std::span<char *const> args) { return dispatch(bpf_commands(), "umemcg bpf", args); }

// umemcg sh [OPTIONS] [SCRIPT]: the cgroup shell on an emulated machine (docs/cgroup-shell.md).
int cmd_sh(std::span<char *const> args) {
  std::vector<std::string> words(args.begin(), args.end());
  sh::ShOptions opts;
  std::string error;
  if (!sh::parse_sh_options(words, &opts, &error)) {
    std::fprintf(stderr, "%s\n%s", error.c_str(), sh::sh_usage());  // error names the command
    return kExitUsage;
  }
  if (opts.help) {
    std::fputs(sh::sh_usage(), stdout);
    return kExitOk;
  }
  return sh::machine_sh_main(opts, std::cin, std::cout, std::cerr);
}

// umemcg fuzz OBJ.bpf.o [OPTIONS]: policy fuzzing (tools/fuzz/fuzz.h).
int cmd_fuzz(std::span<char *const> args) {
  return fuzz::fuzz_main(std::vector<std::string>(args.begin(), args.end()));
}

// umemcg scenario list|run ...: the seed experiments with their tables (docs/scenarios.md).
int cmd_scenario(std::span<char *const> args) {
  return scenario::scenario_command(scenario::scenarios(),
                                    std::vector<std::string>(args.begin(), args.end()), std::cout,
                                    std::cerr);
}

// umemcg calibrate [OPTIONS]: the host kernel's figures for the cost model (docs/memory-model.md).
int cmd_calibrate(std::span<char *const> args) {
  return calibrate::calibrate_main(std::vector<std::string>(args.begin(), args.end()), std::cout,
                                   std::cerr);
}

const Command kTopLevel[] = {
    {"bpf", "<verb> ...", "BPF objects: verify, disasm, run, dump", cmd_bpf, nullptr},
    {"sh", "[OPTIONS] [SCRIPT]", "the cgroup shell on an emulated machine", cmd_sh,
     sh::sh_usage()},
    {"scenario", "<verb> ...", "the seed experiments: list, run NAME|all", cmd_scenario,
     nullptr},
    {"fuzz", "OBJ.bpf.o [OPTIONS]", "fuzz a policy object: generated cases, minimized findings",
     cmd_fuzz, fuzz::fuzz_usage()},
    {"calibrate", "[OPTIONS]", "the host kernel's figures for the simulated-mode cost model",
     cmd_calibrate, calibrate::calibrate_usage()},
};

}  // namespace
}  // namespace umemcg::cli

int main(int argc, char **argv) {
  using namespace umemcg::cli;
  // Boot: the subsystems register their BPF program types, structs and kfuncs.
  if (argc == 2 && !std::strcmp(argv[1], "--version")) {
    std::printf("umemcg %s\n", UMEMCG_VERSION);
    return kExitOk;
  }
  umemcg::bpf_memcontrol_init();
  return dispatch(kTopLevel, "umemcg", std::span<char *const>(argv + 1, argc > 0 ? argc - 1 : 0));
}
