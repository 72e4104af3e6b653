// SPDX-License-Identifier: GPL-2.0-only
// Tests of workqueues: per-CPU placement, coalescing, flush, cancel, delayed work.
#include <catch2/catch.hpp>

#include <atomic>

#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/sched.h"
#include "shim/workqueue.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;
using umemcg::test::WarnCheck;

namespace {
struct Item {
  work_struct work;
  std::atomic<int> runs{0};
  std::atomic<int> cpu{-1};
  std::atomic<bool> is_worker{false};
  std::atomic<int> sleep_ms{0};
  // Native mode only: spin, keeping the vCPU (no scheduling point), until cleared.
  std::atomic<bool> hold{false};
};
void item_fn(work_struct *w) {
  auto *it = reinterpret_cast<Item *>(w);
  it->cpu = smp_processor_id();
  it->is_worker = (current->flags & PF_WQ_WORKER) && current_work() == w;
  while (it->hold.load()) {
  }
  if (int ms = it->sleep_ms.load()) msleep(static_cast<unsigned>(ms));
  it->runs++;
}
}  // namespace

TEST_CASE("workqueue: queue_work_on runs the work on that vCPU, by a worker",
          "[shim][workqueue]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 4, 12));
    workqueue_struct *wq = nullptr;
    Item items[4];
    m.exec([&] {
      wq = alloc_workqueue("memcg", WQ_PERCPU, 0);
      for (int cpu = 0; cpu < 4; cpu++) {
        INIT_WORK(&items[cpu].work, item_fn);
        CHECK(queue_work_on(cpu, wq, &items[cpu].work));
      }
      for (auto &it : items) flush_work(&it.work);
    }, 0);
    for (int cpu = 0; cpu < 4; cpu++) {
      CHECK(items[cpu].runs == 1);
      CHECK(items[cpu].cpu == cpu);
      CHECK(items[cpu].is_worker);
    }
  }
}

TEST_CASE("workqueue: queueing a pending item coalesces; the function may requeue itself",
          "[shim][workqueue]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 2, 13));
    Item it;
    m.exec([&] {
      INIT_WORK(&it.work, item_fn);
      it.sleep_ms = 0;
      CHECK(queue_work(system_wq, &it.work));
      CHECK_FALSE(queue_work(system_wq, &it.work));  // still pending
      CHECK(work_pending(&it.work));
      flush_work(&it.work);
      CHECK(it.runs == 1);
      CHECK_FALSE(work_pending(&it.work));
      CHECK(queue_work(system_unbound_wq, &it.work));
      flush_work(&it.work);
      CHECK(it.runs == 2);
      CHECK_FALSE(flush_work(&it.work));  // nothing to wait for
    });
  }
}

TEST_CASE("workqueue: cancel_work_sync removes pending work and waits for running work",
          "[shim][workqueue]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 2, 14));
    Item a, b;
    m.exec([&] {
      INIT_WORK(&a.work, item_fn);
      INIT_WORK(&b.work, item_fn);
      a.sleep_ms = 20;
      // Native mode: a keeps vCPU 1 until b is cancelled, so no worker can start b before the
      // cancel (otherwise a new worker may take vCPU 1 while a sleeps, and b's fate is a race).
      // Simulated mode: a sleeps; the seeded schedule decides, the same way every run.
      a.hold = mode == emu::Mode::native;
      queue_work_on(1, system_wq, &a.work);
      while (!work_busy(&a.work) || work_pending(&a.work)) msleep(1);  // a is running
      queue_work_on(1, system_wq, &b.work);
      CHECK(cancel_work_sync(&b.work));  // pending: removed, never runs
      a.hold = false;
      CHECK_FALSE(cancel_work_sync(&a.work));  // running: waited for
      CHECK(a.runs == 1);
    }, 0);
    m.run();
    CHECK(b.runs == 0);
    CHECK(a.runs == 1);
  }
}

TEST_CASE("workqueue: delayed work runs after its delay on the machine clock",
          "[shim][workqueue][time]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 2, 15));
    struct D {
      delayed_work dw;
      std::atomic<std::uint64_t> ran_at{0};
    } d, e;
    auto fn = [](work_struct *w) {
      auto *x = reinterpret_cast<D *>(to_delayed_work(w));
      x->ran_at = ktime_get_ns();
    };
    m.exec([&] {
      INIT_DELAYED_WORK(&d.dw, fn);
      INIT_DELAYED_WORK(&e.dw, fn);
      CHECK(queue_delayed_work(system_wq, &d.dw, 30));
      CHECK_FALSE(queue_delayed_work(system_wq, &d.dw, 1));
      CHECK(queue_delayed_work(system_wq, &e.dw, 10));
      CHECK(cancel_delayed_work_sync(&e.dw));
      CHECK(mod_delayed_work(system_wq, &e.dw, 5) == false);
      msleep(60);
      flush_delayed_work(&d.dw);
    });
    CHECK(d.ran_at >= 30 * NSEC_PER_MSEC);
    CHECK(e.ran_at >= 5 * NSEC_PER_MSEC);
    if (mode == emu::Mode::simulated) {
      CHECK(d.ran_at == 30 * NSEC_PER_MSEC);
      CHECK(e.ran_at == 5 * NSEC_PER_MSEC);
    }
  }
}

TEST_CASE("workqueue: flush_workqueue waits for everything queued", "[shim][workqueue]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 2, 16));
    Item items[6];
    m.exec([&] {
      workqueue_struct *wq = alloc_workqueue("ub", WQ_UNBOUND, 0);
      for (int i = 0; i < 6; i++) {
        INIT_WORK(&items[i].work, item_fn);
        items[i].sleep_ms = i;
        queue_work(wq, &items[i].work);
      }
      flush_workqueue(wq);
      for (auto &it : items) CHECK(it.runs == 1);
      destroy_workqueue(wq);
    });
  }
}

namespace {
// Counts concurrent executions: a second execution that starts while the first sleeps is a
// reentrancy.
struct Reentry {
  work_struct work;
  std::atomic<int> inside{0}, max_inside{0}, runs{0};
};
void reentry_fn(work_struct *w) {
  auto *r = reinterpret_cast<Reentry *>(w);
  int n = ++r->inside;
  int m = r->max_inside.load();
  while (n > m && !r->max_inside.compare_exchange_weak(m, n)) {
  }
  msleep(10);
  --r->inside;
  r->runs++;
}
}  // namespace

TEST_CASE("workqueue: an item queued again while it runs runs again after, never at once",
          "[shim][workqueue]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 4, 21));
    Reentry r;
    m.exec([&] {
      INIT_WORK(&r.work, reentry_fn);
      // Queued again while it sleeps: on the same pool (same vCPU), and from other vCPUs
      // (another pool: it must go to the pool where it still runs).
      for (int round = 0; round < 6; round++) {
        queue_work_on(round % 4, system_wq, &r.work);
        msleep(3);
      }
      flush_work(&r.work);
    }, 0);
    CHECK(r.max_inside == 1);
    CHECK(r.runs >= 2);
  }
}

namespace {
struct Spinner {
  work_struct work;
  std::atomic<int> runs{0};
  std::atomic<bool> started{false};  // relaxed: gives the test no happens-before edge
  std::atomic<bool> hold{false};
};
void spinner_fn(work_struct *w) {
  auto *s = reinterpret_cast<Spinner *>(w);
  s->started.store(true, std::memory_order_relaxed);
  while (s->hold.load(std::memory_order_relaxed)) {
  }
  s->runs++;
}
}  // namespace

// Native mode, real threads: the item is queued again from another vCPU while its function runs
// (after PENDING was cleared, before the worker takes the pool lock again). The queueing writes
// the item's queue bookkeeping; the worker must have taken its own copy under the pool lock, not
// after it (ThreadSanitizer reports the two writes otherwise, and a lost queue would leave
// flush_workqueue waiting for ever).
TEST_CASE("workqueue: queued again from another vCPU while it runs, the queue's count stays "
          "exact",
          "[shim][workqueue][native]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::native, 2, 22));
  Spinner s;
  m.exec([&] {
    workqueue_struct *wq = alloc_workqueue("requeue", WQ_PERCPU, 0);
    INIT_WORK(&s.work, spinner_fn);
    for (int round = 0; round < 20; round++) {
      s.started.store(false, std::memory_order_relaxed);
      s.hold.store(true, std::memory_order_relaxed);
      CHECK(queue_work_on(1, wq, &s.work));
      while (!s.started.load(std::memory_order_relaxed)) {
      }
      CHECK(queue_work_on(1, wq, &s.work));  // PENDING was cleared before the function ran
      s.hold.store(false, std::memory_order_relaxed);
      flush_workqueue(wq);
    }
    destroy_workqueue(wq);
  }, 0);
  CHECK(s.runs == 40);
}

namespace {
// Items of one group record how many of the group run at once and the order they start in.
struct Group {
  std::atomic<int> inside{0}, max_inside{0}, started{0};
};
struct Member {
  work_struct work;
  Group *group = nullptr;
  unsigned sleep_ms = 5;
  std::atomic<int> start_rank{-1}, runs{0};
};
void member_fn(work_struct *w) {
  auto *it = reinterpret_cast<Member *>(w);
  Group *g = it->group;
  it->start_rank = g->started++;
  int n = ++g->inside;
  int m = g->max_inside.load();
  while (n > m && !g->max_inside.compare_exchange_weak(m, n)) {
  }
  msleep(it->sleep_ms);  // a sleeping item: without max_active another worker would start
  --g->inside;
  it->runs++;
}
}  // namespace

TEST_CASE("workqueue: max_active bounds a per-CPU queue's running items per vCPU; the others "
          "wait and start in queueing order",
          "[shim][workqueue]") {
  for (emu::Mode mode : test::kBothModes) {
    for (int max_active : {1, 2, 0}) {
      CAPTURE(mode, max_active);
      WarnCheck wc;
      emu::Machine m(config(mode, 2, 31));
      Group on1, on0;
      Member items[5], other;
      m.exec([&] {
        workqueue_struct *wq = alloc_workqueue("bounded", WQ_PERCPU, max_active);
        for (auto &it : items) {
          it.group = &on1;
          INIT_WORK(&it.work, member_fn);
          CHECK(queue_work_on(1, wq, &it.work));
        }
        other.group = &on0;  // another vCPU's pool: not bounded by vCPU 1's items
        INIT_WORK(&other.work, member_fn);
        CHECK(queue_work_on(0, wq, &other.work));
        flush_workqueue(wq);
        destroy_workqueue(wq);
      }, 0);
      for (auto &it : items) CHECK(it.runs == 1);
      CHECK(other.runs == 1);
      if (max_active == 1) {
        CHECK(on1.max_inside == 1);
        for (int i = 0; i < 5; i++) CHECK(items[i].start_rank == i);
      } else if (max_active == 2) {
        CHECK(on1.max_inside <= 2);
        if (mode == emu::Mode::simulated) CHECK(on1.max_inside == 2);
      } else if (mode == emu::Mode::simulated) {
        CHECK(on1.max_inside == 5);  // the default (WQ_DFL_ACTIVE) lets all of them run
      }
    }
  }
}

TEST_CASE("workqueue: an unbound queue's max_active bounds the whole queue; an ordered queue "
          "runs one item at a time in queueing order",
          "[shim][workqueue]") {
  for (emu::Mode mode : test::kBothModes) {
    CAPTURE(mode);
    WarnCheck wc;
    emu::Machine m(config(mode, 4, 32));
    Group ub, ord, clamped;
    Member a[6], b[6], c[3];
    m.exec([&] {
      workqueue_struct *wq = alloc_workqueue("ub2", WQ_UNBOUND, 2);
      workqueue_struct *oq = alloc_ordered_workqueue("ordered", 0);
      workqueue_struct *cq = alloc_workqueue("clamped", WQ_UNBOUND, -3);  // clamped to 1
      for (int i = 0; i < 6; i++) {
        a[i].group = &ub;
        INIT_WORK(&a[i].work, member_fn);
        CHECK(queue_work_on(i % 4, wq, &a[i].work));  // the vCPU does not matter: one pool
        b[i].group = &ord;
        b[i].sleep_ms = 1 + (5 - i);  // the earlier ones sleep longer: order still holds
        INIT_WORK(&b[i].work, member_fn);
        CHECK(queue_work_on(i % 4, oq, &b[i].work));
      }
      for (auto &it : c) {
        it.group = &clamped;
        INIT_WORK(&it.work, member_fn);
        CHECK(queue_work(cq, &it.work));
      }
      flush_workqueue(wq);
      flush_workqueue(oq);
      flush_workqueue(cq);
      destroy_workqueue(wq);
      destroy_workqueue(oq);
      destroy_workqueue(cq);
    }, 0);
    for (auto &it : a) CHECK(it.runs == 1);
    CHECK(ub.max_inside <= 2);
    if (mode == emu::Mode::simulated) CHECK(ub.max_inside == 2);
    CHECK(ord.max_inside == 1);
    for (int i = 0; i < 6; i++) CHECK(b[i].start_rank == i);
    CHECK(clamped.max_inside == 1);
  }
}

TEST_CASE("workqueue: an item waiting for max_active can be flushed and cancelled; a cancelled "
          "active item lets the next one start",
          "[shim][workqueue]") {
  for (emu::Mode mode : test::kBothModes) {
    CAPTURE(mode);
    WarnCheck wc;
    emu::Machine m(config(mode, 2, 33));
    Group g;
    Member first, second, third;
    bool cancelled_active = false;
    m.exec([&] {
      workqueue_struct *wq = alloc_workqueue("one", WQ_PERCPU, 1);
      for (Member *it : {&first, &second, &third}) {
        it->group = &g;
        it->sleep_ms = 10;
        INIT_WORK(&it->work, member_fn);
      }
      CHECK(queue_work_on(1, wq, &first.work));
      CHECK(queue_work_on(1, wq, &second.work));
      CHECK(queue_work_on(1, wq, &third.work));
      // second and third wait behind first: third is removed, never runs.
      CHECK(cancel_work_sync(&third.work));
      CHECK(third.runs == 0);
      // Flushing the waiting second waits for first and then for it.
      CHECK(flush_work(&second.work));
      CHECK(first.runs == 1);
      CHECK(second.runs == 1);
      // Queued again, third is active while nothing else is.
      CHECK(queue_work_on(1, wq, &third.work));
      flush_workqueue(wq);
      CHECK(third.runs == 1);
      // An active item cancelled before it runs hands its turn to the next waiting one
      // (without that, y would wait for ever).
      Member x, y;
      for (Member *it : {&x, &y}) {
        it->group = &g;
        INIT_WORK(&it->work, member_fn);
      }
      CHECK(queue_work_on(1, wq, &x.work));
      CHECK(queue_work_on(1, wq, &y.work));
      cancelled_active = cancel_work(&x.work);
      CHECK(flush_work(&y.work));
      CHECK(y.runs == 1);
      CHECK(x.runs == (cancelled_active ? 0 : 1));
      destroy_workqueue(wq);
    }, 0);
    CHECK(g.max_inside == 1);
    CHECK(second.start_rank == 1);
    // The simulated schedule (this seed) cancels x before its worker takes it.
    if (mode == emu::Mode::simulated) CHECK(cancelled_active);
  }
}
