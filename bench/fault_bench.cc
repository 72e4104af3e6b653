// SPDX-License-Identifier: GPL-2.0-only
// bench/fault_bench.cc: target S12, one anon fault plus its unmap, per page, against the host.
//
// BM_host_anon_fault_dontneed: the host kernel's own path. A private anonymous mapping of
//   kFaultPages pages is written a byte per page (each write a page fault: allocate, zero,
//   charge to this process's cgroup, LRU add, RSS) and then emptied with MADV_DONTNEED (unmap,
//   uncharge, free), per iteration.
// BM_emu_anon_fault_dontneed: the same on a native-mode emulated machine (v2, the memcg stock):
//   one emulated process maps kFaultPages pages once, then per round writes each page through
//   user_write() (do_user_addr_fault -> do_anonymous_page: __mem_cgroup_charge, the per-CPU LRU
//   add batch, MM_ANONPAGES) and empties the range with sys_madvise_dontneed(). The rounds are
//   timed inside the process (manual time), so the machine's boot and the process's start are
//   not counted.
// Both report time per page (items = pages); tools/bench_ratios.py prints their ratio as S12
// (target: the emulated page <= 0.2x the host's, both from the same run).
//
// Emulation: an emulated folio has no data, so the emulated fault zeroes nothing; that is the
//   point of the target (the host's fault includes zeroing a page).
#include <sys/mman.h>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>

#include "kernel/cgroup.h"
#include "mm/memcontrol.h"
#include "mm/process.h"
#include "shim/machine.h"

namespace {

using namespace umemcg;

constexpr unsigned long kFaultPages = 512;  // 2 MiB: fits the L2 of the VM's cores
constexpr int kEmuRounds = 64;              // rounds timed per benchmark iteration

void BM_host_anon_fault_dontneed(benchmark::State &state) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t len = kFaultPages * page;
  void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    state.SkipWithError("mmap failed");
    return;
  }
  // No transparent huge page: one fault per 4 KiB page, as the emulated side does.
  madvise(p, len, MADV_NOHUGEPAGE);
  auto *bytes = static_cast<volatile char *>(p);
  for (auto _ : state) {
    for (std::size_t i = 0; i < kFaultPages; i++) bytes[i * page] = 1;
    if (madvise(p, len, MADV_DONTNEED)) {
      state.SkipWithError("madvise(MADV_DONTNEED) failed");
      break;
    }
  }
  munmap(p, len);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kFaultPages);
}
BENCHMARK(BM_host_anon_fault_dontneed);

void BM_emu_anon_fault_dontneed(benchmark::State &state) {
  emu::MachineConfig cfg;
  cfg.mode = emu::Mode::native;
  cfg.nr_cpus = 1;
  auto m = std::make_unique<emu::Machine>(cfg);
  int boot = -1;
  cgroup *c = nullptr;
  m->exec([&] {
    memcg_boot_params p;
    p.stock = memcg_stock_design::memcg_stock;
    boot = mem_cgroup_boot(p);
    if (boot) return;
    int err = 0;
    c = cgroup_mkdir(root_mem_cgroup->css.cgroup, "s12", &err);
  });
  // The machine's shutdown hook frees the controller (mem_cgroup_shutdown) when m goes.
  if (boot || !c) return state.SkipWithError("the machine did not boot");
  bool failed = false;
  for (auto _ : state) {
    double seconds = 0;
    m->exec([&] {
      emu::ProcessOptions o;
      o.memcg = mem_cgroup_from_cgroup(c);
      o.comm = "s12";
      emu::Process *proc = emu::process_start(o, [&] {
        unsigned long addr = 0;
        if (!emu::sys_mmap_anon(kFaultPages, 0, &addr) || !addr) return 1;
        auto t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < kEmuRounds; r++) {
          for (unsigned long i = 0; i < kFaultPages; i++)
            if (!emu::user_write(addr + i)) return 1;
          if (!emu::sys_madvise_dontneed(addr, kFaultPages)) return 1;
        }
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        emu::sys_munmap(addr, kFaultPages);
        return 0;
      });
      if (!proc || emu::process_wait(proc) != 0) failed = true;
    });
    if (failed) {
      state.SkipWithError("the emulated process failed");
      break;
    }
    state.SetIterationTime(seconds);
  }
  m->exec([&] { cgroup_rmdir(c); });
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kFaultPages *
                          kEmuRounds);
}
BENCHMARK(BM_emu_anon_fault_dontneed)->UseManualTime();

}  // namespace
