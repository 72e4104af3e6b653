// SPDX-License-Identifier: GPL-2.0-only
// Tests of memcg statistics (kernel-semantics.md 3): the update threshold, the rstat flush
// (hierarchical and local values, partial subtree flushes, removed children), the periodic and
// ratelimited flushes, the exact text of memory.stat (v2 and v1) and memory.numa_stat, and the
// stat kfuncs against the text. Concurrency: stepped (simulated, seeded) and native.
#include "test/support/memcg_env.h"
#include "test/support/stat_totals.h"

#include <atomic>
#include <cstring>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernel/cftype.h"
#include "kernel/cgroup_rstat.h"
#include "mm/bpf_cgroup_iter.h"
#include "mm/bpf_memcontrol.h"
#include "mm/memcontrol_folio.h"
#include "mm/memcontrol_stat.h"
#include "shim/jiffies.h"
#include "shim/sched.h"
#include "test/mm/bpf_test_util.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

constexpr unsigned long P = PAGE_SIZE;

// Reads a control file through its seq_show handler, as the cgroup core does for a read.
// Context: a task on the machine.
std::string text(mem_cgroup *memcg, int (*fn)(seq_file *, void *) = memory_stat_show) {
  kernfs_open_file of;
  of.css = &memcg->css;
  seq_file sf;
  sf.of = &of;
  REQUIRE(fn(&sf, nullptr) == 0);
  return sf.buf;
}
// The same from the test thread, in a new task on @cpu.
std::string show(MemcgEnv &env, mem_cgroup *memcg, int (*fn)(seq_file *, void *), int cpu = 0) {
  std::string out;
  env.run([&] { out = text(memcg, fn); }, cpu);
  return out;
}

std::map<std::string, unsigned long long> parse(const std::string &text) {
  std::map<std::string, unsigned long long> kv;
  std::istringstream in(text);
  std::string key;
  unsigned long long v;
  while (in >> key >> v) kv[key] = v;
  return kv;
}

// A known state in @m, spread over CPUs 0 and 1 (node items through the lruvec).
void fill_known_state(mem_cgroup *m, bool with_sock, MemcgEnv &env) {
  env.run([&] {
    mod_memcg_lruvec_state(m, NR_ANON_MAPPED, 10);
    mod_memcg_lruvec_state(m, NR_FILE_PAGES, 20);
    mod_memcg_lruvec_state(m, NR_KERNEL_STACK_KB, 16);
    mod_memcg_lruvec_state(m, NR_PAGETABLE, 2);
    mod_memcg_state(m, MEMCG_PERCPU_B, 1000);
    mod_memcg_state(m, MEMCG_VMALLOC, 3);
    mod_memcg_lruvec_state(m, NR_SHMEM, 4);
    mod_memcg_lruvec_state(m, NR_FILE_MAPPED, 6);
    mod_memcg_lruvec_state(m, NR_FILE_DIRTY, 1);
    mod_memcg_lruvec_state(m, NR_WRITEBACK, 1);
    mod_memcg_lruvec_state(m, NR_SWAPCACHE, 2);
    mod_memcg_lruvec_state(m, NR_INACTIVE_ANON, 7);
    mod_memcg_lruvec_state(m, NR_ACTIVE_ANON, 3);
    count_memcg_events(m, PGPGIN, 11);
    count_memcg_events(m, PGFAULT, 60);
    count_memcg_events(m, PGSCAN_KSWAPD, 10);
    count_memcg_events(m, PGSCAN_DIRECT, 5);
    count_memcg_events(m, PGSTEAL_KSWAPD, 6);
    count_memcg_events(m, PSWPIN, 1);
    if (with_sock) REQUIRE(mem_cgroup_sk_charge(m, 2, GFP_KERNEL));
  }, 0);
  env.run([&] {
    mod_memcg_lruvec_state(m, NR_INACTIVE_FILE, 12);
    mod_memcg_lruvec_state(m, NR_ACTIVE_FILE, 8);
    mod_memcg_lruvec_state(m, NR_UNEVICTABLE, 1);
    mod_memcg_lruvec_state(m, NR_SLAB_RECLAIMABLE_B, 300);
    mod_memcg_lruvec_state(m, NR_SLAB_UNRECLAIMABLE_B, 500);
    mod_memcg_lruvec_state(m, NR_HUGETLB, 5);
    mod_memcg_lruvec_state(m, WORKINGSET_REFAULT_ANON, 2);
    mod_memcg_lruvec_state(m, WORKINGSET_REFAULT_FILE, 9);
    mod_memcg_lruvec_state(m, WORKINGSET_ACTIVATE_FILE, 4);
    mod_memcg_lruvec_state(m, WORKINGSET_RESTORE_FILE, 1);
    mod_memcg_lruvec_state(m, WORKINGSET_NODERECLAIM, 3);
    mod_memcg_lruvec_state(m, PGDEMOTE_DIRECT, 2);
    count_memcg_events(m, PGPGOUT, 4);
    count_memcg_events(m, PGFAULT, 40);
    count_memcg_events(m, PGMAJFAULT, 3);
    count_memcg_events(m, PGSCAN_PROACTIVE, 3);
    count_memcg_events(m, PGSTEAL_DIRECT, 4);
    count_memcg_events(m, PSWPOUT, 2);
    count_memcg_events(m, PGREFILL, 7);
    count_memcg_events(m, PGACTIVATE, 8);
    count_memcg_events(m, PGDEACTIVATE, 2);
    count_memcg_events(m, PGLAZYFREE, 1);
    count_memcg_events(m, SWPOUT_ZERO, 1);
  }, 1);
}

const char *const kGoldenV2 =
    "anon 40960\n"
    "file 81920\n"
    "kernel 0\n"
    "kernel_stack 16384\n"
    "pagetables 8192\n"
    "sec_pagetables 0\n"
    "percpu 1000\n"
    "sock 8192\n"
    "vmalloc 12288\n"
    "shmem 16384\n"
    "file_mapped 24576\n"
    "file_dirty 4096\n"
    "file_writeback 4096\n"
    "swapcached 8192\n"
    "anon_thp 0\n"
    "file_thp 0\n"
    "shmem_thp 0\n"
    "inactive_anon 28672\n"
    "active_anon 12288\n"
    "inactive_file 49152\n"
    "active_file 32768\n"
    "unevictable 4096\n"
    "slab_reclaimable 300\n"
    "slab_unreclaimable 500\n"
    "slab 800\n"
    "workingset_refault_anon 2\n"
    "workingset_refault_file 9\n"
    "workingset_activate_anon 0\n"
    "workingset_activate_file 4\n"
    "workingset_restore_anon 0\n"
    "workingset_restore_file 1\n"
    "workingset_nodereclaim 3\n"
    "pgdemote_kswapd 0\n"
    "pgdemote_direct 2\n"
    "pgdemote_khugepaged 0\n"
    "pgdemote_proactive 0\n"
    "pgscan 18\n"
    "pgsteal 10\n"
    "pswpin 1\n"
    "pswpout 2\n"
    "pgscan_kswapd 10\n"
    "pgscan_direct 5\n"
    "pgscan_khugepaged 0\n"
    "pgscan_proactive 3\n"
    "pgsteal_kswapd 6\n"
    "pgsteal_direct 4\n"
    "pgsteal_khugepaged 0\n"
    "pgsteal_proactive 0\n"
    "pgfault 100\n"
    "pgmajfault 3\n"
    "pgrefill 7\n"
    "pgactivate 8\n"
    "pgdeactivate 2\n"
    "pglazyfree 1\n"
    "pglazyfreed 0\n"
    "swpin_zero 0\n"
    "swpout_zero 1\n"
    "thp_fault_alloc 0\n"
    "thp_collapse_alloc 0\n"
    "thp_swpout 0\n"
    "thp_swpout_fallback 0\n";

// Sleeps (machine time) until jiffies == @j. Context: a task on the machine.
void sleep_until(u64 j) {
  schedule_timeout_uninterruptible(static_cast<long>(j - get_jiffies_64()));
}

void release_sock(MemcgEnv &env, mem_cgroup *m) {
  env.run([&] {
    mem_cgroup_sk_uncharge(m, 2);
    drain_all_stock(root_mem_cgroup);
    flush_workqueue(memcg_wq);
  });
}

}  // namespace

TEST_CASE("memory.stat v2: exact text and order of a known state, at the memcg and the root",
          "[mm][memcg][vmstat]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  fill_known_state(a, true, env);
  env.run([&] { emu::mem_cgroup_flush_stats_force(nullptr); });
  CHECK(show(env, a, memory_stat_show) == kGoldenV2);
  // The root's values are hierarchical: a is its only child (sock is charged to a only).
  CHECK(show(env, root_mem_cgroup, memory_stat_show) == kGoldenV2);
  env.check();
  release_sock(env, a);
  env.finish();
}

TEST_CASE("memory.stat: text beyond the buffer is cut off (the kernel warns)",
          "[mm][memcg][vmstat]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  fill_known_state(a, false, env);
  env.run([&] { emu::mem_cgroup_flush_stats_force(nullptr); });
  const std::string full = show(env, a, memory_stat_show);
  CHECK(full.size() < 4096);
  // With a 100-byte buffer: the first 99 bytes, the last line cut in the middle.
  emu::memcg_set_stat_buf_size(100);
  const std::string cut = show(env, a, memory_stat_show);
  emu::memcg_set_stat_buf_size(0);
  CHECK(cut == full.substr(0, 99));
  CHECK(show(env, a, memory_stat_show) == full);
  env.finish();
}

TEST_CASE("memory.numa_stat: every node item of memory.stat, one node", "[mm][memcg][vmstat]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  fill_known_state(a, false, env);
  env.run([&] { emu::mem_cgroup_flush_stats_force(nullptr); });
  const char *golden =
      "anon N0=40960\nfile N0=81920\nkernel_stack N0=16384\npagetables N0=8192\n"
      "sec_pagetables N0=0\nshmem N0=16384\nfile_mapped N0=24576\nfile_dirty N0=4096\n"
      "file_writeback N0=4096\nswapcached N0=8192\nanon_thp N0=0\nfile_thp N0=0\n"
      "shmem_thp N0=0\ninactive_anon N0=28672\nactive_anon N0=12288\n"
      "inactive_file N0=49152\nactive_file N0=32768\nunevictable N0=4096\n"
      "slab_reclaimable N0=300\nslab_unreclaimable N0=500\nhugetlb N0=20480\n"
      "workingset_refault_anon N0=2\nworkingset_refault_file N0=9\n"
      "workingset_activate_anon N0=0\nworkingset_activate_file N0=4\n"
      "workingset_restore_anon N0=0\nworkingset_restore_file N0=1\n"
      "workingset_nodereclaim N0=3\npgdemote_kswapd N0=0\npgdemote_direct N0=2\n"
      "pgdemote_khugepaged N0=0\npgdemote_proactive N0=0\n";
  CHECK(show(env, a, memory_numa_stat_show) == golden);
  CHECK(show(env, root_mem_cgroup, memory_numa_stat_show) == golden);
  // A node item updated for the memcg only (not through its lruvec) is not in numa_stat.
  env.run([&] {
    mod_memcg_state(a, NR_SHMEM, 1);
    emu::mem_cgroup_flush_stats_force(nullptr);
    CHECK(memcg_page_state(a, NR_SHMEM) == 5);
    CHECK(lruvec_page_state(a, NR_SHMEM) == 4);
  });
  env.finish();
}

TEST_CASE("memory.stat v1: local values, hierarchical limits and the total_ block",
          "[mm][memcg][vmstat]") {
  WarnCheck wc;
  MemcgEnv env(v1_params());
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *c = env.mkdir(p, "c");
  env.run([&] {
    REQUIRE(page_counter_set_max(&p->memory, 1000) == 0);
    REQUIRE(page_counter_set_max(&p->memsw, 3000) == 0);
    REQUIRE(page_counter_set_max(&c->memsw, 2000) == 0);
    // p's own: one anon page and 2 faults.
    mod_memcg_lruvec_state(p, NR_ANON_MAPPED, 1);
    mod_memcg_lruvec_state(p, NR_ACTIVE_ANON, 1);
    count_memcg_events(p, PGFAULT, 2);
  });
  fill_known_state(c, false, env);
  env.run([&] { emu::mem_cgroup_flush_stats_force(nullptr); });
  const std::string c_local =
      "cache 81920\nrss 40960\nrss_huge 0\nshmem 16384\nmapped_file 24576\ndirty 4096\n"
      "writeback 4096\nworkingset_refault_anon 2\nworkingset_refault_file 9\nswap 0\n"
      "swapcached 8192\npgpgin 11\npgpgout 4\npgfault 100\npgmajfault 3\n"
      "inactive_anon 28672\nactive_anon 12288\ninactive_file 49152\nactive_file 32768\n"
      "unevictable 4096\n";
  const std::string c_text =
      c_local + "hierarchical_memory_limit 4096000\nhierarchical_memsw_limit 8192000\n" +
      "total_cache 81920\ntotal_rss 40960\ntotal_rss_huge 0\ntotal_shmem 16384\n"
      "total_mapped_file 24576\ntotal_dirty 4096\ntotal_writeback 4096\n"
      "total_workingset_refault_anon 2\ntotal_workingset_refault_file 9\ntotal_swap 0\n"
      "total_swapcached 8192\ntotal_pgpgin 11\ntotal_pgpgout 4\ntotal_pgfault 100\n"
      "total_pgmajfault 3\ntotal_inactive_anon 28672\ntotal_active_anon 12288\n"
      "total_inactive_file 49152\ntotal_active_file 32768\ntotal_unevictable 4096\n";
  CHECK(show(env, c, memory_stat_show) == c_text);
  CHECK(show(env, c, memcg1_stat_show) == c_text);
  // p: its own values locally, c's added in the total_ lines.
  auto kv = parse(show(env, p, memory_stat_show));
  CHECK(kv["rss"] == 1 * P);
  CHECK(kv["pgfault"] == 2);
  CHECK(kv["active_anon"] == 1 * P);
  CHECK(kv["total_rss"] == 11 * P);
  CHECK(kv["total_pgfault"] == 102);
  CHECK(kv["total_active_anon"] == 4 * P);
  CHECK(kv["hierarchical_memory_limit"] == 1000 * P);
  CHECK(kv["hierarchical_memsw_limit"] == 3000 * P);
  CHECK(kv["hierarchical_memory_limit"] == 1000 * P);
  // The root: no limits.
  kv = parse(show(env, root_mem_cgroup, memory_stat_show));
  CHECK(kv["hierarchical_memory_limit"] == PAGE_COUNTER_MAX * P);
  CHECK(kv["total_pgfault"] == 102);
  CHECK(kv["pgfault"] == 0);
  env.finish();
}

TEST_CASE("memory.numa_stat v1: LRU pages, own then hierarchical, total then node 0",
          "[mm][memcg][vmstat]") {
  WarnCheck wc;
  MemcgEnv env(v1_params());
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *c = env.mkdir(p, "c");
  env.run([&] { mod_memcg_lruvec_state(p, NR_ACTIVE_ANON, 1); });
  fill_known_state(c, false, env);
  env.run([&] { emu::mem_cgroup_flush_stats_force(nullptr); });
  // c: 7 + 3 anon, 12 + 8 file, 1 unevictable (pages, not bytes).
  const char *c_golden =
      "total=31 N0=31\nfile=20 N0=20\nanon=10 N0=10\nunevictable=1 N0=1\n"
      "hierarchical_total=31 N0=31\nhierarchical_file=20 N0=20\nhierarchical_anon=10 N0=10\n"
      "hierarchical_unevictable=1 N0=1\n";
  CHECK(show(env, c, memcg_numa_stat_show) == c_golden);
  CHECK(show(env, p, memcg_numa_stat_show) ==
        "total=1 N0=1\nfile=0 N0=0\nanon=1 N0=1\nunevictable=0 N0=0\n"
        "hierarchical_total=32 N0=32\nhierarchical_file=20 N0=20\nhierarchical_anon=11 N0=11\n"
        "hierarchical_unevictable=1 N0=1\n");
  CHECK(show(env, root_mem_cgroup, memcg_numa_stat_show) ==
        "total=0 N0=0\nfile=0 N0=0\nanon=0 N0=0\nunevictable=0 N0=0\n"
        "hierarchical_total=32 N0=32\nhierarchical_file=20 N0=20\nhierarchical_anon=11 N0=11\n"
        "hierarchical_unevictable=1 N0=1\n");
  // The first number comes from the memcg's statistics, N0 from its lruvec: an LRU item updated
  // for the memcg only moves the first.
  env.run([&] {
    mod_memcg_state(p, NR_INACTIVE_FILE, 2);
    emu::mem_cgroup_flush_stats_force(nullptr);
  });
  CHECK(show(env, p, memcg_numa_stat_show) ==
        "total=3 N0=1\nfile=2 N0=0\nanon=1 N0=1\nunevictable=0 N0=0\n"
        "hierarchical_total=34 N0=32\nhierarchical_file=22 N0=20\nhierarchical_anon=11 N0=11\n"
        "hierarchical_unevictable=1 N0=1\n");
  env.finish();
}

TEST_CASE("flush threshold: nothing flushes until more than 64 x nr_cpus pages are pending",
          "[mm][memcg][vmstat]") {
  WarnCheck wc;
  MemcgEnv env(v2_params(), emu::Mode::simulated, 4);  // threshold 256
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mem_cgroup *b = env.mkdir(nullptr, "b");
  env.run([&] {
    // 319 single-page updates on one CPU: four batches of 64 (256) reached the atomic counters
    // of a and of the root, 63 stay per-CPU. 256 is not above the threshold: no flush.
    for (int i = 0; i < 319; i++) mod_memcg_lruvec_state(a, NR_FILE_PAGES, 1);
    CHECK(emu::memcg_stats_updates(a) == 256);
    CHECK(emu::memcg_stats_updates(root_mem_cgroup) == 256);
    CHECK(parse(text(a))["file"] == 0);
    CHECK(parse(text(root_mem_cgroup))["file"] == 0);
    CHECK(memcg_page_state(a, NR_FILE_PAGES) == 0);
    // The 320th completes a fifth batch: 320 > 256, the next reader flushes a's subtree.
    mod_memcg_lruvec_state(a, NR_FILE_PAGES, 1);
    CHECK(emu::memcg_stats_updates(a) == 320);
    CHECK(parse(text(a))["file"] == 320 * P);
    CHECK(emu::memcg_stats_updates(a) == 0);
    // a's flush pushed its delta to the root's pending counts; the root absorbs them when it is
    // flushed itself (its own count is still over the threshold).
    CHECK(memcg_page_state(root_mem_cgroup, NR_FILE_PAGES) == 0);
    CHECK(emu::memcg_stats_updates(root_mem_cgroup) == 320);
    CHECK(parse(text(root_mem_cgroup))["file"] == 320 * P);
    CHECK(emu::memcg_stats_updates(root_mem_cgroup) == 0);
  });
  // 63 updates on each of the 4 CPUs: 252 pages pending, none in the atomic counters.
  for (int cpu = 0; cpu < 4; cpu++)
    env.run([&] { for (int i = 0; i < 63; i++) count_memcg_events(b, PGFAULT, 1); }, cpu);
  env.run([&] {
    CHECK(emu::memcg_stats_updates(b) == 0);
    CHECK(parse(text(b))["pgfault"] == 0);
    CHECK(memcg_events_local(b, PGFAULT) == 0);
    CHECK(emu::memcg_events_local_sum(b, PGFAULT) == 252);
  });
  env.run([&] {
    // Sub-page updates of a byte item count as one page each.
    for (int i = 0; i < 64; i++) mod_memcg_state(b, MEMCG_PERCPU_B, 8);
    CHECK(emu::memcg_stats_updates(b) == 64);
    // Once a level is flushable, updates stop counting there and above it.
    for (int i = 0; i < 320; i++) mod_memcg_lruvec_state(a, NR_SHMEM, 1);
    CHECK(emu::memcg_stats_updates(a) == 320);
    long root_before = emu::memcg_stats_updates(root_mem_cgroup);
    for (int i = 0; i < 128; i++) mod_memcg_lruvec_state(a, NR_SHMEM, -1);
    CHECK(emu::memcg_stats_updates(a) == 320);
    CHECK(emu::memcg_stats_updates(root_mem_cgroup) == root_before);
    // Negative updates count by magnitude: the flush sees 320 - 128.
    CHECK(parse(text(a))["shmem"] == 192 * P);
  });
  env.finish();
}

TEST_CASE("rstat: hierarchical and local values, subtree flushes, children before parents",
          "[mm][memcg][vmstat]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *c1 = env.mkdir(p, "c1");
  mem_cgroup *c2 = env.mkdir(p, "c2");
  mem_cgroup *g = env.mkdir(c1, "g");
  env.run([&] {
    mod_memcg_lruvec_state(p, NR_ANON_MAPPED, 3);
    mod_memcg_lruvec_state(c1, NR_ANON_MAPPED, 5);
    mod_memcg_lruvec_state(g, NR_ANON_MAPPED, 7);
    count_memcg_events(c2, PGMAJFAULT, 2);
  }, 2);
  env.run([&] {
    mod_memcg_lruvec_state(g, NR_ANON_MAPPED, 11);
    mod_memcg_lruvec_state(c2, NR_ANON_MAPPED, -1);  // locally negative: clamped to 0
    count_memcg_events(g, PGMAJFAULT, 1);
  }, 3);
  env.run([&] {
    // Flushing c1's subtree only: g and c1 are up to date; p sees nothing yet (the deltas wait
    // in p's pending counts until p itself is flushed).
    emu::mem_cgroup_flush_stats_force(c1);
    CHECK(memcg_page_state(g, NR_ANON_MAPPED) == 18);
    CHECK(memcg_page_state_local(g, NR_ANON_MAPPED) == 18);
    CHECK(memcg_page_state(c1, NR_ANON_MAPPED) == 23);
    CHECK(memcg_page_state_local(c1, NR_ANON_MAPPED) == 5);
    CHECK(memcg_events(c1, PGMAJFAULT) == 1);
    CHECK(memcg_events_local(c1, PGMAJFAULT) == 0);
    CHECK(memcg_page_state(p, NR_ANON_MAPPED) == 0);
    CHECK(memcg_page_state(root_mem_cgroup, NR_ANON_MAPPED) == 0);
    emu::mem_cgroup_flush_stats_force(nullptr);
    CHECK(memcg_page_state(p, NR_ANON_MAPPED) == 3 + 23 - 1);
    CHECK(memcg_page_state_local(p, NR_ANON_MAPPED) == 3);
    CHECK(memcg_page_state(c2, NR_ANON_MAPPED) == 0);  // -1 clamped
    CHECK(memcg_page_state_local(c2, NR_ANON_MAPPED) == 0);
    CHECK(emu::memcg_page_state_local_sum(c2, NR_ANON_MAPPED) == -1);
    CHECK(memcg_events(p, PGMAJFAULT) == 3);
    CHECK(memcg_events(root_mem_cgroup, PGMAJFAULT) == 3);
    CHECK(memcg_events_local(root_mem_cgroup, PGMAJFAULT) == 0);
    CHECK(memcg_page_state(root_mem_cgroup, NR_ANON_MAPPED) == 25);
    CHECK(lruvec_page_state(p, NR_ANON_MAPPED) == 25);
    CHECK(lruvec_page_state_local(p, NR_ANON_MAPPED) == 3);
    CHECK(lruvec_page_state_local(g, NR_ANON_MAPPED) == 18);
    // A second flush with nothing new changes nothing.
    emu::mem_cgroup_flush_stats_force(nullptr);
    CHECK(memcg_page_state(root_mem_cgroup, NR_ANON_MAPPED) == 25);
    CHECK(memcg_events(root_mem_cgroup, PGMAJFAULT) == 3);
  });
  env.finish();
}

TEST_CASE("rstat: a removed child's counts stay in its ancestors' hierarchical totals",
          "[mm][memcg][vmstat]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *c = env.mkdir(p, "c");
  env.run([&] {
    count_memcg_events(c, PGFAULT, 7);
    mod_memcg_lruvec_state(c, NR_FILE_PAGES, 4);  // never flushed while c lives
  }, 1);
  REQUIRE(env.rmdir(c) == 0);
  env.run([&] { emu::cgroup_flush_releases(); });
  env.run([&] {
    // c is freed: its last flush pushed everything into p's pending counts.
    emu::mem_cgroup_flush_stats_force(nullptr);
    CHECK(memcg_events(p, PGFAULT) == 7);
    CHECK(memcg_events_local(p, PGFAULT) == 0);
    CHECK(memcg_page_state(p, NR_FILE_PAGES) == 4);
    CHECK(memcg_page_state_local(p, NR_FILE_PAGES) == 0);
    CHECK(lruvec_page_state(p, NR_FILE_PAGES) == 4);
    CHECK(parse(text(root_mem_cgroup))["pgfault"] == 7);
    CHECK(parse(text(p))["file"] == 4 * P);
  });
  env.finish();
}

TEST_CASE("periodic flush every 2 s of machine time; ratelimited flush only when it is late",
          "[mm][memcg][vmstat]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    const u64 boot = emu::memcg_flush_last_time();
    mod_memcg_lruvec_state(a, NR_FILE_PAGES, 10);  // far below the threshold
    CHECK(parse(text(a))["file"] == 0);
    sleep_until(boot + FLUSH_TIME - 1);
    CHECK(get_jiffies_64() == boot + FLUSH_TIME - 1);
    CHECK(memcg_page_state(a, NR_FILE_PAGES) == 0);
    CHECK(emu::memcg_flush_last_time() == boot);
    schedule_timeout_uninterruptible(2);
    // The periodic work flushed the whole tree at boot + 2 s, threshold or not.
    CHECK(emu::memcg_flush_last_time() == boot + FLUSH_TIME);
    CHECK(memcg_page_state(a, NR_FILE_PAGES) == 10);
    CHECK(parse(text(root_mem_cgroup))["file"] == 10 * P);
    // Above the threshold, but the periodic flush is on time: the ratelimited flush does not
    // flush; the plain gated one does.
    for (int i = 0; i < 400; i++) count_memcg_events(a, PGREFILL, 1);
    mem_cgroup_flush_stats_ratelimited(a);
    CHECK(memcg_events(a, PGREFILL) == 0);
    mem_cgroup_flush_stats(a);
    CHECK(memcg_events(a, PGREFILL) == 400);
    // And again at 4 s.
    mod_memcg_lruvec_state(a, NR_FILE_PAGES, 5);
    sleep_until(boot + 2 * FLUSH_TIME + 1);
    CHECK(emu::memcg_flush_last_time() == boot + 2 * FLUSH_TIME);
    CHECK(memcg_page_state(a, NR_FILE_PAGES) == 15);
  });
  env.finish();
}

TEST_CASE("ratelimited flush: flushes once the periodic flush is a full cycle late",
          "[mm][memcg][vmstat]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    const u64 boot = emu::memcg_flush_last_time();
    memcg_internal::memcg_stats_shutdown();  // stop the periodic flush: it falls behind
    for (int i = 0; i < 400; i++) count_memcg_events(a, PGREFILL, 1);  // over the threshold
    sleep_until(boot + 2 * FLUSH_TIME);
    mem_cgroup_flush_stats_ratelimited(a);  // exactly 4 s: not late yet
    CHECK(memcg_events(a, PGREFILL) == 0);
    CHECK(emu::memcg_flush_last_time() == boot);
    sleep_until(boot + 2 * FLUSH_TIME + 1);
    mem_cgroup_flush_stats_ratelimited(a);
    CHECK(memcg_events(a, PGREFILL) == 400);
    // Late, but below the threshold: still gated.
    count_memcg_events(a, PGREFILL, 1);
    mem_cgroup_flush_stats_ratelimited(a);
    CHECK(memcg_events(a, PGREFILL) == 400);
    // The root's own count is still over the threshold (only a's subtree was flushed).
    mem_cgroup_flush_stats_ratelimited(nullptr);
    CHECK(memcg_events(root_mem_cgroup, PGREFILL) == 401);
  });
  env.finish();
}

TEST_CASE("pgpgin/pgpgout: one event per charged and per uncharged folio (v1 text, kfuncs)",
          "[mm][memcg][vmstat]") {
  for (bool v1 : {false, true}) {
    WarnCheck wc;
    MemcgEnv env(v1 ? v1_params() : v2_params());
    mem_cgroup *a = env.mkdir(nullptr, "a");
    env.run([&] {
      folio f[3];
      f[2].order = 2;
      for (auto &x : f) REQUIRE(charge_memcg(&x, a, GFP_KERNEL) == 0);
      __mem_cgroup_uncharge(&f[0]);
      __mem_cgroup_uncharge(&f[2]);
      emu::mem_cgroup_flush_stats_force(nullptr);
      CHECK(bpf_mem_cgroup_vm_events(a, PGPGIN) == 3);
      CHECK(bpf_mem_cgroup_vm_events(a, PGPGOUT) == 2);
      auto kv = parse(text(a));
      if (v1) {
        CHECK(kv["pgpgin"] == 3);
        CHECK(kv["pgpgout"] == 2);
        CHECK(kv["total_pgpgin"] == 3);
      } else {
        CHECK(kv.count("pgpgin") == 0);
        CHECK(kv.count("pgpgout") == 0);
      }
      __mem_cgroup_uncharge(&f[1]);
      drain_all_stock(root_mem_cgroup);
    });
    env.finish();
  }
}

namespace {

// Every key of memory.stat v2 and the kfunc that returns it: a page_state item, a vm event, or
// a sum of them (slab, pgscan, pgsteal exist only in the text).
struct KeyMap {
  std::vector<int> page_state;
  std::vector<int> events;
};
const std::map<std::string, KeyMap> &v2_keys() {
  static const std::map<std::string, KeyMap> m = {
      {"anon", {{NR_ANON_MAPPED}, {}}},
      {"file", {{NR_FILE_PAGES}, {}}},
      {"kernel", {{MEMCG_KMEM}, {}}},
      {"kernel_stack", {{NR_KERNEL_STACK_KB}, {}}},
      {"pagetables", {{NR_PAGETABLE}, {}}},
      {"sec_pagetables", {{NR_SECONDARY_PAGETABLE}, {}}},
      {"percpu", {{MEMCG_PERCPU_B}, {}}},
      {"sock", {{MEMCG_SOCK}, {}}},
      {"vmalloc", {{MEMCG_VMALLOC}, {}}},
      {"shmem", {{NR_SHMEM}, {}}},
      {"file_mapped", {{NR_FILE_MAPPED}, {}}},
      {"file_dirty", {{NR_FILE_DIRTY}, {}}},
      {"file_writeback", {{NR_WRITEBACK}, {}}},
      {"swapcached", {{NR_SWAPCACHE}, {}}},
      {"anon_thp", {{NR_ANON_THPS}, {}}},
      {"file_thp", {{NR_FILE_THPS}, {}}},
      {"shmem_thp", {{NR_SHMEM_THPS}, {}}},
      {"inactive_anon", {{NR_INACTIVE_ANON}, {}}},
      {"active_anon", {{NR_ACTIVE_ANON}, {}}},
      {"inactive_file", {{NR_INACTIVE_FILE}, {}}},
      {"active_file", {{NR_ACTIVE_FILE}, {}}},
      {"unevictable", {{NR_UNEVICTABLE}, {}}},
      {"slab_reclaimable", {{NR_SLAB_RECLAIMABLE_B}, {}}},
      {"slab_unreclaimable", {{NR_SLAB_UNRECLAIMABLE_B}, {}}},
      {"slab", {{NR_SLAB_RECLAIMABLE_B, NR_SLAB_UNRECLAIMABLE_B}, {}}},
      {"workingset_refault_anon", {{WORKINGSET_REFAULT_ANON}, {}}},
      {"workingset_refault_file", {{WORKINGSET_REFAULT_FILE}, {}}},
      {"workingset_activate_anon", {{WORKINGSET_ACTIVATE_ANON}, {}}},
      {"workingset_activate_file", {{WORKINGSET_ACTIVATE_FILE}, {}}},
      {"workingset_restore_anon", {{WORKINGSET_RESTORE_ANON}, {}}},
      {"workingset_restore_file", {{WORKINGSET_RESTORE_FILE}, {}}},
      {"workingset_nodereclaim", {{WORKINGSET_NODERECLAIM}, {}}},
      {"pgdemote_kswapd", {{PGDEMOTE_KSWAPD}, {}}},
      {"pgdemote_direct", {{PGDEMOTE_DIRECT}, {}}},
      {"pgdemote_khugepaged", {{PGDEMOTE_KHUGEPAGED}, {}}},
      {"pgdemote_proactive", {{PGDEMOTE_PROACTIVE}, {}}},
      {"pgscan", {{}, {PGSCAN_KSWAPD, PGSCAN_DIRECT, PGSCAN_KHUGEPAGED, PGSCAN_PROACTIVE}}},
      {"pgsteal", {{}, {PGSTEAL_KSWAPD, PGSTEAL_DIRECT, PGSTEAL_KHUGEPAGED, PGSTEAL_PROACTIVE}}},
      {"pswpin", {{}, {PSWPIN}}},
      {"pswpout", {{}, {PSWPOUT}}},
      {"pgscan_kswapd", {{}, {PGSCAN_KSWAPD}}},
      {"pgscan_direct", {{}, {PGSCAN_DIRECT}}},
      {"pgscan_khugepaged", {{}, {PGSCAN_KHUGEPAGED}}},
      {"pgscan_proactive", {{}, {PGSCAN_PROACTIVE}}},
      {"pgsteal_kswapd", {{}, {PGSTEAL_KSWAPD}}},
      {"pgsteal_direct", {{}, {PGSTEAL_DIRECT}}},
      {"pgsteal_khugepaged", {{}, {PGSTEAL_KHUGEPAGED}}},
      {"pgsteal_proactive", {{}, {PGSTEAL_PROACTIVE}}},
      {"pgfault", {{}, {PGFAULT}}},
      {"pgmajfault", {{}, {PGMAJFAULT}}},
      {"pgrefill", {{}, {PGREFILL}}},
      {"pgactivate", {{}, {PGACTIVATE}}},
      {"pgdeactivate", {{}, {PGDEACTIVATE}}},
      {"pglazyfree", {{}, {PGLAZYFREE}}},
      {"pglazyfreed", {{}, {PGLAZYFREED}}},
      {"swpin_zero", {{}, {SWPIN_ZERO}}},
      {"swpout_zero", {{}, {SWPOUT_ZERO}}},
      {"thp_fault_alloc", {{}, {THP_FAULT_ALLOC}}},
      {"thp_collapse_alloc", {{}, {THP_COLLAPSE_ALLOC}}},
      {"thp_swpout", {{}, {THP_SWPOUT}}},
      {"thp_swpout_fallback", {{}, {THP_SWPOUT_FALLBACK}}},
  };
  return m;
}

// Every "key value" line of memory.stat text @t is a v2 key whose value is the sum of its
// page-state items as @state reads them and its events as @event reads them; no key is missing.
template <typename State, typename Event>
void check_stat_text(const std::string &t, State state, Event event) {
  std::istringstream in(t);
  std::string key;
  unsigned long long v;
  size_t lines = 0;
  while (in >> key >> v) {
    lines++;
    INFO("key " << key);
    auto it = v2_keys().find(key);
    REQUIRE(it != v2_keys().end());
    unsigned long long want = 0;
    for (int idx : it->second.page_state) want += state(idx);
    for (int e : it->second.events) want += event(e);
    CHECK(v == want);
  }
  CHECK(lines == v2_keys().size());
}

}  // namespace

TEST_CASE("stat kfuncs return exactly what memory.stat prints, for every key",
          "[mm][memcg][vmstat][bpf]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *a = env.mkdir(p, "a");
  fill_known_state(a, true, env);
  env.run([&] {
    mod_memcg_lruvec_state(p, NR_FILE_PAGES, 3);
    count_memcg_events(p, PGSTEAL_DIRECT, 9);
    mod_memcg_state(a, MEMCG_SWAP, 0);  // a zero update: nothing pending
  });
  for (int round = 0; round < 2; round++) {
    // Round 0 reads with whatever flush state the gated flushes left (stale values are fine:
    // text and kfunc must agree on them); round 1 after a forced flush.
    if (round == 1) env.run([&] { emu::mem_cgroup_flush_stats_force(nullptr); });
    for (mem_cgroup *m : {a, p, root_mem_cgroup}) {
      env.run([&] {
        bpf_mem_cgroup_flush_stats(m);  // the same gated flush memory.stat does first
        check_stat_text(
            text(m), [&](int idx) { return bpf_mem_cgroup_page_state(m, idx); },
            [&](int e) { return bpf_mem_cgroup_vm_events(m, e); });
      });
    }
  }
  env.run([&] {
    CHECK(bpf_mem_cgroup_page_state(a, NR_FILE_PAGES) == 20 * P);
    CHECK(bpf_mem_cgroup_page_state(p, NR_FILE_PAGES) == 23 * P);
    CHECK(bpf_mem_cgroup_vm_events(p, PGFAULT) == 100);
    // Only through the kfuncs: MEMCG_SWAP, pgpgin/pgpgout, and hugetlb (hidden in the text).
    CHECK(bpf_mem_cgroup_page_state(a, MEMCG_SWAP) == 0);
    CHECK(bpf_mem_cgroup_vm_events(a, PGPGIN) == 11);
    CHECK(bpf_mem_cgroup_vm_events(a, PGPGOUT) == 4);
    CHECK(bpf_mem_cgroup_page_state(a, NR_HUGETLB) == 5 * P);
    // Items memcg does not track, and ids out of range: (unsigned long)-1, no warning.
    CHECK(bpf_mem_cgroup_page_state(a, NR_ISOLATED_ANON) == (unsigned long)-1);
    CHECK(bpf_mem_cgroup_page_state(a, WORKINGSET_NODES) == (unsigned long)-1);
    CHECK(bpf_mem_cgroup_page_state(a, MEMCG_NR_STAT) == (unsigned long)-1);
    CHECK(bpf_mem_cgroup_page_state(a, -1) == (unsigned long)-1);
    CHECK(bpf_mem_cgroup_vm_events(a, PGFREE) == (unsigned long)-1);
    CHECK(bpf_mem_cgroup_vm_events(a, NR_VM_EVENT_ITEMS) == (unsigned long)-1);
    CHECK(bpf_mem_cgroup_vm_events(a, -5) == (unsigned long)-1);
  });
  env.check();
  release_sock(env, a);
  env.finish();
}

TEST_CASE("a BPF cgroup iterator reads through the kfuncs exactly what memory.stat prints",
          "[mm][memcg][vmstat][bpf]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *a = env.mkdir(p, "a");
  fill_known_state(a, true, env);
  env.run([&] {
    mod_memcg_lruvec_state(p, NR_FILE_PAGES, 3);
    count_memcg_events(p, PGSTEAL_DIRECT, 9);
    // Over the threshold: the program's own (gated) flush runs.
    for (int i = 0; i < 300; i++) count_memcg_events(p, PGFAULT, 1);
  });
  auto lo = open_bpf_object("memcg_stat.bpf.o");
  constexpr u32 NR_IDS = 48, NR_EVENTS = 41;  // as in test/progs/memcg_stat.bpf.c
  static_assert(MEMCG_NR_STAT < NR_IDS && NR_VM_EVENT_ITEMS < NR_EVENTS);
  env.run([&] {
    auto r = bpf_cgroup_iter_run(*lo->find_program("read_stats"), root_mem_cgroup->css.cgroup,
                                 CGROUP_ITER_DESCENDANTS_PRE);
    INFO(r.status().message());
    REQUIRE(r.ok());
    CHECK(r->visited == 3);
    mem_cgroup *order[3] = {root_mem_cgroup, p, a};  // pre-order
    for (u32 slot = 0; slot < 3; slot++) {
      mem_cgroup *m = order[slot];
      auto state = [&](int id) {
        u64 v;
        std::memcpy(&v, bpf_map_value(*lo, "states", slot * NR_IDS + id).data(), 8);
        return v;
      };
      auto event = [&](int id) {
        u64 v;
        std::memcpy(&v, bpf_map_value(*lo, "events", slot * NR_EVENTS + id).data(), 8);
        return v;
      };
      for (int id = 0; id < static_cast<int>(NR_IDS); id++)
        CHECK(state(id) == bpf_mem_cgroup_page_state(m, id));
      for (int id = 0; id < static_cast<int>(NR_EVENTS); id++)
        CHECK(event(id) == bpf_mem_cgroup_vm_events(m, id));
      // The text (its gated flush finds nothing new) against what the program read.
      INFO("slot " << slot);
      check_stat_text(text(m), state, event);
    }
    CHECK(bpf_mem_cgroup_vm_events(p, PGFAULT) == 400);  // flushed by the program
    CHECK(bpf_mem_cgroup_page_state(p, MEMCG_NR_STAT) == (unsigned long)-1);
  });
  env.check();
  release_sock(env, a);
  env.finish();
}

TEST_CASE("untracked items: the update and the read WARN and do nothing", "[mm][memcg][vmstat]") {
  WarnCheck wc(3);
  emu::set_warnings_quiet(true);
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    mod_memcg_state(a, NR_ISOLATED_FILE, 1);
    count_memcg_events(a, PGFREE, 1);
    CHECK(memcg_page_state(a, WORKINGSET_NODES) == 0);
    CHECK(emu::memcg_stats_updates(a) == 0);
  });
  emu::set_warnings_quiet(false);
  env.finish();
}

namespace {

// Exact totals after concurrent updates of the same counters from every CPU: each task adds
// (seeded) random amounts to a random memcg of a 3-level tree and remembers what it added
// (test/support/stat_totals.h); root's memory.stat then prints the sums.
void check_totals(MemcgEnv &env, const std::vector<mem_cgroup *> &all, const StatTotals &t) {
  check_stat_totals(env, all, t);
  long root_file = 0;
  unsigned long root_fault = 0;
  for (auto &[m, v] : t.file) root_file += v;
  for (auto &[m, v] : t.fault) root_fault += v;
  env.run([&] {
    auto kv = parse(text(root_mem_cgroup));
    CHECK(kv["file"] == static_cast<unsigned long long>(root_file) * P);
    CHECK(kv["pgfault"] == root_fault);
  });
}

}  // namespace

TEST_CASE("stepped: tasks on every CPU update the same counters; exact totals after a flush",
          "[mm][memcg][vmstat]") {
  WarnCheck wc;
  for (std::uint64_t seed : {11u, 12u, 13u}) {
    INFO("seed " << seed);
    MemcgEnv env(v2_params(), emu::Mode::simulated, 4, seed);
    mem_cgroup *p = env.mkdir(nullptr, "p");
    std::vector<mem_cgroup *> all = {root_mem_cgroup, p, env.mkdir(p, "a"), env.mkdir(p, "b")};
    all.push_back(env.mkdir(all[2], "g"));
    StatTotals t;
    for (int task = 0; task < 6; task++) {
      env.machine().spawn("vmstat", [&, task] {
        std::mt19937_64 r(seed * 101 + static_cast<unsigned>(task));
        for (int i = 0; i < 400; i++) {
          emu::KernelEntry k;
          mem_cgroup *m = all[r() % all.size()];
          const int d = static_cast<int>(r() % 9) - 2;
          const int b = static_cast<int>(r() % 5000);
          stat_update(t, m, d, 1, b);
          // A reader now and then: the gated flush interleaves with the updates.
          if (r() % 16 == 0) mem_cgroup_flush_stats(all[r() % all.size()]);
          cond_resched();
        }
      }, {.cpu = task % 4});
    }
    REQUIRE_FALSE(env.machine().run().deadlock);
    check_totals(env, all, t);
    env.finish();
  }
}

TEST_CASE("native: real threads update the same counters while readers flush; exact totals",
          "[mm][memcg][vmstat][stress]") {
  // memcg_stats_lazy_test runs this harness on fresh memcgs, where updates are first ones.
  WarnCheck wc;
  MemcgEnv env(v2_params(), emu::Mode::native, 4);
  mem_cgroup *p = env.mkdir(nullptr, "p");
  std::vector<mem_cgroup *> all = {root_mem_cgroup, p, env.mkdir(p, "a"), env.mkdir(p, "b")};
  StatTotals per_task[4];
  std::atomic<bool> done{false};
  for (int task = 0; task < 4; task++) {
    env.machine().spawn("vmstat", [&, task] {
      std::mt19937_64 r(static_cast<unsigned>(task) + 1);
      StatTotals &t = per_task[task];
      for (int i = 0; i < 20000; i++) {
        emu::KernelEntry k;
        mem_cgroup *m = all[r() % all.size()];
        stat_update(t, m, static_cast<int>(r() % 5) - 1, 2, 100);
        // Every task also reads: gated flushes on other CPUs race with the updates.
        if (i % 512 == 0) mem_cgroup_flush_stats(all[r() % all.size()]);
      }
    }, {.cpu = task});
  }
  env.machine().run();
  done = true;
  const StatTotals t = sum_totals(per_task);
  mark_updated_everywhere(env, all, 4);
  check_totals(env, all, t);
  env.finish();
}
