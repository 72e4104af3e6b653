// SPDX-License-Identifier: GPL-2.0-only
// Tests of RCU in both modes.
#include <catch2/catch.hpp>

#include <atomic>

#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/preempt.h"
#include "shim/rcupdate.h"
#include "shim/sched.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;
using umemcg::test::WarnCheck;

namespace {
struct Obj {
  rcu_head rcu;
  int value;
  std::atomic<int> *freed;
};
Obj *g_ptr = nullptr;
void free_obj(rcu_head *h) {
  auto *o = reinterpret_cast<Obj *>(h);
  o->freed->fetch_add(1);
  delete o;
}
}  // namespace

TEST_CASE("rcu: synchronize_rcu waits for pre-existing readers", "[shim][rcu]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::native, 2));
  std::atomic<int> stage{0};
  std::atomic<bool> reader_done{false};
  std::atomic<bool> sync_saw_reader_done{false};
  m.spawn("reader", [&] {
    emu::KernelEntry k;
    rcu_read_lock();
    CHECK(rcu_read_lock_held());
    CHECK(preempt_count() == 1);
    stage = 1;
    auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(30)) {}
    reader_done = true;
    rcu_read_unlock();
  });
  m.spawn("updater", [&] {
    emu::KernelEntry k;
    while (stage.load() == 0) msleep(1);
    synchronize_rcu();
    sync_saw_reader_done = reader_done.load();
  });
  m.run();
  CHECK(sync_saw_reader_done);
}

TEST_CASE("rcu: call_rcu frees after readers, rcu_barrier waits for callbacks", "[shim][rcu]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 2, 21));
    std::atomic<int> freed{0};
    std::atomic<int> bad_reads{0};
    m.exec([&] {
      g_ptr = new Obj{{}, 1, &freed};
      for (int i = 0; i < 3; i++) {
        emu::Machine::get()->spawn("reader", [&] {
          emu::KernelEntry k;
          for (int j = 0; j < 100; j++) {
            rcu_read_lock();
            Obj *o = rcu_dereference(g_ptr);
            if (o && o->value <= 0) bad_reads++;
            rcu_read_unlock();
            cond_resched();
          }
        });
      }
      for (int v = 2; v < 50; v++) {
        Obj *old = g_ptr;
        Obj *fresh = new Obj{{}, v, &freed};
        rcu_assign_pointer(g_ptr, fresh);
        call_rcu(&old->rcu, free_obj);
        cond_resched();
      }
    });
    m.run();
    m.exec([] { rcu_barrier(); });
    CHECK(freed == 48);
    CHECK(bad_reads == 0);
    delete g_ptr;
    g_ptr = nullptr;
  }
}
