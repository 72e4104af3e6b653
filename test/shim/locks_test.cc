// SPDX-License-Identifier: GPL-2.0-only
// Tests of the sleeping locks: mutex and rwsem (semantics, statistics, hook points).
#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "shim/errno.h"
#include "shim/hooks.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/mutex.h"
#include "shim/rwsem.h"
#include "shim/sched.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;
using umemcg::test::wait_until;
using umemcg::test::WarnCheck;

TEST_CASE("rwsem: a waiting writer blocks later readers", "[shim][rwsem]") {
  // Reader A holds the lock; writer W queues; reader B arrives after W and must wait for W,
  // although only a reader holds the lock. Order of acquisition: A, W, B.
  for (emu::Mode mode : test::kBothModes) {
    SECTION(test::mode_name(mode)) {
      WarnCheck wc;
      emu::Machine m(config(mode, 4, 11));
      rw_semaphore sem("sem");
      std::vector<std::string> order;
      std::mutex order_mu;
      auto log = [&](const char *s) {
        std::lock_guard<std::mutex> g(order_mu);
        order.emplace_back(s);
      };
      std::atomic<int> stage{0};
      m.spawn("A", [&] {
        emu::KernelEntry k;
        down_read(&sem);
        log("A");
        stage = 1;
        wait_until([&] { return rwsem_is_contended(&sem) && stage >= 3; });
        msleep(5);  // B is queued behind W by now
        up_read(&sem);
      });
      m.spawn("W", [&] {
        emu::KernelEntry k;
        wait_until([&] { return stage >= 1; });
        stage = 2;
        down_write(&sem);
        log("W");
        up_write(&sem);
      });
      m.spawn("B", [&] {
        emu::KernelEntry k;
        wait_until([&] { return stage >= 2 && rwsem_is_contended(&sem); });
        stage = 3;
        CHECK(down_read_trylock(&sem) == 0);  // trylock refuses too: a writer waits
        down_read(&sem);
        log("B");
        up_read(&sem);
      });
      emu::RunResult r = m.run();
      CHECK_FALSE(r.deadlock);
      REQUIRE(order.size() == 3);
      CHECK(order[0] == "A");
      CHECK(order[1] == "W");
      CHECK(order[2] == "B");
      rwsem_stats st = rwsem_get_stats(&sem);
      CHECK(st.read_acquired == 2);
      CHECK(st.write_acquired == 1);
      CHECK(st.write_contended == 1);
      CHECK(st.read_contended == 1);
      // W waited at least the 5 ms A kept the lock after B queued; B waited for W too.
      CHECK(st.max_write_wait_ns >= 5 * NSEC_PER_MSEC);
      CHECK(st.max_read_hold_ns >= 5 * NSEC_PER_MSEC);
      CHECK(st.max_read_wait_ns >= st.max_write_hold_ns);
    }
  }
}

TEST_CASE("rwsem: a release to readers wakes every queued reader, writers keep their place",
          "[shim][rwsem]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 4, 5));
  rw_semaphore sem("sem");
  std::atomic<int> readers_in{0};
  std::atomic<int> max_readers{0};
  std::atomic<bool> writer2_done{false};
  m.exec([&] {
    down_write(&sem);
    // Queue: R1, W2, R3, R4 (spawned in order, each waits for the previous to be queued).
    auto reader = [&] {
      emu::KernelEntry k;
      down_read(&sem);
      int n = ++readers_in;
      int prev = max_readers.load();
      while (n > prev && !max_readers.compare_exchange_weak(prev, n)) {}
      msleep(2);
      --readers_in;
      up_read(&sem);
    };
    emu::Machine::get()->spawn("R1", reader);
    wait_until([&] { return emu::rwsem_nr_waiters(&sem) == 1; });
    emu::Machine::get()->spawn("W2", [&] {
      emu::KernelEntry k;
      down_write(&sem);
      CHECK(readers_in == 0);
      writer2_done = true;
      up_write(&sem);
    });
    wait_until([&] { return emu::rwsem_nr_waiters(&sem) == 2; });
    emu::Machine::get()->spawn("R3", reader);
    emu::Machine::get()->spawn("R4", reader);
    wait_until([&] { return emu::rwsem_nr_waiters(&sem) == 4; });
    up_write(&sem);  // R1, R3 and R4 all get the lock; W2 stays queued
    wait_until([&] { return writer2_done.load(); });
  });
  m.run();
  CHECK(max_readers == 3);
}

TEST_CASE("rwsem: killable waits end on a fatal signal", "[shim][rwsem]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 2, 3));
    rw_semaphore sem("sem");
    std::atomic<int> ret{1};
    std::atomic<bool> holding{false};
    task_struct *victim = nullptr;
    m.exec([&] {
      down_write(&sem);
      holding = true;
      victim = emu::Machine::get()->spawn("victim", [&] {
        emu::KernelEntry k;
        if (down_read_killable(&sem) == 0) {
          ret = 0;
          up_read(&sem);
        } else {
          ret = -EINTR;
        }
      });
      wait_until([&] { return rwsem_is_contended(&sem); });
      send_sig_kill(victim);
      wait_until([&] { return ret.load() != 1; });
      CHECK_FALSE(rwsem_is_contended(&sem));
      up_write(&sem);
    });
    m.run();
    CHECK(ret == -EINTR);
  }
}

TEST_CASE("rwsem: real threads keep writers exclusive", "[shim][rwsem][threads]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::native, 4));
  rw_semaphore sem("sem");
  std::atomic<int> writers{0}, readers{0}, bad{0};
  for (int i = 0; i < 8; i++) {
    m.spawn("t", [&, i] {
      for (int j = 0; j < 300; j++) {
        emu::KernelEntry k;
        if ((i + j) % 4 == 0) {
          down_write(&sem);
          if (writers.fetch_add(1) != 0 || readers.load() != 0) bad++;
          writers.fetch_sub(1);
          up_write(&sem);
        } else {
          down_read(&sem);
          readers.fetch_add(1);
          if (writers.load() != 0) bad++;
          readers.fetch_sub(1);
          up_read(&sem);
        }
      }
    });
  }
  m.run();
  CHECK(bad == 0);
  CHECK_FALSE(rwsem_is_locked(&sem));
}

TEST_CASE("rwsem: fentry/fexit hook points see the lock and the trylock result",
          "[shim][rwsem][hooks]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 2));
  rw_semaphore sem("sem");
  struct Seen {
    int entries = 0, exits = 0;
    std::uint64_t last_arg = 0, last_ret = 99;
  } seen;
  emu::HookPoint *down = emu::HookPoint::find("down_read");
  emu::HookPoint *tryw = emu::HookPoint::find("down_write_trylock");
  REQUIRE(down);
  REQUIRE(tryw);
  REQUIRE(emu::HookPoint::find("up_write"));
  REQUIRE(emu::HookPoint::find("down_write_killable"));
  m.exec([&] {
    int id1 = down->attach(false, [](void *d, const std::uint64_t *a, unsigned, std::uint64_t) {
      auto *s = static_cast<Seen *>(d);
      s->entries++;
      s->last_arg = a[0];
    }, &seen);
    int id2 = tryw->attach(true, [](void *d, const std::uint64_t *, unsigned, std::uint64_t r) {
      auto *s = static_cast<Seen *>(d);
      s->exits++;
      s->last_ret = r;
    }, &seen);
    down_read(&sem);
    CHECK(down_write_trylock(&sem) == 0);
    up_read(&sem);
    bool got = false;
    if (down_write_trylock(&sem) == 1) {
      got = true;
      up_write(&sem);
    }
    CHECK(got);
    CHECK(down->detach(id1));
    CHECK(tryw->detach(id2));
    CHECK_FALSE(down->detach(id1));
    down_read(&sem);  // detached: not seen
    up_read(&sem);
  });
  CHECK(seen.entries == 1);
  CHECK(seen.last_arg == reinterpret_cast<std::uintptr_t>(&sem));
  CHECK(seen.exits == 2);
  CHECK(seen.last_ret == 1);
}

TEST_CASE("mutex: exclusion, FIFO hand-over, trylock and killable waits", "[shim][mutex]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 4, 9));
    mutex mu("mu");
    long counter = 0;  // protected by mu
    for (int i = 0; i < 6; i++) {
      m.spawn("inc", [&] {
        for (int j = 0; j < 200; j++) {
          emu::KernelEntry k;
          mutex_lock(&mu);
          long c = counter;
          if (j % 50 == 0) msleep(1);  // sleep while holding: others queue
          counter = c + 1;
          mutex_unlock(&mu);
        }
      });
    }
    m.run();
    CHECK(counter == 1200);
    CHECK_FALSE(mutex_is_locked(&mu));

    std::atomic<int> killed_ret{1};
    m.exec([&] {
      mutex_lock(&mu);
      CHECK(mutex_trylock(&mu) == 0);
      task_struct *v = emu::Machine::get()->spawn("victim", [&] {
        emu::KernelEntry k;
        if (mutex_lock_killable(&mu) == 0) {
          killed_ret = 0;
          mutex_unlock(&mu);
        } else {
          killed_ret = -EINTR;
        }
      });
      wait_until([&] {
        std::lock_guard<std::mutex> g(mu.wait_lock);
        return !mu.wait_list.empty();
      });
      send_sig_kill(v);
      wait_until([&] { return killed_ret.load() != 1; });
      mutex_unlock(&mu);
    });
    m.run();
    CHECK(killed_ret == -EINTR);
  }
}
