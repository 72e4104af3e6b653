// SPDX-License-Identifier: GPL-2.0-only
// Tests of the emulated machine: tasks, vCPUs, modes, time, determinism, deadlock detection.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <set>
#include <vector>

#include "shim/atomic.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/mutex.h"
#include "shim/preempt.h"
#include "shim/rwsem.h"
#include "shim/sched.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;
using umemcg::test::WarnCheck;

TEST_CASE("machine: tasks run on their pinned vCPU in both modes", "[shim][machine]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 4));
    std::atomic<int> seen[4] = {-1, -1, -1, -1};
    for (int cpu = 0; cpu < 4; cpu++) {
      m.spawn("pinned", [&seen, cpu] {
        emu::KernelEntry k;
        seen[cpu] = smp_processor_id();
      }, {.cpu = cpu});
    }
    m.run();
    for (int cpu = 0; cpu < 4; cpu++) CHECK(seen[cpu] == cpu);
  }
}

TEST_CASE("machine: being on a vCPU is exclusive", "[shim][machine]") {
  // Eight tasks share two vCPUs; inside kernel mode no two of them are ever on the same vCPU.
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 2, 7));
    std::atomic<int> on_cpu[2] = {0, 0};
    std::atomic<int> violations{0};
    for (int i = 0; i < 8; i++) {
      m.spawn("t", [&] {
        for (int j = 0; j < 50; j++) {
          emu::KernelEntry k;
          int c = smp_processor_id();
          if (on_cpu[c].fetch_add(1) != 0) violations++;
          for (int spin = 0; spin < 1000; spin++) asm volatile("" ::: "memory");
          on_cpu[c].fetch_sub(1);
          cond_resched();  // may hand the vCPU to another task
        }
      });
    }
    m.run();
    CHECK(violations == 0);
  }
}

TEST_CASE("machine: a 2 s sleep takes 2 s of virtual time and milliseconds of wall time",
          "[shim][machine][time]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 2));
  std::uint64_t before = 0, after = 0;
  auto wall0 = std::chrono::steady_clock::now();
  m.exec([&] {
    before = ktime_get_ns();
    msleep(2000);
    after = ktime_get_ns();
  });
  auto wall = std::chrono::steady_clock::now() - wall0;
  // msleep sleeps one jiffy longer than asked, as the kernel's does.
  CHECK(after - before == 2001 * NSEC_PER_MSEC);
  CHECK(std::chrono::duration_cast<std::chrono::milliseconds>(wall).count() < 500);
}

TEST_CASE("machine: native time is real time", "[shim][machine][time]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::native, 2));
  std::uint64_t slept = 0;
  m.exec([&] {
    std::uint64_t t0 = ktime_get_ns();
    msleep(20);
    slept = ktime_get_ns() - t0;
  });
  CHECK(slept >= 20 * NSEC_PER_MSEC);
}

namespace {
// Eight tasks contending on one rwsem (readers and writers) and sleeping in between.
std::uint64_t contention_program(std::uint64_t seed, std::vector<int> *order = nullptr) {
  emu::Machine m(config(emu::Mode::simulated, 4, seed));
  rw_semaphore sem("contended");
  for (int i = 0; i < 8; i++) {
    m.spawn("worker", [&sem, i, order] {
      for (int round = 0; round < 5; round++) {
        emu::KernelEntry k;
        if (i % 3 == 0) {
          down_write(&sem);
          if (order) order->push_back(i);
          emu::consume_time(50000);
          up_write(&sem);
        } else {
          down_read(&sem);
          if (order) order->push_back(i);
          emu::consume_time(20000);
          up_read(&sem);
        }
        msleep(1 + (i + round) % 3);
      }
    });
  }
  emu::RunResult r = m.run();
  CHECK_FALSE(r.deadlock);
  return m.trace_hash();
}
}  // namespace

TEST_CASE("machine: simulated runs are deterministic per seed", "[shim][machine][determinism]") {
  WarnCheck wc;
  std::vector<int> o1, o2, o3;
  const std::uint64_t h1 = contention_program(42, &o1);
  const std::uint64_t h2 = contention_program(42, &o2);
  const std::uint64_t h3 = contention_program(43, &o3);
  CHECK(h1 == h2);
  CHECK(o1 == o2);
  CHECK(h1 != h3);
  CHECK(o1.size() == 40);
}

TEST_CASE("machine: deadlock is reported with every task's wait reason", "[shim][machine]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 2, 3));
  mutex a("lock_a"), b("lock_b");
  m.spawn("ab", [&] {
    emu::KernelEntry k;
    mutex_lock(&a);
    msleep(1);
    mutex_lock(&b);
    mutex_unlock(&b);
    mutex_unlock(&a);
  });
  m.spawn("ba", [&] {
    emu::KernelEntry k;
    mutex_lock(&b);
    msleep(1);
    mutex_lock(&a);
    mutex_unlock(&a);
    mutex_unlock(&b);
  });
  emu::RunResult r = m.run();
  REQUIRE(r.deadlock);
  CHECK_THAT(r.report, Catch::Contains("ab: lock_b"));
  CHECK_THAT(r.report, Catch::Contains("ba: lock_a"));
}

TEST_CASE("machine: sleeping while atomic is a BUG", "[shim][machine]") {
  WarnCheck wc;
  auto prev = emu::set_bug_handler(emu::throwing_bug_handler);
  {
    emu::Machine m(config(emu::Mode::simulated, 1));
    CHECK_THROWS_AS(m.exec([] {
      preempt_disable();
      msleep(1);
    }), emu::KernelBug);
  }
  emu::set_bug_handler(prev);
}

TEST_CASE("machine: return to user mode runs the resume hooks when notified", "[shim][machine]") {
  WarnCheck wc;
  static int calls;
  calls = 0;
  for (emu::Mode mode : test::kBothModes) {
    emu::Machine m(config(mode, 1));
    calls = 0;
    emu::register_resume_user_mode_hook([] { calls++; });
    task_struct *t = m.spawn("user", [] {
      {
        emu::KernelEntry k;  // no notification: nothing runs
      }
      {
        emu::KernelEntry k;
        set_notify_resume(current);
      }
    });
    m.run();
    CHECK(calls == 1);
    CHECK_FALSE(test_bit(TIF_NOTIFY_RESUME, &t->thread_flags));
  }
}
