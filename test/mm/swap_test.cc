// SPDX-License-Identifier: GPL-2.0-only
// Tests of swap (mm/swapfile.h, shrink_folio_list's swap-out, do_swap_page, the memcg swap
// charges of mm/memcontrol_swap.cc): anon reclaim to a swap device and back, the v2 swap charge
// and its refusals and events, v1's memsw move at swap-out, swap-in charging and uncharging,
// anon refault detection, slots freed by zaps and exit, swap of a removed cgroup, swappiness
// balance, swap.high. Each runs v1 and v2 (where both apply) in both stock designs and ends
// with the charge-path invariant check.
#include "test/mm/mm_test_util.h"
#include "test/support/swap_anon_run.h"

#include <chrono>
#include <cstdio>
#include <vector>

#include "mm/cost_model.h"
#include "mm/rmap.h"
#include "mm/swapfile.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

constexpr unsigned long kSwapPages = 1000;

memcg_boot_params with_swap(memcg_boot_params p, unsigned long pages = kSwapPages) {
  p.swap_pages = pages;
  return p;
}

const memcg_boot_params kAll[] = {v2_params(false), v2_params(true), v1_params(false),
                                  v1_params(true)};

unsigned long reclaim(mem_cgroup *m, unsigned long nr, int *swappiness = nullptr) {
  unsigned int opts = MEMCG_RECLAIM_MAY_SWAP | (swappiness ? MEMCG_RECLAIM_PROACTIVE : 0);
  return try_to_free_mem_cgroup_pages(m, nr, GFP_KERNEL, opts, swappiness);
}

long slots_in_use() { return total_swap_pages() - get_nr_swap_pages(); }
long stat(mem_cgroup *m, int idx) { return emu::memcg_page_state_local_sum(m, idx); }
unsigned long ev(mem_cgroup *m, int idx) { return emu::memcg_events_local_sum(m, idx); }
long swapents(emu::Process *p) { return get_mm_counter(emu::process_mm(p), MM_SWAPENTS); }
long anonpages(emu::Process *p) { return get_mm_counter(emu::process_mm(p), MM_ANONPAGES); }

// A process that faults @nr anon pages, then for each of @rounds rounds waits for the test's go
// and writes every page again (swap-ins of what was swapped out), signalling each stage; then
// holds everything until killed.
struct Toucher {
  static constexpr int kMaxRounds = 4;
  completion stage[kMaxRounds + 1];
  completion go[kMaxRounds];
  emu::Process *proc = nullptr;

  Toucher(mem_cgroup *memcg, unsigned long nr, int rounds) {
    for (auto &c : stage) init_completion(&c);
    for (auto &c : go) init_completion(&c);
    emu::ProcessOptions o;
    o.memcg = memcg;
    proc = emu::process_start(o, [this, nr, rounds] {
      unsigned long addr;
      bool alive = emu::sys_mmap_anon(nr, 0, &addr);
      for (int r = 0; r <= rounds; r++) {
        for (unsigned long i = 0; alive && i < nr; i++) alive = emu::user_write(addr + i);
        emu::KernelEntry k;
        complete(&stage[r]);
        if (r < rounds && (!alive || wait_for_completion_killable(&go[r]))) {
          // Killed: let the test's waits through.
          for (int s = r + 1; s <= rounds; s++) complete(&stage[s]);
          alive = false;
          break;
        }
      }
      while (alive && emu::sys_pause()) {
      }
      return 0;
    });
  }
  void wait_stage(int r) { wait_for_completion(&stage[r]); }
  void next_round(int r) {
    complete(&go[r]);
    wait_for_completion(&stage[r + 1]);
  }
  int kill() { return kill_and_wait(proc); }
};

// No swap slot in use, and none counted to @m: MEMCG_SWAP and the swap counter are 0.
void check_no_swap(mem_cgroup *m) {
  CHECK(slots_in_use() == 0);
  CHECK(stat(m, MEMCG_SWAP) == 0);
  CHECK(page_counter_read(&m->swap) == 0);
}

// Runs @body(env, a) once for each design of kAll, on its swap machine with cgroup "a" below the
// root, then checks the invariants (MemcgEnv::finish()).
template <typename Body>
void for_each_design(Body body) {
  for (const auto &base : kAll) {
    INFO(params_name(base));
    WarnCheck wc;
    MemcgEnv env(with_swap(base));
    mem_cgroup *a = env.mkdir(nullptr, "a");
    body(env, a);
    env.finish();
  }
}

}  // namespace

TEST_CASE("swap-out: anon reclaimed to swap; PTEs become swap entries; charges and stats move",
          "[mm][swap]") {
  for_each_design([](MemcgEnv &env, mem_cgroup *a) {
    env.run([&] {
      CHECK(total_swap_pages() == static_cast<long>(kSwapPages));
      CHECK(get_nr_swap_pages() == static_cast<long>(kSwapPages));
      Toucher t(a, 100, 0);
      t.wait_stage(0);
      drain_charges();
      unsigned long got = reclaim(a, 64);
      REQUIRE(got > 0);
      REQUIRE(got <= 100);
      long n = static_cast<long>(got);
      CHECK(usage(a) == 100 - n);
      CHECK(slots_in_use() == n);
      CHECK(swapents(t.proc) == n);
      CHECK(anonpages(t.proc) == 100 - n);
      CHECK(stat(a, NR_ANON_MAPPED) == 100 - n);
      CHECK(stat(a, MEMCG_SWAP) == n);
      CHECK(ev(a, PSWPOUT) == got);
      CHECK(ev(a, PGSTEAL_DIRECT) == got);
      if (do_memsw_account()) {
        // memcg1_swapout: memory goes, memsw stays for the slot.
        CHECK(static_cast<long>(page_counter_read(&a->memsw)) == 100);
        CHECK(page_counter_read(&a->swap) == 0);
      } else {
        CHECK(static_cast<long>(page_counter_read(&a->swap)) == n);
      }
      // The OOM badness counts the swap entries with the RSS.
      CHECK(oom_badness(t.proc, 1000) == 100);
      env.check();
      // Exit frees the slots and uncharges the swap.
      CHECK(t.kill() == 137);
      drain_charges();
      check_no_swap(a);
      CHECK(usage(a) == 0);
      if (do_memsw_account()) CHECK(page_counter_read(&a->memsw) == 0);
    });
    CHECK(env.rmdir(a) == 0);
  });
}

TEST_CASE("swap-in: the fault charges memory, uncharges swap, frees the slot; refault stats",
          "[mm][swap][workingset]") {
  for_each_design([](MemcgEnv &env, mem_cgroup *a) {
    env.run([&] {
      inode *file = emu::file_create();
      Toucher t(a, 100, 2);
      t.wait_stage(0);
      // Page cache makes the anon refaults recent: they are tested against the file pages too.
      REQUIRE(read_into(a, file, 0, 300) == 0);
      drain_charges();
      int anon_only = SWAPPINESS_ANON_ONLY;
      unsigned long got = reclaim(a, 64, &anon_only);
      REQUIRE(got >= 64);
      long n = static_cast<long>(got);
      CHECK(stat(a, NR_FILE_PAGES) == 300);  // swappiness=max: anon only
      unsigned long majfault = ev(a, PGMAJFAULT);
      t.next_round(0);  // every page written again: the swapped ones fault back in
      drain_charges();
      CHECK(ev(a, PSWPIN) == got);
      CHECK(ev(a, PGMAJFAULT) - majfault == got);
      check_no_swap(a);
      CHECK(swapents(t.proc) == 0);
      CHECK(anonpages(t.proc) == 100);
      CHECK(usage(a) == 400);
      if (do_memsw_account()) CHECK(page_counter_read(&a->memsw) == 400);
      CHECK(stat(a, WORKINGSET_REFAULT_ANON) == n);
      CHECK(stat(a, WORKINGSET_ACTIVATE_ANON) == n);  // within the workingset: activated
      CHECK(stat(a, WORKINGSET_RESTORE_ANON) == 0);   // never deactivated before
      CHECK(lru_pages(a, LRU_ACTIVE_ANON) == got);
      env.check();
      // Round two: the activated pages are deactivated (PG_workingset) before they go, so their
      // refaults restore the workingset.
      got = reclaim(a, 100, &anon_only);
      REQUIRE(got > 0);
      drain_charges();
      unsigned long before_restore = static_cast<unsigned long>(stat(a, WORKINGSET_RESTORE_ANON));
      t.next_round(1);
      drain_charges();
      CHECK(static_cast<unsigned long>(stat(a, WORKINGSET_RESTORE_ANON)) > before_restore);
      CHECK(slots_in_use() == 0);
      env.check();
      CHECK(t.kill() == 137);
      emu::iput(file);
      drain_charges();
    });
    CHECK(usage(a) == 0);
    CHECK(env.rmdir(a) == 0);
  });
}

TEST_CASE("swap.max 0 refuses swap-out: the faulting process is OOM-killed; with swap it runs",
          "[mm][swap][oom]") {
  for (bool pcstock : {false, true}) {
    for (bool allow : {false, true}) {
      INFO((pcstock ? "pcstock" : "memcg-stock") << (allow ? " swap.max=max" : " swap.max=0"));
      WarnCheck wc;
      MemcgEnv env(with_swap(v2_params(pcstock)));
      mem_cgroup *a = env.mkdir(nullptr, "a");
      int status = -1;
      env.run([&] {
        page_counter_set_max(&a->memory, 50);
        if (!allow) page_counter_set_max(&a->swap, 0);
        emu::Process *p = anon_holder_started(a, 100);
        if (allow) {
          CHECK(swapents(p) >= 50);
          CHECK(static_cast<long>(page_counter_read(&a->swap)) == swapents(p));
          emu::process_kill(p);
        }
        status = emu::process_wait(p);
        drain_charges();
      });
      CHECK(status == 137);
      CHECK(memory_events_read(a, MEMCG_OOM_KILL) == (allow ? 0 : 1));
      // No swap room: anon is never scanned, so no swap-out is even tried.
      CHECK(memory_events_read(a, MEMCG_SWAP_MAX) == 0);
      CHECK(memory_events_read(a, MEMCG_SWAP_FAIL) == 0);
      if (allow) CHECK(ev(a, PSWPOUT) >= 50);
      else CHECK(ev(a, PSWPOUT) == 0);
      CHECK(page_counter_read(&a->swap) == 0);
      CHECK(env.rmdir(a) == 0);
      env.finish();
    }
  }
}

TEST_CASE("swap.max partial: swap-out stops at the limit; the refusals raise max and fail on "
          "the folio's memcg and activate the folios",
          "[mm][swap][events]") {
  for (bool pcstock : {false, true}) {
    INFO((pcstock ? "pcstock" : "memcg-stock"));
    WarnCheck wc;
    MemcgEnv env(with_swap(v2_params(pcstock)));
    mem_cgroup *p = env.mkdir(nullptr, "p");
    mem_cgroup *a = env.mkdir(p, "a");
    env.run([&] {
      page_counter_set_max(&p->swap, 5);  // the ancestor's limit
      Toucher t(a, 100, 0);
      t.wait_stage(0);
      drain_charges();
      int anon_only = SWAPPINESS_ANON_ONLY;
      unsigned long got = reclaim(a, 64, &anon_only);
      CHECK(got == 5);
      CHECK(page_counter_read(&a->swap) == 5);
      CHECK(page_counter_read(&p->swap) == 5);
      CHECK(p->swap.watermark == 5);  // memory.swap.peak
      CHECK(slots_in_use() == 5);
      // Refused in the same batch: on the folio's memcg, never the limiting ancestor.
      long refused = memory_events_local_read(a, MEMCG_SWAP_MAX);
      CHECK(refused >= 1);
      CHECK(memory_events_local_read(a, MEMCG_SWAP_FAIL) == refused);
      CHECK(memory_events_local_read(p, MEMCG_SWAP_MAX) == 0);
      CHECK(memory_events_read(p, MEMCG_SWAP_MAX) == refused);  // hierarchical swap.events
      // The refused folios are activated (PGACTIVATE; aging may deactivate them again).
      CHECK(static_cast<long>(ev(a, PGACTIVATE)) >= refused);
      // The free swap left no longer matters: the limit is reached, anon is not scanned.
      CHECK(mem_cgroup_get_nr_swap_pages(a) == 0);
      CHECK(reclaim(a, 64, &anon_only) == 0);
      CHECK(memory_events_local_read(a, MEMCG_SWAP_MAX) == refused);
      env.check();
      CHECK(t.kill() == 137);
      drain_charges();
    });
    env.finish();
  }
}

TEST_CASE("no free slot: swap-out raises fail only; the free swap caps what memcgs may use",
          "[mm][swap][events]") {
  WarnCheck wc;
  MemcgEnv env(with_swap(v2_params(), 8));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    Toucher t(a, 100, 0);
    t.wait_stage(0);
    drain_charges();
    CHECK(mem_cgroup_get_nr_swap_pages(a) == 8);
    int anon_only = SWAPPINESS_ANON_ONLY;
    CHECK(reclaim(a, 64, &anon_only) == 8);
    CHECK(get_nr_swap_pages() == 0);
    CHECK(memory_events_local_read(a, MEMCG_SWAP_MAX) == 0);
    CHECK(memory_events_local_read(a, MEMCG_SWAP_FAIL) >= 1);
    CHECK(mem_cgroup_get_nr_swap_pages(a) == 0);
    env.check();
    CHECK(t.kill() == 137);
    drain_charges();
    CHECK(get_nr_swap_pages() == 8);
  });
  env.finish();
}

TEST_CASE("MADV_DONTNEED and munmap of swapped pages free their slots and uncharge the swap",
          "[mm][swap][process]") {
  for_each_design([](MemcgEnv &env, mem_cgroup *a) {
    env.run([&] {
      completion swapped, done;
      init_completion(&swapped);
      init_completion(&done);
      long ents_before_dontneed = -1, ents_after_dontneed = -1, ents_after_munmap = -1;
      long slots_after_dontneed = -1;
      emu::ProcessOptions o;
      o.memcg = a;
      completion ready;
      init_completion(&ready);
      emu::Process *p = emu::process_start(o, [&] {
        unsigned long addr;
        emu::sys_mmap_anon(100, 0, &addr);
        for (unsigned long i = 0; i < 100; i++) emu::user_write(addr + i);
        {
          emu::KernelEntry k;
          complete(&ready);
          wait_for_completion(&swapped);
        }
        ents_before_dontneed = get_mm_counter(current->mm, MM_SWAPENTS);
        emu::sys_madvise_dontneed(addr, 50);
        ents_after_dontneed = get_mm_counter(current->mm, MM_SWAPENTS);
        slots_after_dontneed = slots_in_use();
        emu::sys_munmap(addr, 100);
        ents_after_munmap = get_mm_counter(current->mm, MM_SWAPENTS);
        emu::KernelEntry k;
        complete(&done);
        return 0;
      });
      wait_for_completion(&ready);
      drain_charges();
      REQUIRE(reclaim(a, 100) > 0);
      long swapped_total = swapents(p);
      REQUIRE(swapped_total > 0);
      complete(&swapped);
      wait_for_completion(&done);
      CHECK(emu::process_wait(p) == 0);
      CHECK(ents_before_dontneed == swapped_total);
      // The swapped pages among the first 50 went with MADV_DONTNEED.
      CHECK(ents_after_dontneed < ents_before_dontneed);
      CHECK(slots_after_dontneed == ents_after_dontneed);
      CHECK(ents_after_munmap == 0);
      drain_charges();
      check_no_swap(a);
      if (do_memsw_account()) CHECK(page_counter_read(&a->memsw) == 0);
    });
  });
}

TEST_CASE("a removed cgroup keeps its swap charged; swap-in charges the faulting mm's memcg",
          "[mm][swap][offline]") {
  for (const auto &base : kAll) {
    INFO(params_name(base));
    WarnCheck wc;
    MemcgEnv env(with_swap(base));
    mem_cgroup *a = env.mkdir(nullptr, "a");
    mem_cgroup *b = env.mkdir(nullptr, "b");
    Toucher *t = nullptr;
    long n = 0;
    env.run([&] {
      t = new Toucher(a, 100, 1);
      t->wait_stage(0);
      drain_charges();
      n = static_cast<long>(reclaim(a, 64));
      REQUIRE(n > 0);
      // The process moves to b (cgroup.procs); its swap stays recorded for a.
      emu::mm_attach(emu::process_mm(t->proc), b);
    });
    CHECK(env.rmdir(a) == 0);
    env.run([&] {
      emu::cgroup_flush_releases();
      // Offline, but pinned by its swap records.
      CHECK(mem_cgroup_from_id(mem_cgroup_id(a)) == a);
      CHECK(stat(a, MEMCG_SWAP) == n);
      if (!do_memsw_account()) CHECK(static_cast<long>(page_counter_read(&a->swap)) == n);
      t->next_round(0);
      drain_charges();
      // The recorded memcg is offline: the pages are charged to b, the faulting mm's.
      CHECK(stat(b, NR_ANON_MAPPED) == n);
      CHECK(usage(b) == n);
      CHECK(slots_in_use() == 0);
      CHECK(t->kill() == 137);
      delete t;
      drain_charges();
      emu::cgroup_flush_releases();
    });
    CHECK(usage(b) == 0);
    CHECK(env.rmdir(b) == 0);
    env.finish();
  }
}

TEST_CASE("get_scan_count sees swap: swappiness balances anon and file; 0 spares anon",
          "[mm][swap][reclaim]") {
  for (const auto &base : {v2_params(false), v1_params(false)}) {
    INFO((base.v1 ? "v1" : "v2"));
    WarnCheck wc;
    MemcgEnv env(with_swap(base));
    mem_cgroup *a = env.mkdir(nullptr, "a");
    env.run([&] {
      inode *file = emu::file_create();
      Toucher t(a, 200, 0);
      t.wait_stage(0);
      REQUIRE(read_into(a, file, 0, 200) == 0);
      drain_charges();
      int zero = 0;
      CHECK(reclaim(a, 64, &zero) > 0);
      CHECK(ev(a, PSWPOUT) == 0);  // swappiness 0: file only
      int anon_only = SWAPPINESS_ANON_ONLY;
      long file_before = stat(a, NR_FILE_PAGES);
      CHECK(reclaim(a, 64, &anon_only) > 0);
      CHECK(ev(a, PSWPOUT) > 0);
      CHECK(stat(a, NR_FILE_PAGES) == file_before);
      // Default swappiness (60) at the last priorities scans both.
      unsigned long pswpout = ev(a, PSWPOUT);
      long file_mid = stat(a, NR_FILE_PAGES);
      for (int i = 0; i < 8; i++) reclaim(a, 64);
      CHECK(ev(a, PSWPOUT) > pswpout);
      CHECK(stat(a, NR_FILE_PAGES) < file_mid);
      env.check();
      CHECK(t.kill() == 137);
      emu::iput(file);
      drain_charges();
    });
    env.finish();
  }
}

TEST_CASE("swap.high: over it the charging task is throttled and swap.events counts high",
          "[mm][swap][high]") {
  WarnCheck wc;
  MemcgEnv env(with_swap(v2_params()));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  int status = -1;
  env.run([&] {
    page_counter_set_max(&a->memory, 40);
    page_counter_set_high(&a->swap, 10);
    emu::Process *p = anon_holder_started(a, 150);
    CHECK(static_cast<long>(page_counter_read(&a->swap)) > 10);  // high never refuses
    status = kill_and_wait(p);
    drain_charges();
  });
  CHECK(status == 137);
  CHECK(memory_events_read(a, MEMCG_SWAP_HIGH) >= 1);
  CHECK(memory_events_read(a, MEMCG_SWAP_MAX) == 0);
  CHECK(memory_events_read(a, MEMCG_OOM_KILL) == 0);
  env.finish();
}

TEST_CASE("without a swap device nothing changes: total 0, anon never scanned",
          "[mm][swap]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    CHECK(total_swap_pages() == 0);
    CHECK(mem_cgroup_get_nr_swap_pages(a) == 0);
    emu::Process *p = anon_holder_started(a, 50);
    drain_charges();
    int anon_only = SWAPPINESS_ANON_ONLY;
    CHECK(reclaim(a, 32, &anon_only) == 0);
    CHECK(ev(a, PSWPOUT) == 0);
    CHECK(kill_and_wait(p) == 137);
  });
  env.finish();
}

// The owner zaps its pages while reclaim writes them to swap (simulated mode: reclaim sleeps
// in each page's swap_out cost, and the owner's MADV_DONTNEED of one page, from the top down,
// runs there). Reclaim goes up from the bottom, so one of the owner's zaps meets the entry of
// the page reclaim has unmapped but not finished with: its slot keeps the swap cache's hold
// until reclaim has made its charge record (v1's memcg1_swapout) and lets go, so every slot is
// freed once, by whichever lets go last, and no record outlives its slot.
TEST_CASE("swap-out racing the owner's zap: every slot and swap record is freed once",
          "[mm][swap][process]") {
  constexpr unsigned long kPages = 64;
  for (const auto &base : kAll) {
    INFO(params_name(base));
    WarnCheck wc;
    MemcgEnv env(with_swap(base), emu::Mode::simulated, 2);
    mem_cgroup *a = env.mkdir(nullptr, "a");
    unsigned long reclaimed = 0;
    long zapped_entries = 0;
    env.run([&] {
      completion ready, go, done;
      init_completion(&ready);
      init_completion(&go);
      init_completion(&done);
      emu::ProcessOptions o;
      o.memcg = a;
      emu::Process *p = emu::process_start(o, [&] {
        unsigned long addr;
        emu::sys_mmap_anon(kPages, 0, &addr);
        for (unsigned long i = 0; i < kPages; i++) emu::user_write(addr + i);
        {
          emu::KernelEntry k;
          complete(&ready);
          wait_for_completion(&go);
        }
        for (unsigned long i = kPages; i-- > 0;) {
          const long before = get_mm_counter(current->mm, MM_SWAPENTS);
          emu::sys_madvise_dontneed(addr + i, 1);
          zapped_entries += before - get_mm_counter(current->mm, MM_SWAPENTS);
        }
        return 0;
      });
      wait_for_completion(&ready);
      drain_charges();
      env.machine().spawn("reclaimer", [&] {
        emu::KernelEntry k;
        int anon_only = SWAPPINESS_ANON_ONLY;
        reclaimed = reclaim(a, kPages, &anon_only);
        complete(&done);
      }, {.cpu = 1});
      // A few pages into the swap-out (each costs swap_out of machine time), the zaps start.
      emu::consume_time(4 * emu::cost_model().swap_out);
      complete(&go);
      CHECK(emu::process_wait(p) == 0);
      wait_for_completion(&done);
      drain_charges();
      CHECK(slots_in_use() == 0);
      CHECK(stat(a, MEMCG_SWAP) == 0);
    });
    // Both met: reclaim wrote pages, and the owner zapped some of their entries.
    CHECK(reclaimed > 0);
    CHECK(zapped_entries > 0);
    CHECK(usage(a) == 0);
    env.finish();
  }
}

// Target S13 (simulated mode): prints the wall time; the figure is reported, never asserted.
TEST_CASE("S13: 100M of anon touched under memory.max=30M with 1G of swap completes",
          "[mm][swap][s13]") {
  for (bool v1 : {false, true}) {
    WarnCheck wc;
    auto t0 = std::chrono::steady_clock::now();
    SwapAnonResult r = run_swap_anon(v1, false);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("S13 %s: %.3f s wall, pswpout %llu, pswpin %llu\n", v1 ? "v1" : "v2", secs,
                static_cast<unsigned long long>(r.pswpout),
                static_cast<unsigned long long>(r.pswpin));
    CHECK(r.boot == 0);
    CHECK(r.status == 0);
    CHECK(r.oom_kills == 0);
    // At least the 70 MiB above the limit went through the LRU to swap.
    CHECK(r.pswpout >= 70UL * 256);
    CHECK(check_memcg_teardown().empty());
  }
}

// Native mode: processes on real threads fault, are swapped out by each other's charges, swap
// back in and exit concurrently; nothing is charged twice or lost.
TEST_CASE("native: concurrent swap-out, swap-in and exit keep every charge and slot",
          "[mm][swap][native]") {
  for (const auto &base : {v2_params(false), v1_params(true)}) {
    INFO(params_name(base));
    WarnCheck wc;
    MemcgEnv env(with_swap(base), emu::Mode::native, 4);
    mem_cgroup *a = env.mkdir(nullptr, "a");
    env.run([&] {
      page_counter_set_max(&a->memory, 150);
      constexpr int kProcs = 3;
      Toucher *t[kProcs];
      for (auto &x : t) x = new Toucher(a, 120, 2);
      for (auto *x : t) x->wait_stage(0);
      for (int r = 0; r < 2; r++) {
        for (auto *x : t) complete(&x->go[r]);
        for (auto *x : t) x->wait_stage(r + 1);
      }
      long ents = 0;
      for (auto *x : t) ents += swapents(x->proc);
      CHECK(ents == slots_in_use());
      CHECK(ev(a, PSWPIN) > 0);
      for (auto *x : t) {
        CHECK(x->kill() == 137);
        delete x;
      }
      drain_charges();
      CHECK(slots_in_use() == 0);
      CHECK(stat(a, MEMCG_SWAP) == 0);
    });
    CHECK(usage(a) == 0);
    env.finish();
  }
}
