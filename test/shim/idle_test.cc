// SPDX-License-Identifier: GPL-2.0-only
// test/shim/idle_test.cc: emu::schedule_unless_idle(): in simulated mode a sleeper is woken with
// true when nothing else can run and no timer is pending (instead of the run ending as a
// deadlock); woken normally it returns false; a pending timer is not idleness.
#include <catch2/catch.hpp>

#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/sched.h"
#include "shim/wait.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;

namespace {

// Sleeps on wq until *flag, through schedule_unless_idle(); returns whether the idle rule woke it.
bool wait_flag(wait_queue_head *wq, const bool *flag) {
  wait_queue_entry we;
  bool idle = false;
  for (;;) {
    prepare_to_wait(wq, &we, TASK_UNINTERRUPTIBLE);
    if (*flag) break;
    if (emu::schedule_unless_idle()) {
      idle = true;
      break;
    }
  }
  finish_wait(wq, &we);
  return idle;
}

}  // namespace

TEST_CASE("schedule_unless_idle: woken when the machine goes idle, not a deadlock", "[sched]") {
  emu::Machine m(test::config(emu::Mode::simulated, 2, 7));
  DECLARE_WAIT_QUEUE_HEAD(wq);
  bool flag = false, idle = false;
  emu::RunResult r = m.exec([&] { idle = wait_flag(&wq, &flag); });
  CHECK_FALSE(r.deadlock);
  CHECK(idle);
}

TEST_CASE("schedule_unless_idle: a normal wake-up returns false; a pending timer is not idle",
          "[sched]") {
  emu::Machine m(test::config(emu::Mode::simulated, 2, 7));
  DECLARE_WAIT_QUEUE_HEAD(wq);
  bool flag = false, idle = true;
  std::uint64_t woke_ns = 0;
  m.spawn("waker", [&] {
    msleep(100);  // the waiter sleeps meanwhile: a timer is pending, so the machine is not idle
    flag = true;
    wake_up_all(&wq);
  });
  emu::RunResult r = m.exec([&] {
    idle = wait_flag(&wq, &flag);
    woke_ns = ktime_get_ns();
  });
  CHECK_FALSE(r.deadlock);
  CHECK_FALSE(idle);
  CHECK(woke_ns >= 100 * NSEC_PER_MSEC);
}
