// SPDX-License-Identifier: GPL-2.0-only
// Tests of sleeping and waking, timeouts, signals, timers, completions and wait queues.
#include <catch2/catch.hpp>

#include <atomic>

#include "shim/completion.h"
#include "shim/errno.h"
#include "shim/jiffies.h"
#include "shim/kthread.h"
#include "shim/machine.h"
#include "shim/sched.h"
#include "shim/timer.h"
#include "shim/wait.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;
using umemcg::test::WarnCheck;

TEST_CASE("sched: a wake-up between set_current_state and schedule is not lost", "[shim][sched]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 2, 2));
    std::atomic<bool> flag{false};
    task_struct *sleeper = nullptr;
    std::atomic<bool> armed{false};
    sleeper = m.spawn("sleeper", [&] {
      emu::KernelEntry k;
      for (;;) {
        set_current_state(TASK_UNINTERRUPTIBLE);
        armed = true;
        if (flag) break;
        schedule();
      }
      __set_current_state(TASK_RUNNING);
    });
    m.spawn("waker", [&] {
      emu::KernelEntry k;
      while (!armed) msleep(1);
      flag = true;
      wake_up_process(sleeper);
    });
    emu::RunResult r = m.run();
    CHECK_FALSE(r.deadlock);
  }
}

TEST_CASE("sched: schedule_timeout returns 0 on timeout and the rest when woken",
          "[shim][sched][time]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 2, 3));
    long timed_out = -1, woken = -1;
    std::uint64_t t0 = 0, t1 = 0;
    task_struct *sleeper = nullptr;
    std::atomic<bool> second{false};
    sleeper = m.spawn("sleeper", [&] {
      emu::KernelEntry k;
      t0 = ktime_get_ns();
      timed_out = schedule_timeout_uninterruptible(5);
      t1 = ktime_get_ns();
      set_current_state(TASK_UNINTERRUPTIBLE);
      second = true;
      woken = schedule_timeout(10000);
    });
    m.spawn("waker", [&] {
      emu::KernelEntry k;
      while (!second) msleep(1);
      msleep(2);
      wake_up_process(sleeper);
    });
    m.run();
    CHECK(timed_out == 0);
    CHECK(t1 - t0 >= 5 * NSEC_PER_MSEC);
    CHECK(woken > 0);
    CHECK(woken < 10000);
    if (mode == emu::Mode::simulated) CHECK(t1 - t0 == 5 * NSEC_PER_MSEC);
  }
}

TEST_CASE("sched: a fatal signal ends killable sleeps but not uninterruptible ones",
          "[shim][sched][signal]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 2, 5));
  long killable_left = -1, unint_left = -1;
  task_struct *a = m.spawn("killable", [&] {
    emu::KernelEntry k;
    killable_left = schedule_timeout_killable(2000);
  });
  task_struct *b = m.spawn("uninterruptible", [&] {
    emu::KernelEntry k;
    unint_left = schedule_timeout_uninterruptible(100);
  });
  m.spawn("killer", [&] {
    emu::KernelEntry k;
    msleep(10);
    send_sig_kill(a);
    send_sig_kill(b);
  });
  m.run();
  CHECK(killable_left > 1900);  // woke at ~11 ms of 2000
  CHECK(unint_left == 0);       // slept its full 100 ms
  CHECK(fatal_signal_pending(a));
  CHECK(signal_pending(b));
}

TEST_CASE("timer: fires at its expiry on the machine clock, can be deleted",
          "[shim][timer]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 1));
    struct T {
      timer_list t;
      std::atomic<std::uint64_t> fired_at{0};
    } a, b;
    auto fn = [](timer_list *tl) {
      auto *x = reinterpret_cast<T *>(tl);
      x->fired_at = ktime_get_ns();
    };
    m.exec([&] {
      timer_setup(&a.t, fn, 0);
      timer_setup(&b.t, fn, 0);
      CHECK(mod_timer(&a.t, jiffies + 20) == 0);
      CHECK(mod_timer(&b.t, jiffies + 10) == 0);
      CHECK(timer_pending(&b.t));
      CHECK(timer_delete(&b.t) == 1);
      CHECK_FALSE(timer_pending(&b.t));
      msleep(40);
    });
    CHECK(a.fired_at >= 20 * NSEC_PER_MSEC);
    if (mode == emu::Mode::simulated) CHECK(a.fired_at == 20 * NSEC_PER_MSEC);
    CHECK(b.fired_at == 0);
  }
}

TEST_CASE("completion: complete lets one waiter through, complete_all everyone",
          "[shim][completion]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 4, 8));
    completion c;
    init_completion(&c);
    std::atomic<int> through{0};
    for (int i = 0; i < 3; i++) {
      m.spawn("waiter", [&] {
        emu::KernelEntry k;
        wait_for_completion(&c);
        through++;
      });
    }
    m.exec([&] {
      msleep(5);
      CHECK(through == 0);
      complete(&c);
      while (through < 1) msleep(1);
      msleep(5);
      CHECK(through == 1);
      complete_all(&c);
      CHECK(wait_for_completion_timeout(&c, 10) > 0);  // done stays set after complete_all
      while (through < 3) msleep(1);
      reinit_completion(&c);
      CHECK(wait_for_completion_timeout(&c, 3) == 0);
    });
    m.run();
    CHECK(through == 3);
  }
}

TEST_CASE("waitqueue: wait_event, wake_up_all and wait_event_timeout", "[shim][wait]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 2, 6));
    DECLARE_WAIT_QUEUE_HEAD(wq);
    std::atomic<int> cond{0};
    std::atomic<int> done{0};
    long left = -1;
    for (int i = 0; i < 2; i++) {
      m.spawn("w", [&] {
        emu::KernelEntry k;
        wait_event(wq, cond.load() == 1);
        done++;
      });
    }
    m.exec([&] {
      msleep(3);
      CHECK(waitqueue_active(&wq));
      cond = 1;
      wake_up_all(&wq);
      left = wait_event_timeout(wq, cond.load() == 2, 7);
    });
    m.run();
    CHECK(done == 2);
    CHECK(left == 0);
  }
}

TEST_CASE("kthread: kthread_stop wakes the thread, waits for it and returns its value",
          "[shim][kthread]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 2, 17));
    static std::atomic<int> loops;
    loops = 0;
    int ret = 0;
    m.exec([&] {
      task_struct *k = kthread_run_on_cpu([](void *) -> int {
        CHECK((current->flags & PF_KTHREAD) != 0);
        CHECK(smp_processor_id() == 1);
        while (!kthread_should_stop()) {
          loops++;
          set_current_state(TASK_INTERRUPTIBLE);
          if (kthread_should_stop()) break;
          schedule_timeout(5);
        }
        __set_current_state(TASK_RUNNING);
        return 42;
      }, nullptr, 1, "worker");
      msleep(20);
      ret = kthread_stop(k);
    });
    CHECK(ret == 42);
    CHECK(loops >= 2);
  }
}
