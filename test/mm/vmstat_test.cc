// SPDX-License-Identifier: GPL-2.0-only
// Tests of the machine's global statistics and vm sysctls (mm/vmstat.h, mm/page_alloc.h,
// kernel/sysctl.h): /proc/vmstat's lines in the kernel's order; after faults, page-cache reads,
// kswapd and direct reclaim, swap-out and proactive reclaim, the global vm events equal what the
// kernel would count (the faults done, the memcgs' events summed, the root's memory.stat for
// global reclaim only, the pages allocated less those freed); the OOM killer's oom_kill; the
// sysctls min_free_kbytes, watermark_scale_factor and swappiness: their values, the errnos of
// proc_dointvec_minmax, the watermarks recomputed, user_min_free_kbytes kept, and kswapd
// following new watermarks.
#include "test/mm/mm_test_util.h"

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernel/sysctl.h"
#include "mm/memcontrol_internal.h"
#include "mm/vmstat.h"
#include "shim/jiffies.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

void let_kswapd_settle() { schedule_timeout_uninterruptible(static_cast<long>(HZ)); }

unsigned long gev(int item) { return global_vm_event(item); }

// A memcg event summed over every memcg's own count.
unsigned long memcg_sum(int item) {
  unsigned long n = 0;
  for (mem_cgroup *m = mem_cgroup_iter(nullptr, nullptr, nullptr); m;
       m = mem_cgroup_iter(nullptr, m, nullptr))
    n += emu::memcg_events_local_sum(m, item);
  return n;
}

// /proc/vmstat as a map, and its names in order.
std::map<std::string, unsigned long> vmstat_map(std::vector<std::string> *order = nullptr) {
  std::map<std::string, unsigned long> m;
  std::istringstream in(vmstat_text());
  std::string name;
  unsigned long v;
  while (in >> name >> v) {
    m[name] = v;
    if (order) order->push_back(name);
  }
  return m;
}

std::string sysctl_get(const char *path) {
  const ctl_table *t = emu::sysctl_lookup(path);
  REQUIRE(t);
  std::string out;
  REQUIRE(emu::sysctl_read(t, 0, &out) == 0);
  return out;
}

long sysctl_set(const char *path, const std::string &v) {
  const ctl_table *t = emu::sysctl_lookup(path);
  REQUIRE(t);
  loff_t pos = 0;
  return emu::sysctl_write(t, v, &pos);
}

// The watermark sysctl tests: for @raise false (the boot values) and true (the sysctl written by
// @body), a 1000-page machine where 800 pages of a's page cache leave 200 free (above the boot
// low watermark, 78); @body(raise) runs in a kernel task, then the cache goes and every page is
// free again.
template <typename Body>
void with_800_cached(Body body) {
  for (bool raise : {false, true}) {
    INFO("raise " << raise);
    WarnCheck wc;
    MemcgEnv env(with_ram(v2_params(), 1000));
    mem_cgroup *a = env.mkdir(nullptr, "a");
    env.run([&] {
      inode *f = cached_file(a, 800);
      lru_add_drain_all();
      CHECK(nr_free_pages() == 200);
      body(raise);
      emu::iput(f);
      drain_charges();
      CHECK(nr_free_pages() == 1000);
    });
    env.finish();
  }
}

}  // namespace

TEST_CASE("/proc/vmstat: the kernel's names in its order, one value each, nr_unstable last",
          "[mm][vmstat]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 1000));
  env.run([&] {
    const std::string text = vmstat_text();
    CHECK(text.find("nr_free_pages 1000\nnr_free_pages_blocks 512\nnr_zone_inactive_anon 0\n"
                    "nr_zone_active_anon 0\nnr_zone_inactive_file 0\nnr_zone_active_file 0\n"
                    "nr_zone_unevictable 0\nnr_zone_write_pending 0\nnr_mlock 0\nnr_bounce 0\n"
                    "nr_free_cma 0\nnuma_hit 0\nnuma_miss 0\nnuma_foreign 0\n"
                    "numa_interleave 0\nnuma_local 0\nnuma_other 0\nnr_inactive_anon 0\n") == 0);
    CHECK(text.size() > 20);
    CHECK(text.substr(text.size() - 15) == "\nnr_unstable 0\n");
    std::vector<std::string> order;
    auto m = vmstat_map(&order);
    // Every name once.
    CHECK(std::set<std::string>(order.begin(), order.end()).size() == order.size());
    CHECK(order.size() == vmstat_items().size() + 1);
    // The kernel's relative order of the groups (zone, NUMA, node, vm_stat, events) and within
    // the events.
    const char *const expect[] = {
        "nr_free_pages", "numa_hit", "nr_inactive_anon", "workingset_refault_anon",
        "nr_anon_pages", "nr_kernel_stack", "nr_swapcached", "pgdemote_proactive", "nr_hugetlb",
        "nr_balloon_pages", "nr_dirty_threshold", "nr_memmap_boot_pages", "pgpgin", "pgpgout",
        "pswpin", "pswpout", "pgalloc_normal", "pgalloc_movable", "allocstall_normal",
        "pgskip_movable", "pgfree", "pgactivate", "pgdeactivate", "pglazyfree", "pgfault",
        "pgmajfault", "pglazyfreed", "pgrefill", "pgreuse", "pgsteal_kswapd", "pgsteal_direct",
        "pgsteal_khugepaged", "pgsteal_proactive", "pgscan_kswapd", "pgscan_direct",
        "pgscan_khugepaged", "pgscan_proactive", "pgscan_direct_throttle", "pgscan_anon",
        "pgscan_file", "pgsteal_anon", "pgsteal_file", "zone_reclaim_success", "pginodesteal",
        "kswapd_low_wmark_hit_quickly", "kswapd_high_wmark_hit_quickly", "pageoutrun",
        "pgrotated", "drop_pagecache", "drop_slab", "oom_kill", "pgmigrate_success",
        "compact_migrate_scanned", "htlb_buddy_alloc_success", "cma_alloc_success",
        "unevictable_pgs_culled", "unevictable_pgs_stranded", "thp_fault_alloc", "thp_split_pud",
        "thp_swpout_fallback", "swap_ra", "swpout_zero", "direct_map_level2_splits",
        "direct_map_level3_collapses", "nr_unstable"};
    size_t pos = 0;
    for (const char *name : expect) {
      INFO(name);
      auto it = std::find(order.begin() + static_cast<long>(pos), order.end(), name);
      REQUIRE(it != order.end());
      pos = static_cast<size_t>(it - order.begin()) + 1;
    }
    // Lines of configs the emulated kernel does not have are absent.
    for (const char *absent : {"pgalloc_dma", "pgalloc_dma32", "nr_zspages", "zswpin",
                               "numa_pte_updates", "pgpromote_success", "balloon_inflate",
                               "cow_ksm", "vma_lock_success", "nr_unaccepted"})
      CHECK(m.count(absent) == 0);
    // The dirty limits: 20% and 10% of the free pages above the high watermark (93) plus the
    // file LRU (none), plus one, in 1/4096 steps: 819 * 908 / 4096 and 409 * 908 / 4096.
    CHECK(m["nr_dirty_threshold"] == 181);
    CHECK(m["nr_dirty_background_threshold"] == 90);
  });
  env.finish();
}

TEST_CASE("vm events: after faults, reads, kswapd, direct and proactive reclaim and swap, the "
          "sums the kernel would have", "[mm][vmstat][kswapd]") {
  for (std::uint64_t seed = 1; seed <= 3; seed++) {
    INFO("seed " << seed);
    WarnCheck wc;
    MemcgEnv env(with_ram(v2_params(), 1000, 2000), emu::Mode::simulated, 2, seed);
    mem_cgroup *a = env.mkdir(nullptr, "a");
    mem_cgroup *b = env.mkdir(nullptr, "b");
    mem_cgroup *c = env.mkdir(nullptr, "c");
    env.run([&] {
      CHECK(gev(PGFAULT) == 0);
      inode *f = cached_file(a, 600);
      lru_add_drain_all();
      // 700 + 300 anon pages on 1000 pages of RAM: kswapd, then direct reclaim and swap.
      AnonHolder hb(b, 700);
      AnonHolder hc(c, 300);
      let_kswapd_settle();
      drain_charges();

      // Every fault counted once, globally and on the memcg: the 1000 faults done.
      CHECK(gev(PGFAULT) == 1000);
      CHECK(memcg_sum(PGFAULT) == 1000);
      CHECK(gev(PGMAJFAULT) == memcg_sum(PGMAJFAULT));
      // Swap: every page written counted once on its memcg; pgpgout is its KiB.
      CHECK(gev(PSWPOUT) > 0);
      CHECK(gev(PSWPOUT) == memcg_sum(PSWPOUT));
      CHECK(gev(PSWPIN) == memcg_sum(PSWPIN));
      auto m = vmstat_map();
      CHECK(m["pgpgout"] == gev(PSWPOUT) * 4);
      CHECK(m["pgpgin"] == (600 + gev(PSWPIN)) * 4);
      CHECK(m["nr_vmscan_write"] == gev(PSWPOUT));
      // Global reclaim only so far: the node's reclaimer events are the root's memory.stat.
      emu::mem_cgroup_flush_stats_force(root_mem_cgroup);
      for (int item : {PGSCAN_KSWAPD, PGSCAN_DIRECT, PGSTEAL_KSWAPD, PGSTEAL_DIRECT, PGREFILL,
                       PGACTIVATE, PGDEACTIVATE}) {
        INFO(vm_event_name(static_cast<vm_event_item>(item)));
        CHECK(gev(item) == memcg_events(root_mem_cgroup, item));
      }
      CHECK(gev(PGSCAN_KSWAPD) > 0);
      CHECK(gev(PGSCAN_ANON) + gev(PGSCAN_FILE) == gev(PGSCAN_KSWAPD) + gev(PGSCAN_DIRECT));
      CHECK(gev(PGSTEAL_ANON) + gev(PGSTEAL_FILE) == gev(PGSTEAL_KSWAPD) + gev(PGSTEAL_DIRECT));
      // An anon page is reclaimed only by swapping it out.
      CHECK(gev(PGSTEAL_ANON) == gev(PSWPOUT));
      // kswapd ran; direct reclaim stalled at least once if it stole anything.
      CHECK(gev(PAGEOUTRUN) >= 1);
      if (gev(PGSCAN_DIRECT) > 0) CHECK(gev(ALLOCSTALL_NORMAL) > 0);
      // Pages: allocated less freed is what the RAM holds; one node, every page a local hit.
      CHECK(m["pgalloc_normal"] - m["pgfree"] == ram_used());
      CHECK(m["numa_hit"] == m["pgalloc_normal"]);
      CHECK(m["numa_local"] == m["pgalloc_normal"]);
      CHECK(m["nr_free_pages"] == nr_free_pages());
      CHECK(static_cast<long>(m["nr_anon_pages"]) ==
            emu::memcg_page_state_local_sum(b, NR_ANON_MAPPED) +
                emu::memcg_page_state_local_sum(c, NR_ANON_MAPPED));
      CHECK(m["nr_file_pages"] == lru_pages(a, LRU_INACTIVE_FILE) + lru_pages(a, LRU_ACTIVE_FILE));
      CHECK(m["nr_inactive_anon"] + m["nr_active_anon"] + m["nr_inactive_file"] +
                m["nr_active_file"] + m["nr_unevictable"] ==
            folio_pages_held() - emu::slab_ram_pages());

      // Proactive reclaim (memory.reclaim) is cgroup reclaim: only the type's events and
      // PGACTIVATE/PGDEACTIVATE move globally, the reclaimer's stay on the memcg.
      const unsigned long scan = gev(PGSCAN_ANON) + gev(PGSCAN_FILE);
      const unsigned long refill = gev(PGREFILL);
      const unsigned long memcg_proactive = memcg_sum(PGSCAN_PROACTIVE);
      REQUIRE(try_to_free_mem_cgroup_pages(b, 64, GFP_KERNEL,
                                           MEMCG_RECLAIM_MAY_SWAP | MEMCG_RECLAIM_PROACTIVE,
                                           nullptr) > 0);
      CHECK(memcg_sum(PGSCAN_PROACTIVE) > memcg_proactive);
      CHECK(gev(PGSCAN_PROACTIVE) == 0);
      CHECK(gev(PGSTEAL_PROACTIVE) == 0);
      CHECK(gev(PGREFILL) == refill);
      CHECK(gev(PGSCAN_ANON) + gev(PGSCAN_FILE) - scan ==
            memcg_sum(PGSCAN_PROACTIVE) - memcg_proactive);
      CHECK(gev(PSWPOUT) == memcg_sum(PSWPOUT));

      CHECK(hb.kill() == 137);
      CHECK(hc.kill() == 137);
      emu::iput(f);
      drain_charges();
      // Everything freed: every page allocated was freed.
      CHECK(nr_free_pages() == 1000);
      CHECK(gev(PGALLOC_NORMAL) == gev(PGFREE));
      CHECK(gev(OOM_KILL) == 0);
    });
    env.finish();
  }
}

TEST_CASE("vm events: a swapped-out page faulted back is a major fault and a pswpin",
          "[mm][vmstat]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 1000, 1000));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    emu::ProcessOptions o;
    o.memcg = a;
    completion swapped;
    init_completion(&swapped);
    emu::Process *p = emu::process_start(o, [&] {
      unsigned long addr;
      if (!emu::sys_mmap_anon(100, 0, &addr)) return 1;
      for (unsigned long i = 0; i < 100; i++) emu::user_write(addr + i);
      {
        emu::KernelEntry k;
        // Every page of this memcg to swap, then touched again.
        try_to_free_mem_cgroup_pages(a, 100, GFP_KERNEL,
                                     MEMCG_RECLAIM_MAY_SWAP | MEMCG_RECLAIM_PROACTIVE, nullptr);
      }
      for (unsigned long i = 0; i < 100; i++) emu::user_write(addr + i);
      return 0;
    });
    CHECK(emu::process_wait(p) == 0);
    drain_charges();
    const unsigned long in = gev(PSWPIN);
    CHECK(in > 0);
    CHECK(gev(PGMAJFAULT) == in);
    CHECK(memcg_sum(PGMAJFAULT) == in);
    CHECK(memcg_sum(PSWPIN) == in);
    // A write faults only where no page is mapped (mm/process.h): the first pass's 100, then
    // the swapped-out pages of the second; a write to a mapped page is no fault.
    CHECK(in < 100);
    CHECK(gev(PGFAULT) == 100 + in);
    CHECK(memcg_sum(PGFAULT) == 100 + in);
    CHECK(vmstat_map()["pgpgin"] == in * 4);
    CHECK(nr_free_pages() == 1000);
  });
  env.finish();
}

TEST_CASE("vm events: pages faulted into an mlocked mapping count unevictable_pgs_mlocked, "
          "their unmap unevictable_pgs_munlocked", "[mm][vmstat]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 1000));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    emu::ProcessOptions o;
    o.memcg = a;
    emu::Process *p = emu::process_start(o, [] { return emu::workload_mlock(40 * PAGE_SIZE); });
    CHECK(emu::process_wait(p) == 0);
    drain_charges();
    CHECK(gev(UNEVICTABLE_PGMLOCKED) == 40);
    CHECK(gev(UNEVICTABLE_PGMUNLOCKED) == 40);
    auto m = vmstat_map();
    CHECK(m["unevictable_pgs_mlocked"] == 40);
    CHECK(m["unevictable_pgs_munlocked"] == 40);
    CHECK(m["nr_mlock"] == 0);
    CHECK(nr_free_pages() == 1000);
  });
  env.finish();
}

TEST_CASE("vm events: the global OOM killer counts oom_kill; allocations stalled in direct "
          "reclaim count allocstall_normal", "[mm][vmstat][global]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 1000));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    AnonHolder h(a, 1200);  // more than the RAM, no swap
    CHECK(emu::process_wait(h.proc) == 137);
    drain_charges();
    CHECK(gev(OOM_KILL) == 1);
    CHECK(vmstat_map()["oom_kill"] == 1);
    CHECK(memory_events_read(a, MEMCG_OOM_KILL) == 1);
    CHECK(gev(ALLOCSTALL_NORMAL) > 0);
    CHECK(nr_free_pages() == 1000);
  });
  env.finish();
}

TEST_CASE("vm sysctls: values, proc_dointvec_minmax's errnos, the watermarks recomputed",
          "[mm][vmstat][sysctl]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 1000));
  env.run([&] {
    // Boot: 252 KiB -> min 63, distance max(15, 1) = 15 (kswapd_test's table).
    CHECK(sysctl_get("/proc/sys/vm/min_free_kbytes") == "252\n");
    CHECK(sysctl_get("/proc/sys/vm/watermark_scale_factor") == "10\n");
    CHECK(sysctl_get("/proc/sys/vm/swappiness") == "60\n");
    CHECK(emu::sysctl_lookup("/proc/sys/vm/nonexistent") == nullptr);
    CHECK(emu::sysctl_lookup("/proc/sys/vm") == nullptr);
    CHECK(emu::sysctl_is_dir("/proc/sys/vm"));
    CHECK(emu::sysctl_readdir("/proc/sys") == std::vector<std::string>{"vm"});
    CHECK(emu::sysctl_readdir("/proc/sys/vm") ==
          std::vector<std::string>{"min_free_kbytes", "swappiness", "watermark_scale_factor"});

    // min_free_kbytes 1000: min 250 pages, the distance max(62, 1) = 62.
    CHECK(sysctl_set("/proc/sys/vm/min_free_kbytes", "1000\n") == 5);
    CHECK(min_free_kbytes() == 1000);
    CHECK(min_wmark_pages() == 250);
    CHECK(low_wmark_pages() == 312);
    CHECK(high_wmark_pages() == 374);
    // watermark_scale_factor 3000: 1000 * 3000 / 10000 = 300 beats 62.
    CHECK(sysctl_set("/proc/sys/vm/watermark_scale_factor", "3000") == 4);
    CHECK(watermark_scale_factor() == 3000);
    CHECK(min_wmark_pages() == 250);
    CHECK(low_wmark_pages() == 550);
    CHECK(high_wmark_pages() == 850);
    CHECK(sysctl_get("/proc/sys/vm/watermark_scale_factor") == "3000\n");

    // Out of range or not a number: -EINVAL, nothing written.
    struct Bad {
      const char *file, *text;
    };
    const Bad bad[] = {
        {"watermark_scale_factor", "0"},      {"watermark_scale_factor", "3001"},
        {"watermark_scale_factor", "-5"},     {"min_free_kbytes", "-1"},
        {"min_free_kbytes", "2147483648"},    {"min_free_kbytes", "abc"},
        {"min_free_kbytes", "12x"},           {"min_free_kbytes", " \n"},
        {"min_free_kbytes", "08"},
        {"min_free_kbytes", "123456789012345678901"},
        {"swappiness", "201"},                {"swappiness", "-1"},
        {"swappiness", "1.5"},
    };
    for (const Bad &b : bad) {
      INFO(b.file << " '" << b.text << "'");
      std::string path = std::string("/proc/sys/vm/") + b.file;
      CHECK(sysctl_set(path.c_str(), b.text) == -EINVAL);
    }
    // An empty write writes nothing and succeeds (the handler sees no bytes).
    CHECK(sysctl_set("/proc/sys/vm/min_free_kbytes", "") == 0);
    CHECK(min_free_kbytes() == 1000);
    CHECK(watermark_scale_factor() == 3000);
    CHECK(vm_swappiness == 60);
    CHECK(high_wmark_pages() == 850);

    // Blanks around, base-0 numbers; extra numbers are not consumed.
    CHECK(sysctl_set("/proc/sys/vm/watermark_scale_factor", "  0x10 \n") == 8);
    CHECK(watermark_scale_factor() == 16);
    CHECK(sysctl_set("/proc/sys/vm/watermark_scale_factor", "010") == 3);
    CHECK(watermark_scale_factor() == 8);
    CHECK(sysctl_set("/proc/sys/vm/watermark_scale_factor", "20 30") == 3);
    CHECK(watermark_scale_factor() == 20);
    // A write not at position 0 is ignored (sysctl_writes_strict) but consumed.
    {
      const ctl_table *t = emu::sysctl_lookup("/proc/sys/vm/watermark_scale_factor");
      loff_t pos = 3;
      CHECK(emu::sysctl_write(t, "30", &pos) == 2);
      CHECK(pos == 5);
      CHECK(watermark_scale_factor() == 20);
      std::string out;
      CHECK(emu::sysctl_read(t, 1, &out) == 0);
      CHECK(out.empty());
    }
    // min_free_kbytes 0: no reserve at all; the distance is the factor's 1000 * 20 / 10000.
    CHECK(sysctl_set("/proc/sys/vm/min_free_kbytes", "0") == 1);
    CHECK(min_wmark_pages() == 0);
    CHECK(low_wmark_pages() == 2);
    CHECK(high_wmark_pages() == 4);

    // swappiness: vm_swappiness, what the root's reclaim uses.
    CHECK(sysctl_set("/proc/sys/vm/swappiness", "200") == 3);
    CHECK(vm_swappiness == 200);
    CHECK(mem_cgroup_swappiness(root_mem_cgroup) == 200);
    CHECK(sysctl_set("/proc/sys/vm/swappiness", "0") == 1);
    CHECK(mem_cgroup_swappiness(root_mem_cgroup) == 0);
  });
  env.finish();
  // The next boot starts from the defaults again.
  MemcgEnv env2(with_ram(v2_params(), 1000));
  env2.run([&] {
    CHECK(sysctl_get("/proc/sys/vm/min_free_kbytes") == "252\n");
    CHECK(sysctl_get("/proc/sys/vm/watermark_scale_factor") == "10\n");
    CHECK(vm_swappiness == 60);
    CHECK(high_wmark_pages() == 93);
  });
  env2.finish();
}

TEST_CASE("vm.min_free_kbytes: a written value at least the computed one survives a "
          "recalculation (user_min_free_kbytes), a smaller one does not",
          "[mm][vmstat][sysctl]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 1000));
  env.run([&] {
    init_per_zone_wmark_min();
    CHECK(min_free_kbytes() == 252);
    CHECK(sysctl_set("/proc/sys/vm/min_free_kbytes", "1000") == 4);
    init_per_zone_wmark_min();
    CHECK(min_free_kbytes() == 1000);
    CHECK(min_wmark_pages() == 250);
    CHECK(sysctl_set("/proc/sys/vm/min_free_kbytes", "100") == 3);
    CHECK(min_wmark_pages() == 25);
    init_per_zone_wmark_min();
    CHECK(min_free_kbytes() == 252);
    CHECK(min_wmark_pages() == 63);
  });
  env.finish();
}

TEST_CASE("a larger watermark_scale_factor: the next allocation wakes kswapd, which reclaims "
          "to the new high watermark", "[mm][vmstat][sysctl][kswapd]") {
  with_800_cached([](bool raise) {
    // 1000 * 3000 / 10000 = 300: low 363, high 663.
    if (raise) REQUIRE(sysctl_set("/proc/sys/vm/watermark_scale_factor", "3000") == 4);
    folio *fo = folio_alloc(GFP_KERNEL);
    REQUIRE(fo);
    let_kswapd_settle();
    if (raise) {
      CHECK(high_wmark_pages() == 663);
      CHECK(nr_free_pages() > 663);
      CHECK(gev(PGSTEAL_KSWAPD) >= 663 - 199);
      CHECK(gev(PAGEOUTRUN) >= 1);
    } else {
      CHECK(nr_free_pages() == 199);
      CHECK(gev(PGSCAN_KSWAPD) == 0);
      CHECK(gev(PAGEOUTRUN) == 0);
    }
    CHECK(ram_used() == folio_pages_held() + 1);
    folio_put(fo);
  });
}

TEST_CASE("a larger min_free_kbytes: an allocation below the new min watermark reclaims "
          "directly until it is above it", "[mm][vmstat][sysctl]") {
  with_800_cached([](bool raise) {
    // 1600 KiB: min 400 pages, low 500.
    if (raise) REQUIRE(sysctl_set("/proc/sys/vm/min_free_kbytes", "1600") == 4);
    folio *fo = folio_alloc(GFP_KERNEL & ~__GFP_KSWAPD_RECLAIM);
    REQUIRE(fo);
    CHECK(READ_ONCE(node_data()->kswapd) == nullptr);
    if (raise) {
      CHECK(min_wmark_pages() == 400);
      // The page was taken once the free count was above the new min watermark.
      CHECK(nr_free_pages() >= 400);
      CHECK(gev(PGSTEAL_DIRECT) >= 201);
      CHECK(gev(ALLOCSTALL_NORMAL) >= 1);
    } else {
      CHECK(nr_free_pages() == 199);
      CHECK(gev(PGSCAN_DIRECT) == 0);
      CHECK(gev(ALLOCSTALL_NORMAL) == 0);
    }
    folio_put(fo);
  });
}
