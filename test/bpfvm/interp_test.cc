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

// The fast mode skips saving r6-r9 around a call into a subprogram that writes none of them
// (CALL_LOCAL_NOSAVE / EXIT_NOSAVE); one that writes them must still get the caller's back.
TEST_CASE("fast run: r6-r9 survive calls with and without the save", "[bpfvm][interp]") {
  auto insns = assemble(R"(
    mov %r6, 6
    mov %r7, 7
    mov %r8, 8
    mov %r9, 9
    mov %r1, 100
    call local leaf
    mov %r1, %r0
    call local clobber
    mov %r1, %r0
    call local nested
    add %r0, %r6
    add %r0, %r7
    add %r0, %r8
    add %r0, %r9
    exit
  leaf:
    mov %r0, %r1
    add %r0, 1
    exit
  clobber:
    mov %r6, 1000
    mov %r7, 2000
    mov %r8, 3000
    mov %r9, 4000
    mov %r0, %r1
    add %r0, %r6
    exit
  nested:
    mov %r6, %r1
    call local leaf
    add %r0, %r6
    exit
  )");
  BpfExecProg p = prepare(insns);
  // leaf: 101; clobber: 1101; nested: r6 = 1101, leaf -> 1102, + 1101 = 2203; + 6+7+8+9.
  const u64 want = 2203 + 30;
  const u64 args[5] = {0, 0, 0, 0, 0};
  CHECK(p.run_fast(args) == want);
  BpfCheckedRunOpts o;
  o.nargs = 0;
  BpfRunResult r = p.run_checked(o);
  REQUIRE(r.ok);
  CHECK(r.r0 == want);
}

TEST_CASE("fast run: the call depth limit holds on the call form without a save",
          "[bpfvm][interp]") {
  // f calls itself forever and writes no r6-r9: the no-save call form must still stop at
  // MAX_CALL_FRAMES (a warning and r0 = 0 in the fast mode, a fault in the checked one).
  auto insns = assemble("call local f\nexit\nf:\ncall local f\nexit");
  BpfExecProg p = prepare(insns);
  emu::set_warnings_quiet(true);
  emu::reset_warnings();
  const u64 args[5] = {};
  CHECK(p.run_fast(args) == 0);  // (the fault's WARN_ONCE may have fired in an earlier test)
  emu::reset_warnings();
  emu::set_warnings_quiet(false);
  BpfCheckedRunOpts o;
  BpfRunResult r = p.run_checked(o);
  CHECK_FALSE(r.ok);
  CHECK(r.reason.find("too deep") != std::string::npos);
}

TEST_CASE("safe run: bounds-checked memory, frames, results as the checked mode",
          "[bpfvm][interp]") {
  auto insns = assemble(R"(
    stxdw [%r10-8], %r1
    ldxdw %r3, [%r10-8]
    ldxdw %r0, [%r3+0]
    mov %r1, %r0
    call local f
    exit
  f:
    stxdw [%r10-16], %r1
    ldxdw %r0, [%r10-16]
    add %r0, 1
    exit
  )");
  BpfExecProg p = prepare(insns);
  REQUIRE(p.regs_initialised_before_use(1));
  u64 ctx = 41;
  BpfMemRegion rw{(u64)(uintptr_t)&ctx, sizeof(ctx), true};
  BpfCheckedRunOpts o;
  o.args[0] = (u64)(uintptr_t)&ctx;
  o.regions = {&rw, 1};
  BpfRunResult s = p.run_safe(o);
  REQUIRE(s.ok);
  CHECK(s.r0 == 42);
  CHECK(p.run_checked(o).r0 == 42);

  // Out of bounds: a region overrun, and r10 accesses outside the frames.
  for (const char *bad : {"ldxdw %r0, [%r1+8]\nexit", "stxdw [%r10-520], %r1\nmov %r0, 0\nexit",
                          "stxdw [%r10+0], %r1\nmov %r0, 0\nexit",
                          "stxw [%r10-2], %r1\nmov %r0, 0\nexit"}) {
    auto bi = assemble(bad);
    BpfExecProg bp = prepare(bi);
    BpfRunResult r = bp.run_safe(o);
    CHECK_FALSE(r.ok);
    CHECK(r.reason.find("invalid memory") == 0);
    CHECK(ctx == 41);
  }
}

TEST_CASE("safe run: backward jumps spend the budget", "[bpfvm][interp]") {
  auto insns = assemble("mov %r0, 0\nmov %r1, 10\nloop:\nadd %r0, 1\nsub %r1, 1\njne %r1, 0, loop\nexit");
  BpfExecProg p = prepare(insns);
  BpfCheckedRunOpts o;
  BpfRunResult r = p.run_safe(o);
  REQUIRE(r.ok);
  CHECK(r.r0 == 10);
  CHECK(r.executed == 9 * 3);  // 9 taken back-edges, each over 3 instructions
  o.insn_budget = 20;
  r = p.run_safe(o);
  CHECK_FALSE(r.ok);
  CHECK(r.reason == "instruction budget of 20 exhausted");
  CHECK(r.insn == 4);
}

TEST_CASE("regs_initialised_before_use: the checked mode's rules, statically",
          "[bpfvm][interp]") {
  auto check = [](const char *src, u8 nargs) {
    auto insns = assemble(src);
    BpfExecProg p = prepare(insns);
    const bool proven = p.regs_initialised_before_use(nargs);
    // Whenever it is proven, the checked mode cannot report an uninitialised read.
    if (proven) {
      BpfCheckedRunOpts o;
      o.nargs = nargs;
      BpfRunResult r = p.run_checked(o);
      CHECK(r.reason.find("!read_ok") == std::string::npos);
    }
    return proven;
  };
  CHECK(check("mov %r0, %r2\nexit", 2));
  CHECK_FALSE(check("mov %r0, %r2\nexit", 1));
  CHECK_FALSE(check("mov %r0, %r5\nexit", 2));
  CHECK_FALSE(check("exit", 1));  // r0 is read by exit
  // One path skips the write.
  CHECK_FALSE(check("mov %r0, 0\njeq %r1, 0, +1\nmov %r3, 1\nmov %r0, %r3\nexit", 1));
  CHECK(check("mov %r3, 0\njeq %r1, 0, +1\nmov %r3, 1\nmov %r0, %r3\nexit", 1));
  // A call scratches r1-r5; a callee sees r1-r5 only if the caller wrote them.
  CHECK_FALSE(check("mov %r0, 0\ncall local f\nmov %r0, %r1\nexit\nf:\nmov %r0, 1\nexit", 1));
  CHECK(check("mov %r6, 1\ncall local f\nmov %r0, %r6\nexit\nf:\nmov %r0, %r1\nexit", 1));
  CHECK_FALSE(check("call local f\nexit\nf:\nmov %r0, %r6\nexit", 1));
  CHECK_FALSE(check("call local f\nexit\nf:\nmov %r0, %r2\nexit", 1));
}
