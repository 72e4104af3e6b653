// SPDX-License-Identifier: GPL-2.0-only
// test/mm/warn_scope.h: every test states how many kernel warnings it expects.
//
// A WarnScope is a fresh "boot" for WARN_ONCE purposes (every once-site may fire again, so a
// warning fired by an earlier test cannot hide one in this test) and remembers the warning count
// at its start. The test ends with expect(n): exactly n warnings fired since then. A scope that
// is destroyed without expect() having been called fails the test, so no test can forget.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <exception>

// Catch2's WARN(msg) and the kernel's WARN(cond, fmt, ...) share a name. Tests use neither by
// name; the kernel's must win for kernel headers, so Catch2's is dropped here, before
// shim/bug.h. Test files include this header before any project header.
#undef WARN
#include "shim/bug.h"

namespace umemcg::test {

class WarnScope {
 public:
  // quiet: do not print the warnings (for tests that provoke them on purpose).
  explicit WarnScope(bool quiet = false) : quiet_(quiet) {
    emu::new_boot_generation();
    emu::set_warnings_quiet(quiet_);
    start_ = emu::warn_count();
  }
  WarnScope(const WarnScope &) = delete;
  WarnScope &operator=(const WarnScope &) = delete;
  ~WarnScope() {
    if (quiet_) emu::set_warnings_quiet(false);
    if (!checked_ && std::uncaught_exceptions() == 0)
      FAIL_CHECK("test ended without WarnScope::expect()");
  }

  // Number of warnings since the scope began.
  std::uint64_t count() const { return emu::warn_count() - start_; }

  // The test's closing check: exactly @n warnings, and no others.
  void expect(std::uint64_t n) {
    checked_ = true;
    INFO("last warning: " << emu::last_warning());
    CHECK(count() == n);
  }

 private:
  bool quiet_;
  bool checked_ = false;
  std::uint64_t start_ = 0;
};

}  // namespace umemcg::test
