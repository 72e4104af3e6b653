// SPDX-License-Identifier: GPL-2.0-only
// test/fuzz/fuzz_sh.cc: libFuzzer target: arbitrary bytes as a cgroup-shell script, parsed and
// run on the in-memory FakeOs (test/tools/fake_os.h). Whatever the script, the shell must not
// crash, hang or leak (an open descriptor of the machine left after the shell is gone).
//
// The first byte picks how the rest is run: even, a whole script; odd, standard input line by
// line. Loops are bounded by a step budget here only (a real shell runs `while true` forever):
// the step hook stops the shell after 2,000 commands or loop iterations. Output is discarded.
//
// Smoke run (a clang build, -Dfuzz=true):
//   mkdir -p sh-corpus && <build>/test/fuzz/fuzz-sh -max_total_time=60 -max_len=2048 sh-corpus
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <streambuf>
#include <string>

#include "test/tools/fake_os.h"
#include "tools/sh/sh_shell.h"

namespace {

// Counts and drops what is written.
class NullBuf : public std::streambuf {
 protected:
  int_type overflow(int_type c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char *, std::streamsize n) override { return n; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace umemcg::sh;
  if (size == 0) return 0;
  const bool streamed = data[0] & 1;
  std::string text(reinterpret_cast<const char *>(data) + 1, size - 1);

  test::FakeOs os;
  os.add_file("/sys/fs/cgroup/memory.peak", "0\n");
  os.add_dir("/sys/fs/cgroup/a");
  os.add_file("/sys/fs/cgroup/a/memory.max", "max\n").write_errno = 22;
  {
    NullBuf nb;
    std::ostream out(&nb), err(&nb);
    ShOptions opts;
    Shell sh(os, out, err, opts);
    int steps = 0;
    sh.set_step_hook([&steps] { return ++steps < 2000; });
    if (streamed) {
      std::istringstream in(text);
      sh.run_stream(in);
    } else {
      sh.run_script(text);
    }
    int st = sh.status();
    if (st < 0 || st > 255) std::abort();
  }
  // Every descriptor the shell opened is closed once it is gone.
  if (os.open_fds() != 0) std::abort();
  return 0;
}
