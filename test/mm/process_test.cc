// SPDX-License-Identifier: GPL-2.0-only
// Tests of emulated processes: anon faults, mlock, munmap/MADV_DONTNEED, exit and fatal
// signals (mm/process.h, mm/memory.h), on v1 and v2 and both stock designs; the freezer on
// processes (a sleep restarted after a thaw, a placement into a frozen cgroup).
#include <atomic>

#include "test/mm/mm_test_util.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {
const memcg_boot_params kDesigns[] = {v2_params(false), v2_params(true), v1_params(false),
                                      v1_params(true)};
}  // namespace

TEST_CASE("anon faults charge a page each, enter the LRU through the batch, exit frees all",
          "[mm][process]") {
  for (const auto &p : kDesigns) {
    INFO(params_name(p));
    WarnCheck wc;
    MemcgEnv env(p);
    mem_cgroup *a = env.mkdir(nullptr, "a");
    constexpr unsigned long N = 100;
    int status = -1;
    env.run([&] {
      emu::Process *proc = anon_holder_started(a, N);
      mm_struct *mm = emu::process_mm(proc);
      CHECK(get_mm_counter(mm, MM_ANONPAGES) == static_cast<long>(N));
      CHECK(mm->memcg == a);
      CHECK(cgroup_rmdir(a->css.cgroup) == -EBUSY);
      // Charged: 100 pages in batches of 64 (two refills, 28 left in the stock).
      CHECK(usage(a) >= static_cast<long>(N));
      // Each CPU's batch holds at most 30 folios (a full one is moved at once): some of the
      // charged pages are on no list yet.
      unsigned long listed = lru_pages(a, LRU_INACTIVE_ANON);
      CHECK(listed < N);
      CHECK(listed + lru_add_batched_pages(a) == N);
      CHECK(lru_add_batched_pages(a) < PAGEVEC_SIZE);
      lru_add_drain_all();
      CHECK(lru_pages(a, LRU_INACTIVE_ANON) == N);
      CHECK(lru_pages(a, LRU_ACTIVE_ANON) == 0);
      CHECK(emu::memcg_page_state_local_sum(a, NR_ANON_MAPPED) == static_cast<long>(N));
      CHECK(emu::memcg_page_state_local_sum(a, NR_INACTIVE_ANON) == static_cast<long>(N));
      CHECK(emu::memcg_events_local_sum(a, PGFAULT) == N);
      env.check();
      status = kill_and_wait(proc);
      CHECK(lru_total(a) == 0);
    });
    CHECK(status == 128 + 9);
    env.check();
    CHECK(env.rmdir(a) == 0);
    env.finish();
  }
}

TEST_CASE("anon workload exits 0 after munmap; nothing stays charged", "[mm][process]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  int status = -1;
  env.run([&] {
    emu::ProcessOptions o;
    o.memcg = a;
    emu::Process *proc =
        emu::process_start(o, [] { return emu::workload_anon(300 * PAGE_SIZE, false); });
    status = emu::process_wait(proc);
    // Freed folios still in an lru_add batch are released (and uncharged) when it drains.
    lru_add_drain_all();
    drain_all_stock(root_mem_cgroup);
    flush_workqueue(memcg_wq);
  });
  CHECK(status == 0);
  CHECK(usage(a) == 0);
  CHECK(lru_total(a) == 0);
  env.finish();
}

TEST_CASE("mlock: one kernel entry populates the mapping, pages are unevictable",
          "[mm][process][mlock]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    emu::Process *proc = anon_holder_started(a, 64, 0, MAP_POPULATE | MAP_LOCKED);
    lru_add_drain_all();
    CHECK(lru_pages(a, LRU_UNEVICTABLE) == 64);
    CHECK(lru_pages(a, LRU_INACTIVE_ANON) == 0);
    // Unevictable pages are never reclaimed.
    CHECK(try_to_free_mem_cgroup_pages(a, 64, GFP_KERNEL, MEMCG_RECLAIM_MAY_SWAP, nullptr) == 0);
    CHECK(lru_pages(a, LRU_UNEVICTABLE) == 64);
    env.check();
    CHECK(kill_and_wait(proc) == 137);
    CHECK(lru_total(a) == 0);
  });
  env.finish();
}

TEST_CASE("MADV_DONTNEED and munmap free and uncharge at once", "[mm][process]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  long after_fault = 0, after_dontneed = 0, after_munmap = 0, rss_dontneed = -1;
  env.run([&] {
    emu::ProcessOptions o;
    o.memcg = a;
    emu::Process *proc = emu::process_start(o, [&] {
      unsigned long addr;
      emu::sys_mmap_anon(200, 0, &addr);
      for (unsigned long i = 0; i < 200; i++) emu::user_write(addr + i);
      {
        emu::KernelEntry k;
        lru_add_drain();
        drain_all_stock(root_mem_cgroup);
        after_fault = usage(a);
      }
      emu::sys_madvise_dontneed(addr, 100);
      after_dontneed = usage(a);
      rss_dontneed = get_mm_counter(current->mm, MM_ANONPAGES);
      emu::sys_munmap(addr, 200);
      after_munmap = usage(a);
      return 3;
    });
    CHECK(emu::process_wait(proc) == 3);
  });
  CHECK(after_fault == 200);
  CHECK(after_dontneed == 100);  // uncharged directly, not into the stock
  CHECK(rss_dontneed == 100);
  CHECK(after_munmap == 0);
  env.finish();
}

TEST_CASE("a fatal signal ends a faulting process at its next return to user mode",
          "[mm][process][signal]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  unsigned long faulted = 0;
  int status = -1;
  env.run([&] {
    emu::ProcessOptions o;
    o.memcg = a;
    completion started;
    init_completion(&started);
    emu::Process *proc = emu::process_start(o, [&] {
      unsigned long addr;
      emu::sys_mmap_anon(1000000, 0, &addr);
      for (unsigned long i = 0; i < 1000000; i++) {
        if (i == 10) {
          emu::KernelEntry k;
          complete(&started);
        }
        if (!emu::user_write(addr + i)) break;
        faulted++;
      }
      return 0;
    });
    wait_for_completion(&started);
    status = kill_and_wait(proc);
  });
  CHECK(status == 137);
  CHECK(faulted < 1000000);
  CHECK(lru_total(a) == 0);
  env.finish();
}

// The freezer on processes (kernel/cgroup_freezer.cc with mm/process.cc): a sleep the freezer
// interrupts is restarted after the thaw to its first deadline, as the kernel restarts
// nanosleep; a process placed into a frozen cgroup before it runs runs nothing until thawed.
TEST_CASE("freezer: a frozen sleep ends at its deadline after the thaw; a process placed in a "
          "frozen cgroup runs nothing until thawed", "[mm][process][freeze]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  cgroup *cg = a->css.cgroup;
  auto freeze = [cg](bool on) {
    mutex_guard g(&cgroup_mutex);
    cgroup_freeze(cg, on);
  };
  auto frozen = [cg] { return test_bit(CGRP_FROZEN, &cg->flags); };
  auto now = [] { return emu::Machine::get()->now_ns(); };
  env.run([&] {
    emu::ProcessOptions o;
    o.place = [cg](int pid) {
      mutex_guard g(&cgroup_mutex);
      return cgroup_attach_pid(cg, pid, true);
    };
    std::uint64_t t0 = now(), woke = 0;
    emu::Process *sleeper = emu::process_start(o, [&] {
      emu::sys_nanosleep(1000000000);
      woke = now();
      return 0;
    });
    msleep(500);
    freeze(true);
    msleep(10);
    CHECK(frozen());
    msleep(2490);
    CHECK(woke == 0);
    freeze(false);
    CHECK_FALSE(frozen());
    CHECK(emu::process_wait(sleeper) == 0);
    // Its deadline (1 s) had passed while frozen: it returns at the thaw (3 s), not 1 s later
    // and not 0.5 s later (the rest of its sleep).
    CHECK(woke - t0 >= 3000000000ull);
    CHECK(woke - t0 < 3050000000ull);

    freeze(true);
    CHECK(frozen());  // no tasks: frozen at once
    bool ran = false;
    emu::Process *late = emu::process_start(o, [&] {
      ran = true;
      return 0;
    });
    msleep(100);
    CHECK_FALSE(ran);
    CHECK(frozen());
    freeze(false);
    CHECK(emu::process_wait(late) == 0);
    CHECK(ran);
  });
  env.finish();
}

// Native mode, real threads: processes fault and unmap in a loop while the cgroup is frozen
// and thawed over and over; each freeze completes (every process trapped), nothing faults
// while frozen, every thaw lets them go on, and a kill ends them frozen or not.
TEST_CASE("freezer (native): faulting processes frozen and thawed repeatedly",
          "[mm][process][freeze][native]") {
  WarnCheck wc;
  MemcgEnv env(v2_params(), emu::Mode::native, 4);
  mem_cgroup *a = env.mkdir(nullptr, "a");
  cgroup *cg = a->css.cgroup;
  auto freeze = [cg](bool on) {
    mutex_guard g(&cgroup_mutex);
    cgroup_freeze(cg, on);
  };
  env.run([&] {
    constexpr int kProcs = 3;
    std::atomic<unsigned long> faults{0};
    emu::ProcessOptions o;
    o.place = [cg](int pid) {
      mutex_guard g(&cgroup_mutex);
      return cgroup_attach_pid(cg, pid, true);
    };
    emu::Process *procs[kProcs];
    for (auto &p : procs) {
      p = emu::process_start(o, [&] {
        unsigned long addr;
        if (!emu::sys_mmap_anon(64, 0, &addr)) return 0;
        for (;;) {
          for (unsigned long i = 0; i < 64; i++) {
            if (!emu::user_write(addr + i * PAGE_SIZE)) return 0;
            faults++;
          }
          if (!emu::sys_madvise_dontneed(addr, 64)) return 0;
        }
      });
    }
    for (int round = 0; round < 20; round++) {
      unsigned long before = faults.load();
      while (faults.load() < before + 50) msleep(1);  // they run
      freeze(true);
      while (!test_bit(CGRP_FROZEN, &cg->flags)) msleep(1);
      unsigned long frozen_at = faults.load();
      msleep(5);
      CHECK(faults.load() == frozen_at);
      if (round == 19) break;  // killed while frozen
      freeze(false);
      CHECK_FALSE(test_bit(CGRP_FROZEN, &cg->flags));
    }
    for (auto *p : procs) emu::process_kill(p);
    for (auto *p : procs) CHECK(emu::process_wait(p) == 137);
    freeze(false);
  });
  env.finish();
}
