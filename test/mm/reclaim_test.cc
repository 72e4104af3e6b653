// SPDX-License-Identifier: GPL-2.0-only
// Tests of the per-memcg LRU and memcg reclaim (mm/swap.h, mm/vmscan.h, mm/workingset.h):
// two-touch activation, aging, clean page-cache reclaim with shadow entries and refaults,
// no-swap anon, memory.min/memory.low with the low-override pass and its event, proactive
// reclaim of a protected target.
#include "test/mm/mm_test_util.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

unsigned long reclaim(mem_cgroup *m, unsigned long nr, unsigned int opts = MEMCG_RECLAIM_MAY_SWAP) {
  return try_to_free_mem_cgroup_pages(m, nr, GFP_KERNEL, opts, nullptr);
}

// Reclaims from @m until a call makes no progress; returns the total.
unsigned long reclaim_all(mem_cgroup *m) {
  unsigned long total = 0, got;
  while ((got = reclaim(m, 1024)) != 0) total += got;
  return total;
}

}  // namespace

TEST_CASE("two-touch activation of page-cache folios", "[mm][lru]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  inode *ino = emu::file_create();
  env.run([&] {
    // First touch: inactive and referenced.
    REQUIRE(read_into(a, ino, 0, 20) == 0);
    lru_add_drain();
    CHECK(lru_pages(a, LRU_INACTIVE_FILE) == 20);
    CHECK(lru_pages(a, LRU_ACTIVE_FILE) == 0);
    // Second touch of folios on the LRU: activated.
    REQUIRE(read_into(a, ino, 0, 10) == 0);
    CHECK(lru_pages(a, LRU_ACTIVE_FILE) == 10);
    CHECK(lru_pages(a, LRU_INACTIVE_FILE) == 10);
    // Two touches while still in this CPU's lru_add batch: PG_active set in place.
    REQUIRE(read_into(a, ino, 100, 5) == 0);
    REQUIRE(read_into(a, ino, 100, 5) == 0);
    CHECK(lru_pages(a, LRU_ACTIVE_FILE) == 10);
    lru_add_drain();
    CHECK(lru_pages(a, LRU_ACTIVE_FILE) == 15);
    env.check();
    emu::iput(ino);
    CHECK(lru_total(a) == 0);
  });
  env.finish();
}

TEST_CASE("reclaim drops clean page cache, leaves shadows; recent refaults are activated",
          "[mm][reclaim][workingset]") {
  for (const auto &p : {v2_params(), v1_params()}) {
    WarnCheck wc;
    MemcgEnv env(p);
    mem_cgroup *a = env.mkdir(nullptr, "a");
    inode *ino = emu::file_create();
    env.run([&] {
      // 200 active pages (read twice) and 300 inactive ones (read once).
      REQUIRE(read_into(a, ino, 0, 200) == 0);
      lru_add_drain();
      REQUIRE(read_into(a, ino, 0, 200) == 0);
      REQUIRE(read_into(a, ino, 200, 300) == 0);
      drain_charges();
      CHECK(lru_pages(a, LRU_ACTIVE_FILE) == 200);
      CHECK(lru_pages(a, LRU_INACTIVE_FILE) == 300);
      long before = usage(a);
      unsigned long got = reclaim(a, 50);
      // The goal is met within one 32-page chunk of overshoot; the inactive list never gets
      // low, so the active list is left alone and only inactive (second-range) pages go.
      CHECK(got >= 50);
      CHECK(got < 50 + SWAP_CLUSTER_MAX);
      CHECK(usage(a) == before - static_cast<long>(got));
      CHECK(lru_pages(a, LRU_ACTIVE_FILE) == 200);
      CHECK(filemap_nr_pages(ino) == 500 - got);
      {
        spin_lock(&ino->i_data.i_pages_lock);
        CHECK(ino->i_data.shadows.size() == got);
        spin_unlock(&ino->i_data.i_pages_lock);
      }
      env.check();
      // The oldest inactive folios went first: pages 200 .. 200 + got - 1. Their refault
      // distance (evictions and activations since) is within the active file list, so the
      // refaulting folios start active.
      {
        spin_lock(&ino->i_data.i_pages_lock);
        CHECK(ino->i_data.shadows.begin()->first == 200);
        CHECK(ino->i_data.shadows.rbegin()->first == 200 + got - 1);
        spin_unlock(&ino->i_data.i_pages_lock);
      }
      REQUIRE(read_into(a, ino, 200, got) == 0);
      lru_add_drain();
      CHECK(lru_pages(a, LRU_ACTIVE_FILE) == 200 + got);
      // Statistics: the direct reclaim's scan and steal, the refaults, all recent.
      CHECK(emu::memcg_events_local_sum(a, PGSTEAL_DIRECT) == got);
      CHECK(emu::memcg_events_local_sum(a, PGSCAN_DIRECT) >= got);
      CHECK(emu::memcg_events_local_sum(a, PGACTIVATE) == 200);
      CHECK(emu::memcg_page_state_local_sum(a, WORKINGSET_REFAULT_FILE) == static_cast<long>(got));
      CHECK(emu::memcg_page_state_local_sum(a, WORKINGSET_ACTIVATE_FILE) == static_cast<long>(got));
      CHECK(emu::memcg_page_state_local_sum(a, WORKINGSET_RESTORE_FILE) == 0);
      CHECK(emu::memcg_page_state_local_sum(a, NR_FILE_PAGES) == 500);
      env.check();
      emu::iput(ino);
    });
    env.finish();
  }
}

TEST_CASE("aging: when the inactive list is low, reclaim deactivates active folios",
          "[mm][reclaim][lru]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  inode *ino = emu::file_create();
  env.run([&] {
    REQUIRE(read_into(a, ino, 0, 200) == 0);
    lru_add_drain();
    REQUIRE(read_into(a, ino, 0, 200) == 0);  // all active
    drain_charges();
    CHECK(inactive_is_low(a, LRU_INACTIVE_FILE));
    unsigned long got = reclaim(a, 32);
    // Reclaim had to deactivate first (nothing inactive to take), then reclaimed.
    CHECK(got >= 32);
    CHECK(lru_pages(a, LRU_ACTIVE_FILE) < 200);
    CHECK(lru_pages(a, LRU_ACTIVE_FILE) + lru_pages(a, LRU_INACTIVE_FILE) == 200 - got);
    env.check();
    emu::iput(ino);
  });
  env.finish();
}

TEST_CASE("without swap, anon pages are never reclaimed", "[mm][reclaim][anon]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    emu::Process *proc = anon_holder_started(a, 100);
    drain_charges();
    CHECK(reclaim(a, 64) == 0);
    CHECK(reclaim(a, 64, MEMCG_RECLAIM_MAY_SWAP | MEMCG_RECLAIM_PROACTIVE) == 0);
    CHECK(lru_pages(a, LRU_INACTIVE_ANON) == 100);
    CHECK(usage(a) == 100);
    CHECK(kill_and_wait(proc) == 137);
  });
  env.finish();
}

TEST_CASE("memory.min is a hard floor; memory.low gives way only in the low pass, with its event",
          "[mm][reclaim][protection]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *parent = env.mkdir(nullptr, "p");
  mem_cgroup *cmin = env.mkdir(parent, "min");
  mem_cgroup *clow = env.mkdir(parent, "low");
  mem_cgroup *cnone = env.mkdir(parent, "none");
  inode *f1 = emu::file_create(), *f2 = emu::file_create(), *f3 = emu::file_create();
  env.run([&] {
    REQUIRE(read_into(cmin, f1, 0, 200) == 0);
    REQUIRE(read_into(clow, f2, 0, 200) == 0);
    REQUIRE(read_into(cnone, f3, 0, 200) == 0);
    drain_charges();
    page_counter_set_min(&cmin->memory, 150);
    page_counter_set_low(&clow->memory, 150);

    // While unprotected pages exist, a reclaim of the parent takes only from them and from the
    // part of cmin/clow above their protection (proportionally); no low event.
    reclaim(parent, 100);
    CHECK(memory_events_read(clow, MEMCG_LOW) == 0);
    CHECK(usage(cmin) >= 150);

    // Everything reclaimable: cnone empties; clow is reclaimed only by low-override passes,
    // each counting "low" on it; cmin stops within one chunk at or below its min.
    reclaim_all(parent);
    CHECK(usage(cnone) == 0);
    CHECK(usage(clow) == 0);
    CHECK(memory_events_read(clow, MEMCG_LOW) > 0);
    CHECK(memory_events_local_read(clow, MEMCG_LOW) == memory_events_read(clow, MEMCG_LOW));
    CHECK(memory_events_read(cmin, MEMCG_LOW) == 0);
    CHECK(memory_events_read(cnone, MEMCG_LOW) == 0);
    CHECK(memory_events_read(parent, MEMCG_LOW) == memory_events_read(clow, MEMCG_LOW));  // hierarchical
    CHECK(usage(cmin) <= 150);
    CHECK(usage(cmin) >= 150 - static_cast<long>(SWAP_CLUSTER_MAX));
    long floor = usage(cmin);
    // Below its min, cmin is never touched, not even by the low pass.
    CHECK(reclaim(parent, 1000) == 0);
    CHECK(usage(cmin) == floor);
    env.check();
    emu::iput(f1);
    emu::iput(f2);
    emu::iput(f3);
  });
  env.finish();
}

TEST_CASE("below memory.low, the first pass skips; nothing else left: low pass reclaims",
          "[mm][reclaim][protection]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *parent = env.mkdir(nullptr, "p");
  mem_cgroup *clow = env.mkdir(parent, "low");
  mem_cgroup *cnone = env.mkdir(parent, "none");
  inode *f1 = emu::file_create(), *f2 = emu::file_create();
  env.run([&] {
    REQUIRE(read_into(clow, f1, 0, 100) == 0);
    REQUIRE(read_into(cnone, f2, 0, 300) == 0);
    drain_charges();
    page_counter_set_low(&clow->memory, 100);  // fully protected (usage == low)
    // Plenty unprotected: clow untouched, no event.
    unsigned long got = reclaim(parent, 64);
    CHECK(got >= 64);
    CHECK(usage(clow) == 100);
    CHECK(usage(cnone) == 300 - static_cast<long>(got));
    CHECK(memory_events_read(clow, MEMCG_LOW) == 0);
    // Drain the unprotected memcg; the next call finds nothing in its first pass.
    while (usage(cnone) > 0) reclaim(cnone, 1024);
    CHECK(memory_events_read(clow, MEMCG_LOW) == 0);
    got = reclaim(parent, 32);
    CHECK(got >= 32);
    CHECK(usage(clow) == 100 - static_cast<long>(got));
    CHECK(memory_events_read(clow, MEMCG_LOW) >= 1);
    env.check();
    emu::iput(f1);
    emu::iput(f2);
  });
  env.finish();
}

TEST_CASE("proactive reclaim ignores the target's own protection", "[mm][reclaim][protection]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  inode *f = emu::file_create();
  env.run([&] {
    REQUIRE(read_into(a, f, 0, 200) == 0);
    drain_charges();
    page_counter_set_min(&a->memory, 200);
    page_counter_set_low(&a->memory, 200);
    unsigned long got =
        reclaim(a, 100, MEMCG_RECLAIM_MAY_SWAP | MEMCG_RECLAIM_PROACTIVE);
    CHECK(got >= 100);
    CHECK(memory_events_read(a, MEMCG_LOW) == 0);
    emu::iput(f);
  });
  env.finish();
}

TEST_CASE("page cache stays charged after the reader exits; deletion uncharges",
          "[mm][filemap][process]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    emu::ProcessOptions o;
    o.memcg = a;
    emu::Process *p1 = emu::process_start(
        o, [] { return emu::workload_pagecache(50 * PAGE_SIZE, "shared", false); });
    CHECK(emu::process_wait(p1) == 0);
    emu::Process *p2 =
        emu::process_start(o, [] { return emu::workload_pagecache(30 * PAGE_SIZE, "", false); });
    CHECK(emu::process_wait(p2) == 0);
    drain_charges();
    // The named file's 50 pages stay; the private file went with its process.
    CHECK(usage(a) == 50);
    CHECK(lru_total(a) == 50);
  });
  env.check();
  // The cgroup can go (no process), its pages stay charged to the dying memcg.
  CHECK(env.rmdir(a) == 0);
  env.finish();  // machine shutdown releases the named file
}
