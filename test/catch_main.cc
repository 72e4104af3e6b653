// SPDX-License-Identifier: GPL-2.0-only
// The Catch2 runner, alone in its file because it is most of the test build time, and the
// listener that names the test cases that ran on more than one OS thread.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "shim/machine.h"

namespace {
// With UMEMCG_THREADED_CASES=FILE, appends to FILE the name of every test case that started an
// OS thread: through the shim (a native-mode machine, emu::os_threads_started()) or on its own
// (such cases carry the tag [threads]). The others ran every task on the test's own thread, as
// fibers that synchronise at each switch, where ThreadSanitizer has nothing to find;
// tools/tsan.sh runs only the listed cases when given the file (TSAN_CASES_FILE).
class ThreadedCaseListener : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;

  void testCaseStarting(const Catch::TestCaseInfo &info) override {
    TestEventListenerBase::testCaseStarting(info);
    threads_before_ = umemcg::emu::os_threads_started();
  }

  void testCaseEnded(const Catch::TestCaseStats &stats) override {
    TestEventListenerBase::testCaseEnded(stats);
    const char *path = std::getenv("UMEMCG_THREADED_CASES");
    if (!path || !*path) return;
    const auto &tags = stats.testInfo.tags;
    const bool own_threads = std::find(tags.begin(), tags.end(), "threads") != tags.end();
    if (!own_threads && umemcg::emu::os_threads_started() == threads_before_) return;
    if (std::FILE *f = std::fopen(path, "a")) {
      std::fprintf(f, "%s\n", stats.testInfo.name.c_str());
      std::fclose(f);
    }
  }

 private:
  unsigned long threads_before_ = 0;
};
}  // namespace

CATCH_REGISTER_LISTENER(ThreadedCaseListener)
