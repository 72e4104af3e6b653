// SPDX-License-Identifier: GPL-2.0-only
// Tests of the zone watermarks and kswapd (mm/page_alloc.h, mm/vmscan.h): the watermarks as
// init_per_zone_wmark_min computes them; the fast path above the low watermark, kswapd's wake-up
// below it, the min watermark and the reserves below it (__GFP_HIGH, non-blocking, OOM victims,
// PF_MEMALLOC); kswapd's background reclaim to the high watermark through the memcg walk with
// protection, its statistics (PGSCAN_KSWAPD/PGSTEAL_KSWAPD) apart from direct reclaim's, its
// sleep, the hopeless node and its revival; determinism in simulated mode; and a native stress
// run.
#include "test/mm/mm_test_util.h"

#include <vector>

#include "shim/jiffies.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

bool kswapd_started() { return READ_ONCE(node_data()->kswapd) != nullptr; }
// kswapd sleeps on kswapd_wait (its nap or its sleep until woken).
bool kswapd_asleep() { return waitqueue_active(&node_data()->kswapd_wait); }
// Lets kswapd finish: its reclaim, its nap and the check before its sleep.
void let_kswapd_settle() { schedule_timeout_uninterruptible(static_cast<long>(HZ)); }

long ev(mem_cgroup *m, int item) { return static_cast<long>(emu::memcg_events_local_sum(m, item)); }

// Takes pages of RAM with @gfp (no folio, no charge) until an allocation fails; returns how
// many it took.
unsigned long take_until_fail(gfp_t gfp, std::vector<int> *held) {
  unsigned long n = 0;
  while (__alloc_pages(gfp, 0)) {
    held->push_back(0);
    n++;
  }
  return n;
}
void give_back(std::vector<int> *held) {
  for (size_t i = 0; i < held->size(); i++) __free_pages(0);
  held->clear();
}

}  // namespace

TEST_CASE("zone watermarks: min_free_kbytes = int_sqrt(KiB * 16) clamped, scale factor 10",
          "[mm][global][kswapd]") {
  struct Case {
    unsigned long ram;
    int min_free_kbytes;
    unsigned long min, low, high;
  };
  const Case cases[] = {
      // 400 KiB * 16 -> 80 KiB: clamped to 128 KiB; the distance is min / 4.
      {100, 128, 32, 40, 48},
      // 1600 KiB * 16 -> 160 KiB = 40 pages; min / 4 = 10.
      {400, 160, 40, 50, 60},
      // 4000 KiB * 16 -> 252 KiB = 63 pages; min / 4 = 15.
      {1000, 252, 63, 78, 93},
      // 1 GiB: 4096 KiB = 1024 pages; the scale factor (262) beats min / 4 (256).
      {262144, 4096, 1024, 1286, 1548},
      // 4 GiB (the default): 8192 KiB = 2048 pages; distance 1048.
      {0, 8192, 2048, 3096, 4144},
  };
  for (const Case &c : cases) {
    INFO("ram " << c.ram);
    MemcgEnv env(with_ram(v2_params(), c.ram));
    env.run([&] {
      CHECK(min_free_kbytes() == c.min_free_kbytes);
      CHECK(min_wmark_pages() == c.min);
      CHECK(low_wmark_pages() == c.low);
      CHECK(high_wmark_pages() == c.high);
    });
    env.finish();
  }
}

TEST_CASE("the fast path takes pages above the low watermark; below it kswapd is woken and "
          "the allocation goes on to min, less for the reserves", "[mm][global][kswapd]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 1000));  // min 63, low 78, high 93
  env.run([&] {
    std::vector<int> held;
    // Non-blocking, without kswapd and without __GFP_HIGH: down to the min watermark (an
    // allocation needs more than min free pages).
    const gfp_t nowait_nokswapd = GFP_NOWAIT & ~__GFP_KSWAPD_RECLAIM;
    CHECK(take_until_fail(nowait_nokswapd, &held) == 1000 - 63);
    CHECK(nr_free_pages() == 63);
    CHECK_FALSE(kswapd_started());
    // __GFP_HIGH and non-blocking: half the min reserve, then a quarter of that less: 24.
    CHECK(take_until_fail(GFP_ATOMIC & ~__GFP_KSWAPD_RECLAIM, &held) == 63 - 24);
    // A reclaiming task (PF_MEMALLOC) ignores the watermarks.
    current->flags |= PF_MEMALLOC;
    CHECK(take_until_fail(nowait_nokswapd, &held) == 24);
    current->flags &= ~PF_MEMALLOC;
    CHECK(nr_free_pages() == 0);
    CHECK_FALSE(kswapd_started());
    give_back(&held);
    CHECK(nr_free_pages() == 1000);

    // With __GFP_KSWAPD_RECLAIM: nothing happens above the low watermark; the first allocation
    // that finds the free pages at it wakes (here: starts) kswapd and still succeeds at min.
    for (int i = 0; i < 1000 - 78; i++) REQUIRE(__alloc_pages(GFP_NOWAIT, 0));
    held.resize(1000 - 78);
    CHECK(nr_free_pages() == 78);
    CHECK_FALSE(kswapd_started());
    REQUIRE(__alloc_pages(GFP_NOWAIT, 0));
    held.push_back(0);
    CHECK(kswapd_started());
    // Nothing is reclaimable: kswapd gives up after MAX_RECLAIM_RETRIES runs and sleeps.
    let_kswapd_settle();
    CHECK(READ_ONCE(node_data()->kswapd_failures) == MAX_RECLAIM_RETRIES);
    CHECK(kswapd_asleep());
    give_back(&held);
    CHECK(nr_free_pages() == 1000);
  });
  env.finish();
}

TEST_CASE("kswapd reclaims in the background until the high watermark and sleeps again; its "
          "pages count as pgscan_kswapd/pgsteal_kswapd", "[mm][global][kswapd]") {
  for (std::uint64_t seed = 1; seed <= 4; seed++) {
    for (const auto &p : {v2_params(false), v1_params(true)}) {
      INFO("seed " << seed << " " << params_name(p));
      WarnCheck wc;
      MemcgEnv env(with_ram(p, 1000), emu::Mode::simulated, 4, seed);
      mem_cgroup *a = env.mkdir(nullptr, "a");
      mem_cgroup *b = env.mkdir(nullptr, "b");
      env.run([&] {
        inode *f = cached_file(a, 800);
        lru_add_drain_all();
        CHECK(nr_free_pages() == 200);
        CHECK_FALSE(kswapd_started());
        AnonHolder h(b, 300);
        CHECK_FALSE(emu::process_dying(h.proc));
        CHECK(get_mm_counter(emu::process_mm(h.proc), MM_ANONPAGES) == 300);
        let_kswapd_settle();
        // kswapd took a's cache (b's anon is not reclaimable without swap) ...
        CHECK(kswapd_started());
        CHECK(ev(a, PGSTEAL_KSWAPD) > 0);
        CHECK(ev(a, PGSCAN_KSWAPD) >= ev(a, PGSTEAL_KSWAPD));
        CHECK(ev(b, PGSCAN_KSWAPD) == 0);
        // ... until the free pages were above the high watermark, then slept.
        CHECK(kswapd_asleep());
        CHECK(nr_free_pages() > high_wmark_pages());
        CHECK(READ_ONCE(node_data()->kswapd_failures) == 0);
        // Every reclaimed page was counted once, as kswapd's or direct reclaim's.
        CHECK(ev(a, PGSTEAL_KSWAPD) + ev(a, PGSTEAL_DIRECT) ==
              static_cast<long>(800 - lru_total(a)));
        CHECK(memory_events_read(b, MEMCG_OOM_KILL) == 0);
        CHECK(ram_used() == folio_pages_held());
        CHECK(h.kill() == 137);
        emu::iput(f);
        drain_charges();
        CHECK(nr_free_pages() == 1000);
      });
      env.finish();
    }
  }
}

TEST_CASE("the same seed gives the same run with kswapd", "[mm][global][kswapd]") {
  auto once = [](std::uint64_t seed, std::uint64_t *hash, long *kswapd_steal) {
    MemcgEnv env(with_ram(v2_params(), 1000, 200), emu::Mode::simulated, 4, seed);
    mem_cgroup *a = env.mkdir(nullptr, "a");
    mem_cgroup *b = env.mkdir(nullptr, "b");
    env.run([&] {
      inode *f = cached_file(a, 600);
      AnonHolder h1(b, 250);
      AnonHolder h2(a, 200);
      let_kswapd_settle();
      *kswapd_steal = ev(a, PGSTEAL_KSWAPD) + ev(b, PGSTEAL_KSWAPD);
      h1.kill();
      h2.kill();
      emu::iput(f);
      drain_charges();
    });
    *hash = env.machine().trace_hash();
    env.finish();
  };
  for (std::uint64_t seed : {3u, 11u}) {
    std::uint64_t h1, h2;
    long s1, s2;
    once(seed, &h1, &s1);
    once(seed, &h2, &s2);
    INFO("seed " << seed);
    CHECK(s1 > 0);
    CHECK(h1 == h2);
    CHECK(s1 == s2);
  }
}

TEST_CASE("direct reclaim below the min watermark without kswapd: pgscan_direct only",
          "[mm][global][kswapd]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 1000));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    inode *f = cached_file(a, 800);
    lru_add_drain_all();
    // Allocations that do not wake kswapd reclaim directly once min is reached.
    std::vector<folio *> folios;
    for (int i = 0; i < 300; i++) {
      folio *fo = folio_alloc(GFP_KERNEL & ~__GFP_KSWAPD_RECLAIM);
      REQUIRE(fo);
      folios.push_back(fo);
      REQUIRE(nr_free_pages() >= min_wmark_pages());
    }
    CHECK_FALSE(kswapd_started());
    CHECK(ev(a, PGSTEAL_DIRECT) >= 300 - 200 + 63);
    CHECK(ev(a, PGSCAN_KSWAPD) == 0);
    CHECK(ev(a, PGSTEAL_KSWAPD) == 0);
    for (folio *fo : folios) folio_put(fo);
    emu::iput(f);
    drain_charges();
    CHECK(nr_free_pages() == 1000);
  });
  env.finish();
}

TEST_CASE("kswapd honours memory.min and memory.low (no low-override pass)",
          "[mm][global][kswapd]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 1000));
  mem_cgroup *a = env.mkdir(nullptr, "a");  // memory.min
  mem_cgroup *c = env.mkdir(nullptr, "c");  // memory.low
  mem_cgroup *d = env.mkdir(nullptr, "d");  // unprotected
  mem_cgroup *e = env.mkdir(nullptr, "e");  // the process
  env.run([&] {
    page_counter_set_min(&a->memory, 300);
    page_counter_set_low(&c->memory, 300);
    inode *f = cached_file(a, 250);
    REQUIRE(read_into(c, f, 250, 250) == 0);
    REQUIRE(read_into(d, f, 500, 350) == 0);
    lru_add_drain_all();
    CHECK(nr_free_pages() == 150);
    AnonHolder h(e, 200);
    let_kswapd_settle();
    CHECK(ev(d, PGSTEAL_KSWAPD) > 0);
    CHECK(ev(a, PGSCAN_KSWAPD) == 0);
    CHECK(ev(c, PGSCAN_KSWAPD) == 0);
    CHECK(memory_events_read(c, MEMCG_LOW) == 0);
    CHECK(lru_total(a) == 250);
    CHECK(lru_total(c) == 250);
    CHECK(kswapd_asleep());
    CHECK(ram_used() == folio_pages_held());
    CHECK(h.kill() == 137);
    emu::iput(f);
    drain_charges();
  });
  env.finish();
}

TEST_CASE("a hopeless node: kswapd stops after MAX_RECLAIM_RETRIES failed runs; direct "
          "reclaim's progress revives it", "[mm][global][kswapd]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 1000));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mem_cgroup *b = env.mkdir(nullptr, "b");
  env.run([&] {
    inode *f = cached_file(a, 30);
    lru_add_drain_all();  // on the LRU, where reclaim sees them
    // Anon without swap is not reclaimable: once a's cache is gone the node cannot reach the
    // high watermark (93 free pages) with 920 anon pages in use.
    AnonHolder h(b, 920);
    let_kswapd_settle();
    // kswapd's priority loop ends at 1: a last page of a list is not scanned (1 >> 1 == 0).
    CHECK(lru_total(a) <= 1);
    CHECK(READ_ONCE(node_data()->kswapd_failures) == MAX_RECLAIM_RETRIES);
    CHECK(kswapd_asleep());
    // A hopeless node is not woken: allocations below low go on to min (a's new cache, put on
    // the LRU), then reclaim directly ...
    unsigned long free = nr_free_pages();
    REQUIRE(free > min_wmark_pages() + 10);
    REQUIRE(read_into(a, f, 100, 10) == 0);
    lru_add_drain_all();
    CHECK(READ_ONCE(node_data()->kswapd_failures) == MAX_RECLAIM_RETRIES);
    long direct = ev(a, PGSTEAL_DIRECT);
    // free - 10 - min pages are left above min: this read needs three more.
    REQUIRE(read_into(a, f, 200, free - 10 - min_wmark_pages() + 3) == 0);
    CHECK(ev(a, PGSTEAL_DIRECT) > direct);
    CHECK(memory_events_read(b, MEMCG_OOM_KILL) == 0);
    // ... and their progress makes kswapd's node hopeful again.
    CHECK(READ_ONCE(node_data()->kswapd_failures) == 0);
    CHECK(h.kill() == 137);
    emu::iput(f);
    drain_charges();
    CHECK(nr_free_pages() == 1000);
  });
  env.finish();
}

TEST_CASE("native: processes faulting and holding more than the RAM, reads and kills, with "
          "kswapd and swap, keep every page and charge", "[mm][global][kswapd][native]") {
  WarnCheck wc;
  constexpr unsigned long kRam = 1500;  // min 77, low 96, high 115
  MemcgEnv env(with_ram(v2_params(), kRam, 2000), emu::Mode::native, 4);
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mem_cgroup *b = env.mkdir(nullptr, "b");
  env.run([&] {
    inode *f = emu::file_create();
    for (int round = 0; round < 3; round++) {
      // Four processes of 450 pages at once: 1800 pages, more than the RAM, so they swap.
      std::vector<completion *> ready;
      std::vector<emu::Process *> procs;
      for (int i = 0; i < 4; i++) {
        auto *r = new completion;
        init_completion(r);
        ready.push_back(r);
        procs.push_back(start_anon_holder(i % 2 ? b : a, 450, r));
      }
      REQUIRE(read_into(a, f, static_cast<unsigned long>(round) * 300, 300) == 0);
      for (completion *r : ready) wait_for_completion(r);
      for (emu::Process *p : procs) CHECK_FALSE(emu::process_dying(p));
      for (emu::Process *p : procs) emu::process_kill(p);
      for (emu::Process *p : procs) CHECK(emu::process_wait(p) == 137);
      for (completion *r : ready) delete r;
    }
    CHECK(ev(a, PGSTEAL_KSWAPD) + ev(b, PGSTEAL_KSWAPD) > 0);
    CHECK(ev(a, PSWPOUT) + ev(b, PSWPOUT) > 0);
    emu::kswapd_wait_idle();
    CHECK(ram_used() == folio_pages_held());
    emu::iput(f);
    drain_charges();
    emu::kswapd_wait_idle();
    CHECK(nr_free_pages() == kRam);
    CHECK(get_nr_swap_pages() == 2000);
  });
  env.finish();
}
