// SPDX-License-Identifier: GPL-2.0-only
// bench/bpfvm_interp_bench.cc: interpreter speed, ns per executed eBPF instruction (target S5),
// on loop programs: ALU, ctx loads, stack spills, helper calls, local calls; fast, safe (the
// conformance plugin's mode for programs the verifier cannot finish), checked, and the S5
// reference (ref: a switch-loop interpreter with checks, bench/ref_switch_interp.h).
//
// Each program loops kIters times (millions of instructions per run); the executed-instruction
// count comes from one checked run, and the "ns_per_insn" counter is run time / instructions.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/ref_switch_interp.h"
#include "bpfvm/asm.h"
#include "bpfvm/interp.h"

namespace {

using namespace umemcg;
using namespace umemcg::emu;

constexpr int kIters = 1'000'000;

u64 helper_add(u64 a, u64 b, u64, u64, u64) { return a + b; }
const bpf_func_t kHelpers[] = {nullptr, helper_add};

struct Ctx {
  u64 a = 3, b = 5;
  u32 c = 7, d = 11;
};

// r1 = ctx at entry. Each program is written out whole on purpose (the loop frame repeated, its
// own body): one reads as one S5 row, and tools/plugin_speed.py encodes the same instructions.
const char *const kAlu = R"(
  mov %r0, 0
  lddw %r1, ITERS
loop:
  add %r0, %r1
  xor %r0, 0x55
  lsh %r0, 1
  rsh %r0, 1
  mov %r2, %r0
  and %r2, 0xff
  add32 %r2, 3
  sub %r1, 1
  jne %r1, 0, loop
  exit
)";
const char *const kCtxLoads = R"(
  mov %r6, %r1
  mov %r0, 0
  lddw %r7, ITERS
loop:
  ldxdw %r2, [%r6+0]
  ldxdw %r3, [%r6+8]
  ldxw %r4, [%r6+16]
  ldxw %r5, [%r6+20]
  add %r0, %r2
  add %r0, %r3
  add %r0, %r4
  add %r0, %r5
  sub %r7, 1
  jne %r7, 0, loop
  exit
)";
const char *const kStack = R"(
  mov %r0, 1
  lddw %r7, ITERS
loop:
  stxdw [%r10-8], %r0
  stxdw [%r10-16], %r7
  ldxdw %r2, [%r10-8]
  ldxdw %r3, [%r10-16]
  add %r2, %r3
  stxw [%r10-20], %r2
  ldxw %r0, [%r10-20]
  sub %r7, 1
  jne %r7, 0, loop
  exit
)";
const char *const kHelperCalls = R"(
  mov %r0, 0
  lddw %r7, ITERS
loop:
  mov %r1, %r0
  mov %r2, %r7
  call 1
  sub %r7, 1
  jne %r7, 0, loop
  exit
)";
const char *const kLocalCalls = R"(
  mov %r0, 0
  lddw %r7, ITERS
loop:
  mov %r1, %r0
  mov %r2, %r7
  call local f
  sub %r7, 1
  jne %r7, 0, loop
  exit
f:
  mov %r0, %r1
  add %r0, %r2
  exit
)";

struct Prepared {
  BpfExecProg prog;
  u64 executed;
  u64 r0;
  std::span<const bpf_insn> insns;
};

Prepared prepare(const char *src) {
  std::string text = src;
  size_t p = text.find("ITERS");
  text.replace(p, 5, std::to_string(kIters));
  auto insns = bpf_assemble(text);
  if (!insns.ok()) {
    std::fprintf(stderr, "bench program: %s\n", std::string(insns.status().message()).c_str());
    std::abort();
  }
  static std::vector<std::vector<bpf_insn>> keep;
  keep.push_back(*insns);
  auto prog = BpfExecProg::prepare({keep.back(), kHelpers, {}});
  if (!prog.ok()) std::abort();
  static Ctx ctx;
  BpfMemRegion region{(u64)(uintptr_t)&ctx, sizeof(ctx), false};
  BpfCheckedRunOpts opts;
  opts.args[0] = (u64)(uintptr_t)&ctx;
  opts.regions = {&region, 1};
  opts.insn_budget = 1ull << 40;
  BpfRunResult r = prog->run_checked(opts);
  if (!r.ok) {
    std::fprintf(stderr, "bench program faults: %s at %zu\n", r.reason.c_str(), r.insn);
    std::abort();
  }
  // The reference interpreter must run the same program to the same result.
  const bench::RefRunResult ref = bench::ref_switch_run(keep.back(), &ctx, sizeof(ctx), kHelpers,
                                                        1ull << 40);
  if (!ref.ok || ref.r0 != r.r0 || ref.executed != r.executed) {
    std::fprintf(stderr, "reference interpreter disagrees: %s r0 %llx/%llx executed %llu/%llu\n",
                 ref.error.c_str(), (unsigned long long)ref.r0, (unsigned long long)r.r0,
                 (unsigned long long)ref.executed, (unsigned long long)r.executed);
    std::abort();
  }
  return {std::move(*prog), r.executed, r.r0, keep.back()};
}

// reference: bench/ref_switch_interp.h, the switch loop with checks S5 is measured against.
enum class Mode { fast, safe, checked, reference };

void run_bench(benchmark::State &state, const char *src, Mode mode) {
  Prepared p = prepare(src);
  static Ctx ctx;
  BpfMemRegion region{(u64)(uintptr_t)&ctx, sizeof(ctx), false};
  BpfCheckedRunOpts opts;
  opts.args[0] = (u64)(uintptr_t)&ctx;
  opts.regions = {&region, 1};
  opts.insn_budget = 1ull << 40;
  for (auto _ : state) {
    u64 r0 = mode == Mode::checked   ? p.prog.run_checked(opts).r0
             : mode == Mode::safe    ? p.prog.run_safe(opts).r0
             : mode == Mode::reference
                 ? bench::ref_switch_run(p.insns, &ctx, sizeof(ctx), kHelpers, 1ull << 40).r0
                 : p.prog.run_fast(&ctx);
    benchmark::DoNotOptimize(r0);
  }
  state.counters["insns"] = (double)p.executed;
  // Seconds per instruction: printed with an SI prefix, e.g. "1.1n" is 1.1 ns per instruction.
  state.counters["ns_per_insn"] = benchmark::Counter(
      (double)p.executed, benchmark::Counter::kIsIterationInvariantRate |
                              benchmark::Counter::kInvert);
}

#define INTERP_BENCH(name, src)                                                          \
  void BM_interp_##name##_fast(benchmark::State &s) { run_bench(s, src, Mode::fast); }   \
  BENCHMARK(BM_interp_##name##_fast)->Unit(benchmark::kMillisecond);                     \
  void BM_interp_##name##_safe(benchmark::State &s) { run_bench(s, src, Mode::safe); }   \
  BENCHMARK(BM_interp_##name##_safe)->Unit(benchmark::kMillisecond);                     \
  void BM_interp_##name##_checked(benchmark::State &s) { run_bench(s, src, Mode::checked); } \
  BENCHMARK(BM_interp_##name##_checked)->Unit(benchmark::kMillisecond);                  \
  void BM_interp_##name##_ref(benchmark::State &s) { run_bench(s, src, Mode::reference); } \
  BENCHMARK(BM_interp_##name##_ref)->Unit(benchmark::kMillisecond);

INTERP_BENCH(alu, kAlu)
INTERP_BENCH(ctx_loads, kCtxLoads)
INTERP_BENCH(stack, kStack)
INTERP_BENCH(helper_calls, kHelperCalls)
INTERP_BENCH(local_calls, kLocalCalls)

}  // namespace
