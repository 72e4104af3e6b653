// SPDX-License-Identifier: GPL-2.0-only
// bench/cgroup_bench.cc: cgroup creation and removal through the cgroup filesystem, and the
// memory a cgroup with its memcg costs (target S9: 10,000 cgroups created and removed in <= 1 s;
// per memcg <= 4 KiB plus <= 256 B per vCPU).
//
// BM_cgroupfs_mkdir_rmdir/10000: one iteration is mkdir(2) of 10,000 sibling cgroups under
//   /sys/fs/cgroup with the memory controller enabled there, then rmdir(2) of all of them, on a
//   native machine with 4 vCPUs. The Time column is the whole iteration (S9 reads it against
//   1 s). A removed memcg lingers offline until its last reference goes, as a zombie memcg
//   does; those are freed by the machine's RCU and workqueue, outside the timed loop's work.
// BM_memcg_bytes_per_cgroup: the heap bytes one cgroup directory costs with the memory
//   controller enabled for it (its memcg, cgroup core, every file's kernfs node), on machines
//   of 1, 2, 4 and 8 vCPUs (1,000 cgroups each, bytes in use read from the allocator before and
//   after). A least-squares line over the four machines gives the counters cgroup_bytes_fixed
//   (the intercept) and cgroup_bytes_per_vcpu (the slope: the memcg's per-CPU statistics and
//   the css's rstat). memory_files_bytes is what enabling memory adds to a directory here: the
//   memory.* files' kernfs nodes (the emulator allocates a cgroup's memcg whether or not memory
//   is enabled for it, so the memcg itself is in both figures and cannot be told apart).
// Emulation: bytes are what this process's allocator reports in use (jemalloc's
//   stats.allocated when the benchmark is linked with jemalloc, its thread caches off while
//   measuring; glibc's mallinfo2() otherwise); allocator rounding is included, as it is in
//   the kernel's slab sizes.
#include <benchmark/benchmark.h>

#include <malloc.h>

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
  for (auto _ : state) {
    m->exec([&] {
      for (const std::string &name : names) ok &= cgroupfs_mkdir(name) == 0;
      for (const std::string &name : names) ok &= cgroupfs_rmdir(name) == 0;
    }, 0);
  }
  if (!ok) return state.SkipWithError("a mkdir or rmdir failed");
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_cgroupfs_mkdir_rmdir)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

// Heap bytes per cgroup directory created on a fresh machine of nr_cpus vCPUs, with or without
// the memory controller enabled for the new cgroups.
double bytes_per_cgroup(unsigned int nr_cpus, bool memory, int n, bool *ok) {
  auto m = boot(nr_cpus);
  if (!m) return *ok = false, 0;
  double per = 0;
  m->exec([&] {
    tcache_off();
    if (memory) *ok &= cgroupfs_write_file("cgroup.subtree_control", "+memory") > 0;
    // Each directory as deep as the others: all are siblings, so the parent is the same.
    size_t before = heap_bytes_in_use();
    for (int i = 0; i < n; i++) *ok &= cgroupfs_mkdir("m" + std::to_string(i)) == 0;
    size_t after = heap_bytes_in_use();
    per = (static_cast<double>(after) - static_cast<double>(before)) / n;
    for (int i = 0; i < n; i++) *ok &= cgroupfs_rmdir("m" + std::to_string(i)) == 0;
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
  std::vector<double> cpus, with, without;
  bool ok = true;
  for (auto _ : state) {
    cpus.clear(), with.clear(), without.clear();
    for (unsigned int c : {1u, 2u, 4u, 8u}) {
      cpus.push_back(c);
      with.push_back(bytes_per_cgroup(c, true, n, &ok));
      without.push_back(bytes_per_cgroup(c, false, n, &ok));
    }
  }
  if (!ok) return state.SkipWithError("a mkdir, rmdir or boot failed");
  double a, b, a0, b0;
  fit(cpus, with, &a, &b);
  fit(cpus, without, &a0, &b0);
  state.counters["cgroup_bytes_fixed"] = a;
  state.counters["cgroup_bytes_per_vcpu"] = b;
  state.counters["memory_files_bytes"] = a - a0;
}
BENCHMARK(BM_memcg_bytes_per_cgroup)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
