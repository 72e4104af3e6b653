// SPDX-License-Identifier: GPL-2.0-only
// test/tools/sh_robust_test.cc: inputs that must neither crash nor hang the cgroup shell:
// nesting beyond the limit, NUL bytes, words that double without bound, the step hook that
// bounds loops (the fuzz target's), and descriptors left open at exit.
#include <catch2/catch.hpp>

#include "test/tools/sh_test_util.h"

using namespace umemcg::sh;
using namespace umemcg::sh::test;

TEST_CASE("sh robust: nesting beyond 200 levels is a syntax error", "[tools][sh]") {
  FakeOs os;
  std::string deep;
  for (int i = 0; i < 300; i++) deep += "$(";
  deep += "echo x";
  for (int i = 0; i < 300; i++) deep += ")";
  ShResult r = run_script(os, "echo " + deep + "\n");
  CHECK(r.status == 2);
  CHECK(r.err == "umemcg sh: 1: Syntax error: nested too deeply\n");
  std::string ifs;
  for (int i = 0; i < 300; i++) ifs += "if true; then ";
  r = run_script(os, ifs + "\n");
  CHECK(r.status == 2);
  std::string parens(300, '(');
  r = run_script(os, "echo $((" + parens + "1" + std::string(300, ')') + "))\necho $?\n");
  CHECK(r.out == "1\n");
  CHECK(r.err == "umemcg sh: 1: arithmetic expression: expression nested too deeply: \"" + parens + "1" +
                     std::string(300, ')') + "\"\n");
  // 100 levels are fine.
  std::string ok;
  for (int i = 0; i < 60; i++) ok += "$(echo ";
  ok += "deep";
  for (int i = 0; i < 60; i++) ok += ")";
  CHECK(run_script(os, "echo " + ok + "\n").out == "deep\n");
}

TEST_CASE("sh robust: NUL bytes and garbage", "[tools][sh]") {
  FakeOs os;
  ShResult r = run_script(os, std::string("echo a\0b\n", 9));
  CHECK(r.status == 2);
  CHECK(os.log.empty());
  for (const char *g : {"))))", "${", "$((", "'", "\"", "`", "if", "then", "for", "do done", "{", "}",
                        "<", ">&", "2>", "exec 12>&-", "a=$(", "!", "&&", "$(()", "\\"}) {
    INFO(g);
    FakeOs o;
    ShResult x = run_script(o, g);
    CHECK((x.status == 2 || x.status == 127));  // a syntax error, or "\\" as a command name
    CHECK(o.open_fds() == 0);
  }
}

TEST_CASE("sh robust: a word cannot grow without bound", "[tools][sh]") {
  FakeOs os;
  ShResult r = run_script(os, "x=ab; i=0; while [ $i -lt 40 ]; do x=$x$x; i=$((i + 1)); done; echo $i\n");
  // The doubling stops at 1 MiB with E2BIG; each later attempt fails the same way.
  CHECK(r.out == "40\n");
  CHECK(r.err.find("umemcg sh: 1: sh: expansion: Argument list too long\n") == 0);
}

TEST_CASE("sh robust: the step hook stops endless loops", "[tools][sh]") {
  FakeOs os;
  std::ostringstream out, err;
  Shell sh(os, out, err, ShOptions{});
  int steps = 0;
  sh.set_step_hook([&] { return ++steps < 100; });
  CHECK(sh.run_script("while true; do x=$(while :; do :; done); done\necho never\n") == 2);
  CHECK(out.str().empty());
  CHECK(err.str().find("step budget exhausted") != std::string::npos);
}

TEST_CASE("sh robust: descriptors are closed when the shell goes", "[tools][sh]") {
  FakeOs os;
  os.add_file("/sys/fs/cgroup/f");
  {
    std::ostringstream out, err;
    Shell sh(os, out, err, ShOptions{});
    sh.run_script("exec 3<> f 4<> f 5>&3\nx=$(exec 6<> f; echo in)\n");
    CHECK(os.open_fds() == 2);  // 3 (and its copy 5) and 4; 6 went with the substitution
  }
  CHECK(os.open_fds() == 0);
}
