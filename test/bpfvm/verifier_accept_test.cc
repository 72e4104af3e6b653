// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/verifier_accept_test.cc: programs the verifier must accept (bounded loops, NULL
// checked map values, bounded variable offsets, subprograms, references released on every
// path, bpf_loop), pruning efficiency, the log format, and the ISA data programs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "bpfvm/asm.h"
#include "test/bpfvm/isa_data.h"
#include "test/bpfvm/verifier_test_util.h"

using namespace umemcg;
using namespace umemcg::emu::testing;

namespace {

#define ACCEPT(rule, runner, ...)                                         \
  TEST_CASE("verifier accepts: " rule, "[bpfvm][verifier][accept]") {     \
    VerifierEnv env;                                                      \
    const bpf_verifier_result r = env.runner(Prog{__VA_ARGS__});          \
    CAPTURE(r.error);                                                     \
    CHECK(r.ok());                                                        \
  }

}  // namespace

ACCEPT("a map pointer plus a known zero (the kernel allows +0)", raw,
       BPF_LD_MAP_FD(BPF_REG_1, kArray), BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, 0),
       BPF_ST_MEM(BPF_W, BPF_REG_10, -4, 0), BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4), BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), RET0)
ACCEPT("map value access after a NULL check", raw,
       LOOKUP(kArray), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_0, 40), BPF_ST_MEM(BPF_DW, BPF_REG_0, 0, 1), RET0)
ACCEPT("variable map value offset masked into bounds", raw,
       LOOKUP(kArray), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 5),
       BPF_LDX_MEM(BPF_B, BPF_REG_1, BPF_REG_0, 0), BPF_ALU64_IMM(BPF_AND, BPF_REG_1, 3),
       BPF_ALU64_IMM(BPF_LSH, BPF_REG_1, 3), BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_1),
       BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_0, 16), RET0)
ACCEPT("variable map value offset bounded by a comparison", raw,
       LOOKUP(kArray), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 5),
       BPF_LDX_MEM(BPF_B, BPF_REG_1, BPF_REG_0, 0), BPF_JMP_IMM(BPF_JGE, BPF_REG_1, 6, 3),
       BPF_ALU64_IMM(BPF_LSH, BPF_REG_1, 3), BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_1),
       BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_0, 0), RET0)
ACCEPT("bound learned on a copy applies to the original (linked scalars)", raw,
       LOOKUP(kArray), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 5),
       BPF_LDX_MEM(BPF_B, BPF_REG_1, BPF_REG_0, 0), BPF_MOV64_REG(BPF_REG_3, BPF_REG_1),
       BPF_JMP_IMM(BPF_JGT, BPF_REG_3, 40, 2), BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_1),
       BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_0, 0), RET0)
ACCEPT("signed bound check on a 32-bit value", raw,
       BPF_LDX_MEM(BPF_W, BPF_REG_2, BPF_REG_1, 0), BPF_JMP32_IMM(BPF_JSLT, BPF_REG_2, 0, 4),
       BPF_JMP32_IMM(BPF_JSGT, BPF_REG_2, 60, 3), BPF_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_2),
       BPF_LDX_MEM(BPF_B, BPF_REG_0, BPF_REG_1, 0), BPF_EXIT_INSN(), RET0)
ACCEPT("variable-offset stack access within initialised bytes", raw,
       BPF_ST_MEM(BPF_DW, BPF_REG_10, -16, 0), BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 0),
       BPF_LDX_MEM(BPF_B, BPF_REG_2, BPF_REG_1, 0), BPF_ALU64_IMM(BPF_AND, BPF_REG_2, 7),
       BPF_MOV64_REG(BPF_REG_3, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_3, -16),
       BPF_ALU64_REG(BPF_ADD, BPF_REG_3, BPF_REG_2), BPF_LDX_MEM(BPF_B, BPF_REG_0, BPF_REG_3, 0),
       BPF_EXIT_INSN())
ACCEPT("register spill and fill keep the pointer", raw,
       BPF_STX_MEM(BPF_DW, BPF_REG_10, BPF_REG_1, -8), BPF_MOV64_IMM(BPF_REG_1, 0),
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_10, -8), BPF_LDX_MEM(BPF_B, BPF_REG_0, BPF_REG_1, 63),
       BPF_EXIT_INSN())
ACCEPT("branch on a known constant prunes the dead side", raw,
       BPF_MOV64_IMM(BPF_REG_2, 3), BPF_JMP_IMM(BPF_JEQ, BPF_REG_2, 3, 1),
       BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_10, -8),  // dead: would read uninit stack
       RET0)
ACCEPT("frozen .rodata loads are constants", raw,
       BPF_LD_MAP_VALUE(BPF_REG_1, kRodata, 0), BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, 0),
       BPF_JMP_IMM(BPF_JEQ, BPF_REG_2, 7, 1), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_10, -8), RET0)
ACCEPT("bpf-to-bpf call with arguments and a stack pointer", raw,
       BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 5), BPF_MOV64_REG(BPF_REG_1, BPF_REG_10),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, -8), BPF_MOV64_IMM(BPF_REG_2, 3), BPF_CALL_REL(1),
       BPF_EXIT_INSN(),
       // callee: r0 = *(u64 *)r1 + r2
       BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 0), BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_2),
       BPF_EXIT_INSN())
ACCEPT("subprogram returning a map value pointer", raw,
       BPF_CALL_REL(3), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_0, 0),
       BPF_EXIT_INSN(), LOOKUP(kArray), BPF_EXIT_INSN())
ACCEPT("ring-buffer reserve submitted on all paths", ops,
       RESERVE16, BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 11), BPF_ST_MEM(BPF_DW, BPF_REG_0, 8, 1),
       BPF_MOV64_REG(BPF_REG_6, BPF_REG_0), BPF_EMIT_CALL(BPF_FUNC_ktime_get_ns),
       BPF_JMP_IMM(BPF_JGT, BPF_REG_0, 100, 4), BPF_MOV64_REG(BPF_REG_1, BPF_REG_6),
       BPF_MOV64_IMM(BPF_REG_2, 0), BPF_EMIT_CALL(BPF_FUNC_ringbuf_submit), BPF_JMP_A(3),
       BPF_MOV64_REG(BPF_REG_1, BPF_REG_6), BPF_MOV64_IMM(BPF_REG_2, 0),
       BPF_EMIT_CALL(BPF_FUNC_ringbuf_discard), RET0)
ACCEPT("KF_ACQUIRE / KF_RELEASE pair after a NULL check", ops,
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxTask), BPF_CALL_KFUNC(kTaskAcquire),
       BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 5), BPF_MOV64_REG(BPF_REG_6, BPF_REG_0),
       BPF_LDX_MEM(BPF_W, BPF_REG_7, BPF_REG_6, 0), BPF_MOV64_REG(BPF_REG_1, BPF_REG_6),
       BPF_CALL_KFUNC(kTaskRelease), BPF_JMP_A(0), RET0)
ACCEPT("embedded css of a trusted cgroup passed to a KF_RCU kfunc", ops,
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxCgroup), BPF_CALL_KFUNC(kGetMemcg),
       BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 5), BPF_MOV64_REG(BPF_REG_6, BPF_REG_0),
       BPF_MOV64_REG(BPF_REG_1, BPF_REG_6), BPF_CALL_KFUNC(kUsage),
       BPF_MOV64_REG(BPF_REG_1, BPF_REG_6), BPF_CALL_KFUNC(kPutMemcg), RET0)
ACCEPT("sleepable kfunc in a sleepable program", ops_sleepable,
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxMemcg), BPF_JMP_IMM(BPF_JEQ, BPF_REG_1, 0, 1),
       BPF_CALL_KFUNC(kFlush), RET0)
ACCEPT("RCU pointer field passed to a KF_RCU kfunc", ops,
       BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxTask), BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, 32),
       BPF_JMP_IMM(BPF_JEQ, BPF_REG_1, 0, 4), BPF_CALL_KFUNC(kTaskAcquire),
       BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2), BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
       BPF_CALL_KFUNC(kTaskRelease), RET0)
ACCEPT("spin lock and unlock around a map value update", ops,
       LOOKUP(kLocked), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 6), BPF_MOV64_REG(BPF_REG_6, BPF_REG_0),
       BPF_MOV64_REG(BPF_REG_1, BPF_REG_6), BPF_EMIT_CALL(BPF_FUNC_spin_lock),
       BPF_ST_MEM(BPF_DW, BPF_REG_6, 8, 1), BPF_MOV64_REG(BPF_REG_1, BPF_REG_6),
       BPF_EMIT_CALL(BPF_FUNC_spin_unlock), RET0)
ACCEPT("task storage with the trusted ctx task", ops,
       BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, kCtxTask), BPF_LD_MAP_FD(BPF_REG_1, kTaskStorage),
       BPF_MOV64_IMM(BPF_REG_3, 0), BPF_MOV64_IMM(BPF_REG_4, 1),
       BPF_EMIT_CALL(BPF_FUNC_task_storage_get), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1),
       BPF_ST_MEM(BPF_DW, BPF_REG_0, 0, 1), RET0)
ACCEPT("bpf_loop with a counter in the caller's stack", raw,
       BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 0), BPF_MOV64_IMM(BPF_REG_1, 100), BPF_LD_FUNC(BPF_REG_2, 7),
       BPF_MOV64_REG(BPF_REG_3, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_3, -8),
       BPF_MOV64_IMM(BPF_REG_4, 0), BPF_EMIT_CALL(BPF_FUNC_loop),
       BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_10, -8), BPF_EXIT_INSN(),
       // callback(index, ctx): (*(u64 *)ctx)++; return 0
       BPF_LDX_MEM(BPF_DW, BPF_REG_3, BPF_REG_2, 0), BPF_ALU64_IMM(BPF_ADD, BPF_REG_3, 1),
       BPF_STX_MEM(BPF_DW, BPF_REG_2, BPF_REG_3, 0), RET0)
ACCEPT("syscall program reads and writes its context", syscall,
       BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, 96), BPF_STX_MEM(BPF_DW, BPF_REG_1, BPF_REG_2, 8), RET0)
ACCEPT("atomic add on the stack and a map value", raw,
       BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 0), BPF_MOV64_IMM(BPF_REG_1, 1),
       BPF_ATOMIC_OP(BPF_DW, BPF_ADD, BPF_REG_10, BPF_REG_1, -8),
       BPF_ATOMIC_OP(BPF_DW, BPF_ADD | BPF_FETCH, BPF_REG_10, BPF_REG_1, -8),
       BPF_MOV64_REG(BPF_REG_0, BPF_REG_1), BPF_EXIT_INSN())

TEST_CASE("verifier: ringbuf reservations are references, NULL result holds none", "[bpfvm][verifier][accept]") {
  VerifierEnv env;
  // Only the NULL path exits without submitting.
  const Prog p = {RESERVE16, BPF_JMP_IMM(BPF_JNE, BPF_REG_0, 0, 2), RET0,
                  BPF_MOV64_REG(BPF_REG_1, BPF_REG_0), BPF_MOV64_IMM(BPF_REG_2, 0),
                  BPF_EMIT_CALL(BPF_FUNC_ringbuf_discard), RET0};
  CHECK(env.ops(p).ok());
}

TEST_CASE("verifier: the syscall type reports the highest context byte read", "[bpfvm][verifier][accept]") {
  VerifierEnv env;
  const bpf_verifier_result r =
      env.syscall(Prog{BPF_LDX_MEM(BPF_W, BPF_REG_2, BPF_REG_1, 100), RET0});
  CHECK(r.ok());
  CHECK(r.max_ctx_offset == 104);
}

TEST_CASE("verifier: bpf_get_current_task_btf gives tracing and syscall programs a trusted task",
          "[bpfvm][verifier][accept]") {
  VerifierEnv env;
  // The task goes to bpf_task_storage_get; the result is NULL-checked and written.
  const Prog p = {BPF_EMIT_CALL(BPF_FUNC_get_current_task_btf),
                  BPF_MOV64_REG(BPF_REG_2, BPF_REG_0), BPF_LD_MAP_FD(BPF_REG_1, kTaskStorage),
                  BPF_MOV64_IMM(BPF_REG_3, 0), BPF_MOV64_IMM(BPF_REG_4, BPF_LOCAL_STORAGE_GET_F_CREATE),
                  BPF_EMIT_CALL(BPF_FUNC_task_storage_get), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1),
                  BPF_ST_MEM(BPF_DW, BPF_REG_0, 0, 1), RET0};
  bpf_verifier_result r = env.syscall(p);
  CAPTURE(r.error);
  CHECK(r.ok());
  // Not a base helper: the emulator's raw_mem type (like the kernel's non-tracing types) has none.
  r = env.raw(p);
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.error, Catch::Contains("cannot use helper bpf_get_current_task_btf#158"));
}

TEST_CASE("verifier: a 1000-iteration loop with a branch in its body", "[bpfvm][verifier][accept][pruning]") {
  VerifierEnv env;
  const Prog p = {
      BPF_MOV64_IMM(BPF_REG_6, 0),                    // 0: i = 0
      BPF_MOV64_IMM(BPF_REG_7, 0),                    // 1: acc = 0
      BPF_LDX_MEM(BPF_B, BPF_REG_2, BPF_REG_1, 0),    // 2: loop: x = mem[0]
      BPF_JMP_IMM(BPF_JSET, BPF_REG_2, 1, 2),         // 3: if x & 1 goto 6
      BPF_ALU64_IMM(BPF_ADD, BPF_REG_7, 1),           // 4
      BPF_JMP_A(1),                                   // 5
      BPF_ALU64_IMM(BPF_ADD, BPF_REG_7, 2),           // 6
      BPF_ALU64_IMM(BPF_ADD, BPF_REG_6, 1),           // 7: i++
      BPF_JMP_IMM(BPF_JLT, BPF_REG_6, 1000, -7),      // 8: if i < 1000 goto loop
      BPF_MOV64_REG(BPF_REG_0, BPF_REG_7),            // 9
      BPF_EXIT_INSN(),
  };
  const bpf_verifier_result r = env.raw(p, BPF_LOG_LEVEL1);
  CAPTURE(r.error);
  REQUIRE(r.ok());
  // Without pruning the two sides of the branch would double the paths each iteration.
  CHECK(r.insn_processed < 30000);
  CHECK(r.total_states > 0);
  WARN("1000-iteration loop: " << r.insn_processed << " insns processed, " << r.total_states
                               << " states");
}

TEST_CASE("verifier: pruning keeps 24 sequential diamonds linear", "[bpfvm][verifier][accept][pruning]") {
  VerifierEnv env;
  Prog p = {BPF_MOV64_IMM(BPF_REG_7, 0)};
  for (int i = 0; i < 24; i++) {
    p.push_back(BPF_LDX_MEM(BPF_B, BPF_REG_2, BPF_REG_1, (s16)i));
    p.push_back(BPF_JMP_IMM(BPF_JGT, BPF_REG_2, 100, 2));
    p.push_back(BPF_ALU64_IMM(BPF_ADD, BPF_REG_7, 1));
    p.push_back(BPF_JMP_A(1));
    p.push_back(BPF_ALU64_IMM(BPF_ADD, BPF_REG_7, 3));
  }
  p.push_back(BPF_MOV64_IMM(BPF_REG_0, 0));
  p.push_back(BPF_EXIT_INSN());
  const bpf_verifier_result r = env.raw(p);
  CAPTURE(r.error);
  REQUIRE(r.ok());
  CHECK(r.insn_processed < 2000);
}

TEST_CASE("verifier: pruning is not fooled by a differing live value", "[bpfvm][verifier][pruning]") {
  VerifierEnv env;
  // r3 is 0 on one side and 8 on the other; after the join it indexes a 4-byte region past 60.
  const Prog p = {
      BPF_LDX_MEM(BPF_B, BPF_REG_2, BPF_REG_1, 0), BPF_MOV64_IMM(BPF_REG_3, 0),
      BPF_JMP_IMM(BPF_JGT, BPF_REG_2, 10, 1), BPF_MOV64_IMM(BPF_REG_3, 8),
      BPF_MOV64_IMM(BPF_REG_4, 0), BPF_MOV64_IMM(BPF_REG_4, 1), BPF_MOV64_IMM(BPF_REG_4, 2),
      BPF_MOV64_IMM(BPF_REG_4, 3), BPF_MOV64_IMM(BPF_REG_4, 4), BPF_JMP_A(0),
      BPF_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_3), BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_1, 56),
      BPF_EXIT_INSN()};
  const bpf_verifier_result r = env.raw(p);
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.error, Catch::Contains("invalid access to memory, mem_size=64 off=64 size=4"));
}

TEST_CASE("verifier log: level 2 prints every instruction with its state", "[bpfvm][verifier][log]") {
  VerifierEnv env;
  const bpf_verifier_result r = env.raw(Prog{RET0}, BPF_LOG_LEVEL2);
  REQUIRE(r.ok());
  // The entry state, then each instruction with the registers it read and wrote in the
  // kernel's column (vlog_alignment(): 40 for a short line), no liveness marks (kernel 6.18).
  CHECK_THAT(r.log, Catch::StartsWith("func#0 @0\n0: R1=mem(sz=64) R2=64 R10=fp0\n"
                                      "0: (b7) r0 = 0                        ; R0=0\n"));
  CHECK_THAT(r.log, Catch::Contains("1: (95) exit"));
  CHECK_THAT(r.log, Catch::Contains(
      "processed 2 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0"));
}

TEST_CASE("verifier log: level 2 prints memory and call instructions", "[bpfvm][verifier][log]") {
  VerifierEnv env;
  const bpf_verifier_result r = env.raw(Prog{LOOKUP(kArray), RET0}, BPF_LOG_LEVEL2);
  REQUIRE(r.ok());
  CHECK_THAT(r.log, Catch::Contains("0: (62) *(u32 *)(r10 -4) = 1          ; R10=fp0 fp-8=mmmm????\n"));
  CHECK_THAT(r.log, Catch::Contains("3: (18) r1 = map[idx:0]"));
  CHECK_THAT(r.log, Catch::Contains("5: (85) call bpf_map_lookup_elem#1    ; R0=map_value_or_null(id=1,map=arr,ks=4,vs=48)\n"));
}

TEST_CASE("verifier log: kfunc calls by name", "[bpfvm][verifier][log]") {
  VerifierEnv env;
  bpf_verifier_opts o = env.opts(env.test_ops);
  o.log_level = BPF_LOG_LEVEL2;
  const bpf_verifier_result r =
      bpf_check(Prog{BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, kCtxCgroup),
                     BPF_CALL_KFUNC(kGetMemcg), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
                     BPF_MOV64_REG(BPF_REG_1, BPF_REG_0), BPF_CALL_KFUNC(kPutMemcg), RET0},
                o);
  CAPTURE(r.log);
  REQUIRE(r.ok());
  CHECK_THAT(r.log, Catch::Contains("1: (85) call bpf_get_mem_cgroup#0"));
  CHECK_THAT(r.log, Catch::Contains("4: (85) call bpf_put_mem_cgroup#1"));
}

TEST_CASE("verifier log: level 1 prints the path to the error, the reason last", "[bpfvm][verifier][log]") {
  VerifierEnv env;
  const bpf_verifier_result r =
      env.raw(Prog{BPF_MOV64_IMM(BPF_REG_2, 1), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_10, -8),
                   BPF_EXIT_INSN()},
              BPF_LOG_LEVEL1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error_insn == 1);
  // As the kernel prints it (6.18): the entry state, each instruction with what it changed, the
  // failing instruction, the reason, the summary.
  CHECK(r.log ==
        "0: R1=mem(sz=64) R2=64 R10=fp0\n"
        "0: (b7) r2 = 1                        ; R2=1\n"
        "1: (79) r0 = *(u64 *)(r10 -8)\n"
        "invalid read from stack off -8+0 size 8\n"
        "processed 2 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0\n");
}

TEST_CASE("verifier log: level 1 forgets a path that ended safely", "[bpfvm][verifier][log]") {
  VerifierEnv env;
  // The fall-through exits; the jump's path fails. The kernel's log (6.18, the same program as
  // a SYSCALL program) goes back to where the jump's path was queued, just after the
  // conditional jump's line and before its state's newline, and prints the resumed state there.
  const Prog p = {BPF_LDX_MEM(BPF_B, BPF_REG_2, BPF_REG_1, 0), BPF_JMP_IMM(BPF_JGT, BPF_REG_2, 10, 2),
                  BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN(),
                  BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_2, 0), BPF_EXIT_INSN()};
  const bpf_verifier_result r = env.raw(p, BPF_LOG_LEVEL1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.log ==
        "0: R1=mem(sz=64) R2=64 R10=fp0\n"
        "0: (71) r2 = *(u8 *)(r1 +0)           ; R1=mem(sz=64) "
        "R2=scalar(smin=smin32=0,smax=umax=smax32=umax32=255,var_off=(0x0; 0xff))\n"
        "1: (25) if r2 > 0xa goto pc+2 4: R1=mem(sz=64) "
        "R2=scalar(smin=umin=smin32=umin32=11,smax=umax=smax32=umax32=255,var_off=(0x0; 0xff)) "
        "R10=fp0\n"
        "4: (79) r0 = *(u64 *)(r2 +0)\n"
        "R2 invalid mem access 'scalar'\n"
        "processed 5 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0\n");
  // An accepted program's level-1 log is the summary alone; level 2 keeps every path.
  const Prog ok = {BPF_LDX_MEM(BPF_B, BPF_REG_2, BPF_REG_1, 0), BPF_JMP_IMM(BPF_JGT, BPF_REG_2, 10, 2),
                   BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN(), BPF_MOV64_IMM(BPF_REG_0, 1),
                   BPF_EXIT_INSN()};
  const bpf_verifier_result r1 = env.raw(ok, BPF_LOG_LEVEL1);
  REQUIRE(r1.ok());
  CHECK(r1.log == "processed 6 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0\n");
  const bpf_verifier_result r2 = env.raw(ok, BPF_LOG_LEVEL2);
  CHECK_THAT(r2.log, Catch::Contains("3: (95) exit\n\nfrom 1 to 4: R1=mem(sz=64)"));
}

TEST_CASE("verifier log: level 0 keeps the reason but no log", "[bpfvm][verifier][log]") {
  VerifierEnv env;
  const bpf_verifier_result r = env.raw(Prog{BPF_EXIT_INSN()});
  CHECK(r.log.empty());
  CHECK(r.error == "R0 !read_ok");
}

TEST_CASE("verifier: ISA data programs with a result verify as raw_mem", "[bpfvm][verifier][isa]") {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto &e : fs::directory_iterator(BPFVM_TEST_DATA_DIR))
    if (e.path().extension() == ".data") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  size_t checked = 0, accepted = 0;
  std::vector<std::string> rejected;
  for (const std::string &path : files) {
    const umemcg::emu::test::IsaDataFile f = umemcg::emu::test::load_isa_data_file(path);
    if (!f.result || f.insns.empty()) continue;
    // Helper ids, kfuncs and callx mean the test's own helpers, not the kernel's; packet
    // loads need an skb. The kernel would not load those as they are.
    bool kernel_like = true;
    for (const bpf_insn &in : f.insns) {
      const u8 cls = BPF_CLASS(in.code);
      if (in.code == (BPF_JMP | BPF_CALL) && in.src_reg != BPF_PSEUDO_CALL) kernel_like = false;
      if (in.code == (BPF_JMP | BPF_CALL | BPF_X)) kernel_like = false;
      if (cls == BPF_LD && BPF_MODE(in.code) != BPF_IMM) kernel_like = false;
      if (bpf_is_ldimm64(in) && in.src_reg != 0) kernel_like = false;
    }
    if (!kernel_like) continue;
    VerifierEnv env;
    bpf_verifier_opts o = env.opts(&umemcg::emu::bpf_raw_mem_prog_type());
    o.ctx_mem_size = (u32)f.mem.size();
    const bpf_verifier_result r = bpf_check(f.insns, o);
    checked++;
    if (r.ok()) {
      accepted++;
      continue;
    }
    // Programs the kernel's verifier rejects too: division by an immediate zero, shifts by an
    // out-of-range immediate, dead code (the generated jump tests skip instructions), jumps
    // across a subprogram boundary, call chains over 512 bytes of stack. Pointer minus
    // pointer is the kernel's for CAP_PERFMON loaders only (Emulation: no pointer leaks).
    static const char *const kKernelRejects[] = {
        "div by zero", "invalid shift", "unreachable insn", "jump out of range",
        "combined stack size", "pointer -= pointer prohibited"};
    bool known = false;
    for (const char *k : kKernelRejects) known |= r.error.find(k) != std::string::npos;
    if (!known) rejected.push_back(fs::path(path).filename().string() + ": " + r.error);
  }
  for (const std::string &s : rejected) UNSCOPED_INFO(s);
  CHECK(checked >= 100);
  CHECK(accepted >= 100);
  CHECK(rejected.empty());
  WARN("ISA data programs verified: " << accepted << " of " << checked);
}

// A signed range across the sign bit meets the unsigned range in one piece only: the write to
// r10 is on a path no value takes (__reg64_deduce_bounds / __reg32_deduce_bounds).
ACCEPT("s64 range across the sign bit narrowed by the u64 range", raw,
       BPF_EMIT_CALL(BPF_FUNC_get_prandom_u32),
       BPF_RAW(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_0, BPF_REG_0, 8, 0),  // r0 = (s8)r0
       BPF_LD_IMM64(BPF_REG_1, 0xffffffffffffff00ull),
       BPF_JMP_REG(BPF_JGT, BPF_REG_0, BPF_REG_1, 2), BPF_JMP_IMM(BPF_JLT, BPF_REG_0, 128, 1),
       BPF_MOV64_IMM(BPF_REG_10, 0), BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN())
ACCEPT("s32 range across the sign bit narrowed by the u32 range", raw,
       BPF_EMIT_CALL(BPF_FUNC_get_prandom_u32), BPF_ALU32_IMM(BPF_AND, BPF_REG_0, -1),
       BPF_JMP32_IMM(BPF_JGT, BPF_REG_0, (s32)0x80000003, 4),
       BPF_JMP32_IMM(BPF_JSLT, BPF_REG_0, -3, 3), BPF_JMP32_IMM(BPF_JSGT, BPF_REG_0, 5, 2),
       BPF_JMP32_IMM(BPF_JLE, BPF_REG_0, 5, 1), BPF_MOV64_IMM(BPF_REG_10, 0), BPF_EXIT_INSN())

// w3 = w2 where r2's high half is zero: r3 and r2 are linked, so the bound learned on w2
// applies to r3 and the r1 read is dead.
ACCEPT("a 32-bit copy of a value with a zero high half is linked to its source", raw,
       BPF_EMIT_CALL(BPF_FUNC_ktime_get_ns), BPF_STX_MEM(BPF_DW, BPF_REG_10, BPF_REG_0, -8),
       BPF_LDX_MEM(BPF_W, BPF_REG_2, BPF_REG_10, -8),
       BPF_RAW(BPF_ALU | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_2, 0, 0),
       BPF_JMP32_IMM(BPF_JLT, BPF_REG_2, 9, 1), BPF_EXIT_INSN(),
       BPF_JMP_IMM(BPF_JLT, BPF_REG_3, 9, 1), BPF_ALU64_REG(BPF_SUB, BPF_REG_0, BPF_REG_1),
       BPF_EXIT_INSN())

TEST_CASE("verifier accepts: a sign-extending move of a pointer is a scalar when ptr leaks are allowed",
          "[bpfvm][verifier][accept]") {
  VerifierEnv env;
  bpf_verifier_opts o = env.opts(&umemcg::emu::bpf_syscall_prog_type());
  const Prog p = {BPF_RAW(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_0, BPF_REG_10, 32, 0), RET0};
  CHECK(bpf_check(p, o).error == "R10 sign-extension part of pointer");
  o.allow_ptr_leaks = true;
  const bpf_verifier_result r = bpf_check(p, o);
  CAPTURE(r.error);
  CHECK(r.ok());
}

TEST_CASE("verifier accepts: a negated pointer is a scalar when ptr leaks are allowed",
          "[bpfvm][verifier][accept]") {
  VerifierEnv env;
  bpf_verifier_opts o = env.opts(&umemcg::emu::bpf_syscall_prog_type());
  const Prog p = {BPF_MOV64_REG(BPF_REG_1, BPF_REG_10), BPF_RAW(BPF_ALU64 | BPF_NEG, BPF_REG_1, 0, 0, 0),
                  BPF_MOV64_REG(BPF_REG_0, BPF_REG_1), BPF_EXIT_INSN()};
  CHECK(bpf_check(p, o).error == "R1 pointer arithmetic prohibited");
  o.allow_ptr_leaks = true;
  const bpf_verifier_result r = bpf_check(p, o);
  CAPTURE(r.error);
  CHECK(r.ok());
}

// A subprogram may return with a bpf_spin_lock held; its caller releases it.
ACCEPT("a lock taken in a subprogram and released by its caller", syscall,
       BPF_ST_MEM(BPF_W, BPF_REG_10, -4, 0), BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
       BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4), BPF_LD_MAP_FD(BPF_REG_1, kLocked),
       BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), BPF_JMP_IMM(BPF_JNE, BPF_REG_0, 0, 1),
       BPF_EXIT_INSN(), BPF_MOV64_REG(BPF_REG_6, BPF_REG_0), BPF_MOV64_REG(BPF_REG_1, BPF_REG_0),
       BPF_CALL_REL(4), BPF_MOV64_REG(BPF_REG_1, BPF_REG_6), BPF_EMIT_CALL(BPF_FUNC_spin_unlock),
       BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN(),
       BPF_EMIT_CALL(BPF_FUNC_spin_lock), BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN())

TEST_CASE("verifier: a released pointer is an unknown scalar when ptr leaks are allowed",
          "[bpfvm][verifier][accept]") {
  VerifierEnv env;
  bpf_verifier_opts o = env.opts(&umemcg::emu::bpf_syscall_prog_type());
  // r8 = ringbuf_reserve(); discard(r8); r0 = r8 (a read of the released register).
  const Prog p = {BPF_LD_MAP_FD(BPF_REG_1, kRingbuf), BPF_MOV64_IMM(BPF_REG_2, 8),
                  BPF_MOV64_IMM(BPF_REG_3, 0), BPF_EMIT_CALL(BPF_FUNC_ringbuf_reserve),
                  BPF_JMP_IMM(BPF_JNE, BPF_REG_0, 0, 1), BPF_EXIT_INSN(),
                  BPF_MOV64_REG(BPF_REG_8, BPF_REG_0), BPF_MOV64_REG(BPF_REG_1, BPF_REG_8),
                  BPF_MOV64_IMM(BPF_REG_2, 0), BPF_EMIT_CALL(BPF_FUNC_ringbuf_discard),
                  BPF_MOV64_REG(BPF_REG_0, BPF_REG_8), BPF_MOV64_IMM(BPF_REG_0, 0),
                  BPF_EXIT_INSN()};
  CHECK(bpf_check(p, o).error == "R8 !read_ok");
  o.allow_ptr_leaks = true;
  const bpf_verifier_result r = bpf_check(p, o);
  CAPTURE(r.error);
  CHECK(r.ok());
}

// A subprogram returning without setting r0, whose caller never reads it.
ACCEPT("a subprogram's unset r0 that its caller does not read", raw,
       BPF_CALL_REL(2), BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN(),
       BPF_MOV64_IMM(BPF_REG_1, 1), BPF_EXIT_INSN())

// --- map lookups with a constant key (get_constant_map_key(), kernel 6.14+) -----------------

namespace {

// r2 = fp + key_off; r0 = bpf_map_lookup_elem(map, r2); r1 = *(u64 *)r0 without a NULL check.
Prog lookup_deref(Prog key_store, int map, s16 key_off) {
  Prog p = std::move(key_store);
  for (const bpf_insn &i : Prog{BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),
                                BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, key_off),
                                BPF_LD_MAP_FD(BPF_REG_1, map),
                                BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem),
                                BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_0, 0), RET0})
    p.push_back(i);
  return p;
}

}  // namespace

TEST_CASE("verifier: an array lookup with a constant key in range is not NULL", "[bpfvm][verifier][maps]") {
  VerifierEnv env;
  // As the kernel (6.18, these programs as SYSCALL programs): a spilled 4-byte constant (BPF_ST
  // or a register) at a slot's start, or four known-zero bytes.
  const Prog accepted[] = {
      lookup_deref({BPF_ST_MEM(BPF_W, BPF_REG_10, -8, 3)}, kArray, -8),
      lookup_deref({BPF_ST_MEM(BPF_W, BPF_REG_10, -4, 0)}, kArray, -4),
      lookup_deref({BPF_MOV64_IMM(BPF_REG_3, 15), BPF_STX_MEM(BPF_W, BPF_REG_10, BPF_REG_3, -8)},
                   kArray, -8),
  };
  for (const Prog &p : accepted) {
    const bpf_verifier_result r = env.raw(p, BPF_LOG_LEVEL2);
    CAPTURE(r.log);
    CHECK(r.ok());
    CHECK_THAT(r.log, Catch::Contains("call bpf_map_lookup_elem#1    ; R0=map_value(map=arr,ks=4,vs=48)"));
  }
  // Not a known key: unaligned non-zero bytes, an 8-byte spill for a 4-byte key, a key past
  // max_entries (16), a hash map.
  const Prog rejected[] = {
      lookup_deref({BPF_ST_MEM(BPF_W, BPF_REG_10, -4, 1)}, kArray, -4),
      lookup_deref({BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 3)}, kArray, -8),
      lookup_deref({BPF_ST_MEM(BPF_W, BPF_REG_10, -8, 16)}, kArray, -8),
      lookup_deref({BPF_ST_MEM(BPF_DW, BPF_REG_10, -8, 3)}, kHash, -8),
  };
  for (const Prog &p : rejected) {
    const bpf_verifier_result r = env.raw(p);
    CHECK_FALSE(r.ok());
    CHECK(r.error == "R0 invalid mem access 'map_value_or_null'");
  }
}

TEST_CASE("verifier: a constant key's slot keeps states apart", "[bpfvm][verifier][maps][pruning]") {
  VerifierEnv env;
  // The key is 20 (out of range) on the jump's path and 3 on the fall-through, which is walked
  // first: the state at the join with key 3 must not cover the one with key 20 (the kernel
  // marks the slot precise; here it is precise statically).
  Prog p = {BPF_LDX_MEM(BPF_B, BPF_REG_2, BPF_REG_1, 0), BPF_ST_MEM(BPF_W, BPF_REG_10, -8, 20),
            BPF_JMP_IMM(BPF_JGT, BPF_REG_2, 10, 1), BPF_ST_MEM(BPF_W, BPF_REG_10, -8, 3)};
  p = lookup_deref(p, kArray, -8);
  const bpf_verifier_result r = env.raw(p);
  CHECK_FALSE(r.ok());
  CHECK(r.error == "R0 invalid mem access 'map_value_or_null'");
  CHECK(r.error_insn == 9);
}

TEST_CASE("verifier: bpf_get_smp_processor_id() is below the CPU count", "[bpfvm][verifier][helpers]") {
  VerifierEnv env;
  // value[cpu] of an array value of 48 bytes (6 u64): in bounds with up to 6 CPUs.
  Prog p = {BPF_EMIT_CALL(BPF_FUNC_get_smp_processor_id), BPF_MOV64_REG(BPF_REG_6, BPF_REG_0),
            BPF_ALU64_IMM(BPF_LSH, BPF_REG_6, 3)};
  p = lookup_deref(p, kArray, -8);
  // lookup_deref's key store: a constant key at fp-8, before the lookup.
  p.insert(p.begin(), BPF_ST_MEM(BPF_W, BPF_REG_10, -8, 0));
  // r0 += r6 before the load.
  p.insert(p.end() - 3, BPF_ALU64_REG(BPF_ADD, BPF_REG_0, BPF_REG_6));
  bpf_verifier_opts o = env.opts(&umemcg::emu::bpf_raw_mem_prog_type());
  o.nr_cpu_ids = 6;
  bpf_verifier_result r = bpf_check(p, o);
  CAPTURE(r.error);
  CHECK(r.ok());
  o.nr_cpu_ids = 7;
  r = bpf_check(p, o);
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.error, Catch::Contains("invalid access to map value, value_size=48 off=48 size=8"));
  // The default: NR_CPUS (64).
  o.nr_cpu_ids = 0;
  o.log_level = BPF_LOG_LEVEL2;
  r = bpf_check(p, o);
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.log, Catch::Contains("call bpf_get_smp_processor_id#8"));
  CHECK_THAT(r.log, Catch::Contains("; R0=scalar(smin=smin32=0,smax=umax=smax32=umax32=63,var_off=(0x0; 0x3f))"));
}
// bpf_get_socket_cookie(NULL): the tracing variant's argument may be NULL (cookie 0).
ACCEPT("bpf_get_socket_cookie of NULL", syscall, BPF_MOV64_IMM(BPF_REG_1, 0),
       BPF_EMIT_CALL(BPF_FUNC_get_socket_cookie), BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN())
// The callback of verifier_reject_test.cc's "unsafe on its second iteration", called once.
ACCEPT("bpf_loop callback unsafe on a second iteration, called once", syscall,
       BPF_MOV64_IMM(BPF_REG_1, 0), BPF_STX_MEM(BPF_DW, BPF_REG_10, BPF_REG_1, -8),
       BPF_MOV64_IMM(BPF_REG_1, 1), BPF_LD_FUNC(BPF_REG_2, 7),
       BPF_MOV64_REG(BPF_REG_3, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_3, -8),
       BPF_MOV64_IMM(BPF_REG_4, 0), BPF_EMIT_CALL(BPF_FUNC_loop), BPF_MOV64_IMM(BPF_REG_0, 0),
       BPF_EXIT_INSN(), BPF_LDX_MEM(BPF_DW, BPF_REG_3, BPF_REG_2, 0),
       BPF_JMP_IMM(BPF_JEQ, BPF_REG_3, 0, 1), BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_4, 0),
       BPF_MOV64_IMM(BPF_REG_3, 1), BPF_STX_MEM(BPF_DW, BPF_REG_2, BPF_REG_3, 0),
       BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN())
