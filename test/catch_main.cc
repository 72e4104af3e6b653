// SPDX-License-Identifier: GPL-2.0-only
// The Catch2 runner, alone in its file because it is most of the test build time, the listener
// that names the test cases that ran on more than one OS thread, and the check of the names
// Catch2's console reporter cannot print.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "shim/machine.h"

namespace {
// Catch2 v2's console reporter wraps a long test-case or section name with its continuation
// lines indented to just after the name's first ": ". When that falls near the line's end
// (80 columns) the wrap makes no progress and prints lines of "-" until the disk is full, and
// it does so only when the case fails. Such a name is refused before anything runs.
constexpr std::size_t kMaxColonColumn = 50;

bool header_unprintable(const std::string &name, std::size_t indent) {
  const std::size_t colon = name.find(": ");
  if (colon == std::string::npos) return false;
  return indent + name.size() >= CATCH_CONFIG_CONSOLE_WIDTH - 1 &&
         indent + colon + 2 > kMaxColonColumn;
}

[[noreturn]] void refuse_name(const std::string &what, const std::string &name) {
  std::fprintf(stderr,
               "%s name \"%s\": its first \": \" ends after column %zu, and Catch2 loops "
               "forever printing it when it fails: reword it\n",
               what.c_str(), name.c_str(), kMaxColonColumn);
  std::exit(2);
}

class NameCheckListener : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;

  void testRunStarting(const Catch::TestRunInfo &info) override {
    TestEventListenerBase::testRunStarting(info);
    for (const Catch::TestCase &tc : Catch::getAllTestCasesSorted(*m_config))
      if (header_unprintable(tc.name, 0)) refuse_name("test case", tc.name);
  }
  void sectionStarting(const Catch::SectionInfo &info) override {
    TestEventListenerBase::sectionStarting(info);
    if (header_unprintable(info.name, 2)) refuse_name("section", info.name);
  }
};

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
CATCH_REGISTER_LISTENER(NameCheckListener)
