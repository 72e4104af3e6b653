// SPDX-License-Identifier: GPL-2.0-only
// Tests of the page_counter stock design (seed 003).
#include "test/support/memcg_env.h"

#include "mm/memcontrol_internal.h"
#include "mm/page_counter_stock.h"
#include "shim/errno.h"
#include "shim/preempt.h"

using namespace umemcg;
using namespace umemcg::test;

namespace umemcg::emu {
page_counter_stock *memcg_pcstock_bank(bool memsw);
}

namespace {
long usage(mem_cgroup *m) { return static_cast<long>(page_counter_read(&m->memory)); }
emu::pc_stock_slot slot_of(bool memsw, int cpu, page_counter *c) {
  emu::pc_stock_slot s[NR_PC_STOCK];
  emu::page_counter_stock_snapshot(emu::memcg_pcstock_bank(memsw), cpu, s);
  for (auto &x : s)
    if (x.counter == c) return x;
  return {nullptr, 0};
}
}  // namespace

TEST_CASE("pcstock: the stock lives in the memory page counter; only memory and memsw stock",
          "[mm][memcg][pcstock]") {
  WarnCheck wc;
  MemcgEnv env(v2_params(true));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  CHECK(a->memory.stock == emu::memcg_pcstock_bank(false));
  CHECK(a->swap.stock == nullptr);
  CHECK(a->kmem.stock == nullptr);
  CHECK(root_mem_cgroup->memory.stock == nullptr);
  env.run([&] {
    REQUIRE(env.charge(a, 1) == 0);
    CHECK(usage(a) == 64);
    CHECK(slot_of(false, 0, &a->memory).nr_pages == 63);
    bool memcg_stock_empty = true;
    // A racy inspection is fine here: nothing else runs on the machine.
    auto slot_empty = [](int i) NO_THREAD_SAFETY_ANALYSIS {
      return per_cpu_ptr(&memcg_stock, 0)->cached[i] == nullptr;
    };
    for (int i = 0; i < NR_MEMCG_STOCK; i++) memcg_stock_empty &= slot_empty(i);
    CHECK(memcg_stock_empty);  // the 6.19 memcg stock is not used in this design
  });
  env.run([&] { drain_all_stock(a); });
  env.finish();
}

TEST_CASE("pcstock: non-spinning callers charge exactly", "[mm][memcg][pcstock]") {
  WarnCheck wc;
  MemcgEnv env(v2_params(true));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    REQUIRE(env.charge(a, 3, 0) == 0);
    CHECK(usage(a) == 3);
    CHECK(slot_of(false, 0, &a->memory).counter == nullptr);
    env.uncharge(a, 3);
  });
  env.finish();
}

TEST_CASE("pcstock v2: a cgroup becoming a parent loses its stock, drained at once",
          "[mm][memcg][pcstock]") {
  WarnCheck wc;
  MemcgEnv env(v2_params(true), emu::Mode::simulated, 2);
  mem_cgroup *p = env.mkdir(nullptr, "p");
  env.run([&] { REQUIRE(env.charge(p, 1) == 0); }, 0);
  env.run([&] { REQUIRE(env.charge(p, 1) == 0); }, 1);
  CHECK(usage(p) == 128);
  mem_cgroup *c = env.mkdir(p, "c");  // runs on CPU 0
  CHECK(p->memory.stock == nullptr);
  CHECK(c->memory.stock != nullptr);
  CHECK(slot_of(false, 0, &p->memory).counter == nullptr);  // local: drained in place
  env.run([&] { flush_workqueue(memcg_wq); });
  CHECK(slot_of(false, 1, &p->memory).counter == nullptr);  // remote: drained by its worker
  CHECK(usage(p) == 2);
  env.run([&] { REQUIRE(env.charge(p, 1) == 0); });  // a parent charges exactly
  CHECK(usage(p) == 3);
  env.check();
  env.run([&] { env.uncharge(p, 3); });
  env.finish();
}

TEST_CASE("pcstock v2: leftover slots of a parent are drained lazily on the next refill",
          "[mm][memcg][pcstock]") {
  WarnCheck wc;
  MemcgEnv env(v2_params(true), emu::Mode::simulated, 2);
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *q = env.mkdir(nullptr, "q");
  env.run([&] {
    REQUIRE(env.charge(p, 1) == 0);
    // A refill that raced with the switch to parent: the slot stays although p lost its stock
    // (the stock is disabled without the drains memcg_pcstock_online() then queues).
    page_counter_stock_disable(&p->memory);
    CHECK(slot_of(false, 0, &p->memory).nr_pages == 63);
    REQUIRE(env.charge(q, 1) == 0);  // the refill after q's miss drains p's slot
    CHECK(slot_of(false, 0, &p->memory).counter == nullptr);
    CHECK(usage(p) == 1);
    env.uncharge(p, 1);
    env.uncharge(q, 1);
    drain_all_stock(root_mem_cgroup);
  });
  env.finish();
}

TEST_CASE("pcstock v2: a refill for a counter that lost its stock after the caller read it "
          "uncharges", "[mm][memcg][pcstock]") {
  WarnCheck wc;
  MemcgEnv env(v2_params(true), emu::Mode::simulated, 2);
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *q = env.mkdir(nullptr, "q");
  env.run([&] {
    REQUIRE(env.charge(q, 1) == 0);  // this CPU's bank is in use: q holds a slot
    REQUIRE(env.charge(p, 1) == 0);
    REQUIRE(env.charge(p, 63) == 0);  // p's slot is empty again, usage 64
    page_counter_stock *bank = READ_ONCE(p->memory.stock);
    REQUIRE(bank != nullptr);
    // The batch charged by a miss that read p's stock pointer before the switch to parent.
    page_counter_stock_disable(&p->memory);
    page_counter *fail = nullptr;
    REQUIRE(page_counter_try_charge(&p->memory, 5, &fail));
    page_counter_refill_stock_bank(bank, &p->memory, 5);
    CHECK(usage(p) == 64);  // uncharged, not stocked
    CHECK(slot_of(false, 0, &p->memory).counter == nullptr);
    CHECK(slot_of(false, 0, &q->memory).nr_pages == 63);  // the other slots are kept
    env.uncharge(p, 64);
    env.uncharge(q, 1);
    drain_all_stock(root_mem_cgroup);
  });
  env.finish();
}

TEST_CASE("pcstock v1: memory and memsw stock separately; usage_in_bytes reports the smaller",
          "[mm][memcg][pcstock][v1]") {
  WarnCheck wc;
  MemcgEnv env(v1_params(true));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  CHECK(a->memsw.stock == emu::memcg_pcstock_bank(true));
  env.run([&] {
    REQUIRE(env.charge(a, 1) == 0);
    CHECK(slot_of(false, 0, &a->memory).nr_pages == 63);
    CHECK(slot_of(true, 0, &a->memsw).nr_pages == 63);
    // Drain only the memsw bank of this CPU: the raw values drift apart.
    page_counter_stock_cpu_dead(emu::memcg_pcstock_bank(true), 0);
    CHECK(page_counter_read(&a->memory) == 64);
    CHECK(page_counter_read(&a->memsw) == 1);
    CHECK(mem_cgroup_usage(a, false) == 1);
    CHECK(mem_cgroup_usage(a, true) == 1);
    CHECK(slot_of(false, 0, &a->memory).nr_pages == 63);
  });
  env.check();
  env.run([&] {
    env.uncharge(a, 1);
    drain_all_stock(a);
  });
  env.finish();
}

TEST_CASE("pcstock: a nested interrupt misses the stock and refills directly",
          "[mm][memcg][pcstock]") {
  WarnCheck wc;
  MemcgEnv env(v2_params(true));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    REQUIRE(env.charge(a, 1) == 0);
    page_counter_stock_pcp *st = this_cpu_ptr(emu::memcg_pcstock_bank(false)->pcp);
    REQUIRE(local_trylock(&st->lock));
    lockdep_assert_local_held(&st->lock);  // tells -Wthread-safety what REQUIRE established
    bool hit = true;
    emu::run_in_irq([&] {
      hit = page_counter_consume_stock(emu::memcg_pcstock_bank(false), &a->memory, 1);
      page_counter_charge(&a->memory, 2);
      page_counter_refill_stock(&a->memory, 2);
    });
    local_unlock(&st->lock);
    CHECK_FALSE(hit);
    CHECK(usage(a) == 64);
    CHECK(slot_of(false, 0, &a->memory).nr_pages == 63);
    env.uncharge(a, 1);
    drain_all_stock(a);
  });
  env.finish();
}
