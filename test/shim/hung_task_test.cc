// SPDX-License-Identifier: GPL-2.0-only
// test/shim/hung_task_test.cc: the simulated machine's hung-task check (shim/hung_task.h): a
// user task asleep uninterruptibly or killably in a kernel stay longer than the bound gets one
// warning; interruptible sleeps, short stays, kernel threads and a bound of 0 get none; a task
// throttled again and again within one kernel entry is stalled though each sleep is shorter
// than the bound.
#include "shim/bug.h"
#undef WARN
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "shim/hung_task.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/sched.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;

namespace {


// Warnings fired while fn runs on a machine with the given bound, and the last one's text.
std::uint64_t warnings_of(std::uint64_t timeout_ns, const std::function<void()> &fn,
                          std::string *last = nullptr) {
  emu::set_warnings_quiet(true);
  const std::uint64_t w0 = emu::warn_count();
  {
    emu::set_hung_task_timeout_ns(timeout_ns);
    emu::Machine m(test::config(emu::Mode::simulated, 2, 3));
    m.exec(fn);
    m.run();  // the tasks fn spawned
  }
  emu::set_hung_task_timeout_ns(0);
  emu::set_warnings_quiet(false);
  if (last) *last = emu::last_warning();
  return emu::warn_count() - w0;
}

constexpr std::uint64_t kSec = 1000000000ull;

}  // namespace

namespace {

// A user task that sleeps `rounds` times for `each` jiffies in one kernel entry, in `state`.
std::function<void()> user_sleeps(unsigned int state, int rounds, long each) {
  return [=] {
    emu::Machine::get()->spawn("user", [=] {
      emu::KernelEntry k;
      for (int i = 0; i < rounds; i++) {
        set_current_state(state);
        schedule_timeout(each);
      }
    });
  };
}

}  // namespace

TEST_CASE("hung-task check: an uninterruptible sleep past the bound is reported once",
          "[sched][hung_task]") {
  std::string last;
  CHECK(warnings_of(1 * kSec, user_sleeps(TASK_UNINTERRUPTIBLE, 1, 3 * HZ), &last) == 1);
  CHECK(last.find("INFO: task user:") != std::string::npos);
  CHECK(last.find("blocked for more than 1 seconds (uninterruptible sleep)") != std::string::npos);
  // Killable sleeps (the memory.high throttle's) count too.
  CHECK(warnings_of(1 * kSec, user_sleeps(TASK_KILLABLE, 1, 3 * HZ), &last) == 1);
  CHECK(last.find("(killable sleep)") != std::string::npos);
  // Off, shorter than the bound, or interruptible: nothing.
  CHECK(warnings_of(0, user_sleeps(TASK_UNINTERRUPTIBLE, 1, 3 * HZ)) == 0);
  CHECK(warnings_of(5 * kSec, user_sleeps(TASK_UNINTERRUPTIBLE, 1, 3 * HZ)) == 0);
  CHECK(warnings_of(1 * kSec, user_sleeps(TASK_INTERRUPTIBLE, 1, 3 * HZ)) == 0);
  // Kernel threads are not checked (the exec task below sleeps 3 s).
  CHECK(warnings_of(1 * kSec, [] { schedule_timeout_uninterruptible(3 * HZ); }) == 0);
}

TEST_CASE("hung-task check: a user task's whole kernel stay counts, not one sleep",
          "[sched][hung_task]") {
  // Five half-second sleeps in one kernel entry: 2.5 s in the kernel, past a 2 s bound.
  std::string last;
  CHECK(warnings_of(2 * kSec, user_sleeps(TASK_KILLABLE, 5, HZ / 2), &last) == 1);
  CHECK(last.find("INFO: task user:") != std::string::npos);
  // Three: 1.5 s.
  CHECK(warnings_of(2 * kSec, user_sleeps(TASK_KILLABLE, 3, HZ / 2)) == 0);
}
