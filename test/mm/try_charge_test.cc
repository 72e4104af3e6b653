// SPDX-License-Identifier: GPL-2.0-only
// Tests of try_charge_memcg()'s retry ladder (section 2.3, checklist items 1, 3, 4, 5), in both
// stock designs, with stand-ins for reclaim and the OOM killer.
#include "test/support/memcg_env.h"

#include "mm/memcontrol_internal.h"
#include "shim/errno.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

// Stand-in reclaim / OOM: scripted results, every call recorded.
struct Script {
  int reclaim_calls = 0;
  int progress_calls = 0;  // the first N reclaim calls report 1 page of progress
  long free_pages = 0;     // a reclaim call uncharges this many pages of free_from (once)
  mem_cgroup *free_from = nullptr;
  MemcgEnv *env = nullptr;
  mem_cgroup *last_reclaim_target = nullptr;
  unsigned int last_options = 0;
  int oom_calls = 0;
  int oom_successes = 0;  // the first N OOM calls "kill" something
  bool oom_kills_current = false;
};
Script g;

unsigned long stand_in_reclaim(mem_cgroup *memcg, unsigned long, gfp_t, unsigned int options,
                               int *) {
  g.reclaim_calls++;
  g.last_reclaim_target = memcg;
  g.last_options = options;
  if (g.free_pages && g.free_from) {
    long n = g.free_pages;
    g.free_pages = 0;
    g.env->uncharge(g.free_from, static_cast<unsigned>(n));
    return static_cast<unsigned long>(n);
  }
  return g.reclaim_calls <= g.progress_calls ? 1 : 0;
}
bool stand_in_oom(mem_cgroup *, gfp_t, int) {
  g.oom_calls++;
  if (g.oom_kills_current) send_sig_kill(current);
  return g.oom_calls <= g.oom_successes;
}
const memcg_reclaim_ops stand_in_ops = {stand_in_reclaim, stand_in_oom};

memcg_boot_params params(bool pcstock, bool v1 = false) {
  memcg_boot_params p = v1 ? v1_params(pcstock) : v2_params(pcstock);
  p.ops = &stand_in_ops;
  return p;
}

long usage(mem_cgroup *m) { return static_cast<long>(page_counter_read(&m->memory)); }

// A memcg "a" with memory.max = max pages and nothing charged, then fn(env, a).
template <typename F>
void with_limited(bool pcstock, unsigned long max, F fn, bool v1 = false) {
  g = Script{};
  WarnCheck wc;
  MemcgEnv env(params(pcstock, v1));
  g.env = &env;
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] { REQUIRE(page_counter_set_max(&a->memory, max) == 0); });
  fn(env, a);
  env.run([&] {
    for (auto &[m, n] : env.ledger.user_pages)
      if (n) env.uncharge(m, static_cast<unsigned>(n));
    drain_all_stock(root_mem_cgroup);
    flush_workqueue(memcg_wq);
  });
  env.finish();
}

}  // namespace

TEST_CASE("try_charge: GFP_KERNEL at the limit: one MAX event per failing pass, one drain, "
          "16 retries, then OOM, then -ENOMEM", "[mm][memcg][charge]") {
  for (bool pc : {false, true}) {
    with_limited(pc, 0, [&](MemcgEnv &env, mem_cgroup *a) {
      env.run([&] { CHECK(env.charge(a, 1) == -ENOMEM); });
      CHECK(g.reclaim_calls == 18);  // drain pass + 1 + 16 countdown passes
      CHECK(memory_events_local_read(a, MEMCG_MAX) == 18);
      CHECK(memory_events_local_read(a, MEMCG_OOM) == 1);
      CHECK(g.oom_calls == 1);
      CHECK(g.last_reclaim_target == a);
      CHECK(g.last_options == MEMCG_RECLAIM_MAY_SWAP);
      CHECK(usage(a) == 0);
    });
  }
}

TEST_CASE("try_charge: a successful OOM kill resets the retries; a dying task then gives up",
          "[mm][memcg][charge]") {
  for (bool pc : {false, true}) {
    with_limited(pc, 0, [&](MemcgEnv &env, mem_cgroup *a) {
      g.oom_successes = 1;
      env.run([&] { CHECK(env.charge(a, 1) == -ENOMEM); });
      CHECK(g.oom_calls == 2);  // not dying: OOM again after 17 more passes
      CHECK(memory_events_local_read(a, MEMCG_MAX) == 18 + 17);
      CHECK(memory_events_local_read(a, MEMCG_OOM) == 2);
    });
    with_limited(pc, 0, [&](MemcgEnv &env, mem_cgroup *a) {
      g.oom_successes = 1;
      g.oom_kills_current = true;  // the charging task is the victim
      env.run([&] { CHECK(env.charge(a, 1) == -ENOMEM); });
      CHECK(g.oom_calls == 1);  // passed_oom && task_is_dying: nomem without a second OOM
      CHECK(memory_events_local_read(a, MEMCG_MAX) == 18 + 17);
    });
  }
}

TEST_CASE("try_charge: gfp cases", "[mm][memcg][charge]") {
  for (bool pc : {false, true}) {
    // GFP_NOWAIT: -ENOMEM at once, no event, no reclaim.
    with_limited(pc, 0, [&](MemcgEnv &env, mem_cgroup *a) {
      env.run([&] { CHECK(env.charge(a, 1, GFP_NOWAIT) == -ENOMEM); });
      CHECK(g.reclaim_calls == 0);
      CHECK(memory_events_local_read(a, MEMCG_MAX) == 0);
    });
    // GFP_ATOMIC: forced over the limit, exactly nr_pages, MAX raised at force.
    with_limited(pc, 0, [&](MemcgEnv &env, mem_cgroup *a) {
      env.run([&] { CHECK(env.charge(a, 3, GFP_ATOMIC) == 0); });
      CHECK(usage(a) == 3);
      CHECK(g.reclaim_calls == 0);
      CHECK(memory_events_local_read(a, MEMCG_MAX) == 1);
      CHECK(atomic_long_read(&a->events_local_file.notified) == 1);
    });
    // __GFP_NOFAIL: the whole ladder, OOM, then forced without a second MAX at force.
    with_limited(pc, 0, [&](MemcgEnv &env, mem_cgroup *a) {
      env.run([&] { CHECK(env.charge(a, 2, GFP_KERNEL | __GFP_NOFAIL) == 0); });
      CHECK(usage(a) == 2);
      CHECK(memory_events_local_read(a, MEMCG_MAX) == 18);
      CHECK(memory_events_local_read(a, MEMCG_OOM) == 1);
    });
    // __GFP_NORETRY: reclaim, one drain retry (reclaims again), then -ENOMEM; never OOM.
    with_limited(pc, 0, [&](MemcgEnv &env, mem_cgroup *a) {
      env.run([&] { CHECK(env.charge(a, 1, GFP_KERNEL | __GFP_NORETRY) == -ENOMEM); });
      CHECK(g.reclaim_calls == 2);
      CHECK(memory_events_local_read(a, MEMCG_MAX) == 2);
      CHECK(g.oom_calls == 0);
    });
    // __GFP_RETRY_MAYFAIL: every retry, never OOM.
    with_limited(pc, 0, [&](MemcgEnv &env, mem_cgroup *a) {
      env.run([&] { CHECK(env.charge(a, 1, GFP_KERNEL | __GFP_RETRY_MAYFAIL) == -ENOMEM); });
      CHECK(g.reclaim_calls == 18);
      CHECK(g.oom_calls == 0);
      CHECK(memory_events_local_read(a, MEMCG_OOM) == 0);
    });
    // No reclaim bit at all: exact charge (no batch, no refill).
    with_limited(pc, 100, [&](MemcgEnv &env, mem_cgroup *a) {
      env.run([&] { CHECK(env.charge(a, 3, 0) == 0); });
      CHECK(usage(a) == 3);
    });
    // ... and at the limit: -ENOMEM without event; with __GFP_HIGH forced, MAX counted but
    // not notified.
    with_limited(pc, 0, [&](MemcgEnv &env, mem_cgroup *a) {
      WarnCheck inner;
      env.run([&] { CHECK(env.charge(a, 1, 0) == -ENOMEM); });
      CHECK(memory_events_local_read(a, MEMCG_MAX) == 0);
      env.run([&] { CHECK(env.charge(a, 1, __GFP_HIGH) == 0); });
      CHECK(memory_events_local_read(a, MEMCG_MAX) == 1);
      CHECK(memory_events_read(a, MEMCG_MAX) == 1);
      CHECK(atomic_long_read(&a->events_local_file.notified) == 0);
      CHECK(atomic_long_read(&a->events_file.notified) == 0);
    });
  }
}

TEST_CASE("try_charge: PF_MEMALLOC forces after the exact-size attempt, without reclaim",
          "[mm][memcg][charge]") {
  for (bool pc : {false, true}) {
    with_limited(pc, 10, [&](MemcgEnv &env, mem_cgroup *a) {
      env.run([&] {
        REQUIRE(env.charge(a, 10, GFP_KERNEL) == 0);  // batch fails, exact 10 fits
        CHECK(usage(a) == 10);
        current->flags |= PF_MEMALLOC;
        CHECK(env.charge(a, 1, GFP_KERNEL) == 0);
        current->flags &= ~PF_MEMALLOC;
      });
      CHECK(usage(a) == 11);
      CHECK(g.reclaim_calls == 0);
      CHECK(memory_events_local_read(a, MEMCG_MAX) == 1);
    });
  }
}

TEST_CASE("try_charge: progress retries small charges without spending a retry, not THPs",
          "[mm][memcg][charge]") {
  for (bool pc : {false, true}) {
    with_limited(pc, 0, [&](MemcgEnv &env, mem_cgroup *a) {
      g.progress_calls = 30;
      env.run([&] { CHECK(env.charge(a, 8, GFP_KERNEL) == -ENOMEM); });
      CHECK(g.reclaim_calls == 30 + 17);
    });
    with_limited(pc, 0, [&](MemcgEnv &env, mem_cgroup *a) {
      g.progress_calls = 30;
      env.run([&] { CHECK(env.charge(a, 9, GFP_KERNEL) == -ENOMEM); });
      CHECK(g.reclaim_calls == 18);
      // order of 9 pages is 4 > PAGE_ALLOC_COSTLY_ORDER: no OOM, no OOM event
      CHECK(g.oom_calls == 0);
      CHECK(memory_events_local_read(a, MEMCG_OOM) == 0);
    });
  }
}

TEST_CASE("try_charge: margin after reclaim retries; the lowest failing level is the target",
          "[mm][memcg][charge]") {
  for (bool pc : {false, true}) {
    g = Script{};
    WarnCheck wc;
    MemcgEnv env(params(pc));
    g.env = &env;
    mem_cgroup *p = env.mkdir(nullptr, "p");
    mem_cgroup *c = env.mkdir(p, "c");
    mem_cgroup *d = env.mkdir(p, "d");
    env.run([&] {
      REQUIRE(page_counter_set_max(&p->memory, 100) == 0);
      REQUIRE(env.charge(d, 100, GFP_KERNEL) == 0);  // p is full (exact charge of 100)
      g.free_from = d;
      g.free_pages = 50;
      CHECK(env.charge(c, 1, GFP_KERNEL) == 0);
    });
    CHECK(g.reclaim_calls == 1);
    CHECK(g.last_reclaim_target == p);  // the parent hit its limit, not c
    CHECK(memory_events_local_read(p, MEMCG_MAX) == 1);
    CHECK(memory_events_local_read(c, MEMCG_MAX) == 0);
    env.run([&] {
      for (auto &[m, n] : env.ledger.user_pages)
        if (n) env.uncharge(m, static_cast<unsigned>(n));
      drain_all_stock(root_mem_cgroup);
    });
    env.finish();
  }
}

TEST_CASE("try_charge: v1 memsw limit: reclaim without swap, memory charge rolled back",
          "[mm][memcg][charge][v1]") {
  for (bool pc : {false, true}) {
    g = Script{};
    WarnCheck wc;
    MemcgEnv env(params(pc, true));
    g.env = &env;
    mem_cgroup *a = env.mkdir(nullptr, "a");
    env.run([&] {
      REQUIRE(page_counter_set_max(&a->memsw, 0) == 0);
      CHECK(env.charge(a, 1, GFP_KERNEL | __GFP_NORETRY) == -ENOMEM);
    });
    CHECK(g.last_options == 0);  // MAY_SWAP cleared
    CHECK(usage(a) == 0);
    CHECK(page_counter_read(&a->memsw) == 0);
    CHECK(a->memsw.failcnt == 0);  // failcnt is tracked on the memory counter only
    env.run([&] { CHECK(env.charge(a, 1, GFP_NOWAIT) == -ENOMEM); });
    env.finish();
  }
}
