// SPDX-License-Identifier: GPL-2.0-only
// Tests of the rwsem's kernel design: the count word, the owner word, reader lock stealing and
// the handoff, killed waiters, per-reader hold times, the statistics' clock. The semantics
// shared with the old design (writer preference, reader wake-up, killable waits, hooks) are in
// locks_test.cc.
#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "shim/errno.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/rwsem.h"
#include "shim/sched.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;
using umemcg::test::wait_until;
using umemcg::test::WarnCheck;

namespace {

long count_of(const rw_semaphore &sem) { return sem.count.load(); }

// Spawns a task @name that takes @sem (for write, or read), appends @name to @order as it holds
// it, and releases it.
void spawn_locker(rw_semaphore *sem, bool write, const char *name,
                  std::vector<std::string> *order) {
  emu::Machine::get()->spawn(name, [=] {
    emu::KernelEntry k;
    if (write) {
      down_write(sem);
      order->emplace_back(name);
      up_write(sem);
    } else {
      down_read(sem);
      order->emplace_back(name);
      up_read(sem);
    }
  });
}

// spawn_locker(), then waits until @sem has @nr_waiters waiters: the new locker is queued.
void queue_locker(rw_semaphore *sem, bool write, const char *name,
                  std::vector<std::string> *order, unsigned long nr_waiters) {
  spawn_locker(sem, write, name, order);
  wait_until([&] { return emu::rwsem_nr_waiters(sem) == nr_waiters; });
}
std::uintptr_t me_as_reader() {
  return reinterpret_cast<std::uintptr_t>(current) | RWSEM_READER_OWNED;
}
// A second read lock by the same task, legal while nobody waits. Outside -Wthread-safety,
// which does not model a shared capability taken twice.
void second_read_lock_checks(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  if (down_read_trylock(sem) == 1) {
    CHECK(count_of(*sem) == 2 * RWSEM_READER_BIAS);
    CHECK(down_write_trylock(sem) == 0);
    up_read(sem);
  } else {
    FAIL("down_read_trylock refused while only a reader held the lock");
  }
}
}  // namespace

TEST_CASE("rwsem: the count and owner words follow the kernel's encoding", "[shim][rwsem]") {
  for (emu::Mode mode : test::kBothModes) {
    SECTION(test::mode_name(mode)) {
      WarnCheck wc;
      emu::Machine m(config(mode, 2, 7));
      rw_semaphore sem("sem");
      m.exec([&] {
        CHECK(count_of(sem) == RWSEM_UNLOCKED_VALUE);
        CHECK_FALSE(rwsem_is_locked(&sem));
        down_read(&sem);
        CHECK(count_of(sem) == RWSEM_READER_BIAS);
        CHECK(sem.owner.load() == me_as_reader());
        second_read_lock_checks(&sem);
        up_read(&sem);
        CHECK(count_of(sem) == RWSEM_UNLOCKED_VALUE);
        CHECK(sem.owner.load() == me_as_reader());  // a stale hint, as in the kernel

        down_write(&sem);
        CHECK(count_of(sem) == RWSEM_WRITER_LOCKED);
        CHECK(sem.owner.load() == reinterpret_cast<std::uintptr_t>(current));
        CHECK(down_read_trylock(&sem) == 0);
        CHECK(count_of(sem) == RWSEM_WRITER_LOCKED);  // a failed trylock leaves no bias behind
        // A queued reader sets WAITERS and takes its bias back out.
        std::atomic<bool> read_done{false};
        emu::Machine::get()->spawn("reader", [&] {
          emu::KernelEntry k;
          down_read(&sem);
          up_read(&sem);
          read_done = true;
        });
        wait_until([&] { return emu::rwsem_nr_waiters(&sem) == 1; });
        CHECK(count_of(sem) == (RWSEM_WRITER_LOCKED | RWSEM_FLAG_WAITERS));
        up_write(&sem);
        CHECK(sem.owner.load() != reinterpret_cast<std::uintptr_t>(current));
        wait_until([&] { return read_done.load(); });
        CHECK(count_of(sem) == RWSEM_UNLOCKED_VALUE);
        CHECK(emu::rwsem_nr_waiters(&sem) == 0);
      });
    }
  }
}

TEST_CASE("rwsem: downgrade_write grants every queued reader when a reader heads the queue",
          "[shim][rwsem]") {
  // Queue: R1, W, R2. The downgrade keeps our read lock and hands read locks to R1 and R2 (W
  // keeps its place); W gets the lock when all three readers are gone.
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 4, 3));
  rw_semaphore sem("sem");
  std::vector<std::string> order;
  std::atomic<int> release{0};
  m.exec([&] {
    down_write(&sem);
    emu::Machine *mach = emu::Machine::get();
    auto reader = [&](const char *name) {
      return [&, name] {
        emu::KernelEntry k;
        down_read(&sem);
        order.emplace_back(name);
        wait_until([&] { return release.load() != 0; });
        up_read(&sem);
      };
    };
    mach->spawn("R1", reader("R1"));
    wait_until([&] { return emu::rwsem_nr_waiters(&sem) == 1; });
    queue_locker(&sem, true, "W", &order, 2);
    mach->spawn("R2", reader("R2"));
    wait_until([&] { return emu::rwsem_nr_waiters(&sem) == 3; });
    downgrade_write(&sem);
    CHECK(sem.owner.load() == me_as_reader());
    CHECK(emu::rwsem_nr_waiters(&sem) == 1);  // only W is left in the queue
    CHECK((count_of(sem) & RWSEM_READER_MASK) == 3 * RWSEM_READER_BIAS);
    wait_until([&] { return order.size() == 2; });
    msleep(3);
    CHECK(order.size() == 2);  // W waits for the three readers
    release = 1;
    up_read(&sem);
    wait_until([&] { return order.size() == 3; });
    CHECK(order[2] == "W");
  });
  m.run();
  const rwsem_stats st = rwsem_get_stats(&sem);
  CHECK(st.write_acquired == 2);
  CHECK(st.read_acquired == 2);  // the downgrade is not a new acquisition
}

TEST_CASE("rwsem: downgrade_write leaves a writer at the head of the queue waiting",
          "[shim][rwsem]") {
  // Queue: W, R. A downgrade only grants readers when a reader is first (the kernel's
  // RWSEM_WAKE_READ_OWNED): R stays behind W.
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 4, 4));
  rw_semaphore sem("sem");
  std::vector<std::string> order;
  m.exec([&] {
    down_write(&sem);
    queue_locker(&sem, true, "W", &order, 1);
    queue_locker(&sem, false, "R", &order, 2);
    downgrade_write(&sem);
    msleep(3);
    CHECK(order.empty());
    CHECK(emu::rwsem_nr_waiters(&sem) == 2);
    up_read(&sem);
    wait_until([&] { return order.size() == 2; });
    CHECK(order[0] == "W");
    CHECK(order[1] == "R");
  });
}

TEST_CASE("rwsem: a reader steals a free lock from a woken writer until the writer's handoff",
          "[shim][rwsem][handoff]") {
  // Simulated mode: the main task keeps running after a release (no preemption), so it can
  // take the lock back before the woken writer runs, deterministically.
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 4, 5));
  rw_semaphore sem("sem");
  std::vector<std::string> order;
  m.exec([&] {
    down_read(&sem);
    queue_locker(&sem, true, "W", &order, 1);

    // The writer waited less than RWSEM_WAIT_TIMEOUT (4 jiffies): a reader that would be the
    // only one may steal the lock it was woken for, and the writer does not ask for a handoff.
    up_read(&sem);   // wakes W
    down_read(&sem); // steals it back: not writer-locked, no handoff, we would be the only reader
    CHECK((count_of(sem) & RWSEM_READER_MASK) == RWSEM_READER_BIAS);
    msleep(1);       // W runs, fails and sleeps again
    CHECK(order.empty());
    CHECK_FALSE(count_of(sem) & RWSEM_FLAG_HANDOFF);

    msleep(5);       // now W has waited longer than the timeout
    up_read(&sem);
    down_read(&sem); // still no handoff: the steal works once more
    msleep(1);       // W runs: the lock is held, it has waited too long: it sets HANDOFF
    CHECK(order.empty());
    CHECK(count_of(sem) & RWSEM_FLAG_HANDOFF);
    CHECK(down_read_trylock(&sem) == 0);
    // A new reader cannot steal either: it queues behind W.
    queue_locker(&sem, false, "R", &order, 2);
    up_read(&sem);  // last reader out: W gets the lock, then R
    wait_until([&] { return order.size() == 2; });
    CHECK(order[0] == "W");
    CHECK(order[1] == "R");
    CHECK(count_of(sem) == RWSEM_UNLOCKED_VALUE);
  });
  CHECK(rwsem_get_stats(&sem).max_write_wait_ns >= 6 * NSEC_PER_MSEC);
}

TEST_CASE("rwsem: a killed first waiter lets the readers queued behind it join the holders",
          "[shim][rwsem]") {
  for (emu::Mode mode : test::kBothModes) {
    SECTION(test::mode_name(mode)) {
      WarnCheck wc;
      emu::Machine m(config(mode, 4, 9));
      rw_semaphore sem("sem");
      std::atomic<int> wret{1};
      std::atomic<bool> reader_in{false};
      m.exec([&] {
        emu::Machine *mach = emu::Machine::get();
        down_read(&sem);
        task_struct *w = mach->spawn("W", [&] {
          emu::KernelEntry k;
          if (down_write_killable(&sem) == 0) {
            up_write(&sem);
            wret = 0;
          } else {
            wret = -EINTR;
          }
        });
        wait_until([&] { return emu::rwsem_nr_waiters(&sem) == 1; });
        mach->spawn("R", [&] {
          emu::KernelEntry k;
          down_read(&sem);
          reader_in = true;
          wait_until([&] { return wret.load() != 1; });
          up_read(&sem);
        });
        wait_until([&] { return emu::rwsem_nr_waiters(&sem) == 2; });
        CHECK_FALSE(reader_in.load());  // blocked by the waiting writer
        send_sig_kill(w);
        // R gets in while we still hold our read lock.
        wait_until([&] { return reader_in.load() && wret.load() != 1; });
        CHECK(wret == -EINTR);
        CHECK(emu::rwsem_nr_waiters(&sem) == 0);
        up_read(&sem);
      });
      m.run();  // R too has left
      CHECK(count_of(sem) == RWSEM_UNLOCKED_VALUE);
    }
  }
}

TEST_CASE("rwsem: each of many concurrent readers is timed from its own acquisition",
          "[shim][rwsem][stats]") {
  // A long reader and a short one overlapping: timing readers from the latest (or earliest)
  // acquisition of the lock would give the long reader 15 ms or the short one 20 ms.
  for (emu::Mode mode : test::kBothModes) {
    SECTION(test::mode_name(mode)) {
      WarnCheck wc;
      emu::Machine m(config(mode, 4, 13));
      rw_semaphore sem("sem");
      std::atomic<int> stage{0};
      m.spawn("long", [&] {
        emu::KernelEntry k;
        down_read(&sem);
        stage = 1;
        msleep(20);
        up_read(&sem);
      });
      m.spawn("short", [&] {
        emu::KernelEntry k;
        wait_until([&] { return stage.load() >= 1; });
        msleep(5);
        down_read(&sem);
        msleep(2);
        up_read(&sem);
      });
      m.run();
      const rwsem_stats st = rwsem_get_stats(&sem);
      CHECK(st.read_acquired == 2);
      CHECK(st.max_read_hold_ns >= 20 * NSEC_PER_MSEC);
      if (mode == emu::Mode::simulated) CHECK(st.max_read_hold_ns <= 22 * NSEC_PER_MSEC);
    }
  }
}

TEST_CASE("rwsem: simulated hold times are exact virtual time", "[shim][rwsem][stats]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 2, 1));
  rw_semaphore sem("sem");
  m.exec([&] {
    down_write(&sem);
    emu::consume_time(50000);
    up_write(&sem);
    down_read(&sem);
    emu::consume_time(30000);
    up_read(&sem);
    down_read(&sem);  // shorter: the maxima keep the longest
    emu::consume_time(100);
    up_read(&sem);
  });
  const rwsem_stats st = rwsem_get_stats(&sem);
  CHECK(st.max_write_hold_ns == 50000);
  CHECK(st.max_read_hold_ns == 30000);
  CHECK(st.read_contended == 0);
  CHECK(st.max_read_wait_ns == 0);
  rwsem_reset_stats(&sem);
  CHECK(rwsem_get_stats(&sem).read_acquired == 0);
}

TEST_CASE("rwsem: the native statistics clock runs at real-time speed", "[shim][rwsem][stats]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::native, 2));
  std::uint64_t clock_ns = 0, ktime_ns = 0;
  m.exec([&] {
    const std::uint64_t c0 = emu::rwsem_clock_ns(), k0 = ktime_get_ns();
    msleep(30);
    clock_ns = emu::rwsem_clock_ns() - c0;
    ktime_ns = ktime_get_ns() - k0;
  });
  INFO("TSC ns per tick " << emu::rwsem_tsc_ns_per_tick());
  const double ratio = static_cast<double>(clock_ns) / static_cast<double>(ktime_ns);
  CHECK(ratio > 0.95);
  CHECK(ratio < 1.05);
}

TEST_CASE("rwsem: real threads keep the invariants through trylocks and killable waits and downgrades",
          "[shim][rwsem][threads]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::native, 4));
  rw_semaphore sem("stress");
  std::atomic<int> writers{0}, readers{0}, bad{0};
  long shared = 0;  // written under the write lock, read under the read lock
  auto check_read = [&] {
    readers.fetch_add(1);
    if (writers.load() != 0) bad++;
    long v = shared;
    (void)v;
    readers.fetch_sub(1);
  };
  for (int i = 0; i < 6; i++) {
    m.spawn("t", [&, i] {
      for (int j = 0; j < 400; j++) {
        emu::KernelEntry k;
        switch ((i + j) % 6) {
          case 0:
          case 1:
            down_write(&sem);
            if (writers.fetch_add(1) != 0 || readers.load() != 0) bad++;
            shared++;
            writers.fetch_sub(1);
            if (j % 3 == 0) {
              downgrade_write(&sem);
              check_read();
              up_read(&sem);
            } else {
              up_write(&sem);
            }
            break;
          case 2:
            if (down_write_trylock(&sem)) {
              if (writers.fetch_add(1) != 0 || readers.load() != 0) bad++;
              shared++;
              writers.fetch_sub(1);
              up_write(&sem);
            }
            break;
          case 3:
            if (down_read_trylock(&sem)) {
              check_read();
              up_read(&sem);
            }
            break;
          case 4:
            if (down_read_killable(&sem) == 0) {
              check_read();
              up_read(&sem);
            }
            break;
          default:
            down_read(&sem);
            check_read();
            up_read(&sem);
        }
      }
    });
  }
  m.run();
  CHECK(bad == 0);
  CHECK(count_of(sem) == RWSEM_UNLOCKED_VALUE);
  CHECK(emu::rwsem_nr_waiters(&sem) == 0);
  const rwsem_stats st = rwsem_get_stats(&sem);
  CHECK(st.write_acquired >= 6 * 400 / 3);  // every down_write, some trylocks
}

TEST_CASE("rwsem: with lock_stat off nothing is timed or counted", "[shim][rwsem][stats]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 2, 1));
  rw_semaphore sem("sem");
  m.exec([&] {
    down_read(&sem);  // taken with lock_stat on, released with it off: the record goes
    REQUIRE(emu::set_rwsem_lock_stat(false));
    emu::consume_time(1000);
    up_read(&sem);
    down_write(&sem);
    emu::consume_time(1000);
    up_write(&sem);
    down_read(&sem);  // taken with it off, released with it on: not timed
    CHECK_FALSE(emu::set_rwsem_lock_stat(true));
    emu::consume_time(1000);
    up_read(&sem);
    down_read(&sem);  // on again: timed
    emu::consume_time(10);
    up_read(&sem);
  });
  const rwsem_stats st = rwsem_get_stats(&sem);
  CHECK(st.read_acquired == 2);
  CHECK(st.write_acquired == 0);
  CHECK(st.max_write_hold_ns == 0);
  CHECK(st.max_read_hold_ns == 10);
}
