// SPDX-License-Identifier: GPL-2.0-only
// test/support/machine_fixture.h: helpers for tests that run code on an emulated machine.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>

#include "shim/bug.h"
#include "shim/jiffies.h"
#include "shim/machine.h"

namespace umemcg::test {

// Both execution modes, for tests that must hold in each.
inline const emu::Mode kBothModes[] = {emu::Mode::simulated, emu::Mode::native};

inline const char *mode_name(emu::Mode m) {
  return m == emu::Mode::simulated ? "simulated" : "native";
}

inline emu::MachineConfig config(emu::Mode mode, unsigned cpus = 4, std::uint64_t seed = 1) {
  emu::MachineConfig c;
  c.mode = mode;
  c.nr_cpus = cpus;
  c.seed = seed;
  return c;
}

// Waits (by sleeping 1 ms at a time) until pred() holds: an ordering tool for tests, valid in
// both modes. Context: a task on the machine.
template <typename P>
void wait_until(P pred) {
  while (!pred()) msleep(1);
}

// Resets the warning counter on construction and checks at the end of the test that exactly
// the expected number of warnings fired (0 unless the test says otherwise).
class WarnCheck {
 public:
  explicit WarnCheck(std::uint64_t expected = 0) : expected_(expected) { emu::reset_warnings(); }
  ~WarnCheck() {
    if (!std::uncaught_exceptions()) CHECK(emu::warn_count() == expected_);
  }
  void expect(std::uint64_t n) { expected_ = n; }

 private:
  std::uint64_t expected_;
};

}  // namespace umemcg::test
