// SPDX-License-Identifier: GPL-2.0-only
// test/tools/sh_test_util.h: running cgroup-shell scripts on a FakeOs in the tests.
#pragma once

#include <sstream>
#include <string>

#include "test/tools/fake_os.h"
#include "tools/sh/sh_shell.h"

namespace umemcg::sh::test {

struct ShResult {
  int status;
  std::string out;
  std::string err;
};

// A whole script (parsed before it runs).
inline ShResult run_script(FakeOs &os, const std::string &text, ShOptions opts = {}) {
  std::ostringstream out, err;
  Shell sh(os, out, err, opts);
  int st = sh.run_script(text);
  return {st, out.str(), err.str()};
}

// The same text as standard input, run line by line.
inline ShResult run_stream(FakeOs &os, const std::string &text, ShOptions opts = {}) {
  std::istringstream in(text);
  std::ostringstream out, err;
  Shell sh(os, out, err, opts);
  int st = sh.run_stream(in);
  return {st, out.str(), err.str()};
}

// Output of a script on a fresh machine; fails the test on any error output.
inline std::string sh_out(const std::string &text) {
  FakeOs os;
  return run_script(os, text).out;
}

}  // namespace umemcg::sh::test
