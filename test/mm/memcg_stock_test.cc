// SPDX-License-Identifier: GPL-2.0-only
// Tests of the 6.19 per-CPU memcg stock (section 2.2) and of batching in try_charge_memcg.
#include "test/support/memcg_env.h"

#include <set>

#include "mm/memcontrol_internal.h"
#include "shim/cpuhotplug.h"
#include "shim/errno.h"
#include "shim/hooks.h"
#include "shim/preempt.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

// Slot contents of one CPU (racy read, quiescent in tests).
struct Slots {
  mem_cgroup *cached[NR_MEMCG_STOCK];
  unsigned nr[NR_MEMCG_STOCK];
};
Slots slots(int cpu) NO_THREAD_SAFETY_ANALYSIS {
  Slots s;
  memcg_stock_pcp *st = per_cpu_ptr(&memcg_stock, cpu);
  for (int i = 0; i < NR_MEMCG_STOCK; i++) {
    s.cached[i] = st->cached[i];
    s.nr[i] = st->nr_pages[i];
  }
  return s;
}
long usage(mem_cgroup *m) { return static_cast<long>(page_counter_read(&m->memory)); }

}  // namespace

TEST_CASE("memcg: boot, root never charged, counters are hierarchical", "[mm][memcg]") {
  for (bool v1 : {false, true}) {
    WarnCheck wc;
    MemcgEnv env(v1 ? v1_params() : v2_params());
    REQUIRE(root_mem_cgroup);
    CHECK(do_memsw_account() == v1);
    mem_cgroup *a = env.mkdir(nullptr, "a");
    mem_cgroup *b = env.mkdir(a, "b");
    CHECK(b->memory.parent == &a->memory);
    CHECK(a->memory.parent == &root_mem_cgroup->memory);
    CHECK(b->memory.high == PAGE_COUNTER_MAX);
    CHECK(b->swap.high == PAGE_COUNTER_MAX);
    CHECK(b->memory.protection_support == !v1);
    CHECK(root_mem_cgroup->memory.protection_support);
    CHECK(b->memory.track_failcnt == v1);
    env.run([&] {
      CHECK(try_charge(root_mem_cgroup, GFP_KERNEL, 5) == 0);  // the root is never charged
      CHECK(usage(root_mem_cgroup) == 0);
      CHECK(env.charge(b, 1) == 0);
    });
    // One page asked, a batch charged: 64 everywhere, 63 of them in the stock.
    CHECK(usage(b) == 64);
    CHECK(usage(a) == 64);
    CHECK(usage(root_mem_cgroup) == 64);
    if (v1) CHECK(page_counter_read(&b->memsw) == 64);
    Slots s = slots(0);
    CHECK(s.cached[0] == b);
    CHECK(s.nr[0] == 63);
    env.check();
    env.run([&] {
      env.uncharge(b, 1);
      drain_all_stock(root_mem_cgroup);
    });
    CHECK(usage(b) == 0);
    CHECK(env.rmdir(b) == 0);
    CHECK(env.rmdir(a) == 0);
    env.finish();
  }
}

TEST_CASE("memcg stock: a hit takes pages from the first matching slot only", "[mm][memcg][stock]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    REQUIRE(env.charge(a, 60) == 0);  // stock: a=4
    CHECK(slots(0).nr[0] == 4);
    CHECK(env.charge(a, 4) == 0);  // hit
    CHECK(usage(a) == 64);
    CHECK(slots(0).nr[0] == 0);
    CHECK(slots(0).cached[0] == a);  // occupied with 0 pages
    // Forge a second slot for the same memcg (refill never makes one): consume must stop at
    // the first match even though the second could serve the charge.
    memcg_stock_pcp *st = this_cpu_ptr(&memcg_stock);
    REQUIRE(local_trylock(&st->lock));
    lockdep_assert_local_held(&st->lock);  // tells -Wthread-safety what REQUIRE established
    css_get(&a->css);
    page_counter_charge(&a->memory, 10);
    st->cached[3] = a;
    st->nr_pages[3] = 10;
    local_unlock(&st->lock);
    CHECK_FALSE(consume_stock(a, 1));
    CHECK(consume_stock(a, 0));  // 0 <= 0 pages in slot 0
    CHECK_FALSE(consume_stock(a, MEMCG_CHARGE_BATCH + 1));  // above a batch: never a hit
    drain_all_stock(root_mem_cgroup);
    env.uncharge(a, 64);
  });
  CHECK(usage(a) == 0);
  env.finish();
}

TEST_CASE("memcg stock: refill drains the whole slot above a batch, bypasses above a batch",
          "[mm][memcg][stock]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    REQUIRE(env.charge(a, 1) == 0);  // a: 63 in stock
    page_counter_charge(&a->memory, 2);
    refill_stock(a, 2);  // 65 > 64: the whole slot goes, not trimmed to 64
    CHECK(slots(0).cached[0] == nullptr);
    CHECK(slots(0).nr[0] == 0);
    CHECK(usage(a) == 1);
    page_counter_charge(&a->memory, 65);
    refill_stock(a, 65);  // above a batch: uncharged directly, no slot taken
    CHECK(slots(0).cached[0] == nullptr);
    CHECK(usage(a) == 1);
    page_counter_charge(&a->memory, 64);
    refill_stock(a, 64);  // exactly a batch stays
    CHECK(slots(0).nr[0] == 64);
    env.uncharge(a, 1);
    drain_all_stock(a);
  });
  CHECK(usage(a) == 0);
  env.finish();
}

TEST_CASE("memcg stock: with 7 slots taken, a random victim is evicted", "[mm][memcg][stock]") {
  WarnCheck wc;
  std::set<mem_cgroup *> victims_seen;
  std::vector<int> victim_idx_run[2];
  for (int run = 0; run < 2; run++) {
    MemcgEnv env(v2_params(), emu::Mode::simulated, 2, 99);
    std::vector<mem_cgroup *> m;
    for (int i = 0; i < 8; i++) m.push_back(env.mkdir(nullptr, "m" + std::to_string(i)));
    env.run([&] {
      for (int i = 0; i < 7; i++) REQUIRE(env.charge(m[i], 1) == 0);
      for (int i = 0; i < 7; i++) CHECK(slots(0).cached[i] == m[i]);
      // 40 evictions: charge m7 (fills a victim's slot) and then evict m7 again by charging
      // the victim back.
      for (int round = 0; round < 40; round++) {
        Slots before = slots(0);
        mem_cgroup *newcomer = nullptr;
        for (mem_cgroup *c : m) {
          bool cached = false;
          for (auto *x : before.cached) cached |= x == c;
          if (!cached) newcomer = c;
        }
        REQUIRE(newcomer);
        REQUIRE(env.charge(newcomer, 1) == 0);
        Slots after = slots(0);
        int changed = -1;
        for (int i = 0; i < NR_MEMCG_STOCK; i++)
          if (after.cached[i] != before.cached[i]) changed = i;
        REQUIRE(changed >= 0);
        CHECK(after.cached[changed] == newcomer);
        CHECK(after.nr[changed] == 63);
        victims_seen.insert(before.cached[changed]);
        victim_idx_run[run].push_back(changed);
        // The victim's pages went back to its counter: only its charged page remains.
        env.check();
      }
      drain_all_stock(root_mem_cgroup);
      for (auto *c : m) env.uncharge(c, static_cast<unsigned>(env.ledger.user_pages[c]));
    });
    env.finish();
  }
  CHECK(victims_seen.size() >= 6);                 // uniform over 7 slots: all get picked
  CHECK(victim_idx_run[0] == victim_idx_run[1]);   // same seed, same victims
}

TEST_CASE("memcg stock: a nested interrupt cannot take the stock lock", "[mm][memcg][stock]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    REQUIRE(env.charge(a, 1) == 0);  // 63 stocked
    memcg_stock_pcp *st = this_cpu_ptr(&memcg_stock);
    REQUIRE(local_trylock(&st->lock));  // the interrupted context holds the lock
    lockdep_assert_local_held(&st->lock);
    bool hit = true;
    long usage_in_irq = -1;
    CHECK(emu::run_in_irq([&] {
      hit = consume_stock(a, 1);
      page_counter_charge(&a->memory, 5);
      refill_stock(a, 5);  // cannot lock: uncharged directly
      usage_in_irq = usage(a);
    }));
    local_unlock(&st->lock);
    CHECK_FALSE(hit);
    CHECK(usage_in_irq == 64);
    CHECK(slots(0).nr[0] == 63);
    // Without the lock held, the same interrupt hits.
    CHECK(emu::run_in_irq([&] { hit = consume_stock(a, 1); }));
    CHECK(hit);
    env.ledger.user_pages[a] += 1;
    env.uncharge(a, 2);
    drain_all_stock(a);
  });
  env.finish();
}

namespace {
int g_drain_cpu[8];
void on_drain(void *, const std::uint64_t *args, unsigned, std::uint64_t) {
  for (int cpu = 0; cpu < 8; cpu++)
    if (args[0] == reinterpret_cast<std::uint64_t>(&per_cpu_ptr(&memcg_stock, cpu)->work))
      g_drain_cpu[cpu] = static_cast<int>(args[1]);
}
}  // namespace

TEST_CASE("memcg stock: drain_all_stock drains locally in place and remotely on the target vCPU",
          "[mm][memcg][stock]") {
  for (emu::Mode mode : kBothModes) {
    WarnCheck wc;
    MemcgEnv env(v2_params(), mode, 4);
    mem_cgroup *a = env.mkdir(nullptr, "a");
    mem_cgroup *b = env.mkdir(nullptr, "b");
    for (int cpu = 0; cpu < 4; cpu++) env.run([&] { REQUIRE(env.charge(a, 1) == 0); }, cpu);
    env.run([&] { REQUIRE(env.charge(b, 1) == 0); }, 2);
    CHECK(usage(a) == 4 * 64);
    for (int i = 0; i < 8; i++) g_drain_cpu[i] = -1;
    emu::HookPoint *hp = emu::HookPoint::find("drain_local_memcg_stock");
    REQUIRE(hp);
    int id = -1;
    env.run([&] { id = hp->attach(false, on_drain, nullptr); });
    env.run([&] {
      drain_all_stock(a);
      // The local CPU is drained before drain_all_stock returns.
      CHECK(slots(1).cached[0] == nullptr);
    }, 1);
    env.run([&] { flush_workqueue(memcg_wq); });
    for (int cpu = 0; cpu < 4; cpu++) {
      CHECK(slots(cpu).cached[0] == nullptr);
      CHECK(g_drain_cpu[cpu] == cpu);  // each drain ran on the CPU it drained
      CHECK_FALSE(test_bit(FLUSHING_CACHED_CHARGE, &per_cpu_ptr(&memcg_stock, cpu)->flags));
    }
    // CPU 2's drain took all its slots, b's too (the whole stock is drained).
    CHECK(usage(a) == 4);
    CHECK(usage(b) == 1);
    env.run([&] { hp->detach(id); });
    env.run([&] {
      env.uncharge(a, 4);
      env.uncharge(b, 1);
    });
    env.finish();
  }
}

TEST_CASE("memcg stock: drain_all_stock gives up when another drain holds the mutex",
          "[mm][memcg][stock]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] { REQUIRE(env.charge(a, 1) == 0); });
  env.run([&] {
    mutex_lock(&percpu_charge_mutex);
    drain_all_stock(a);  // returns at once, drains nothing
    CHECK(slots(0).nr[0] == 63);
    mutex_unlock(&percpu_charge_mutex);
    // A set FLUSHING bit means a drain is already queued: nothing is queued again.
    set_bit(FLUSHING_CACHED_CHARGE, &per_cpu_ptr(&memcg_stock, 0)->flags);
    drain_all_stock(a);
    CHECK(slots(0).nr[0] == 63);
    clear_bit(FLUSHING_CACHED_CHARGE, &per_cpu_ptr(&memcg_stock, 0)->flags);
  }, 1);
  env.run([&] {
    env.uncharge(a, 1);
    drain_all_stock(a);
  });
  CHECK(usage(a) == 0);
  env.finish();
}

TEST_CASE("memcg stock: remote drains are not waited for", "[mm][memcg][stock]") {
  WarnCheck wc;
  MemcgEnv env(v2_params(), emu::Mode::simulated, 2);
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] { REQUIRE(env.charge(a, 1) == 0); }, 1);
  env.run([&] {
    drain_all_stock(a);
    // CPU 1's drain is only queued: its pages are still stocked right after the call.
    CHECK(slots(1).nr[0] == 63);
    CHECK(test_bit(FLUSHING_CACHED_CHARGE, &per_cpu_ptr(&memcg_stock, 1)->flags));
    flush_workqueue(memcg_wq);
    CHECK(slots(1).cached[0] == nullptr);
    env.uncharge(a, 1);
  }, 0);
  env.finish();
}

TEST_CASE("memcg stock: the dead-CPU callback drains without locking", "[mm][memcg][stock]") {
  WarnCheck wc;
  MemcgEnv env(v2_params(), emu::Mode::simulated, 2);
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] { REQUIRE(env.charge(a, 1) == 0); }, 1);
  env.run([&] {
    memcg_hotplug_cpu_dead(1);
    CHECK(slots(1).cached[0] == nullptr);
    CHECK(usage(a) == 1);
    env.uncharge(a, 1);
  }, 0);
  env.finish();
}

TEST_CASE("memcg: taking a CPU offline drains its stocks through the hotplug callback, both "
          "designs, v1 and v2",
          "[mm][memcg][stock][hotplug]") {
  for (bool pcstock : {false, true}) {
    for (bool v1 : {false, true}) {
      CAPTURE(pcstock, v1);
      WarnCheck wc;
      MemcgEnv env(v1 ? v1_params(pcstock) : v2_params(pcstock), emu::Mode::simulated, 2);
      mem_cgroup *a = env.mkdir(nullptr, "a");
      env.run([&] { REQUIRE(env.charge(a, 1) == 0); }, 1);
      env.run([&] {
        // One page charged, the rest of the batch stocked on CPU 1.
        CHECK(page_counter_read(&a->memory) == MEMCG_CHARGE_BATCH);
        REQUIRE(remove_cpu(1) == 0);
        // The dead CPU's surplus went back: only the charged page is left.
        CHECK(page_counter_read(&a->memory) == 1);
        env.uncharge(a, 1);
        REQUIRE(add_cpu(1) == 0);
      }, 0);
      // The CPU is back and stocks again.
      env.run([&] {
        REQUIRE(env.charge(a, 1) == 0);
        CHECK(page_counter_read(&a->memory) == MEMCG_CHARGE_BATCH);
        env.uncharge(a, 1);
      }, 1);
      env.finish();
    }
  }
}
