// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/coverage_test.cc: the interpreter's coverage mode (BpfExecProg::set_coverage())
// and the process-wide records (bpfvm/coverage.h): a known program, runs that provably reach a
// known subset of its instructions and branch directions, the same results as the plain fast
// mode, a callback's trampoline recording into its program's slots.
// shim/bug.h first: its WARN() (unused here) gives way to Catch2's WARN.
#include "shim/bug.h"
#undef WARN
#include <catch2/catch.hpp>

#include <vector>

#include "bpfvm/coverage.h"
#include "bpfvm/interp.h"
#include "test/bpfvm/asm_test_util.h"

using namespace umemcg;
using namespace umemcg::emu;

namespace {

// Slots: 0-1 lddw, 2 mov, 3 jeq (the only conditional jump), 4 mov, 5 exit, 6 add, 7 exit.
constexpr const char *kProg = R"(
    lddw %r2, 0x100000000
    mov %r0, 0
    jeq %r1, 0, zero
    mov %r0, 1
    exit
  zero:
    add %r0, %r2
    exit
)";

using testing::assemble;

BpfExecProg prepare(const std::vector<bpf_insn> &insns) {
  auto p = BpfExecProg::prepare({insns, {}, {}});
  REQUIRE(p.ok());
  return std::move(*p);
}

u64 run(const BpfExecProg &p, u64 r1) {
  const u64 args[5] = {r1, 0, 0, 0, 0};
  return p.run_fast(args);
}

const BpfCoverageProg *find(const std::vector<BpfCoverageProg> &v, const std::string &name) {
  for (const BpfCoverageProg &p : v)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace

TEST_CASE("coverage mode: each run records exactly the instructions and directions it took",
          "[bpfvm][coverage]") {
  const std::vector<bpf_insn> insns = assemble(kProg);
  REQUIRE(insns.size() == 8);
  BpfExecProg p = prepare(insns);
  std::vector<u8> hit(8, 0), taken(8, 0), fall(8, 0);
  p.set_coverage({hit.data(), taken.data(), fall.data()});
  // r1 == 0: the jump is taken.
  CHECK(run(p, 0) == 0x100000000ull);
  CHECK(hit == std::vector<u8>{1, 0, 1, 1, 0, 0, 1, 1});
  CHECK(taken == std::vector<u8>{0, 0, 0, 1, 0, 0, 0, 0});
  CHECK(fall == std::vector<u8>(8, 0));
  // r1 != 0: it falls through; the records add up.
  CHECK(run(p, 5) == 1);
  CHECK(hit == std::vector<u8>{1, 0, 1, 1, 1, 1, 1, 1});
  CHECK(fall == std::vector<u8>{0, 0, 0, 1, 0, 0, 0, 0});
  // Off again: the plain fast mode, same results, nothing recorded.
  p.set_coverage({});
  std::fill(hit.begin(), hit.end(), 0);
  CHECK(run(p, 0) == 0x100000000ull);
  CHECK(run(p, 7) == 1);
  CHECK(hit == std::vector<u8>(8, 0));
}

TEST_CASE("coverage records: counts per program, off unless enabled, callbacks shift by their "
          "trampoline", "[bpfvm][coverage]") {
  const std::vector<bpf_insn> insns = assemble(kProg);
  BpfExecProg p = prepare(insns);
  bpf_coverage_enable(false);
  bpf_coverage_attach(p, "cov_off", insns, 0);
  CHECK(run(p, 0) == 0x100000000ull);
  CHECK(find(bpf_coverage_snapshot(), "cov_off") == nullptr);

  bpf_coverage_enable(true);
  bpf_coverage_attach(p, "cov_known", insns, 0);
  CHECK(run(p, 0) == 0x100000000ull);
  auto snap = bpf_coverage_snapshot();
  const BpfCoverageProg *rec = find(snap, "cov_known");
  REQUIRE(rec != nullptr);
  BpfCoverageCounts c = bpf_coverage_count(rec->state);
  CHECK(c.insns == 7);  // the ld_imm64 counts once
  CHECK(c.insns_hit == 5);  // slots 0 (lddw), 2, 3, 6, 7
  CHECK(c.dirs == 2);
  CHECK(c.dirs_hit == 1);
  CHECK(rec->state[3] == (BPF_COV_INSN | BPF_COV_COND | BPF_COV_HIT | BPF_COV_TAKEN));
  CHECK(rec->state[1] == 0);

  // A callback's code: "call 0; exit" in front of the program; its runs land in the program's
  // slots (the trampoline's own two instructions in none).
  std::vector<bpf_insn> t = assemble("call local body\nexit\nbody:\nexit\n");
  t.resize(2);
  t.insert(t.end(), insns.begin(), insns.end());
  BpfExecProg cb = prepare(t);
  bpf_coverage_attach(cb, "cov_known", insns, 2);
  CHECK(run(cb, 9) == 1);
  snap = bpf_coverage_snapshot();
  rec = find(snap, "cov_known");
  REQUIRE(rec != nullptr);
  c = bpf_coverage_count(rec->state);
  CHECK(c.insns_hit == 7);
  CHECK(c.dirs_hit == 2);

  // Merging: OR per slot.
  std::vector<u8> a = {BPF_COV_INSN, BPF_COV_INSN | BPF_COV_HIT};
  bpf_coverage_merge(&a, {BPF_COV_INSN | BPF_COV_HIT, BPF_COV_INSN, BPF_COV_INSN});
  CHECK(a == std::vector<u8>{BPF_COV_INSN | BPF_COV_HIT, BPF_COV_INSN | BPF_COV_HIT, BPF_COV_INSN});
  // Reset clears what was seen, not the records.
  bpf_coverage_reset();
  rec = nullptr;
  snap = bpf_coverage_snapshot();
  REQUIRE(find(snap, "cov_known") != nullptr);
  CHECK(bpf_coverage_count(find(snap, "cov_known")->state).insns_hit == 0);
  bpf_coverage_enable(false);
}
