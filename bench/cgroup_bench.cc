// SPDX-License-Identifier: GPL-2.0-only
// bench/cgroup_bench.cc: cgroup creation and removal through the cgroup filesystem, and the
// memory a cgroup with its memcg costs (target S9: 10,000 cgroups created and removed in <= 1 s;
// per memcg <= 4 KiB plus <= 256 B per vCPU).
//
// BM_cgroupfs_mkdir_rmdir/10000: one iteration is mkdir(2) of 10,000 sibling cgroups under
//   /sys/fs/cgroup with the memory controller enabled there, then rmdir(2) of all of them, on a
//   native machine with 4 vCPUs. The Time column is the whole iteration (S9 reads it against
//   1 s). A removed memcg lingers offline until its last reference goes, as a zombie memcg
//   does; those are released and freed by the machine's workqueue and RCU while the loop runs
//   (css_release_work_fn takes cgroup_mutex between the loop's rmdirs, as in the kernel).
//   Counters mkdir_ms and rmdir_ms split the iteration's time into its two halves.
// BM_memcg_bytes_per_cgroup: heap bytes per cgroup created with the memory controller enabled
//   for it, on machines of 1, 2, 4 and 8 vCPUs (1,000 sibling cgroups each, bytes in use read
//   from the allocator), two figures:
//   - the memcg itself (what S9 names "per-memcg memory"): the bytes the memory controller's
//     css_alloc and css_online allocate (struct mem_cgroup with its page counters, LRU and
//     nodeinfo, memcg_vmstats, lruvec_stats, their per-CPU parts, the css's rstat links, the
//     obj_cgroup), read around each call. Counters memcg_bytes_fixed and memcg_bytes_per_vcpu.
//   - the whole directory: the memcg, the cgroup core's struct cgroup and every file's kernfs
//     node. Counters dir_bytes_fixed and dir_bytes_per_vcpu; memory_files_bytes is what
//     enabling memory adds to a directory here: the memory.* files' kernfs nodes (the emulator
//     allocates a cgroup's memcg whether or not memory is enabled for it, so the memcg is in
//     both directory figures).
//   - what the memcg's statistics add once it has been updated on every vCPU (one event count
//     per memcg and vCPU after the mkdirs): counters memcg_stats_bytes_fixed (the aggregates)
//     and memcg_stats_bytes_per_vcpu (one CPU's running totals). The memcg figures above are
//     those of a memcg never updated, which allocates no statistics (mm/memcontrol_stat.h,
//     "Memory"); a memcg in use costs the sum of both pairs.
//   Each pair of counters is a least-squares line over the four machines: the intercept (fixed
//   bytes) and the slope (bytes per vCPU: the statistics pointers and the css's rstat links;
//   for the statistics pair, the per-CPU blocks).
// Emulation: bytes are what this process's allocator reports in use (jemalloc's
//   stats.allocated when the benchmark is linked with jemalloc, its thread caches off while
//   measuring; glibc's mallinfo2() otherwise); allocator rounding is included, as it is in
//   the kernel's slab sizes.
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "kernel/cgroupfs.h"
#include "mm/memcontrol.h"
#include "shim/machine.h"

// jemalloc's control interface, when the benchmark is linked with jemalloc.
extern "C" int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
    __attribute__((weak));

namespace {

using namespace umemcg;

// Bytes in use in this process's allocator (see the banner).
size_t heap_bytes_in_use() {
  if (mallctl) {
    unsigned long long epoch = 1;
    size_t sz = sizeof(epoch);
    mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
    mallctl("epoch", &epoch, &sz, &epoch, sz);
    size_t allocated = 0;
    sz = sizeof(allocated);
    if (mallctl("stats.allocated", &allocated, &sz, nullptr, 0) == 0) return allocated;
  }
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

// Thread caches off on the calling thread, so freed and cached blocks do not blur the count.
void tcache_off() {
  if (!mallctl) return;
  bool off = false;
  mallctl("thread.tcache.enabled", nullptr, nullptr, &off, sizeof(off));
}

std::unique_ptr<emu::Machine> boot(unsigned int nr_cpus) {
  emu::MachineConfig cfg;
  cfg.mode = emu::Mode::native;
  cfg.nr_cpus = nr_cpus;
  auto m = std::make_unique<emu::Machine>(cfg);
  int ret = -1;
  m->exec([&] { ret = mem_cgroup_boot(memcg_boot_params{}); }, 0);
  if (ret) return nullptr;
  return m;
}

void BM_cgroupfs_mkdir_rmdir(benchmark::State &state) {
  const int n = static_cast<int>(state.range(0));
  auto m = boot(4);
  if (!m) return state.SkipWithError("mem_cgroup_boot failed");
  std::vector<std::string> names;
  for (int i = 0; i < n; i++) names.push_back("s9-" + std::to_string(i));
  bool ok = true;
  m->exec([&] {
    ok = cgroupfs_write_file("cgroup.subtree_control", "+memory") > 0;
  }, 0);
  if (!ok) return state.SkipWithError("cannot enable memory in the root's subtree_control");
  double mkdir_ns = 0, rmdir_ns = 0;
  for (auto _ : state) {
    m->exec([&] {
      auto t0 = std::chrono::steady_clock::now();
      for (const std::string &name : names) ok &= cgroupfs_mkdir(name) == 0;
      auto t1 = std::chrono::steady_clock::now();
      for (const std::string &name : names) ok &= cgroupfs_rmdir(name) == 0;
      auto t2 = std::chrono::steady_clock::now();
      mkdir_ns += static_cast<double>(std::chrono::nanoseconds(t1 - t0).count());
      rmdir_ns += static_cast<double>(std::chrono::nanoseconds(t2 - t1).count());
    }, 0);
  }
  if (!ok) return state.SkipWithError("a mkdir or rmdir failed");
  state.SetItemsProcessed(state.iterations() * n);
  // The two halves of an iteration, in milliseconds (averaged over the iterations).
  state.counters["mkdir_ms"] = mkdir_ns / 1e6 / static_cast<double>(state.iterations());
  state.counters["rmdir_ms"] = rmdir_ns / 1e6 / static_cast<double>(state.iterations());
}
BENCHMARK(BM_cgroupfs_mkdir_rmdir)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

// The memory controller's css_alloc and css_online, wrapped to add what they allocate to
// g_memcg_bytes while a measurement runs (the calls are made by the measuring thread itself,
// under cgroup_mutex, so nothing else allocates in between).
cgroup_subsys_state *(*g_css_alloc)(cgroup_subsys_state *) = nullptr;
int (*g_css_online)(cgroup_subsys_state *) = nullptr;
double g_memcg_bytes = 0;
std::vector<cgroup_subsys_state *> g_new_css;  // the memcgs created while the probe is installed

cgroup_subsys_state *measured_css_alloc(cgroup_subsys_state *parent_css) {
  size_t before = heap_bytes_in_use();
  cgroup_subsys_state *css = g_css_alloc(parent_css);
  g_memcg_bytes += static_cast<double>(heap_bytes_in_use()) - static_cast<double>(before);
  if (css) g_new_css.push_back(css);
  return css;
}

int measured_css_online(cgroup_subsys_state *css) {
  size_t before = heap_bytes_in_use();
  int ret = g_css_online(css);
  g_memcg_bytes += static_cast<double>(heap_bytes_in_use()) - static_cast<double>(before);
  return ret;
}

// Installs the wrappers for its lifetime.
struct memcg_bytes_probe {
  memcg_bytes_probe() {
    g_css_alloc = memory_cgrp_subsys.css_alloc;
    g_css_online = memory_cgrp_subsys.css_online;
    memory_cgrp_subsys.css_alloc = measured_css_alloc;
    memory_cgrp_subsys.css_online = measured_css_online;
    g_memcg_bytes = 0;
    g_new_css.clear();
  }
  ~memcg_bytes_probe() {
    memory_cgrp_subsys.css_alloc = g_css_alloc;
    memory_cgrp_subsys.css_online = g_css_online;
  }
  memcg_bytes_probe(const memcg_bytes_probe &) = delete;
  memcg_bytes_probe &operator=(const memcg_bytes_probe &) = delete;
};

struct cgroup_bytes {
  double dir = 0;    // the whole directory, per cgroup
  double memcg = 0;  // css_alloc + css_online of the memory controller, per cgroup
  double stats = 0;  // what one update per vCPU adds to each new memcg (its statistics)
};

// Heap bytes per cgroup directory created on a fresh machine of nr_cpus vCPUs, with or without
// the memory controller enabled for the new cgroups.
cgroup_bytes bytes_per_cgroup(unsigned int nr_cpus, bool memory, int n, bool *ok) {
  auto m = boot(nr_cpus);
  if (!m) return *ok = false, cgroup_bytes{};
  cgroup_bytes per;
  std::vector<std::string> names;
  for (int i = 0; i < n; i++) names.push_back("m" + std::to_string(i));
  m->exec([&] {
    tcache_off();
    if (memory) *ok &= cgroupfs_write_file("cgroup.subtree_control", "+memory") > 0;
    // Each directory as deep as the others: all are siblings, so the parent is the same.
    size_t before = heap_bytes_in_use();
    {
      memcg_bytes_probe probe;
      for (const std::string &name : names) *ok &= cgroupfs_mkdir(name) == 0;
      per.memcg = g_memcg_bytes / n;
    }
    size_t after = heap_bytes_in_use();
    per.dir = (static_cast<double>(after) - static_cast<double>(before)) / n;
  }, 0);
  // One event on every vCPU in each new memcg: its statistics, allocated on first update.
  std::vector<cgroup_subsys_state *> created = g_new_css;
  for (unsigned int cpu = 0; memory && cpu < nr_cpus; cpu++) {
    m->exec([&] {
      tcache_off();
      size_t before = heap_bytes_in_use();
      for (cgroup_subsys_state *css : created)
        count_memcg_events(mem_cgroup_from_css(css), PGFAULT, 1);
      per.stats += (static_cast<double>(heap_bytes_in_use()) - static_cast<double>(before)) / n;
    }, static_cast<int>(cpu));
  }
  m->exec([&] {
    for (const std::string &name : names) *ok &= cgroupfs_rmdir(name) == 0;
  }, 0);
  return per;
}

// Least squares y = a + b x.
void fit(const std::vector<double> &x, const std::vector<double> &y, double *a, double *b) {
  double n = static_cast<double>(x.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); i++) {
    sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
  }
  *b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  *a = (sy - *b * sx) / n;
}

void BM_memcg_bytes_per_cgroup(benchmark::State &state) {
  const int n = 1000;
  std::vector<double> cpus, dir, memcg, dir_nomem, stats;
  bool ok = true;
  for (auto _ : state) {
    cpus.clear(), dir.clear(), memcg.clear(), dir_nomem.clear(), stats.clear();
    for (unsigned int c : {1u, 2u, 4u, 8u}) {
      cpus.push_back(c);
      cgroup_bytes with = bytes_per_cgroup(c, true, n, &ok);
      dir.push_back(with.dir);
      memcg.push_back(with.memcg);
      stats.push_back(with.stats);
      dir_nomem.push_back(bytes_per_cgroup(c, false, n, &ok).dir);
    }
  }
  if (!ok) return state.SkipWithError("a mkdir, rmdir or boot failed");
  double a, b, a0, b0, ma, mb, sa, sb;
  fit(cpus, dir, &a, &b);
  fit(cpus, dir_nomem, &a0, &b0);
  fit(cpus, memcg, &ma, &mb);
  fit(cpus, stats, &sa, &sb);
  state.counters["memcg_bytes_fixed"] = ma;
  state.counters["memcg_bytes_per_vcpu"] = mb;
  state.counters["memcg_stats_bytes_fixed"] = sa;
  state.counters["memcg_stats_bytes_per_vcpu"] = sb;
  state.counters["dir_bytes_fixed"] = a;
  state.counters["dir_bytes_per_vcpu"] = b;
  state.counters["memory_files_bytes"] = a - a0;
}
BENCHMARK(BM_memcg_bytes_per_cgroup)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
