// SPDX-License-Identifier: GPL-2.0-only
// test/support/swap_anon_run.h: target S13's workload, shared by bench/swap_bench.cc and the
// swap test that prints its wall time (test/mm/swap_test.cc): on a simulated machine with a
// 1 GiB swap device, one process touches 100 MiB of private anon memory a page at a time in a
// memcg whose memory.max is 30 MiB (so at least 70 MiB go through the LRU to swap), then unmaps
// it and exits.
#pragma once

#include <cstdint>
#include <memory>

#include "kernel/cgroup.h"
#include "mm/memcontrol.h"
#include "mm/memcontrol_stat.h"
#include "mm/page_counter.h"
#include "mm/process.h"
#include "shim/machine.h"

namespace umemcg::test {

struct SwapAnonResult {
  int boot = -1;             // mem_cgroup_boot()'s return
  int status = -1;           // the process's exit status (0: it completed)
  std::uint64_t pswpout = 0;  // pages written to swap
  std::uint64_t pswpin = 0;   // pages read back
  std::uint64_t oom_kills = 0;
};

inline constexpr unsigned long kSwapAnonMiB = 1UL << 20;

inline SwapAnonResult run_swap_anon(bool v1, bool pcstock, std::uint64_t seed = 1) {
  constexpr unsigned long kMiB = kSwapAnonMiB;
  SwapAnonResult res;
  emu::MachineConfig cfg;
  cfg.mode = emu::Mode::simulated;
  cfg.nr_cpus = 2;
  cfg.seed = seed;
  auto m = std::make_unique<emu::Machine>(cfg);
  m->exec([&] {
    memcg_boot_params p;
    p.v1 = v1;
    p.stock = pcstock ? memcg_stock_design::page_counter_stock : memcg_stock_design::memcg_stock;
    p.swap_pages = 1024 * kMiB / PAGE_SIZE;
    res.boot = mem_cgroup_boot(p);
    if (res.boot) return;
    int err = 0;
    cgroup *c = cgroup_mkdir(root_mem_cgroup->css.cgroup, "s13", &err);
    if (!c) {
      res.boot = err;
      return;
    }
    mem_cgroup *memcg = mem_cgroup_from_cgroup(c);
    page_counter_set_max(&memcg->memory, 30 * kMiB / PAGE_SIZE);
    emu::ProcessOptions o;
    o.memcg = memcg;
    o.comm = "anon";
    emu::Process *proc =
        emu::process_start(o, [] { return emu::workload_anon(100 * kSwapAnonMiB, false); });
    res.status = emu::process_wait(proc);
    res.pswpout = emu::memcg_events_local_sum(memcg, PSWPOUT);
    res.pswpin = emu::memcg_events_local_sum(memcg, PSWPIN);
    res.oom_kills = static_cast<std::uint64_t>(memory_events_read(memcg, MEMCG_OOM_KILL));
    cgroup_rmdir(c);
  });
  m.reset();
  return res;
}

}  // namespace umemcg::test
