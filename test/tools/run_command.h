// SPDX-License-Identifier: GPL-2.0-only
// test/tools/run_command.h: running a command line through the shell from a test, with its
// standard output and standard error captured together, and finding a line of that output (the
// tests of the umemcg command and of the project's python tools).
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <sstream>
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
  // A command that died of a signal says which at the end of its output (shown by the
  // failing check's INFO).
  if (st != -1 && WIFSIGNALED(st))
    out += "\n[run_command: killed by signal " + std::to_string(WTERMSIG(st)) + "]\n";
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

// The first line of @out that starts with @prefix, or "".
inline std::string line_starting(const std::string &out, const std::string &prefix) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

}  // namespace umemcg::test
