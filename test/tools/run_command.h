// SPDX-License-Identifier: GPL-2.0-only
// test/tools/run_command.h: running a command line through the shell from a test, with its
// standard output and standard error captured together (the tests of the umemcg command and of
// the project's python tools).
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace umemcg::test {

struct CommandResult {
  int status;       // the exit status, or -1 when the command did not exit (a signal)
  std::string out;  // standard output and standard error, interleaved as written
};

// Runs @cmd with /bin/sh (its standard error joined to its standard output) and waits for it.
inline CommandResult run_command(const std::string &cmd) {
  FILE *f = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(f != nullptr);
  std::string out;
  char buf[512];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  const int st = pclose(f);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

}  // namespace umemcg::test
