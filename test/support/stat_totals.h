// SPDX-License-Identifier: GPL-2.0-only
// test/support/stat_totals.h: exact statistics after concurrent updates, for the stats tests'
// random updaters (test/mm/memcg_vmstat_test.cc, test/mm/memcg_stats_lazy_test.cc): what each
// updater added per memcg and their sum, one recorded update, the re-mark the kernel's tolerated
// rstat race needs before a final flush, and the check of every memcg's values against the
// totals.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <type_traits>
#include <vector>

#include "kernel/cgroup_rstat.h"
#include "mm/memcontrol_stat.h"
#include "shim/smp.h"
#include "test/support/memcg_env.h"

namespace umemcg::test {

// Per memcg, what the updaters added: NR_FILE_PAGES, MEMCG_PERCPU_B (bytes) and PGFAULT.
struct StatTotals {
  std::map<mem_cgroup *, long> file, percpu_b;
  std::map<mem_cgroup *, unsigned long> fault;

  void add(const StatTotals &o) {
    for (auto &[m, v] : o.file) file[m] += v;
    for (auto &[m, v] : o.percpu_b) percpu_b[m] += v;
    for (auto &[m, v] : o.fault) fault[m] += v;
  }
};

// The sum of the updaters' totals @parts.
template <std::size_t N>
StatTotals sum_totals(const StatTotals (&parts)[N]) {
  StatTotals t;
  for (const StatTotals &part : parts) t.add(part);
  return t;
}

// One update by a test's updater, recorded in @t: @m's NR_FILE_PAGES (memcg and lruvec) by
// @file, then MEMCG_PERCPU_B by *@percpu_b when given, then PGFAULT by @faults.
inline void stat_update(StatTotals &t, mem_cgroup *m, int file, unsigned long faults,
                        std::optional<int> percpu_b = std::nullopt) {
  mod_memcg_lruvec_state(m, NR_FILE_PAGES, file);
  t.file[m] += file;
  if (percpu_b) {
    mod_memcg_state(m, MEMCG_PERCPU_B, *percpu_b);
    t.percpu_b[m] += *percpu_b;
  }
  count_memcg_events(m, PGFAULT, faults);
  t.fault[m] += faults;
}

// The kernel tolerates one race: an update that found its css still on the updated tree while a
// flush was unlinking it stays unflushed until the css's next update on that CPU
// (kernel/cgroup_rstat.cc). Marks every memcg of @all updated on CPUs 0..@cpus-1, which is what
// that next update would do, so that a final flush sees everything.
inline void mark_updated_everywhere(MemcgEnv &env, const std::vector<mem_cgroup *> &all,
                                    int cpus) {
  for (int cpu = 0; cpu < cpus; cpu++)
    env.run([&] {
      for (mem_cgroup *m : all) css_rstat_updated(&m->css, smp_processor_id());
    }, cpu);
}

// Flushes everything, then checks every memcg of @all against @t: its local NR_FILE_PAGES
// (memcg and lruvec), MEMCG_PERCPU_B and PGFAULT, and its hierarchical NR_FILE_PAGES (memcg and
// lruvec) and PGFAULT, the sums over its descendants in @all (itself included).
inline void check_stat_totals(MemcgEnv &env, const std::vector<mem_cgroup *> &all,
                              const StatTotals &t) {
  auto at = [](const auto &map, mem_cgroup *m) {
    auto it = map.find(m);
    return it == map.end() ? typename std::decay_t<decltype(map)>::mapped_type{} : it->second;
  };
  env.run([&] {
    emu::mem_cgroup_flush_stats_force(nullptr);
    for (mem_cgroup *m : all) {
      INFO("memcg id " << m->id);
      const long f = at(t.file, m);
      const unsigned long pf = at(t.fault, m);
      CHECK(memcg_page_state_local(m, NR_FILE_PAGES) == static_cast<unsigned long>(f));
      CHECK(lruvec_page_state_local(m, NR_FILE_PAGES) == static_cast<unsigned long>(f));
      CHECK(memcg_page_state_local(m, MEMCG_PERCPU_B) ==
            static_cast<unsigned long>(at(t.percpu_b, m)));
      CHECK(memcg_events_local(m, PGFAULT) == pf);
      long hf = 0;
      unsigned long hpf = 0;
      for (mem_cgroup *d : all)
        if (mem_cgroup_is_descendant(d, m)) {
          hf += at(t.file, d);
          hpf += at(t.fault, d);
        }
      CHECK(memcg_page_state(m, NR_FILE_PAGES) == static_cast<unsigned long>(hf));
      CHECK(lruvec_page_state(m, NR_FILE_PAGES) == static_cast<unsigned long>(hf));
      CHECK(memcg_events(m, PGFAULT) == hpf);
    }
  });
}

}  // namespace umemcg::test
