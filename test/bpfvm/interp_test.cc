// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/interp_test.cc: the interpreter API beyond what the ISA data files cover: declared
// regions, the memory callback, arguments, the budget and executed count, fast-mode faults.
// shim/bug.h first: its WARN() (unused here) gives way to Catch2's WARN.
#include "shim/bug.h"
#undef WARN
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bpfvm/interp.h"
#include "test/bpfvm/asm_test_util.h"

using namespace umemcg;
using namespace umemcg::emu;

namespace {

using testing::assemble;

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

TEST_CASE("fast run: the one-pointer entry sets r1 = ctx and zeroes r2-r5", "[bpfvm][interp]") {
  // r0 = r1 + (r2 | r3 | r4 | r5) + r6: the context pointer when r2-r6 start at zero.
  auto insns = assemble("mov %r0, %r2\nor %r0, %r3\nor %r0, %r4\nor %r0, %r5\n"
                        "add %r0, %r1\nadd %r0, %r6\nexit");
  BpfExecProg p = prepare(insns);
  // An argument-array run first leaves non-zero values where the next run's r2-r5 would be
  // if the entry did not set them.
  const u64 args[5] = {1, 2, 4, 8, 16};
  CHECK(p.run_fast(args) == 31);
  u64 ctx = 0;
  CHECK(p.run_fast(static_cast<const void *>(&ctx)) == (u64)(uintptr_t)&ctx);
  CHECK(p.run_fast(static_cast<const void *>(nullptr)) == 0);
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

// The safe mode uses the no-save call and exit forms only when control cannot leave a
// subprogram but by its exits: here f writes none of r6-r9 itself but jumps (or falls through)
// into g, which writes r6 and exits. Skipping the save on the call to f would let g's exit
// restore the stale r6 (6) that the earlier call to g left in the frame.
TEST_CASE("safe run: r6-r9 saved when a subprogram is left by a jump or a fall-through",
          "[bpfvm][interp]") {
  const char *head = R"(
    mov %r6, 6
    call local g
    mov %r6, 5
    call local f
    mov %r0, %r6
    exit
  f:
  )";
  for (const char *f_body : {"mov %r0, 0\nja gb\n", "mov %r0, 0\n"}) {
    std::string src = std::string(head) + f_body + "g:\nmov %r0, 1\ngb:\nmov %r6, 77\nexit\n";
    auto insns = assemble(src.c_str());
    BpfExecProg p = prepare(insns);
    REQUIRE(p.regs_initialised_before_use(0));
    BpfCheckedRunOpts o;
    o.nargs = 0;
    BpfRunResult c = p.run_checked(o);
    REQUIRE(c.ok);
    CHECK(c.r0 == 5);
    BpfRunResult s = p.run_safe(o);
    REQUIRE(s.ok);
    CHECK(s.r0 == 5);
  }
}

TEST_CASE("safe run: no-save calls in a closed program keep r6-r9", "[bpfvm][interp]") {
  // A loop over a leaf that writes no r6-r9 (the no-save forms) and one that does.
  auto insns = assemble(R"(
    mov %r6, 0
    mov %r7, 10
  loop:
    mov %r1, %r6
    call local leaf
    mov %r6, %r0
    mov %r1, %r7
    call local clobber
    add %r6, %r0
    sub %r7, 1
    jne %r7, 0, loop
    mov %r0, %r6
    exit
  leaf:
    mov %r0, %r1
    add %r0, 3
    exit
  clobber:
    mov %r7, 1000
    mov %r0, %r1
    exit
  )");
  BpfExecProg p = prepare(insns);
  REQUIRE(p.regs_initialised_before_use(0));
  BpfCheckedRunOpts o;
  o.nargs = 0;
  const u64 want = 10 * 3 + (10 + 9 + 8 + 7 + 6 + 5 + 4 + 3 + 2 + 1);
  CHECK(p.run_checked(o).r0 == want);
  BpfRunResult s = p.run_safe(o);
  REQUIRE(s.ok);
  CHECK(s.r0 == want);
}

namespace {

struct CtxRun {
  BpfRunResult res;
  u64 mem[4];
};

// Runs src in the safe mode with r1 = a 32-byte buffer {1, 2, 3, 4} (u64s) declared as
// region 0 of `len` bytes starting `skew` bytes before r1.
CtxRun run_ctx(const char *src, u64 len, bool writable, u64 skew = 0) {
  auto insns = assemble(src);
  BpfExecProg p = prepare(insns);
  REQUIRE(p.regs_initialised_before_use(1));
  CtxRun out{{}, {1, 2, 3, 4}};
  BpfMemRegion reg{(u64)(uintptr_t)out.mem, len, writable};
  BpfCheckedRunOpts o;
  o.args[0] = (u64)(uintptr_t)out.mem + skew;
  o.regions = {&reg, 1};
  out.res = p.run_safe(o);
  // The checked mode decides the same.
  u64 mem2[4] = {1, 2, 3, 4};
  BpfMemRegion reg2{(u64)(uintptr_t)mem2, len, writable};
  o.args[0] = (u64)(uintptr_t)mem2 + skew;
  o.regions = {&reg2, 1};
  BpfRunResult c = p.run_checked(o);
  CHECK(c.ok == out.res.ok);
  CHECK(c.insn == out.res.insn);
  if (c.ok) CHECK(c.r0 == out.res.r0);
  CHECK(std::memcmp(mem2, out.mem, sizeof(mem2)) == 0);
  return out;
}

}  // namespace

TEST_CASE("safe run: context accesses checked once per run", "[bpfvm][interp]") {
  const char *prog = R"(
    mov %r6, %r1
    ldxdw %r0, [%r6+8]
    ldxw %r2, [%r1+16]
    add %r0, %r2
    stxdw [%r6+0], %r0
    stw [%r1+24], 9
    exit
  )";
  CtxRun r = run_ctx(prog, 32, true);
  REQUIRE(r.res.ok);
  CHECK(r.res.r0 == 5);
  CHECK(r.mem[0] == 5);
  CHECK(r.mem[3] == 9);
  // Too short for the store at 24: the whole run takes the checked accesses, and faults there.
  r = run_ctx(prog, 27, true);
  CHECK_FALSE(r.res.ok);
  CHECK(r.res.insn == 5);
  CHECK(r.res.reason.find("invalid memory write of 4 bytes") == 0);
  CHECK(r.mem[0] == 5);
  // Read-only: the first store faults, nothing is written.
  r = run_ctx(prog, 32, false);
  CHECK_FALSE(r.res.ok);
  CHECK(r.res.insn == 4);
  CHECK(r.mem[0] == 1);
  // Too short for the first load.
  r = run_ctx(prog, 15, true);
  CHECK_FALSE(r.res.ok);
  CHECK(r.res.insn == 1);
  CHECK(r.res.reason.find("invalid memory read of 8 bytes") == 0);
  // The region does not start at r1: checked accesses, same results.
  r = run_ctx("ldxdw %r0, [%r1+8]\nexit", 32, false, 8);
  REQUIRE(r.res.ok);
  CHECK(r.res.r0 == 3);
  r = run_ctx("ldxdw %r0, [%r1+24]\nexit", 32, false, 8);
  CHECK_FALSE(r.res.ok);
}

TEST_CASE("safe run: only registers that hold r1 on every path are context pointers",
          "[bpfvm][interp]") {
  // An add moves the pointer: the load at [r1+0] is then past an 8-byte region.
  CtxRun r = run_ctx("add %r1, 8\nldxdw %r0, [%r1+0]\nexit", 8, false);
  CHECK_FALSE(r.res.ok);
  CHECK(r.res.insn == 1);
  // One path sets r2 to 0: a load through it must fault, not crash.
  r = run_ctx("mov %r2, %r1\njeq %r1, 0, +1\nmov %r2, 0\nldxdw %r0, [%r2+0]\nexit", 32, false);
  CHECK_FALSE(r.res.ok);
  CHECK(r.res.insn == 3);
  // A loop moves the pointer on each iteration: the third load is past a 16-byte region.
  r = run_ctx(R"(
    mov %r2, %r1
    mov %r3, 3
    mov %r0, 0
  loop:
    ldxdw %r4, [%r2+0]
    add %r0, %r4
    add %r2, 8
    sub %r3, 1
    jne %r3, 0, loop
    exit
  )", 16, false);
  CHECK_FALSE(r.res.ok);
  CHECK(r.res.insn == 3);
  // A callee gets the pointer in r1; the caller keeps it in r6 across the call, not in r1.
  r = run_ctx(R"(
    mov %r6, %r1
    call local f
    mov %r1, 0
    call local f
    exit
  f:
    ldxdw %r0, [%r1+8]
    exit
  )", 32, false);
  CHECK_FALSE(r.res.ok);
  CHECK(r.res.insn == 5);
  r = run_ctx(R"(
    mov %r6, %r1
    call local f
    ldxdw %r2, [%r6+16]
    add %r0, %r2
    exit
  f:
    ldxdw %r0, [%r1+8]
    exit
  )", 32, false);
  REQUIRE(r.res.ok);
  CHECK(r.res.r0 == 5);
}

namespace {

u64 helper_add2(u64 a, u64 b, u64, u64, u64) { return a + b; }
const bpf_func_t kRandHelpers[] = {nullptr, helper_add2};

// A random program of random opcode-table rows, with operands biased towards what makes
// programs run: memory bases r1 (the context), r6 (a copy of it) and r10, small offsets, jumps
// inside the program. r10 is only ever a memory base: the two modes' stacks are at different
// addresses, so a program that computed with r10 would give different results.
std::vector<bpf_insn> random_prog(std::mt19937 &rng, size_t body) {
  auto pick = [&](u32 n) { return (u32)(rng() % n); };
  std::vector<bpf_insn> out;
  // Preamble: every register written (r6 = r1), so that many programs pass
  // regs_initialised_before_use().
  auto mov = [&](u8 dst, s32 imm) { out.push_back(bpf_insn{0xb7, dst, 0, 0, imm}); };
  auto movx = [&](u8 dst, u8 src) { out.push_back(bpf_insn{0xbf, dst, src, 0, 0}); };
  mov(0, 0);
  for (u8 r = 3; r <= 5; r++) mov(r, (s32)pick(64));
  movx(6, 1);
  mov(7, 0);
  mov(8, 0);
  mov(9, 1);
  const size_t total = out.size() + body;
  while (out.size() < total) {
    const bpf_opcode_desc &d = bpf_opcode_table[pick(BPF_OPC_NR)];
    const bpf_form_desc &f = bpf_form_of(d);
    if (f.kind == bpf_opc::K_PACKET) continue;
    const u8 mem_bases[] = {1, 6, 10};
    const bool mem = f.kind == bpf_opc::K_LOAD || f.kind == bpf_opc::K_STORE ||
                     f.kind == bpf_opc::K_ATOMIC;
    bpf_insn in{};
    in.code = d.code;
    in.dst_reg = (f.fields & bpf_opc::FLD_DST) ? (u8)pick(10) : 0;
    in.src_reg = (f.fields & bpf_opc::FLD_SRC) ? (u8)pick(10) : 0;
    if (mem) {
      const u8 b = mem_bases[pick(3)];
      const bool src_base = f.kind == bpf_opc::K_LOAD;
      if (src_base)
        in.src_reg = b;
      else
        in.dst_reg = b;
      in.off = (s16)((s32)pick(64) - (b == 10 ? 48 : 8));
    } else if (f.kind == bpf_opc::K_JUMP || f.kind == bpf_opc::K_COND_JUMP) {
      in.off = (s16)((s32)pick(12) - 6);
    } else if (f.fields & bpf_opc::FLD_OFF) {
      in.off = (s16)pick(4);
    }
    if (f.fields & bpf_opc::FLD_IMM) in.imm = (s32)pick(40) - 8;
    if (d.id == BPF_OPC_JMP_CALL_HELPER) in.imm = (s32)pick(2);
    if (d.id == BPF_OPC_JMP_CALL_LOCAL || d.id == BPF_OPC_JMP32_JA) in.imm = (s32)pick(12) - 4;
    if (d.sel == bpf_opc::SEL_OFF) in.off = (s16)d.sel_value;
    if (d.sel == bpf_opc::SEL_IMM) in.imm = d.sel_value;
    if (d.sel == bpf_opc::SEL_SRC) in.src_reg = (u8)d.sel_value;
    out.push_back(in);
    if (f.slots == 2) out.push_back(bpf_insn{0, 0, 0, 0, (s32)pick(8)});
  }
  out.push_back(bpf_insn{0x95, 0, 0, 0, 0});  // exit
  return out;
}

}  // namespace

// The safe mode on arbitrary bytecode: never a crash or an access outside the run's memory
// (the sanitizer build checks that), and for programs whose registers are provably initialised,
// the checked mode's results: r0, the memory, and the same fault at the same instruction.
TEST_CASE("safe run: random programs behave as in the checked mode", "[bpfvm][interp]") {
  std::mt19937 rng(20240611);
  int ran = 0, finished = 0, faulted = 0, ctx_fast = 0;
  for (int iter = 0; iter < 30000; iter++) {
    std::vector<bpf_insn> insns = random_prog(rng, 4 + rng() % 20);
    auto prog = BpfExecProg::prepare({insns, kRandHelpers, {}});
    if (!prog.ok() || !prog->regs_initialised_before_use(2)) continue;
    ran++;
    // The context: 32 bytes; every other run declares it 4 bytes short or read-only, so that
    // both the once-per-run and the per-access checks of context accesses see faults.
    // Both runs see the same memory at the same address (pointers may end up in r0).
    alignas(8) u8 mem[32], mem_c[32];
    for (int i = 0; i < 32; i++) mem[i] = (u8)(i * 7 + 1);
    const u64 len = iter % 3 == 1 ? 28 : 32;
    const bool writable = iter % 5 != 2;
    if (len == 32 && writable) ctx_fast++;
    BpfMemRegion reg{(u64)(uintptr_t)mem, len, writable};
    BpfCheckedRunOpts o;
    o.nargs = 2;
    o.args = {(u64)(uintptr_t)mem, len, 0, 0, 0};
    o.regions = {&reg, 1};
    o.insn_budget = 5000;
    const BpfRunResult c = prog->run_checked(o);
    if (!c.ok && c.reason.find("budget") != std::string::npos) continue;  // (may not end)
    std::memcpy(mem_c, mem, sizeof(mem));
    for (int i = 0; i < 32; i++) mem[i] = (u8)(i * 7 + 1);
    // The safe budget charges back-edges by distance: at most the program length per
    // executed instruction.
    o.insn_budget = (c.executed + 1) * insns.size();
    const BpfRunResult s = prog->run_safe(o);
    INFO("iteration " << iter << ": checked " << c.reason << " at " << c.insn << ", safe "
                      << s.reason << " at " << s.insn);
    REQUIRE(s.ok == c.ok);
    if (c.ok) {
      finished++;
      CHECK(s.r0 == c.r0);
    } else {
      faulted++;
      CHECK(s.insn == c.insn);
      // The text up to the address (stack addresses differ between the two runs).
      CHECK(s.reason.substr(0, s.reason.find(" at 0x")) == c.reason.substr(0, c.reason.find(" at 0x")));
    }
    CHECK(std::memcmp(mem_c, mem, sizeof(mem)) == 0);
  }
  INFO("ran " << ran << ", finished " << finished << ", faulted " << faulted);
  CHECK(finished > 500);
  CHECK(faulted > 500);
  CHECK(ctx_fast > 500);
}
