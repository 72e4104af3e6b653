// SPDX-License-Identifier: GPL-2.0-only
// Randomized property test of the memory model (simulated mode, seeded): processes faulting
// and holding anon memory, page-cache reads of shared files, limits, reclaim, kills, OOM kills,
// drains and truncation, in random order across memcgs, on a machine with a small swap device
// and little RAM (kswapd's background reclaim below the low watermark, global direct reclaim
// below the min watermark and global OOM kills happen besides the memcg ones):
// reclaim swaps anon pages out (or is refused by swap.max and a full device) and remote writes
// to the processes' pages (a GUP-style access from another task) swap them back in. After every
// step (a quiescent machine: kswapd out of its reclaim, which MemcgEnv::run waits for) the
// charge invariants hold with the model's pages counted as charged (every page charged once,
// none lost: memory, memsw and swap), the LRU statistics equal the list sizes, every used swap
// slot is one swap entry of a live process and one MEMCG_SWAP page, the machine's free pages
// are its RAM less the pages of the folios on the lists and in the lru_add batches (no page
// lost), and at the end, after every process exited and the cgroups were removed, every counter
// is zero, every slot free, every page of RAM free and everything freed.
#include "test/mm/mm_test_util.h"

#include <random>
#include <vector>

using namespace umemcg;
using namespace umemcg::test;

namespace {

struct Live {
  emu::Process *proc;
  completion *ready;
  unsigned long nr;
};

constexpr unsigned long kSwapPages = 300;
// The machine's RAM: less than the processes and files of a run want, so that allocations
// reclaim globally and the global OOM killer runs.
constexpr unsigned long kRamPages = 700;
constexpr unsigned long kFirstMapping = 0x10000;  // where a fresh mm's first mapping goes

struct Totals {
  std::uint64_t pswpout = 0, pswpin = 0;  // pages swapped out and in
  std::uint64_t global_oom_kills = 0;     // OOM kills with no memcg over its limit
  std::uint64_t kswapd_steal = 0;         // pages kswapd reclaimed
};

void run_seed(const memcg_boot_params &params, std::uint64_t seed, Totals *totals) {
  INFO("seed " << seed << " " << params_name(params));
  std::mt19937_64 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  memcg_boot_params with_swap = params;
  with_swap.swap_pages = kSwapPages;
  with_swap.totalram_pages = kRamPages;
  MemcgEnv env(with_swap, emu::Mode::simulated, 4, seed);
  std::vector<mem_cgroup *> cg;
  mem_cgroup *top = env.mkdir(nullptr, "top");
  cg.push_back(top);
  for (int i = 0; i < 4; i++) cg.push_back(env.mkdir(cg[pick(cg.size())], "c" + std::to_string(i)));
  std::vector<inode *> files;
  for (int i = 0; i < 3; i++) files.push_back(emu::file_create());
  std::vector<Live> live;

  // Reaps every process that was killed (by the OOM killer or the test).
  auto reap_dying = [&] {
    for (size_t i = 0; i < live.size();) {
      if (emu::process_dying(live[i].proc)) {
        emu::process_wait(live[i].proc);
        delete live[i].ready;
        live.erase(live.begin() + static_cast<long>(i));
      } else {
        i++;
      }
    }
  };

  for (int step = 0; step < 60; step++) {
    int op = static_cast<int>(pick(10));
    env.run([&] {
      switch (op) {
        case 0:
        case 1: {  // a process faulting anon memory and holding it
          auto *ready = new completion;
          init_completion(ready);
          unsigned long nr = 1 + pick(150);
          emu::Process *p = start_anon_holder(cg[pick(cg.size())], nr, ready,
                                              static_cast<short>(pick(3) == 0 ? 300 : 0),
                                              pick(6) == 0 ? (MAP_POPULATE | MAP_LOCKED) : 0);
          wait_for_completion(ready);
          live.push_back({p, ready, nr});
          break;
        }
        case 2: {  // page-cache read charged to some memcg
          inode *f = files[pick(files.size())];
          read_into(cg[pick(cg.size())], f, pick(300), 1 + pick(100));
          break;
        }
        case 3: {  // a limit (v2 memory.max semantics without the write's reclaim loop)
          mem_cgroup *m = cg[pick(cg.size())];
          unsigned long max = pick(4) == 0 ? PAGE_COUNTER_MAX : 100 + pick(400);
          page_counter_set_max(&m->memory, max);
          break;
        }
        case 4: {  // reclaim, direct or proactive
          mem_cgroup *m = cg[pick(cg.size())];
          unsigned int opts = MEMCG_RECLAIM_MAY_SWAP | (pick(2) ? MEMCG_RECLAIM_PROACTIVE : 0);
          try_to_free_mem_cgroup_pages(m, 1 + pick(200), GFP_KERNEL, opts, nullptr);
          break;
        }
        case 5:  // kill one
          if (!live.empty()) emu::process_kill(live[pick(live.size())].proc);
          break;
        case 6:  // protection
          if (!params.v1) {
            mem_cgroup *m = cg[pick(cg.size())];
            page_counter_set_min(&m->memory, pick(100));
            page_counter_set_low(&m->memory, pick(200));
          }
          break;
        case 7:  // drains and truncation
          lru_add_drain_all();
          if (pick(2)) truncate_inode_pages(files[pick(files.size())], pick(300));
          break;
        case 8: {  // remote writes to a live process's pages: swapped ones come back
          if (live.empty()) break;
          Live &l = live[pick(live.size())];
          if (emu::process_dying(l.proc)) break;
          unsigned long first = pick(l.nr), n = 1 + pick(l.nr - first);
          for (unsigned long i = first; i < first + n; i++)
            if (handle_mm_fault(emu::process_mm(l.proc), kFirstMapping + i)) break;
          break;
        }
        case 9:  // a swap limit (v2), sometimes none
          if (!params.v1) {
            mem_cgroup *m = cg[pick(cg.size())];
            page_counter_set_max(&m->swap, pick(3) == 0 ? PAGE_COUNTER_MAX : pick(60));
          }
          break;
      }
      reap_dying();
    });
    std::string v = check_memcg_invariants(env.ledger);
    INFO("step " << step << " op " << op);
    REQUIRE(v.empty());
    // Every used slot is one process's swap entry and one MEMCG_SWAP page.
    long ents = 0, swapped = 0;
    for (const Live &l : live) ents += get_mm_counter(emu::process_mm(l.proc), MM_SWAPENTS);
    for (mem_cgroup *m : cg) swapped += emu::memcg_page_state_local_sum(m, MEMCG_SWAP);
    long in_use = total_swap_pages() - get_nr_swap_pages();
    REQUIRE(ents == in_use);
    REQUIRE(swapped == in_use);
    // No page of RAM lost or counted twice.
    REQUIRE(ram_used() == folio_pages_held());
    REQUIRE(ram_used() <= kRamPages);
    // The LRU statistics (memory.stat's anon/file lines) are the list sizes.
    for (mem_cgroup *m : cg)
      for (int l = 0; l < NR_LRU_LISTS; l++)
        REQUIRE(emu::memcg_page_state_local_sum(m, NR_LRU_BASE + l) ==
                static_cast<long>(lru_pages(m, static_cast<lru_list>(l))));
  }

  env.run([&] {
    for (Live &l : live) emu::process_kill(l.proc);
    for (Live &l : live) {
      CHECK(emu::process_wait(l.proc) == 137);
      delete l.ready;
    }
    live.clear();
    for (inode *f : files) emu::iput(f);
    // Folios freed while waiting in an lru_add batch go (uncharged) when it drains.
    lru_add_drain_all();
    drain_all_stock(root_mem_cgroup);
    flush_workqueue(memcg_wq);
    for (mem_cgroup *m : cg) CHECK(lru_total(m) == 0);
    CHECK(get_nr_swap_pages() == static_cast<long>(kSwapPages));
    CHECK(nr_free_pages() == kRamPages);
    for (mem_cgroup *m : cg) {
      CHECK(emu::memcg_page_state_local_sum(m, MEMCG_SWAP) == 0);
      CHECK(page_counter_read(&m->swap) == 0);
    }
  });
  // Every memcg OOM raises one oom event before its (single: no memory.oom.group here) kill; a
  // global OOM raises none. Kills beyond the oom events were global ones.
  long kills = memory_events_read(top, MEMCG_OOM_KILL), ooms = memory_events_read(top, MEMCG_OOM);
  if (kills > ooms) totals->global_oom_kills += static_cast<std::uint64_t>(kills - ooms);
  for (mem_cgroup *m : cg) {
    totals->pswpout += emu::memcg_events_local_sum(m, PSWPOUT);
    totals->pswpin += emu::memcg_events_local_sum(m, PSWPIN);
    totals->kswapd_steal += emu::memcg_events_local_sum(m, PGSTEAL_KSWAPD);
  }
  for (auto it = cg.rbegin(); it != cg.rend(); ++it) {
    CHECK(usage(*it) == 0);
    CHECK(env.rmdir(*it) == 0);
  }
  env.finish();
}

}  // namespace

TEST_CASE("memory model property test over seeds: invariants, nothing lost, all freed",
          "[mm][property]") {
  Totals totals;
  for (std::uint64_t seed = 1; seed <= 12; seed++) {
    for (const auto &p : {v2_params(false), v2_params(true), v1_params(false), v1_params(true)}) {
      WarnCheck wc;
      run_seed(p, seed, &totals);
    }
  }
  // Swap traffic both ways, kswapd's reclaim and global OOM kills happened under the checks.
  CHECK(totals.pswpout > 0);
  CHECK(totals.kswapd_steal > 0);
  CHECK(totals.pswpin > 0);
  CHECK(totals.global_oom_kills > 0);
}
