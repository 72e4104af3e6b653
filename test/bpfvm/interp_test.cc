// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/interp_test.cc: the interpreter API beyond what the ISA data files cover: declared
// regions, the memory callback, arguments, the budget and executed count, fast-mode faults.
// shim/bug.h first: its WARN() (unused here) gives way to Catch2's WARN.
#include "shim/bug.h"
#undef WARN
#include <catch2/catch.hpp>

#include "bpfvm/asm.h"
#include "bpfvm/interp.h"

using namespace umemcg;
using namespace umemcg::emu;

namespace {

std::vector<bpf_insn> assemble(const char *src) {
  auto p = bpf_assemble(src);
  REQUIRE(p.ok());
  return *p;
}

BpfExecProg prepare(const std::vector<bpf_insn> &insns, std::span<const bpf_func_t> helpers = {}) {
  auto p = BpfExecProg::prepare({insns, helpers, {}});
  REQUIRE(p.ok());
  return std::move(*p);
}

u64 g_allowed[2] = {0x1111, 0x2222};
bool allow_g(void *opaque, u64 addr, u64 len, bool write) {
  *static_cast<int *>(opaque) += 1;
  const u64 lo = (u64)(uintptr_t)g_allowed;
  return !write && addr >= lo && addr - lo <= sizeof(g_allowed) && len <= sizeof(g_allowed) - (addr - lo);
}

}  // namespace

TEST_CASE("checked run: read-only regions refuse writes", "[bpfvm][interp]") {
  auto insns = assemble("ldxdw %r0, [%r1+0]\nstdw [%r1+0], 1\nexit");
  BpfExecProg p = prepare(insns);
  u64 ctx = 42;
  BpfMemRegion ro{(u64)(uintptr_t)&ctx, sizeof(ctx), false};
  BpfCheckedRunOpts o;
  o.args[0] = (u64)(uintptr_t)&ctx;
  o.regions = {&ro, 1};
  BpfRunResult r = p.run_checked(o);
  CHECK_FALSE(r.ok);
  CHECK(r.insn == 1);
  CHECK(r.reason.find("invalid memory write of 8 bytes") == 0);
  CHECK(ctx == 42);
}

TEST_CASE("checked run: the memory callback admits other memory", "[bpfvm][interp]") {
  auto insns = assemble("ldxdw %r0, [%r1+8]\nexit");
  BpfExecProg p = prepare(insns);
  int calls = 0;
  BpfCheckedRunOpts o;
  o.args[0] = (u64)(uintptr_t)g_allowed;
  o.mem_ok = allow_g;
  o.mem_ok_opaque = &calls;
  BpfRunResult r = p.run_checked(o);
  CHECK(r.ok);
  CHECK(r.r0 == 0x2222);
  CHECK(calls == 1);
  o.args[0] += 8;  // now the read is past the end
  r = p.run_checked(o);
  CHECK_FALSE(r.ok);
}

TEST_CASE("checked run: arguments, executed count and budget", "[bpfvm][interp]") {
  auto insns = assemble("mov %r0, %r1\nadd %r0, %r2\nadd %r0, %r3\nadd %r0, %r4\nadd %r0, %r5\nexit");
  BpfExecProg p = prepare(insns);
  BpfCheckedRunOpts o;
  o.args = {1, 2, 3, 4, 5};
  o.nargs = 5;
  BpfRunResult r = p.run_checked(o);
  CHECK(r.ok);
  CHECK(r.r0 == 15);
  CHECK(r.executed == 6);
  const u64 args[5] = {1, 2, 3, 4, 5};
  CHECK(p.run_fast(args) == 15);
  o.nargs = 4;
  r = p.run_checked(o);
  CHECK_FALSE(r.ok);
  CHECK(r.reason == "R5 !read_ok");
  CHECK(r.insn == 4);
  o.nargs = 5;
  o.insn_budget = 3;
  r = p.run_checked(o);
  CHECK_FALSE(r.ok);
  CHECK(r.insn == 3);
  CHECK(r.reason == "instruction budget of 3 exhausted");
}

TEST_CASE("fast run: a bad callx stops the program with r0 = 0 and a warning", "[bpfvm][interp]") {
  auto insns = assemble("mov %r2, 9\ncallx %r2\nmov %r0, 7\nexit");
  BpfExecProg p = prepare(insns);
  emu::set_warnings_quiet(true);
  emu::reset_warnings();
  const u64 args[5] = {};
  CHECK(p.run_fast(args) == 0);
  CHECK(emu::warn_count() == 1);
  emu::reset_warnings();
  emu::set_warnings_quiet(false);
}

TEST_CASE("prepare: errors name the instruction", "[bpfvm][interp]") {
  auto insns = assemble("mov %r0, 0\nlddw %r1, map_by_fd(1)\nexit");
  auto p = BpfExecProg::prepare({insns, {}, {}});
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().message() == "ld_imm64 with src_reg 1 is not linked at insn 1");
}
