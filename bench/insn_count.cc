// SPDX-License-Identifier: GPL-2.0-only
// bench/insn_count.cc: umemcg-insn, the charge paths run a known number of times for instruction
// counting under callgrind (tools/insn_check.py runs it and judges targets S1 and S2, and counts
// the struct_ops dispatch of target S7).
//
// Usage: umemcg-insn PATH N
//   hit, hit_pcstock    N stock hits of one page at depth 3 (as BM_try_charge_memcg_stock_hit/3):
//                       every 63 hits the pages go back with one refill_stock(), outside the
//                       function callgrind counts (try_charge_memcg).
//   miss, miss_pcstock  N stock misses of one page at depth 1 (as
//                       BM_try_charge_memcg_stock_miss/1 and its _pcstock row): each charges a
//                       batch of 64 up the hierarchy and refills the slot; the 63 stocked pages
//                       are then consumed (stock hits) and the 64 uncharged, so the next charge
//                       misses again.
//   dispatch1, dispatch3
//                       N dispatches bpf_memcg_high_policy(leaf, leaf, GFP_KERNEL) with 1 or 3
//                       trivial high_policy programs (test/progs/memcg_trivial.bpf.c) in the
//                       leaf's effective array, one attached per level of a depth-3 chain from
//                       the leaf up (as BM_bpf_memcg_high_policy/1 and /3). Only in a build
//                       with the BPF test objects (UMEMCG_BPF_PROGS_DIR).
// The instructions per operation are the difference of callgrind's inclusive counts of two runs,
// N and 2N, divided by N: set-up, priming and teardown cancel out exactly.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bpfvm/kernel_env.h"
#include "bpfvm/runtime.h"
#include "kernel/cgroup.h"
#include "mm/bpf_memcg_ops.h"
#include "mm/bpf_memcontrol.h"
#include "mm/memcontrol.h"
#include "shim/machine.h"

namespace {

using namespace umemcg;

// A native machine with memcg booted and a chain of `depth` memcgs under the root; returns the
// deepest one (null on failure).
mem_cgroup *boot_chain(emu::Machine &m, bool pcstock, int depth) {
  mem_cgroup *leaf = nullptr;
  m.exec([&] {
    memcg_boot_params p;
    p.stock = pcstock ? memcg_stock_design::page_counter_stock : memcg_stock_design::memcg_stock;
    if (mem_cgroup_boot(p)) return;
    cgroup *cg = root_mem_cgroup->css.cgroup;
    int err = 0;
    for (int i = 0; i < depth && cg; i++) cg = cgroup_mkdir(cg, "d" + std::to_string(i), &err);
    if (cg) leaf = mem_cgroup_from_cgroup(cg);
  }, 0);
  return leaf;
}

void run_hits(mem_cgroup *memcg, long n) {
  try_charge_memcg(memcg, GFP_KERNEL, 1);  // prime: a batch charged, 63 pages stocked
  refill_stock(memcg, 1);                  // all 64 stocked
  unsigned int k = 0;
  for (long i = 0; i < n; i++) {
    if (try_charge_memcg(memcg, GFP_KERNEL, 1)) std::abort();
    if (++k == 63) {
      refill_stock(memcg, 63);
      k = 0;
    }
  }
  refill_stock(memcg, k);
}

void run_misses(mem_cgroup *memcg, long n) {
  for (long i = 0; i < n; i++) {
    if (try_charge_memcg(memcg, GFP_KERNEL, 1)) std::abort();  // a miss: batch + refill
    if (try_charge_memcg(memcg, GFP_KERNEL, 63)) std::abort(); // the slot's 63: a hit
    memcg_uncharge(memcg, 64);
  }
}

#ifdef UMEMCG_BPF_PROGS_DIR
// Attaches `policies` trivial high_policy programs (ALLOW_MULTI), at the leaf and upwards, to
// the depth-3 chain ending at `leaf`, then runs N dispatches. Returns false if a step fails.
bool run_dispatches(emu::Machine &m, mem_cgroup *leaf, int policies, long n) {
  std::vector<std::unique_ptr<emu::BpfLoadedObject>> objs;
  std::vector<std::unique_ptr<BpfMemcgOpsLink>> links;
  bool ok = false;
  m.exec([&] {
    bpf_memcontrol_init();
    mem_cgroup *memcg = leaf;
    for (int i = 0; i < policies; i++, memcg = parent_mem_cgroup(memcg)) {
      auto lo = emu::BpfLoadedObject::open(
          std::string(UMEMCG_BPF_PROGS_DIR) + "/memcg_trivial.bpf.o",
          emu::bpf_kernel_load_options());
      if (!lo.ok()) return;
      auto link = BpfMemcgOpsLink::attach(**lo, "trivial", memcg, CGROUP_BPF_F_ALLOW_MULTI);
      if (!link.ok()) return;
      objs.push_back(std::move(*lo));
      links.push_back(std::move(*link));
    }
    ok = true;
  }, 0);
  if (ok) {
    emu::AttachThread t("insn", 0);
    u32 acc = 0;
    for (long i = 0; i < n; i++) acc |= bpf_memcg_high_policy(leaf, leaf, GFP_KERNEL);
    ok = acc == BPF_MEMCG_HIGH_NO_OPINION;  // the trivial policy has none
  }
  m.exec([&] { links.clear(); }, 0);  // detach (task context) before the objects go
  objs.clear();
  return ok;
}
#endif

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr,
                 "usage: umemcg-insn hit|hit_pcstock|miss|miss_pcstock|dispatch1|dispatch3 N\n");
    return 2;
  }
  std::string path = argv[1];
  long n = std::strtol(argv[2], nullptr, 10);
  const bool dispatch = path == "dispatch1" || path == "dispatch3";
  const bool miss = path == "miss" || path == "miss_pcstock";
  if (n <= 0 || (path != "hit" && path != "hit_pcstock" && !miss && !dispatch)) {
    std::fprintf(stderr, "umemcg-insn: bad arguments\n");
    return 2;
  }
  emu::MachineConfig cfg;
  cfg.mode = emu::Mode::native;
  cfg.nr_cpus = 2;
  auto m = std::make_unique<emu::Machine>(cfg);
  bool pcstock = path == "hit_pcstock" || path == "miss_pcstock";
  mem_cgroup *memcg = boot_chain(*m, pcstock, miss ? 1 : 3);
  if (!memcg) {
    std::fprintf(stderr, "umemcg-insn: boot failed\n");
    return 1;
  }
  if (dispatch) {
#ifdef UMEMCG_BPF_PROGS_DIR
    bool ok = run_dispatches(*m, memcg, path == "dispatch1" ? 1 : 3, n);
    m.reset();
    if (!ok) std::fprintf(stderr, "umemcg-insn: the policies could not be attached or ran\n");
    return ok ? 0 : 1;
#else
    std::fprintf(stderr, "umemcg-insn: built without the BPF test objects: no dispatch path\n");
    return 2;
#endif
  }
  {
    emu::AttachThread t("insn", 0);
    if (miss)
      run_misses(memcg, n);
    else
      run_hits(memcg, n);
  }
  m.reset();
  return 0;
}
