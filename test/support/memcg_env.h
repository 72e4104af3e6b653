// SPDX-License-Identifier: GPL-2.0-only
// test/support/memcg_env.h: a booted machine with the memory controller, cgroup helpers, a
// charge ledger, and the invariant checks every memcg test ends with.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#undef WARN
#include "kernel/cgroup.h"
#include "mm/memcontrol.h"
#include "mm/memcontrol_internal.h"
#include "mm/vmscan.h"
#include "shim/machine.h"
#include "test/support/machine_fixture.h"
#include "test/support/memcg_invariants.h"

namespace umemcg::test {

inline memcg_boot_params v2_params(bool pcstock = false) {
  memcg_boot_params p;
  p.stock = pcstock ? memcg_stock_design::page_counter_stock : memcg_stock_design::memcg_stock;
  return p;
}
inline memcg_boot_params v1_params(bool pcstock = false) {
  memcg_boot_params p = v2_params(pcstock);
  p.v1 = true;
  return p;
}
inline const char *design_name(const memcg_boot_params &p) {
  return p.stock == memcg_stock_design::page_counter_stock ? "pcstock" : "memcg-stock";
}
// The design and the cgroup version, for a test's report: "pcstock v1".
inline std::string params_name(const memcg_boot_params &p) {
  return std::string(design_name(p)) + (p.v1 ? " v1" : " v2");
}

class MemcgEnv {
 public:
  explicit MemcgEnv(const memcg_boot_params &p, emu::Mode mode = emu::Mode::simulated,
                    unsigned cpus = 4, std::uint64_t seed = 1)
      : m_(std::make_unique<emu::Machine>(config(mode, cpus, seed))) {
    int ret = -1;
    m_->exec([&] { ret = mem_cgroup_boot(p); }, 0, "boot");
    REQUIRE(ret == 0);
  }
  ~MemcgEnv() {
    if (std::uncaught_exceptions()) return;
    if (!finished_) finish();
  }
  MemcgEnv(const MemcgEnv &) = delete;
  MemcgEnv &operator=(const MemcgEnv &) = delete;

  emu::Machine &machine() { return *m_; }
  ChargeLedger ledger;

  // Runs fn as a kernel task on vCPU cpu and waits, then waits for kswapd to leave its reclaim
  // (the machine is quiescent afterwards: no folio is isolated by it).
  template <typename F>
  void run(F &&fn, int cpu = 0) {
    emu::RunResult r = m_->exec(
        [&fn] {
          fn();
          emu::kswapd_wait_idle();
        },
        cpu);
    INFO(r.report);
    REQUIRE_FALSE(r.deadlock);
  }

  mem_cgroup *mkdir(mem_cgroup *parent, const std::string &name) {
    mem_cgroup *res = nullptr;
    run([&] {
      int err = 0;
      cgroup *c = cgroup_mkdir((parent ? parent : root_mem_cgroup)->css.cgroup, name, &err);
      if (c) res = mem_cgroup_from_cgroup(c);
    });
    REQUIRE(res);
    return res;
  }
  int rmdir(mem_cgroup *memcg) {
    int ret = 0;
    run([&] { ret = cgroup_rmdir(memcg->css.cgroup); });
    return ret;
  }

  // try_charge_memcg with bookkeeping. Call from inside run().
  int charge(mem_cgroup *memcg, unsigned int nr_pages, gfp_t gfp = GFP_KERNEL) {
    int ret = try_charge_memcg(memcg, gfp, nr_pages);
    if (!ret) ledger.user_pages[memcg] += nr_pages;
    return ret;
  }
  void uncharge(mem_cgroup *memcg, unsigned int nr_pages) {
    memcg_uncharge(memcg, nr_pages);
    ledger.user_pages[memcg] -= nr_pages;
  }

  // Uncharges every page the ledger holds and drains the stocks (before finish(), for tests
  // whose charges stay in place until the end).
  void release_all() {
    run([&] {
      for (auto &[m, n] : ledger.user_pages)
        if (n) uncharge(m, static_cast<unsigned>(n));
      drain_all_stock(root_mem_cgroup);
      flush_workqueue(memcg_wq);
    });
  }

  // Invariants hold now (quiescent machine). In native mode the tasks may be done while work
  // they queued (a stock drain from drain_all_stock or from try_charge's retry) still runs on
  // a worker thread, and a drain between its uncharge and emptying the slot is not quiescent
  // (a TSan run caught the check there), so the check waits for memcg_wq first.
  void check() {
    if (m_->mode() == emu::Mode::native) run([] { flush_workqueue(memcg_wq); });
    std::string v = check_memcg_invariants(ledger);
    INFO(v);
    CHECK(v.empty());
  }

  // Final checks: invariants, shutdown, everything freed.
  void finish() {
    finished_ = true;
    check();
    m_.reset();
    std::string v = check_memcg_teardown();
    INFO(v);
    CHECK(v.empty());
  }

 private:
  std::unique_ptr<emu::Machine> m_;
  bool finished_ = false;
};

}  // namespace umemcg::test
