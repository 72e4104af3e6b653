// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/verifier_fuzz_regress_test.cc: regression tests for verifier bugs the verifier
// fuzz target (test/fuzz/fuzz_verifier.cc) found. Each program is the minimised finding.
#include <catch2/catch.hpp>

#include <cerrno>

#include "test/bpfvm/verifier_test_util.h"

using namespace umemcg;
using namespace umemcg::emu::testing;

TEST_CASE("verifier fuzz: ld_imm64 of a missing map in dead code is rejected",
          "[bpfvm][verifier][fuzz]") {
  // Found as: the verifier accepted, the interpreter's prepare refused an unlinked ld_imm64.
  // r0 = 0; if r0 == 0 goto exit; r1 = map[99] (never reached); exit.
  VerifierEnv env;
  const Prog dead = {BPF_MOV64_IMM(BPF_REG_0, 0), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
                     BPF_LD_MAP_FD(BPF_REG_1, 99), BPF_EXIT_INSN()};
  const bpf_verifier_result r = env.raw(dead);
  CHECK(r.err == -EBADF);
  CHECK(r.error == "fd 99 is not pointing to valid bpf_map");
  CHECK(r.error_insn == 2);
  // The same with a map that exists is accepted (the dead load is harmless).
  const Prog ok = {BPF_MOV64_IMM(BPF_REG_0, 0), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
                   BPF_LD_MAP_FD(BPF_REG_1, kArray), BPF_EXIT_INSN()};
  CHECK(env.raw(ok).ok());
  // A missing kfunc named by BPF_PSEUDO_BTF_ID, also in dead code.
  const Prog btf = {BPF_MOV64_IMM(BPF_REG_0, 0), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 2),
                    BPF_LD_IMM64_RAW(BPF_REG_1, BPF_PSEUDO_BTF_ID, 1000), BPF_EXIT_INSN()};
  CHECK_THAT(env.raw(btf).error, Catch::Contains("invalid btf_id 1000"));
}

TEST_CASE("verifier fuzz: kfunc call of a missing kfunc in dead code is rejected",
          "[bpfvm][verifier][fuzz]") {
  // Found as: the verifier accepted, the interpreter's prepare refused an unlinked kfunc call
  // ("kfunc btf_id 42 (fd_idx 0) is not linked"). The kernel resolves every kfunc call site up
  // front (add_subprog_and_kfunc()), reachable or not.
  // r0 = 0; if r0 == 0 goto exit; call kfunc#42 (never reached); exit.
  VerifierEnv env;
  const Prog dead = {BPF_MOV64_IMM(BPF_REG_0, 0), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1),
                     BPF_CALL_KFUNC(42), BPF_EXIT_INSN()};
  bpf_verifier_result r = env.raw(dead);
  CHECK(r.err == -EINVAL);
  CHECK(r.error == "kernel btf_id 42 is not a function");
  CHECK(r.error_insn == 2);
  // A module BTF fd index, dead too.
  Prog mod = {BPF_MOV64_IMM(BPF_REG_0, 0), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1),
              BPF_CALL_KFUNC(kUsage), BPF_EXIT_INSN()};
  mod[2].off = 1;
  r = env.raw(mod);
  CHECK(r.err == -EINVAL);
  CHECK_THAT(r.error, Catch::Contains("module BTF fd index (off=1)"));
  // A kfunc of the table in dead code is accepted, an unresolved weak one too (the loader
  // leaves its slot empty; only a reached call is rejected).
  const Prog ok = {BPF_MOV64_IMM(BPF_REG_0, 0), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1),
                   BPF_CALL_KFUNC(kUsage), BPF_EXIT_INSN()};
  CHECK(env.raw(ok).ok());
  const Prog weak = {BPF_MOV64_IMM(BPF_REG_0, 0), BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 1),
                     BPF_CALL_KFUNC(kUnresolved), BPF_EXIT_INSN()};
  CHECK(env.raw(weak).ok());
}
