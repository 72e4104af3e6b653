// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/coverage.cc: the process-wide coverage records of loaded programs (see coverage.h).
#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include "bpfvm/coverage.h"

#include <atomic>
#include <deque>
#include <map>
#include <memory>

#include "absl/synchronization/mutex.h"

namespace umemcg::emu {

namespace {

// One program's record: the recording arrays (BPF_COV_MAX_LEAD bytes of room in front for
// callback trampolines, whose instructions are not the program's) and the static bits.
struct Record {
  explicit Record(size_t n)
      : n(n),
        hit(BPF_COV_MAX_LEAD + n, 0),
        taken(BPF_COV_MAX_LEAD + n, 0),
        fall(BPF_COV_MAX_LEAD + n, 0),
        kind(n, 0) {}
  size_t n;
  std::vector<u8> hit, taken, fall;  // written by runs with relaxed atomic stores
  std::vector<u8> kind;              // BPF_COV_INSN, BPF_COV_COND
};

std::atomic<bool> g_enabled{false};
absl::Mutex g_mu;
// Records are never freed: an exec prepared while coverage was on may run until the process
// ends. The index names the current record of each program.
std::deque<std::unique_ptr<Record>> g_records GUARDED_BY(g_mu);
std::map<std::string, Record *> g_index GUARDED_BY(g_mu);

bool is_cond_jump(const bpf_insn &in) {
  const u8 cls = bpf_class(in.code);
  if (cls != BPF_JMP && cls != BPF_JMP32) return false;
  const u8 op = bpf_op(in.code);
  return op != BPF_JA && op != BPF_CALL && op != BPF_EXIT;
}

u8 load(const u8 &b) { return __atomic_load_n(&b, __ATOMIC_RELAXED); }

}  // namespace

void bpf_coverage_enable(bool on) { g_enabled.store(on, std::memory_order_relaxed); }
bool bpf_coverage_enabled() { return g_enabled.load(std::memory_order_relaxed); }

void bpf_coverage_attach(BpfExecProg &exec, const std::string &name,
                         std::span<const bpf_insn> insns, size_t lead) {
  if (!bpf_coverage_enabled() || lead > BPF_COV_MAX_LEAD) return;
  if (exec.insn_cnt() != insns.size() + lead) return;  // not this program's code
  Record *r;
  {
    absl::MutexLock g(&g_mu);
    Record *&slot = g_index[name];
    if (!slot || slot->n != insns.size()) {
      g_records.push_back(std::make_unique<Record>(insns.size()));
      slot = g_records.back().get();
      for (size_t i = 0; i < insns.size(); i++) {
        slot->kind[i] = BPF_COV_INSN | (is_cond_jump(insns[i]) ? BPF_COV_COND : 0);
        if (bpf_is_ldimm64(insns[i])) i++;  // the second slot is data
      }
    }
    r = slot;
  }
  const size_t off = BPF_COV_MAX_LEAD - lead;
  exec.set_coverage({r->hit.data() + off, r->taken.data() + off, r->fall.data() + off});
}

std::vector<BpfCoverageProg> bpf_coverage_snapshot() {
  absl::MutexLock g(&g_mu);
  std::vector<BpfCoverageProg> out;
  for (const auto &[name, r] : g_index) {
    BpfCoverageProg p{name, r->kind};
    for (size_t i = 0; i < r->n; i++) {
      const size_t j = BPF_COV_MAX_LEAD + i;
      if (load(r->hit[j])) p.state[i] |= BPF_COV_HIT;
      if (load(r->taken[j])) p.state[i] |= BPF_COV_TAKEN;
      if (load(r->fall[j])) p.state[i] |= BPF_COV_FALL;
    }
    out.push_back(std::move(p));
  }
  return out;
}

void bpf_coverage_reset() {
  absl::MutexLock g(&g_mu);
  for (auto &r : g_records)
    for (auto *v : {&r->hit, &r->taken, &r->fall})
      for (u8 &b : *v) __atomic_store_n(&b, 0, __ATOMIC_RELAXED);
}

BpfCoverageCounts bpf_coverage_count(const std::vector<u8> &state) {
  BpfCoverageCounts c;
  for (u8 s : state) {
    if (!(s & BPF_COV_INSN)) continue;
    c.insns++;
    c.insns_hit += (s & BPF_COV_HIT) != 0;
    if (s & BPF_COV_COND) {
      c.dirs += 2;
      c.dirs_hit += ((s & BPF_COV_TAKEN) != 0) + ((s & BPF_COV_FALL) != 0);
    }
  }
  return c;
}

void bpf_coverage_merge(std::vector<u8> *a, const std::vector<u8> &b) {
  if (a->size() < b.size()) a->resize(b.size(), 0);
  for (size_t i = 0; i < b.size(); i++) (*a)[i] |= b[i];
}

}  // namespace umemcg::emu
