// SPDX-License-Identifier: GPL-2.0-only
// Tests of per-CPU data, preemption state, local locks and nested interrupt contexts.
#include <catch2/catch.hpp>

#include <atomic>

#include "shim/local_lock.h"
#include "shim/machine.h"
#include "shim/percpu.h"
#include "shim/preempt.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;
using umemcg::test::WarnCheck;

namespace {
struct pcp_counter {
  local_trylock_t lock;
  long n GUARDED_BY(lock) = 0;
};
DEFINE_PER_CPU(pcp_counter, test_counter);
struct pcp_plain_counter {
  local_lock_t lock;
  long n GUARDED_BY(lock) = 0;
};
DEFINE_PER_CPU(pcp_plain_counter, test_plain_counter);
}  // namespace

TEST_CASE("percpu: each vCPU has its own cache-line-aligned copy", "[shim][percpu]") {
  WarnCheck wc;
  for (emu::Mode mode : test::kBothModes) {
    emu::Machine m(config(mode, 4));
    percpu<long> *p = alloc_percpu<long>();
    REQUIRE(p);
    for (int cpu = 0; cpu < 4; cpu++) {
      m.exec([p] { *this_cpu_ptr(p) += smp_processor_id() + 10; }, cpu);
    }
    int cpu;
    long sum = 0;
    for_each_possible_cpu(cpu) {
      CHECK(*per_cpu_ptr(p, cpu) == cpu + 10);
      sum += *per_cpu_ptr(p, cpu);
      if (cpu > 0) {
        auto a = reinterpret_cast<std::uintptr_t>(per_cpu_ptr(p, cpu));
        auto b = reinterpret_cast<std::uintptr_t>(per_cpu_ptr(p, cpu - 1));
        CHECK(a - b >= SMP_CACHE_BYTES);
        CHECK(a % SMP_CACHE_BYTES == 0);
      }
    }
    CHECK(sum == 0 + 1 + 2 + 3 + 40);
    CHECK(nr_cpu_ids == 4);
    CHECK(num_online_cpus() == 4);
    free_percpu(p);
  }
}

TEST_CASE("local_trylock fails in an interrupt nested on the holder, succeeds elsewhere",
          "[shim][local_lock]") {
  for (emu::Mode mode : test::kBothModes) {
    WarnCheck wc;
    emu::Machine m(config(mode, 2));
    m.exec([]() NO_THREAD_SAFETY_ANALYSIS {
      // (The test's point is a lock held across a nested context, which the analysis cannot
      // follow through run_in_irq's callback.)
      pcp_counter *c = this_cpu_ptr(&test_counter);
      bool irq_got_it = true;
      bool irq_in_task = true;
      bool task_got_it = false;
      if (local_trylock(&c->lock)) {
        task_got_it = true;
        CHECK(preempt_count() == 1);
        c->n++;
      }
      REQUIRE(task_got_it);
      // An interrupt on this vCPU while the task holds the lock: the trylock must fail.
      bool delivered = emu::run_in_irq([&] {
        irq_in_task = in_task();
        pcp_counter *ic = this_cpu_ptr(&test_counter);
        irq_got_it = false;
        if (local_trylock(&ic->lock)) {
          irq_got_it = true;
          local_unlock(&ic->lock);
        }
      });
      CHECK(delivered);
      CHECK_FALSE(irq_got_it);
      CHECK_FALSE(irq_in_task);
      lockdep_assert_local_held(&c->lock);
      local_unlock(&c->lock);
      CHECK(preempt_count() == 0);
      // Not held: the same interrupt gets it.
      emu::run_in_irq([&] {
        pcp_counter *ic = this_cpu_ptr(&test_counter);
        irq_got_it = false;
        if (local_trylock(&ic->lock)) {
          irq_got_it = true;
          ic->n++;
          local_unlock(&ic->lock);
        }
      });
      CHECK(irq_got_it);
      CHECK(in_task());
      // With interrupts disabled an interrupt is not delivered.
      unsigned long flags;
      local_irq_save(flags);
      CHECK_FALSE(emu::run_in_irq([] {}));
      local_irq_restore(flags);
      local_lock(&c->lock);
      CHECK(c->n == 2);
      local_unlock(&c->lock);
    }, 1);
    // The other vCPU's copy is untouched.
    CHECK_FALSE(per_cpu_ptr(&test_counter, 0)->lock.acquired);
    test_counter = {};
  }
}

TEST_CASE("local_lock taken again from a nested context is a warning", "[shim][local_lock]") {
  WarnCheck wc(1);
  emu::set_warnings_quiet(true);
  emu::Machine m(config(emu::Mode::simulated, 1));
  m.exec([] {
    pcp_counter *c = this_cpu_ptr(&test_counter);
    local_lock(&c->lock);
    emu::run_in_irq([] {
      pcp_counter *ic = this_cpu_ptr(&test_counter);
      local_lock(&ic->lock);  // would deadlock in the kernel
      local_unlock(&ic->lock);
    });
    c->lock.acquired = true;  // the nested unlock released it: restore for our own unlock
    local_unlock(&c->lock);
  });
  emu::set_warnings_quiet(false);
  test_counter = {};
}

TEST_CASE("local_lock of a local_lock_t is preempt_disable alone; a local_trylock_t tracks "
          "its holder", "[shim][local_lock]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 1));
  // The trylock outcomes below are asserted by the test, not visible to -Wthread-safety.
  m.exec([]() NO_THREAD_SAFETY_ANALYSIS {
    pcp_plain_counter *c = this_cpu_ptr(&test_plain_counter);
    local_lock(&c->lock);
    CHECK(preempt_count() == 1);
    CHECK_FALSE(c->lock.acquired);  // nothing recorded: the kernel's !LOCKDEP local_lock_t
    c->n++;
    local_unlock(&c->lock);
    CHECK(preempt_count() == 0);
    // A trylock lock is tracked: an interrupt's trylock fails while the task holds it.
    static local_trylock_t tl = INIT_LOCAL_TRYLOCK(tl);
    REQUIRE(local_trylock(&tl));
    CHECK(tl.acquired);
    bool irq_got_it = true;
    emu::run_in_irq([&]() NO_THREAD_SAFETY_ANALYSIS {
      irq_got_it = local_trylock(&tl);
      if (irq_got_it) local_unlock(&tl);
    });
    CHECK_FALSE(irq_got_it);
    local_unlock(&tl);
    CHECK_FALSE(tl.acquired);
  });
  const long n = []() NO_THREAD_SAFETY_ANALYSIS { return per_cpu_ptr(&test_plain_counter, 0)->n; }();
  CHECK(n == 1);  // read after the machine stopped: no context holds the lock
  test_plain_counter = {};
}

TEST_CASE("preemption and migration state", "[shim][preempt]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 2, 4));
  m.exec([] {
    CHECK(preemptible());
    preempt_disable();
    CHECK_FALSE(preemptible());
    preempt_disable();
    CHECK(preempt_count() == 2);
    preempt_enable();
    preempt_enable();
    CHECK(preemptible());
    // A migrate-disabled task comes back on the same vCPU after scheduling points.
    migrate_disable();
    int cpu = smp_processor_id();
    bool same = true;
    for (int i = 0; i < 50; i++) {
      cond_resched();
      same = same && smp_processor_id() == cpu;
    }
    migrate_enable();
    CHECK(same);
  });
}
