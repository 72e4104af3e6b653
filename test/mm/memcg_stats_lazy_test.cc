// SPDX-License-Identifier: GPL-2.0-only
// Tests of the memcg statistics allocated on first update (mm/memcontrol_stat.h, "Memory"): a
// memcg never updated has no statistics block and reads as zeros; the first update on a CPU
// creates the block there (and the ancestors' on that CPU) and the flush sees it; first updates
// on several CPUs racing flushes lose nothing, stepped (simulated, seeded) and native.
#include "test/support/memcg_env.h"
#include "test/support/stat_totals.h"

#include <atomic>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernel/cftype.h"
#include "kernel/cgroup_rstat.h"
#include "mm/memcontrol_stat.h"
#include "shim/sched.h"
#include "shim/smp.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

// Reads a control file through its seq_show handler, as the cgroup core does for a read.
// Context: a task on the machine.
std::string text(mem_cgroup *memcg, int (*fn)(seq_file *, void *)) {
  kernfs_open_file of;
  of.css = &memcg->css;
  seq_file sf;
  sf.of = &of;
  REQUIRE(fn(&sf, nullptr) == 0);
  return sf.buf;
}

// Every "key value" line of memory.stat and every "key N0=value" of memory.numa_stat is 0.
bool all_values_zero(const std::string &s) {
  size_t lines = 0;
  for (size_t pos = 0; pos < s.size();) {
    size_t eol = s.find('\n', pos);
    if (eol == std::string::npos) eol = s.size();
    std::string line = s.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.empty()) continue;
    lines++;
    size_t v = line.find_last_of(" =");
    if (v == std::string::npos || line.substr(v + 1) != "0") return false;
  }
  return lines > 0;
}

// Every tracked item and event of @m reads 0, hierarchical and local.
void check_reads_zero(mem_cgroup *m) {
  for (int idx = 0; idx < MEMCG_NR_STAT; idx++) {
    if (!memcg_stat_item_valid(idx)) continue;
    INFO("item " << idx);
    CHECK(memcg_page_state(m, idx) == 0);
    CHECK(memcg_page_state_local(m, idx) == 0);
    CHECK(emu::memcg_page_state_local_sum(m, idx) == 0);
    if (idx < NR_VM_NODE_STAT_ITEMS) {
      CHECK(lruvec_page_state(m, static_cast<node_stat_item>(idx)) == 0);
      CHECK(lruvec_page_state_local(m, static_cast<node_stat_item>(idx)) == 0);
    }
  }
  for (int ev = 0; ev < NR_VM_EVENT_ITEMS; ev++) {
    if (!memcg_vm_event_item_valid(ev)) continue;
    INFO("event " << ev);
    CHECK(memcg_events(m, ev) == 0);
    CHECK(memcg_events_local(m, ev) == 0);
    CHECK(emu::memcg_events_local_sum(m, ev) == 0);
  }
  CHECK(emu::memcg_stats_updates(m) == 0);
}

u64 cpu_bit(int cpu) { return u64{1} << cpu; }

}  // namespace

TEST_CASE("lazy stats: a memcg never updated has no statistics block and reads as zeros",
          "[mm][memcg][vmstat][lazystats]") {
  WarnCheck wc;
  MemcgEnv env(v2_params(), emu::Mode::simulated, 4);
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mem_cgroup *b = env.mkdir(a, "b");
  env.run([&] {
    // Reads, forced flushes and zero-sized updates allocate nothing.
    mod_memcg_state(b, MEMCG_VMALLOC, 0);
    mod_memcg_lruvec_state(b, NR_FILE_PAGES, 0);
    count_memcg_events(b, PGFAULT, 0);
    emu::mem_cgroup_flush_stats_force(nullptr);
    mem_cgroup_flush_stats(a);
    for (mem_cgroup *m : {a, b}) {
      CHECK(all_values_zero(text(m, memory_stat_show)));
      CHECK(all_values_zero(text(m, memory_numa_stat_show)));
      check_reads_zero(m);
      CHECK(emu::memcg_stats_pcpu_mask(m) == 0);
      CHECK_FALSE(emu::memcg_stats_allocated(m));
    }
  });
  // Removed without ever being updated: nothing to flush, nothing to free but the pointers.
  CHECK(env.rmdir(b) == 0);
  CHECK(env.rmdir(a) == 0);
  env.finish();
}

TEST_CASE("lazy stats: the first update on a CPU creates the blocks up the tree; flushes see it",
          "[mm][memcg][vmstat][lazystats]") {
  WarnCheck wc;
  MemcgEnv env(v2_params(), emu::Mode::simulated, 4);
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *g = env.mkdir(env.mkdir(p, "c"), "g");
  mem_cgroup *c = parent_mem_cgroup(g);
  mem_cgroup *s = env.mkdir(p, "s");  // a sibling that stays untouched
  env.run([&] {
    mod_memcg_lruvec_state(g, NR_FILE_PAGES, 5);
    count_memcg_events(g, PGFAULT, 3);
  }, 2);
  // g's block on CPU 2, and its ancestors' there (the walk of the flush threshold needs them).
  CHECK(emu::memcg_stats_pcpu_mask(g) == cpu_bit(2));
  CHECK(emu::memcg_stats_pcpu_mask(c) == cpu_bit(2));
  CHECK((emu::memcg_stats_pcpu_mask(p) & cpu_bit(2)) != 0);
  CHECK((emu::memcg_stats_pcpu_mask(root_mem_cgroup) & cpu_bit(2)) != 0);
  for (mem_cgroup *m : {g, c, p}) CHECK(emu::memcg_stats_allocated(m));
  CHECK(emu::memcg_stats_pcpu_mask(s) == 0);
  CHECK_FALSE(emu::memcg_stats_allocated(s));
  env.run([&] {
    // Below the threshold nothing is flushed yet: the readers see the aggregates (zeros) ...
    CHECK(memcg_page_state(g, NR_FILE_PAGES) == 0);
    CHECK(emu::memcg_page_state_local_sum(g, NR_FILE_PAGES) == 5);
    // ... until a flush folds CPU 2's block in, at every level.
    emu::mem_cgroup_flush_stats_force(p);
    CHECK(memcg_page_state_local(g, NR_FILE_PAGES) == 5);
    CHECK(lruvec_page_state_local(g, NR_FILE_PAGES) == 5);
    CHECK(memcg_events_local(g, PGFAULT) == 3);
    for (mem_cgroup *m : {g, c, p}) {
      CHECK(memcg_page_state(m, NR_FILE_PAGES) == 5);
      CHECK(lruvec_page_state(m, NR_FILE_PAGES) == 5);
      CHECK(memcg_events(m, PGFAULT) == 3);
    }
    CHECK(memcg_page_state_local(c, NR_FILE_PAGES) == 0);
    check_reads_zero(s);
  }, 0);
  // A second CPU: its own block, the first one untouched; the flush sums both.
  env.run([&] { mod_memcg_lruvec_state(g, NR_FILE_PAGES, -2); }, 1);
  CHECK(emu::memcg_stats_pcpu_mask(g) == (cpu_bit(1) | cpu_bit(2)));
  CHECK(emu::memcg_stats_pcpu_mask(c) == (cpu_bit(1) | cpu_bit(2)));
  env.run([&] {
    emu::mem_cgroup_flush_stats_force(nullptr);
    CHECK(memcg_page_state(p, NR_FILE_PAGES) == 3);
    CHECK(text(g, memory_stat_show).find("\nfile 12288\n") != std::string::npos);
    CHECK(text(g, memory_numa_stat_show).find("file N0=12288\n") != std::string::npos);
  }, 3);
  // Removing g keeps its counts in its ancestors' hierarchical totals, as before.
  env.run([&] { mod_memcg_lruvec_state(g, NR_FILE_PAGES, -3); }, 2);
  CHECK(env.rmdir(g) == 0);
  env.run([&] {
    emu::mem_cgroup_flush_stats_force(nullptr);
    CHECK(memcg_page_state(p, NR_FILE_PAGES) == 0);
    CHECK(memcg_events(p, PGFAULT) == 3);
  });
  env.finish();
}

namespace {

// A fresh tree under the root: 3 top-level memcgs with 3 children each, with 2 children each
// (39 memcgs, none updated yet), the first-level ones listed first.
std::vector<mem_cgroup *> fresh_tree(MemcgEnv &env) {
  std::vector<mem_cgroup *> all;
  for (int i = 0; i < 3; i++) {
    mem_cgroup *top = env.mkdir(nullptr, "t" + std::to_string(i));
    all.push_back(top);
    for (int j = 0; j < 3; j++) {
      mem_cgroup *mid = env.mkdir(top, "m" + std::to_string(j));
      all.push_back(mid);
      for (int k = 0; k < 2; k++) all.push_back(env.mkdir(mid, "l" + std::to_string(k)));
    }
  }
  for (mem_cgroup *m : all) REQUIRE(emu::memcg_stats_pcpu_mask(m) == 0);
  return all;
}

}  // namespace

TEST_CASE("lazy stats, stepped: first updates on every CPU race flushes; exact totals",
          "[mm][memcg][vmstat][lazystats]") {
  WarnCheck wc;
  for (std::uint64_t seed : {21u, 22u, 23u, 24u}) {
    INFO("seed " << seed);
    MemcgEnv env(v2_params(), emu::Mode::simulated, 4, seed);
    std::vector<mem_cgroup *> all = fresh_tree(env);
    StatTotals per_task[4];
    int finished = 0;  // updaters done (one OS thread: plain accesses)
    for (int task = 0; task < 4; task++) {
      env.machine().spawn("first", [&, task] {
        std::mt19937_64 r(seed * 31 + static_cast<unsigned>(task));
        StatTotals &t = per_task[task];
        // Random memcgs of a fresh tree: many updates are some CPU's first of that memcg (or
        // of an ancestor, created on the way).
        for (int i = 0; i < 120; i++) {
          emu::KernelEntry k;
          mem_cgroup *m = all[r() % all.size()];
          stat_update(t, m, static_cast<int>(r() % 7) - 1, 1);
          if (r() % 4 == 0) cond_resched();
        }
        finished++;
      }, {.cpu = task});
    }
    // A flusher on no fixed CPU: each flush has a scheduling point between its per-CPU steps,
    // so updaters' first updates land between them.
    env.machine().spawn("flusher", [&] {
      while (finished < 4) {
        emu::KernelEntry k;
        emu::mem_cgroup_flush_stats_force(nullptr);
        cond_resched();
      }
    });
    REQUIRE_FALSE(env.machine().run().deadlock);
    const StatTotals t = sum_totals(per_task);
    // Aggregates exactly when some CPU has a block; a block wherever the memcg was updated.
    for (mem_cgroup *m : all) {
      CHECK(emu::memcg_stats_allocated(m) == (emu::memcg_stats_pcpu_mask(m) != 0));
      if (t.fault.count(m)) CHECK(emu::memcg_stats_pcpu_mask(m) != 0);
    }
    check_stat_totals(env, all, t);
    env.finish();
  }
}

TEST_CASE("lazy stats, native: real threads make first updates on 4 vCPUs while others flush",
          "[mm][memcg][vmstat][lazystats][stress]") {
  // memcg_vmstat_test's native harness, kept whole: here updates are first ones (lazy blocks).
  WarnCheck wc;
  MemcgEnv env(v2_params(), emu::Mode::native, 4);
  std::vector<mem_cgroup *> all = fresh_tree(env);
  StatTotals per_task[4];
  std::atomic<int> running{4};
  for (int task = 0; task < 4; task++) {
    env.machine().spawn("first", [&, task] {
      std::mt19937_64 r(static_cast<unsigned>(task) + 7);
      StatTotals &t = per_task[task];
      for (int i = 0; i < 3000; i++) {
        emu::KernelEntry k;
        // Deepest first: the first update of a leaf on this vCPU creates its ancestors' blocks
        // while other vCPUs create theirs and flushes read them.
        mem_cgroup *m = all[all.size() - 1 - (r() % all.size())];
        stat_update(t, m, 1, 2);
        // Some tasks also flush, on their own vCPU, between their updates.
        if (task >= 2 && i % 64 == 0) emu::mem_cgroup_flush_stats_force(nullptr);
      }
      running.fetch_sub(1);
    }, {.cpu = task});
  }
  env.machine().run();
  REQUIRE(running.load() == 0);
  const StatTotals t = sum_totals(per_task);
  mark_updated_everywhere(env, all, 4);
  check_stat_totals(env, all, t);
  env.finish();
}
