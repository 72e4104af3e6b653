// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/prepare_test.cc: BpfExecProg::prepare's inputs beyond the instructions: the
// verifier's decode handed over (bpf_verifier_opts::decoded -> BpfLinkedProg::rows) and the
// safe mode left out (BpfPrepareOpts::safe_mode).
// shim/bug.h first: its WARN() (unused here) gives way to Catch2's WARN.
#include "shim/bug.h"
#undef WARN
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "bpfvm/interp.h"
#include "bpfvm/prog_type.h"
#include "bpfvm/verifier.h"
#include "test/bpfvm/isa_data.h"
#include "test/bpfvm/asm_test_util.h"

using namespace umemcg;
using namespace umemcg::emu;

namespace {

using testing::assemble;

bpf_verifier_result verify(const std::vector<bpf_insn> &insns, u32 mem_size,
                           std::vector<const bpf_opcode_desc *> *decoded) {
  bpf_verifier_opts o;
  o.prog_type = &bpf_raw_mem_prog_type();
  o.ctx_mem_size = mem_size;
  o.decoded = decoded;
  return bpf_check(insns, o);
}

BpfRunResult run_checked(const BpfExecProg &p, std::vector<u8> &mem) {
  const BpfMemRegion region{(u64)(uintptr_t)mem.data(), mem.size(), true};
  BpfCheckedRunOpts o;
  o.args = {(u64)(uintptr_t)mem.data(), mem.size(), 0, 0, 0};
  o.nargs = 2;
  o.regions = {&region, 1};
  return p.run_checked(o);
}

}  // namespace

TEST_CASE("prepare with the verifier's decode runs as prepare without it", "[bpfvm][prepare]") {
  // Every ISA test program the verifier accepts (and that calls no helper: none are bound
  // here), prepared both ways: the same r0 and the same memory, in the checked and fast modes.
  size_t compared = 0;
  for (const auto &e : std::filesystem::directory_iterator(BPFVM_TEST_DATA_DIR)) {
    if (e.path().extension() != ".data") continue;
    const test::IsaDataFile f = test::load_isa_data_file(e.path().string());
    if (f.insns.empty() || f.error) continue;
    std::vector<const bpf_opcode_desc *> rows;
    if (!verify(f.insns, (u32)f.mem.size(), &rows).ok()) continue;
    INFO(f.path);
    REQUIRE(rows.size() == f.insns.size());
    auto own = BpfExecProg::prepare({f.insns, {}, {}});
    if (!own.ok()) continue;  // a helper call
    auto reused = BpfExecProg::prepare({f.insns, {}, {}, rows}, {.safe_mode = false});
    REQUIRE(reused.ok());
    std::vector<u8> m1 = f.mem, m2 = f.mem;
    const BpfRunResult r1 = run_checked(*own, m1);
    const BpfRunResult r2 = run_checked(*reused, m2);
    REQUIRE(r1.ok == r2.ok);
    CHECK(r1.r0 == r2.r0);
    CHECK(m1 == m2);
    if (r1.ok) {
      std::vector<u8> m3 = f.mem;
      const u64 args[5] = {(u64)(uintptr_t)m3.data(), m3.size(), 0, 0, 0};
      CHECK(reused->run_fast(args) == r1.r0);
      CHECK(m3 == m1);
    }
    compared++;
  }
  // Most of the ISA programs are accepted: a broken decode hand-over would not hide here.
  CHECK(compared >= 100);
}

TEST_CASE("the verifier's decode: filled on a layout that passes, empty on one that fails",
          "[bpfvm][prepare]") {
  const auto good = assemble("lddw %r0, 0x1122334455667788\nmov %r1, 2\nexit");
  std::vector<const bpf_opcode_desc *> rows = {nullptr, nullptr, nullptr, nullptr, nullptr};
  CHECK(verify(good, 0, &rows).ok());
  REQUIRE(rows.size() == 4);
  CHECK(rows[0] != nullptr);
  CHECK(rows[1] == nullptr);  // the ld_imm64's second slot
  CHECK(rows[2] != nullptr);
  CHECK(rows[3] != nullptr);

  // Refused after the layout check: the decode is still handed out.
  const auto uninit = assemble("mov %r0, %r5\nexit");
  CHECK_FALSE(verify(uninit, 0, &rows).ok());
  CHECK(rows.size() == 2);

  // Refused by the layout check (opcode 0xff does not exist): nothing is handed out.
  std::vector<bpf_insn> bad = good;
  bad[2].code = 0xff;
  const bpf_verifier_result r = verify(bad, 0, &rows);
  CHECK_FALSE(r.ok());
  CHECK(r.error.find("unknown opcode ff") != std::string::npos);
  CHECK(rows.empty());
}

TEST_CASE("prepare refuses a decode that does not match the program", "[bpfvm][prepare]") {
  const auto a = assemble("lddw %r0, 7\nmov %r1, 2\nexit");
  const auto b = assemble("mov %r0, 7\nadd %r0, 1\nmov %r1, 2\nexit");
  std::vector<const bpf_opcode_desc *> rows_a, rows_b;
  REQUIRE(verify(a, 0, &rows_a).ok());
  REQUIRE(verify(b, 0, &rows_b).ok());
  REQUIRE(rows_a.size() == rows_b.size());

  auto expect_refused = [](const std::vector<bpf_insn> &insns,
                           std::span<const bpf_opcode_desc *const> rows) {
    auto p = BpfExecProg::prepare({insns, {}, {}, rows});
    REQUIRE_FALSE(p.ok());
    CHECK(std::string(p.status().message()) == "decoded rows do not match the program");
  };
  expect_refused(a, rows_b);  // same length, other opcodes
  expect_refused(b, rows_a);
  expect_refused(a, std::span(rows_a).first(3));  // one row short
  // The ld_imm64's second slot must have no row.
  std::vector<const bpf_opcode_desc *> filled = rows_a;
  filled[1] = filled[2];
  expect_refused(a, filled);
  // The matching decode is taken.
  auto ok = BpfExecProg::prepare({a, {}, {}, rows_a});
  REQUIRE(ok.ok());
  const u64 args[5] = {};
  CHECK(ok->run_fast(args) == 7);
}

TEST_CASE("a program prepared without the safe mode refuses safe runs only", "[bpfvm][prepare]") {
  const auto insns = assemble("ldxdw %r0, [%r1+0]\nadd %r0, 1\nexit");
  auto p = BpfExecProg::prepare({insns, {}, {}}, {.safe_mode = false});
  REQUIRE(p.ok());
  std::vector<u8> mem(8, 0);
  mem[0] = 41;
  const BpfMemRegion region{(u64)(uintptr_t)mem.data(), mem.size(), true};
  BpfCheckedRunOpts o;
  o.args = {(u64)(uintptr_t)mem.data(), mem.size(), 0, 0, 0};
  o.nargs = 2;
  o.regions = {&region, 1};
  const BpfRunResult safe = p->run_safe(o);
  CHECK_FALSE(safe.ok);
  CHECK(safe.reason.find("prepared without the safe mode") != std::string::npos);
  const BpfRunResult checked = p->run_checked(o);
  CHECK(checked.ok);
  CHECK(checked.r0 == 42);
  CHECK(p->run_fast(o.args.data()) == 42);

  // The default keeps the safe mode.
  auto with = BpfExecProg::prepare({insns, {}, {}});
  REQUIRE(with.ok());
  const BpfRunResult s2 = with->run_safe(o);
  CHECK(s2.ok);
  CHECK(s2.r0 == 42);
}
