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
