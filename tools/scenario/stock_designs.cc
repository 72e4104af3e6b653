// SPDX-License-Identifier: GPL-2.0-only
// tools/scenario/stock_designs.cc: scenario "stock-designs" (seed 003, "mm/page_counter: move
// stock from mem_cgroup to page_counter" v8): the series' benchmark and what no kernel run gives.
//
// The workload (both parts): 4 worker processes on 4 vCPUs in one cgroup whose memory limit is
// set through its control file (v2 memory.max; v1 memory.limit_in_bytes and
// memory.memsw.limit_in_bytes): twice the working set for the timing, the working set plus an
// eighth (at least two batches) for the overcharge run; each worker maps a private anonymous
// region, then repeats: fault every page in (one write each), MADV_DONTNEED the whole region.
//  - Table 1, native mode: the host CPU time (CLOCK_THREAD_CPUTIME_ID around each worker's
//    loop) per page faulted and zapped, for cgroup v1 and v2, base (the 6.19 memcg stock) and
//    patched (the page_counter stock), median of 5 repetitions run interleaved; and the host
//    kernel's own anon fault + MADV_DONTNEED per page, measured the same way in the same run
//    (target S12).
//  - Table 2, simulated mode with the seed: at every fault, the pages charged to the cgroup's
//    counters and held in per-CPU stocks (charged, backing no page: the overcharge), summed
//    over CPUs, against its bound nr_cpus x MEMCG_CHARGE_BATCH; on v1 the drift between the
//    memory and memsw counters (separate stocks in the patched design) and whether
//    usage_in_bytes reported the smaller of the two, as the series promises; on v1 also with
//    32 cgroups of one worker each (8 per vCPU, more than the 7 stock slots: evictions).
//    Then the cgroup becomes a parent (a child is created under it): the pages still stocked
//    for it before and after (the series drains a v2 parent's stock; "restrict memory stock to
//    leaf cgroups on v2").
//
// Mirrors: the seed's benchmark (anonymous faults + MADV_DONTNEED, CPU time per page, 4
//   workers, 5 runs); mm/memcontrol.c (memcg_stock_pcp), the series' page_counter stock.
// Emulation: the stocks are read between steps of the simulated run (one task runs at a time),
//   the way the charge-path invariant checker reads them.
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernel/cgroup.h"
#include "kernel/cgroupfs.h"
#include "mm/memcontrol.h"
#include "mm/memcontrol_internal.h"
#include "mm/page_counter_stock.h"
#include "mm/process.h"
#include "shim/machine.h"
#include "shim/smp.h"
#include "tools/scenario/report.h"
#include "tools/scenario/scenario.h"
#include "tools/scenario/trace.h"

namespace umemcg::emu {
// mm/memcontrol_pcstock.cc: the memory (false) and memsw (true) stock banks of the page_counter
// design.
page_counter_stock *memcg_pcstock_bank(bool memsw);
}  // namespace umemcg::emu

namespace umemcg::scenario {

namespace {

using emu::Process;
using emu::ProcessBody;
using emu::ProcessOptions;
using emu::process_pid;
using emu::process_start;
using emu::process_wait;
using emu::sys_madvise_dontneed;
using emu::sys_mmap_anon;
using emu::sys_munmap;
using emu::user_write;

constexpr unsigned kWorkers = 4, kCpus = 4;
// The v1 eviction run: one worker per cgroup, 8 cgroups per vCPU (one more than a CPU's 7 stock
// slots), each faulting a region of kManyPages.
constexpr unsigned kManyCgroups = 32;
constexpr unsigned long kManyPages = 40;
constexpr int kReps = 5;

struct Config {
  bool v1;
  bool patched;
  const char *variant;  // metric variant
};
constexpr Config kConfigs[] = {
    {true, false, "v1-base"},
    {true, true, "v1-patched"},
    {false, false, "v2-base"},
    {false, true, "v2-patched"},
};

void must(int ret, const std::string &what) {
  if (ret < 0) throw std::runtime_error(what + ": error " + std::to_string(ret));
}

// A cgroup @name under the root with its limit, as a workload manager sets it up. Task context.
mem_cgroup *setup_cgroup(bool v1, const std::string &name, unsigned long limit_pages) {
  if (!v1)
    must(static_cast<int>(cgroupfs_write_file("cgroup.subtree_control", "+memory")),
         "cgroup.subtree_control");
  int err = 0;
  cgroup *cg = cgroup_mkdir(root_mem_cgroup->css.cgroup, name, &err);
  if (!cg) must(err ? err : -ENOMEM, "mkdir " + name);
  const std::string bytes = std::to_string(limit_pages * PAGE_SIZE);
  if (v1) {
    must(static_cast<int>(cgroupfs_write_file(name + "/memory.limit_in_bytes", bytes)),
         "memory.limit_in_bytes");
    must(static_cast<int>(cgroupfs_write_file(name + "/memory.memsw.limit_in_bytes", bytes)),
         "memory.memsw.limit_in_bytes");
  } else {
    must(static_cast<int>(cgroupfs_write_file(name + "/memory.max", bytes)), "memory.max");
  }
  return mem_cgroup_from_cgroup(cg);
}

memcg_boot_params boot_params(const Config &c) {
  memcg_boot_params p;
  p.v1 = c.v1;
  p.stock = c.patched ? memcg_stock_design::page_counter_stock : memcg_stock_design::memcg_stock;
  return p;
}

// A worker process placed in cgroup @cg through its cgroup.procs, pinned to @cpu.
Process *start_worker(const std::string &cg, int cpu, const std::string &comm, ProcessBody body) {
  ProcessOptions o;
  o.comm = comm;
  o.cpu = cpu;
  o.place = [cg](int pid) {
    ssize_t n = cgroupfs_write_file(cg + "/cgroup.procs", std::to_string(pid));
    return n < 0 ? static_cast<int>(n) : 0;
  };
  int err = 0;
  Process *p = process_start(o, std::move(body), &err);
  if (!p) throw std::runtime_error("worker placement failed: error " + std::to_string(err));
  return p;
}

// --- Table 1: native host CPU time ---------------------------------------------------------

// One repetition of one configuration: CPU ns per page (fault + zap), over the 4 workers.
double native_rep(const Config &c, unsigned long pages, int iters) {
  emu::MachineConfig mc;
  mc.nr_cpus = kCpus;
  mc.mode = emu::Mode::native;
  emu::Machine m(mc);
  std::atomic<std::uint64_t> cpu_ns{0};
  std::atomic<int> failed{0};
  // The run, in a task of the machine: an error thrown there is reported after it.
  auto body = [&] {
    if (mem_cgroup_boot(boot_params(c)) < 0) {
      failed = 1;
      return;
    }
    setup_cgroup(c.v1, "bench", 2 * kWorkers * pages);
    std::vector<Process *> ws;
    for (unsigned w = 0; w < kWorkers; w++)
      ws.push_back(start_worker("bench", static_cast<int>(w), "worker" + std::to_string(w),
                                [&, pages, iters] {
        unsigned long addr;
        if (!sys_mmap_anon(pages, 0, &addr)) return 1;
        // One untimed round: the first touches of the region and the stocks.
        for (unsigned long i = 0; i < pages; i++) user_write(addr + i);
        sys_madvise_dontneed(addr, pages);
        const std::uint64_t t0 = thread_cpu_ns();
        for (int it = 0; it < iters; it++) {
          for (unsigned long i = 0; i < pages; i++)
            if (!user_write(addr + i)) return 1;
          if (!sys_madvise_dontneed(addr, pages)) return 1;
        }
        cpu_ns += thread_cpu_ns() - t0;
        sys_munmap(addr, pages);
        return 0;
      }));
    for (Process *p : ws)
      if (process_wait(p) != 0) failed = 1;
  };
  emu::RunResult rr = exec_rethrow(m, body, 0, "bench", "stock-designs: ");
  if (rr.deadlock || failed) throw std::runtime_error("stock-designs: native run failed");
  return static_cast<double>(cpu_ns.load()) /
         static_cast<double>(static_cast<unsigned long>(iters) * pages * kWorkers);
}

// The host kernel's anon fault + MADV_DONTNEED per page: the same loop on real memory, in
// kWorkers threads.
double host_kernel_rep(unsigned long pages, int iters) {
  const size_t len = pages * 4096;
  std::atomic<std::uint64_t> cpu_ns{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> ts;
  for (unsigned w = 0; w < kWorkers; w++)
    ts.emplace_back([&] {
      void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) {
        failed = true;
        return;
      }
      auto *b = static_cast<volatile char *>(p);
      for (size_t i = 0; i < len; i += 4096) b[i] = 1;
      madvise(p, len, MADV_DONTNEED);
      const std::uint64_t t0 = thread_cpu_ns();
      for (int it = 0; it < iters; it++) {
        for (size_t i = 0; i < len; i += 4096) b[i] = 1;
        madvise(p, len, MADV_DONTNEED);
      }
      cpu_ns += thread_cpu_ns() - t0;
      munmap(p, len);
    });
  for (auto &t : ts) t.join();
  if (failed) throw std::runtime_error("stock-designs: host mmap failed");
  return static_cast<double>(cpu_ns.load()) /
         static_cast<double>(static_cast<unsigned long>(iters) * pages * kWorkers);
}

// --- Table 2: simulated overcharge -----------------------------------------------------------

struct StockView {
  long memory = 0;  // pages stocked for the memcg's memory counter, all CPUs
  long memsw = 0;   // for its memsw counter (v1; the same slots in the memcg design)
};

// The stocks between steps of the simulated run (nothing runs meanwhile).
StockView stocked(mem_cgroup *memcg) NO_THREAD_SAFETY_ANALYSIS {
  StockView v;
  int cpu;
  for_each_possible_cpu(cpu) {
    if (!memcg_pcstock()) {
      memcg_stock_pcp *st = per_cpu_ptr(&memcg_stock, cpu);
      for (int i = 0; i < NR_MEMCG_STOCK; i++)
        if (READ_ONCE(st->cached[i]) == memcg) v.memory += READ_ONCE(st->nr_pages[i]);
      if (do_memsw_account()) v.memsw = v.memory;
      continue;
    }
    for (int bank = 0; bank < (do_memsw_account() ? 2 : 1); bank++) {
      emu::pc_stock_slot slots[NR_PC_STOCK];
      emu::page_counter_stock_snapshot(emu::memcg_pcstock_bank(bank == 1), cpu, slots);
      for (const emu::pc_stock_slot &s : slots)
        if (s.counter == (bank ? &memcg->memsw : &memcg->memory))
          (bank ? v.memsw : v.memory) += static_cast<long>(s.nr_pages);
    }
  }
  return v;
}

// What the samples of one simulated run saw: the largest stock held for one cgroup and, on v1,
// the memory/memsw drift and what usage_in_bytes reported.
struct Overcharge {
  long max_memory = 0, max_memsw = 0;
  long max_drift = 0;            // max |memory usage - memsw usage| (v1)
  long not_min_samples = 0;      // samples where usage_in_bytes was not min(memory, memsw) (v1)
  long above_memsw_samples = 0;  // samples where usage_in_bytes > memsw usage (v1)
  long samples = 0;

  // One sample of @cgs (between steps of the run); returns the pages stocked for all of them.
  long sample(const std::vector<mem_cgroup *> &cgs, bool v1) {
    samples++;
    long total = 0;
    for (mem_cgroup *memcg : cgs) {
      const StockView s = stocked(memcg);
      total += s.memory;
      max_memory = std::max(max_memory, s.memory);
      max_memsw = std::max(max_memsw, s.memsw);
      if (!v1) continue;
      const long mem = static_cast<long>(page_counter_read(&memcg->memory));
      const long memsw = static_cast<long>(page_counter_read(&memcg->memsw));
      max_drift = std::max(max_drift, std::labs(mem - memsw));
      const long reported = static_cast<long>(mem_cgroup_usage(memcg, false));
      if (reported != std::min(mem, memsw)) not_min_samples++;
      if (reported > memsw) above_memsw_samples++;
    }
    return total;
  }
};

// The bench cgroup becomes a parent (a workload manager nests a child under it): the series
// drains a v2 parent's stock at once and keeps parents from stocking; the 6.19 stock keeps what
// it holds. The pages stocked for @bench before and after, once the memcg workqueue is idle.
void become_parent(bool v1, mem_cgroup *bench, long *before, long *after) {
  *before = stocked(bench).memory;
  if (!v1)
    must(static_cast<int>(cgroupfs_write_file("bench/cgroup.subtree_control", "+memory")),
         "bench/cgroup.subtree_control");
  must(cgroupfs_mkdir("bench/child"), "mkdir bench/child");
  flush_workqueue(memcg_wq);
  *after = stocked(bench).memory;
}

// One simulated run: @nr_workers workers (worker w on vCPU w % 4) in @nr_cgroups cgroups
// (worker w in cgroup w % nr_cgroups), sampled at every fault.
Metrics::mapped_type simulated_run(const Config &c, const RunOptions &ro, unsigned long pages,
                                   int iters, unsigned nr_cgroups, unsigned nr_workers) {
  emu::MachineConfig mc;
  mc.nr_cpus = kCpus;
  mc.mode = emu::Mode::simulated;
  mc.seed = ro.seed;
  emu::Machine m(mc);
  Overcharge oc;
  std::vector<mem_cgroup *> cgs;  // sampled while non-empty
  TraceWriter *tw = ro.trace;
  if (tw)
    tw->begin_process(std::string(c.v1 ? "cgroup v1, " : "cgroup v2, ") +
                      (c.patched ? "patched (page_counter stock)" : "base (memcg stock)") +
                      (nr_cgroups > 1 ? ", " + std::to_string(nr_cgroups) + " cgroups" : ""));
  long last_traced = -1;
  auto sample = [&] {
    if (cgs.empty()) return;
    const long total = oc.sample(cgs, c.v1);
    if (tw && total != last_traced) {
      tw->counter("stocked pages (memory)", m.now_ns(), static_cast<double>(total));
      last_traced = total;
    }
  };
  bool failed = false;
  long held_before_child = 0, held_after_child = 0;
  // The run, in a task of the machine: an error thrown there is reported after it.
  auto body = [&] {
    if (mem_cgroup_boot(boot_params(c)) < 0) {
      failed = true;
      return;
    }
    // A limit each cgroup's workload runs close to: its working set plus an eighth (at
    // least two batches, so that batches fit), below the working set plus the stocks'
    // bound (nr_cpus x batch), so stocked pages can meet it.
    std::vector<mem_cgroup *> all;
    std::vector<std::string> names;
    for (unsigned k = 0; k < nr_cgroups; k++) {
      names.push_back(nr_cgroups == 1 ? std::string("bench") : "bench" + std::to_string(k));
      const unsigned long ws_pages = pages * ((nr_workers - k + nr_cgroups - 1) / nr_cgroups);
      const unsigned long room = std::max<unsigned long>(ws_pages / 8, 2 * MEMCG_CHARGE_BATCH);
      all.push_back(setup_cgroup(c.v1, names.back(), ws_pages + room));
    }
    cgs = all;
    std::vector<Process *> ws;
    for (unsigned w = 0; w < nr_workers; w++) {
      Process *p = start_worker(
          names[w % nr_cgroups], static_cast<int>(w % kCpus), "worker" + std::to_string(w),
          [&, pages, iters] {
            unsigned long addr;
            if (!sys_mmap_anon(pages, 0, &addr)) return 1;
            const int tid = current->pid;
            for (int it = 0; it < iters; it++) {
              const std::uint64_t t0 = m.now_ns();
              for (unsigned long i = 0; i < pages; i++) {
                if (!user_write(addr + i)) return 1;
                sample();
              }
              const std::uint64_t t1 = m.now_ns();
              if (!sys_madvise_dontneed(addr, pages)) return 1;
              sample();
              if (tw) {
                tw->complete(tid, "fault " + std::to_string(pages) + " pages", "workload",
                             t0, t1 - t0);
                tw->complete(tid, "MADV_DONTNEED", "workload", t1, m.now_ns() - t1);
              }
            }
            sys_munmap(addr, pages);
            return 0;
          });
      if (tw) tw->thread_name(process_pid(p), "worker" + std::to_string(w));
      ws.push_back(p);
    }
    for (Process *p : ws)
      if (process_wait(p) != 0) failed = true;
    cgs.clear();
    if (nr_cgroups != 1) return;
    become_parent(c.v1, all.front(), &held_before_child, &held_after_child);
  };
  emu::RunResult rr = exec_rethrow(m, body, 0, "bench", "stock-designs: ");
  if (rr.deadlock || failed)
    throw std::runtime_error("stock-designs: simulated run failed: " + rr.report);
  const double bound = static_cast<double>(kCpus * MEMCG_CHARGE_BATCH);
  std::map<std::string, double> out = {
      {"max_overcharge_pages", static_cast<double>(oc.max_memory)},
      {"overcharge_bound_pages", bound},
      {"faults_sampled", static_cast<double>(oc.samples)},
  };
  if (nr_cgroups == 1) {
    out["stock_before_child_pages"] = static_cast<double>(held_before_child);
    out["stock_after_child_pages"] = static_cast<double>(held_after_child);
  }
  if (c.v1) {
    out["max_memsw_overcharge_pages"] = static_cast<double>(oc.max_memsw);
    out["max_usage_drift_pages"] = static_cast<double>(oc.max_drift);
    out["usage_not_min_samples"] = static_cast<double>(oc.not_min_samples);
    out["usage_above_memsw_samples"] = static_cast<double>(oc.above_memsw_samples);
  }
  return out;
}

Metrics run(const RunOptions &ro) {
  Metrics out;
  // Not a multiple of the batch: the stocks hold pages when the workers are done.
  const unsigned long sim_pages = ro.quick ? 60 : 250;
  const int sim_iters = ro.quick ? 3 : 8;
  for (const Config &c : kConfigs) {
    if (ro.progress) ro.progress(std::string("simulated ") + c.variant);
    for (auto &[k, v] : simulated_run(c, ro, sim_pages, sim_iters, 1, kWorkers))
      out[c.variant][k] = v;
  }
  // v1 with more cgroups per CPU than stock slots: slots are evicted, and the page_counter
  // design's memory and memsw banks evict independently.
  for (const Config &c : kConfigs) {
    if (!c.v1) continue;
    if (ro.progress) ro.progress(std::string("simulated ") + c.variant + ", many cgroups");
    for (auto &[k, v] :
         simulated_run(c, ro, kManyPages, ro.quick ? 2 : 4, kManyCgroups, kManyCgroups))
      out[std::string(c.variant) + "-" + std::to_string(kManyCgroups) + "cg"][k] = v;
  }
  // Native: repetitions interleaved over the configurations, so host drift hits all alike.
  const unsigned long pages = ro.quick ? 128 : 256;
  const int iters = ro.quick ? 4 : 32, reps = ro.quick ? 3 : kReps;
  // The host kernel's fault costs tens of times the emulator's: fewer pages give the same
  // per-page figure in a fraction of the time.
  const unsigned long host_pages = ro.quick ? 64 : 128;
  const int host_iters = ro.quick ? 2 : 4;
  std::map<std::string, std::vector<double>> per_page;
  for (int r = 0; r < reps; r++) {
    if (ro.progress) ro.progress("native repetition " + std::to_string(r + 1) + "/" +
                                 std::to_string(reps));
    for (const Config &c : kConfigs) per_page[c.variant].push_back(native_rep(c, pages, iters));
    per_page["host-kernel"].push_back(host_kernel_rep(host_pages, host_iters));
  }
  // The host kernel's numbers under their own names: plots compare the emulated designs.
  for (auto &[variant, v] : per_page) {
    const std::string prefix = variant == "host-kernel" ? "kernel_" : "";
    out[variant][prefix + "per_page_host_ns"] = median_of(v);
    out[variant][prefix + "per_page_min_host_ns"] = *std::min_element(v.begin(), v.end());
    out[variant][prefix + "per_page_max_host_ns"] = *std::max_element(v.begin(), v.end());
  }
  return out;
}

// The median of a metric, 0 when absent.
double med(const Summary &s, const std::string &variant, const std::string &metric) {
  auto v = s.find(variant);
  if (v == s.end()) return 0;
  auto m = v->second.find(metric);
  return m == v->second.end() ? 0 : m->second.median;
}

std::string ns_cell(const Summary &s, const std::string &variant,
                    const std::string &prefix = "") {
  return fmt(med(s, variant, prefix + "per_page_host_ns")) + " [" +
         fmt(med(s, variant, prefix + "per_page_min_host_ns")) + ".." +
         fmt(med(s, variant, prefix + "per_page_max_host_ns")) + "]";
}

// "Within a few %": the seed measured +1.0% and +1.2%; 5% is the tolerance checked, on the
// fastest repetitions (the medians are printed too).
constexpr double kDeltaTolerance = 0.05;

Report report(const Summary &s) {
  Report r;
  Table t1;
  t1.title = "Anon fault + MADV_DONTNEED, host CPU time per page, 4 workers (native mode)";
  t1.header = {"", "base ns/page", "patched ns/page", "delta", "seed base", "seed patched",
               "seed delta"};
  const struct {
    const char *row, *base, *patched, *seed_base, *seed_patched, *seed_delta;
  } rows[] = {{"cgroup v1", "v1-base", "v1-patched", "890.6", "901.8", "+1.2%"},
              {"cgroup v2", "v2-base", "v2-patched", "893.5", "902.2", "+1.0%"}};
  for (const auto &row : rows) {
    const double b = med(s, row.base, "per_page_host_ns"),
                 p = med(s, row.patched, "per_page_host_ns");
    const double bmin = med(s, row.base, "per_page_min_host_ns"),
                 pmin = med(s, row.patched, "per_page_min_host_ns");
    const double delta = b > 0 ? p / b - 1 : 0, delta_min = bmin > 0 ? pmin / bmin - 1 : 0;
    t1.rows.push_back({row.row, ns_cell(s, row.base), ns_cell(s, row.patched),
                       fmt_pct(delta) + " (fastest: " + fmt_pct(delta_min) + ")", row.seed_base,
                       row.seed_patched, row.seed_delta});
    r.verdicts.push_back({std::string(row.row) + ": patched within " +
                              fmt(kDeltaTolerance * 100, 0) +
                              "% of base, fastest repetitions compared (" + fmt_pct(delta_min) +
                              "; medians " + fmt_pct(delta) + "; seed " + row.seed_delta + ")",
                          std::fabs(delta_min) <= kDeltaTolerance, /*host_timed=*/true});
  }
  const double host = med(s, "host-kernel", "kernel_per_page_host_ns");
  const double ours = std::max(med(s, "v2-base", "per_page_host_ns"),
                               med(s, "v1-base", "per_page_host_ns"));
  t1.notes.push_back("Cells: median of the repetitions [min..max], host CPU time "
                     "(CLOCK_THREAD_CPUTIME_ID) of the emulated fault + unmap; these "
                     "*_host_ns metrics are the run's only non-deterministic numbers.");
  t1.notes.push_back("The verdicts compare each design's fastest repetition: on a host with "
                     "fewer cores than the 4 workers, a preempted lock holder makes some "
                     "repetitions slower (see [min..max]), which the fastest one escapes.");
  t1.notes.push_back("The seed ran a 16-CPU VM; here 4 emulated vCPUs on this host. The seed's "
                     "times include the whole kernel fault path (page allocation, zeroing), "
                     "the emulator's only the modelled memcg, LRU and RSS work.");
  t1.notes.push_back("Host kernel anon fault + MADV_DONTNEED, same loop in 4 threads: " +
                     ns_cell(s, "host-kernel", "kernel_") +
                     " ns/page; emulated (slower of the base "
                     "rows) / host = " + fmt(host > 0 ? ours / host : 0, 2) +
                     "x (target S12: <= 0.2x: " +
                     (host > 0 && ours <= 0.2 * host ? "met" : "NOT met") + ").");
  r.tables.push_back(std::move(t1));

  Table t2;
  t2.title = "Worst-case overcharge: pages charged and held in per-CPU stocks, sampled at every "
             "fault (simulated mode)";
  t2.header = {"", "design", "max overcharge (memory)", "max overcharge (memsw)",
               "bound (nr_cpus x batch)", "max memory/memsw drift", "usage_in_bytes = min",
               "stock when it becomes a parent -> after", "faults sampled"};
  struct Row {
    Config c;
    std::string variant, label;
    bool many;
  };
  std::vector<Row> t2rows;
  for (const Config &c : kConfigs)
    t2rows.push_back({c, c.variant, c.v1 ? "cgroup v1" : "cgroup v2", false});
  for (const Config &c : kConfigs)
    if (c.v1)
      t2rows.push_back({c, std::string(c.variant) + "-" + std::to_string(kManyCgroups) + "cg",
                        "cgroup v1, " + std::to_string(kManyCgroups) + " cgroups", true});
  for (const Row &row : t2rows) {
    const Config &c = row.c;
    const std::string &v = row.variant;
    const double mem = med(s, v, "max_overcharge_pages");
    const double bound = med(s, v, "overcharge_bound_pages");
    const double memsw = med(s, v, "max_memsw_overcharge_pages");
    const double not_min = med(s, v, "usage_not_min_samples");
    const double above = med(s, v, "usage_above_memsw_samples");
    t2.rows.push_back({row.label, c.patched ? "patched (page_counter stock)" : "base (memcg stock)",
                       fmt(mem, 0), c.v1 ? fmt(memsw, 0) : "-", fmt(bound, 0),
                       c.v1 ? fmt(med(s, v, "max_usage_drift_pages"), 0) : "-",
                       c.v1 ? (not_min == 0 ? "always" : fmt(not_min, 0) + " samples not")
                            : "-",
                       row.many ? "-"
                                : fmt(med(s, v, "stock_before_child_pages"), 0) + " -> " +
                                      fmt(med(s, v, "stock_after_child_pages"), 0),
                       fmt(med(s, v, "faults_sampled"), 0)});
    const std::string name = row.label.substr(7) + " " + (c.patched ? "patched" : "base");
    r.verdicts.push_back({name + ": max overcharge " + fmt(std::max(mem, memsw), 0) +
                              " pages <= bound " + fmt(bound, 0),
                          mem > 0 && mem <= bound && memsw <= bound});
    if (c.v1)
      r.verdicts.push_back({name + ": usage_in_bytes never above memsw usage (the seed's "
                                   "preserved property)",
                            above == 0});
    if (!c.v1 && c.patched) {
      const double before = med(s, v, "stock_before_child_pages"),
                   after = med(s, v, "stock_after_child_pages");
      r.verdicts.push_back({name + ": a cgroup that becomes a parent loses its stock (" +
                                fmt(before, 0) + " -> " + fmt(after, 0) + " pages)",
                            before > 0 && after == 0});
    }
  }
  t2.notes.push_back("Pages, median over the seeds. Overcharge: pages charged to one cgroup's "
                     "counters that back no page in use (stock held, summed over CPUs; with "
                     "several cgroups the largest of them).");
  t2.notes.push_back("Becoming a parent: the workers done, a child cgroup is created under "
                     "theirs and the memcg workqueue flushed; the pages the per-CPU stocks "
                     "hold for the parent before and after (the series drains a v2 parent's "
                     "stock; the 6.19 stock and v1 keep it).");
  t2.notes.push_back("v1: the base design's one stock charges memory and memsw together, so "
                     "they never drift; the patched design's separate stocks hit, evict and "
                     "drain independently and may drift apart, which the run with " +
                     std::to_string(kManyCgroups) + " cgroups (one worker each, " +
                     std::to_string(kManyCgroups / kCpus) +
                     " per vCPU: more than a CPU's 7 stock slots) provokes; usage_in_bytes then "
                     "reports the smaller (seed 003).");
  r.tables.push_back(std::move(t2));
  return r;
}

}  // namespace

Scenario stock_designs_scenario() {
  Scenario s;
  s.name = "stock-designs";
  s.seed = "003";
  s.summary = "anon fault + MADV_DONTNEED per page, memcg stock vs page_counter stock, v1 and "
              "v2, and each design's worst-case overcharge";
  s.default_seeds = 1;
  s.run = run;
  s.report = report;
  s.plot_metrics = {"per_page_host_ns", "max_overcharge_pages", "max_usage_drift_pages"};
  return s;
}

}  // namespace umemcg::scenario
