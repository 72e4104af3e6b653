// SPDX-License-Identifier: GPL-2.0-only
// Tests of global memory pressure (mm/page_alloc.h): the machine's RAM bounds every folio, an
// allocation that finds no free page above the min watermark reclaims from every memcg with
// their protection (try_to_free_pages; kswapd, woken below the low watermark, also reclaims:
// test/mm/kswapd_test.cc), then runs the global OOM killer (mm/oom_kill.h: the whole machine
// as the domain, oom_score_adj -1000 spared, oom_kill counted on the victim's memcg,
// memory.oom.group honoured); and the OOM reaper, which frees a victim's anon memory when it
// does not exit. The free count is checked against the folios on the lists throughout.
#include "test/mm/mm_test_util.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

// A process in @memcg faulting @nr anon pages (mmap @flags: MAP_POPULATE|MAP_LOCKED faults them
// in the mmap), then blocked in the kernel in an uninterruptible sleep until @gate completes (a
// fatal signal cannot end it before): an OOM victim that cannot exit. @ready completes once the
// pages are faulted.
emu::Process *start_blocked_holder(mem_cgroup *memcg, unsigned long nr, completion *ready,
                                   completion *gate, unsigned long flags) {
  emu::ProcessOptions o;
  o.memcg = memcg;
  return emu::process_start(o, [nr, ready, gate, flags] {
    fault_anon(nr, flags);
    emu::KernelEntry k;
    complete(ready);
    wait_for_completion(gate);
    return 0;
  });
}

}  // namespace

TEST_CASE("the machine's RAM: every folio takes a page, freeing gives it back", "[mm][global]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 1000));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    CHECK(totalram_pages() == 1000);
    CHECK(nr_free_pages() == 1000);
    inode *f = cached_file(a, 100);
    emu::Process *p = anon_holder_started(a, 200);
    CHECK(nr_free_pages() == 700);
    check_ram_held();
    CHECK(kill_and_wait(p) == 137);
    emu::iput(f);
    lru_add_drain_all();
    CHECK(nr_free_pages() == 1000);
  });
  env.finish();
}

TEST_CASE("the default RAM is 4 GiB", "[mm][global]") {
  MemcgEnv env(v2_params());
  env.run([&] { CHECK(totalram_pages() == (4UL << 30) / PAGE_SIZE); });
  env.finish();
}

TEST_CASE("global reclaim: an allocation beyond the machine's RAM reclaims other memcgs' cache",
          "[mm][global]") {
  for (const auto &p : {v2_params(false), v2_params(true), v1_params(false)}) {
    INFO(params_name(p));
    WarnCheck wc;
    MemcgEnv env(with_ram(p, 400));
    mem_cgroup *a = env.mkdir(nullptr, "a");
    mem_cgroup *b = env.mkdir(nullptr, "b");
    env.run([&] {
      inode *f = cached_file(a, 300);
      lru_add_drain_all();
      CHECK(nr_free_pages() == 100);
      emu::Process *proc = anon_holder_started(b, 250);
      CHECK_FALSE(emu::process_dying(proc));
      CHECK(get_mm_counter(emu::process_mm(proc), MM_ANONPAGES) == 250);
      // a's cache made the room, by global reclaim (no limit of a's was hit): kswapd's below
      // the low watermark, direct reclaim's below min.
      CHECK(emu::memcg_events_local_sum(a, PGSTEAL_DIRECT) +
                emu::memcg_events_local_sum(a, PGSTEAL_KSWAPD) >=
            150);
      CHECK(lru_total(a) <= 150);
      CHECK(memory_events_read(a, MEMCG_MAX) == 0);
      CHECK(memory_events_read(b, MEMCG_OOM) == 0);
      CHECK(memory_events_read(b, MEMCG_OOM_KILL) == 0);
      check_ram_held();
      env.check();
      CHECK(kill_and_wait(proc) == 137);
      emu::iput(f);
      drain_charges();
      CHECK(nr_free_pages() == 400);
    });
    env.finish();
  }
}

TEST_CASE("global reclaim honours memory.min and dips into memory.low last", "[mm][global]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 500));
  mem_cgroup *a = env.mkdir(nullptr, "a");  // memory.min covers its cache
  mem_cgroup *d = env.mkdir(nullptr, "d");  // memory.low covers its cache
  mem_cgroup *c = env.mkdir(nullptr, "c");  // unprotected
  mem_cgroup *b = env.mkdir(nullptr, "b");  // the allocator
  env.run([&] {
    page_counter_set_min(&a->memory, 100);
    page_counter_set_low(&d->memory, 100);
    inode *f = cached_file(a, 100);
    REQUIRE(read_into(d, f, 100, 100) == 0);
    REQUIRE(read_into(c, f, 200, 100) == 0);
    // No charge left in a stock: the usages are the cached pages, at the protections.
    drain_charges();
    CHECK(usage(a) == 100);
    CHECK(nr_free_pages() == 200);
    emu::Process *proc = anon_holder_started(b, 350);
    CHECK_FALSE(emu::process_dying(proc));
    CHECK(lru_total(c) == 0);     // the unprotected cache went first, all of it
    CHECK(lru_total(d) <= 50);    // then memory.low gave way, with low events
    CHECK(memory_events_read(d, MEMCG_LOW) >= 1);
    CHECK(lru_total(a) == 100);   // memory.min never did
    CHECK(emu::memcg_events_local_sum(a, PGSCAN_DIRECT) == 0);
    CHECK(emu::memcg_events_local_sum(a, PGSCAN_KSWAPD) == 0);
    CHECK(memory_events_read(a, MEMCG_LOW) == 0);
    check_ram_held();
    env.check();
    CHECK(kill_and_wait(proc) == 137);
    emu::iput(f);
    drain_charges();
    CHECK(nr_free_pages() == 500);
  });
  env.finish();
}

TEST_CASE("global OOM: the biggest process of the machine is killed, -1000 never, oom_kill "
          "counted on its memcg",
          "[mm][global][oom]") {
  for (const auto &p : {v2_params(false), v2_params(true), v1_params(false)}) {
    INFO(params_name(p));
    WarnCheck wc;
    MemcgEnv env(with_ram(p, 300));
    mem_cgroup *a = env.mkdir(nullptr, "a");
    mem_cgroup *x = env.mkdir(a, "x");
    mem_cgroup *b = env.mkdir(nullptr, "b");
    mem_cgroup *c = env.mkdir(nullptr, "c");
    int s_big = -1, s_immune = -1, s_faulter = -1;
    env.run([&] {
      emu::Process *big = anon_holder_started(x, 100);
      emu::Process *immune = anon_holder_started(b, 120, OOM_SCORE_ADJ_MIN);
      // 80 pages are left: the faulter's OOM first kills `big` (100 > 80), then, when it runs
      // out again at 180, itself (the immune one is never chosen).
      emu::Process *faulter = anon_holder_started(c, 300);
      s_faulter = emu::process_wait(faulter);
      s_big = emu::process_wait(big);
      CHECK_FALSE(emu::process_exited(immune, nullptr));
      CHECK(get_mm_counter(emu::process_mm(immune), MM_ANONPAGES) == 120);
      check_ram_held();
      env.check();
      s_immune = kill_and_wait(immune);
      drain_charges();
      CHECK(nr_free_pages() == 300);
    });
    CHECK(s_big == 137);
    CHECK(s_faulter == 137);
    CHECK(s_immune == 137);  // killed by the test
    CHECK(memory_events_read(x, MEMCG_OOM_KILL) == 1);
    CHECK(memory_events_read(c, MEMCG_OOM_KILL) == 1);
    CHECK(memory_events_read(b, MEMCG_OOM_KILL) == 0);
    if (!p.v1) CHECK(memory_events_read(a, MEMCG_OOM_KILL) == 1);  // hierarchical on v2
    // A global OOM is no memcg OOM: no oom or max events anywhere.
    for (mem_cgroup *m : {a, x, b, c}) {
      CHECK(memory_events_read(m, MEMCG_OOM) == 0);
      CHECK(memory_events_read(m, MEMCG_MAX) == 0);
    }
    env.finish();
  }
}

TEST_CASE("global OOM honours memory.oom.group of the victim's memcg", "[mm][global][oom][group]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 400));
  mem_cgroup *g = env.mkdir(nullptr, "g");
  mem_cgroup *w1 = env.mkdir(g, "w1");
  mem_cgroup *w2 = env.mkdir(g, "w2");
  mem_cgroup *o = env.mkdir(nullptr, "o");
  int s[4] = {-1, -1, -1, -1};
  env.run([&] {
    g->oom_group = true;
    emu::Process *p1 = anon_holder_started(w1, 50);
    emu::Process *immune = anon_holder_started(w2, 50, OOM_SCORE_ADJ_MIN);
    emu::Process *other = anon_holder_started(o, 100);
    // 200 pages left: the big one in w2 is the victim, and its group goes with it.
    emu::Process *big = anon_holder_started(w2, 1000);
    s[3] = emu::process_wait(big);
    s[0] = emu::process_wait(p1);
    CHECK_FALSE(emu::process_exited(immune, nullptr));
    CHECK_FALSE(emu::process_exited(other, nullptr));
    s[1] = kill_and_wait(immune);
    s[2] = kill_and_wait(other);
    drain_charges();
    CHECK(nr_free_pages() == 400);
  });
  CHECK(s[0] == 137);
  CHECK(s[3] == 137);
  CHECK(memory_events_read(g, MEMCG_OOM_GROUP_KILL) == 1);
  CHECK(memory_events_read(w2, MEMCG_OOM_KILL) == 2);  // the victim, and again by the group sweep
  CHECK(memory_events_read(w1, MEMCG_OOM_KILL) == 1);
  CHECK(memory_events_read(o, MEMCG_OOM_KILL) == 0);
  env.finish();
}

TEST_CASE("the OOM reaper frees a blocked victim's anon memory; the next OOM picks another",
          "[mm][oom][reaper]") {
  // The OOM comes from the machine's RAM (global, v2) or from memory.max (memcg, v1, with the
  // victim's memory mlocked: the reaper takes mlocked memory too). Each run spends 2 s of
  // machine time in the allocator's or the charge's OOM retry loop.
  for (bool global : {true, false}) {
    for (const auto &p : {global ? v2_params(false) : v1_params(false)}) {
      INFO((global ? "global " : "memcg ") << params_name(p));
      WarnCheck wc;
      MemcgEnv env(with_ram(p, global ? 300 : 100000));
      mem_cgroup *top = env.mkdir(nullptr, "top");
      mem_cgroup *a = env.mkdir(top, "a");
      mem_cgroup *b = env.mkdir(top, "b");
      mem_cgroup *c = env.mkdir(top, "c");
      int s_v = -1, s_w = -1, s_x = -1;
      env.run([&] {
        if (!global) {
          page_counter_set_max(&top->memory, 300);
          if (do_memsw_account()) page_counter_set_max(&top->memsw, 300);
        }
        completion rv, gate;
        init_completion(&rv);
        init_completion(&gate);
        emu::Process *v = start_blocked_holder(a, 200, &rv, &gate,
                                               global ? 0 : (MAP_POPULATE | MAP_LOCKED));
        wait_for_completion(&rv);
        mm_struct *vmm = emu::process_mm(v);
        u64 t0 = ktime_get_ns();
        // w runs out at 100 pages: v (200) is killed but sleeps on; only the reaper frees it.
        emu::Process *w = anon_holder_started(b, 200);
        // The reaper's delay is counted in whole jiffies from the kill.
        CHECK(ktime_get_ns() - t0 >= (OOM_REAPER_DELAY - 1) * NSEC_PER_JIFFY);
        CHECK_FALSE(emu::process_exited(v, nullptr));
        CHECK_FALSE(emu::process_dying(w));
        CHECK(get_mm_counter(vmm, MM_ANONPAGES) == 0);
        CHECK(test_bit(MMF_OOM_SKIP, &vmm->flags));
        CHECK(get_mm_counter(emu::process_mm(w), MM_ANONPAGES) == 200);
        drain_charges();
        CHECK(lru_total(a) == 0);
        CHECK(usage(a) == 0);  // the charge fell with the reaping
        CHECK(memory_events_read(a, MEMCG_OOM_KILL) == 1);
        check_ram_held();
        // A second OOM: v is skipped (reaped), w (200) is bigger than x.
        emu::Process *x = anon_holder_started(c, 150);
        s_w = emu::process_wait(w);
        CHECK(memory_events_read(a, MEMCG_OOM_KILL) == 1);
        CHECK(memory_events_read(b, MEMCG_OOM_KILL) == 1);
        CHECK_FALSE(emu::process_dying(x));
        complete(&gate);
        s_v = emu::process_wait(v);
        s_x = kill_and_wait(x);
        drain_charges();
        if (global) CHECK(nr_free_pages() == 300);
      });
      CHECK(s_v == 137);
      CHECK(s_w == 137);
      CHECK(s_x == 137);
      env.finish();
    }
  }
}

TEST_CASE("native: processes racing for the machine's RAM end in OOM kills; no page lost",
          "[mm][global][oom][native]") {
  for (const auto &p : {v2_params(false), v1_params(true)}) {
    INFO(params_name(p));
    WarnCheck wc;
    MemcgEnv env(with_ram(p, 400), emu::Mode::native, 4);
    mem_cgroup *a = env.mkdir(nullptr, "a");
    mem_cgroup *b = env.mkdir(nullptr, "b");
    env.run([&] {
      inode *f = cached_file(a, 100);
      // Four processes of 150 pages fault at once on four vCPUs: 600 pages and the cache do not
      // fit in 400, the cache is reclaimed and some of them are killed.
      completion r[4];
      emu::Process *procs[4];
      for (int i = 0; i < 4; i++) {
        init_completion(&r[i]);
        procs[i] = start_anon_holder(i % 2 ? a : b, 150, &r[i]);
      }
      for (auto &c : r) wait_for_completion(&c);
      int survivors = 0;
      bool reaped[4] = {};
      for (int i = 0; i < 4; i++) {
        if (!emu::process_dying(procs[i])) {
          survivors++;
          CHECK(get_mm_counter(emu::process_mm(procs[i]), MM_ANONPAGES) == 150);
          continue;
        }
        CHECK(emu::process_wait(procs[i]) == 137);
        reaped[i] = true;
      }
      CHECK(survivors >= 1);
      CHECK(survivors <= 2);
      check_ram_held();
      CHECK(ram_used() <= 400);
      for (int i = 0; i < 4; i++) {
        if (reaped[i]) continue;
        CHECK(kill_and_wait(procs[i]) == 137);
      }
      emu::iput(f);
      drain_charges();
      CHECK(nr_free_pages() == 400);
    });
    CHECK(memory_events_read(a, MEMCG_OOM_KILL) + memory_events_read(b, MEMCG_OOM_KILL) >= 2);
    CHECK(memory_events_read(a, MEMCG_OOM) + memory_events_read(b, MEMCG_OOM) == 0);
    env.finish();
  }
}
