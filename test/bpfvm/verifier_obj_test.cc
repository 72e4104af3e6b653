// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/verifier_obj_test.cc: clang-compiled test programs go from the ELF loader to the
// verifier (their verification time, target S10, is measured in bench/bpfvm_verify_bench.cc).
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "bpfvm/loader.h"
#include "bpfvm/verifier_obj.h"
#include "test/bpfvm/loader_test_util.h"

using namespace umemcg;
using namespace umemcg::emu;

TEST_CASE("verifier: syscall programs of the compiled test objects verify", "[bpfvm][verifier][obj]") {
  KfuncRegistry reg;
  testing::add_memcg_kfuncs(reg);
  for (const char *name : {"globals", "maps", "memcg_ops"}) {
    LoadOptions lo;
    lo.kfuncs = &reg;
    absl::StatusOr<BpfObject> obj = load_object_file(testing::prog_path(name), lo);
    REQUIRE(obj.ok());
    const BpfVerifierInputs in = bpf_verifier_inputs(*obj);
    for (const BpfProgram &p : obj->progs) {
      if (p.prog_type != BPF_PROG_TYPE_SYSCALL) continue;
      CAPTURE(name, p.name);
      bpf_verifier_opts o = bpf_verifier_opts_for(*obj, p, in, &bpf_syscall_prog_type());
      o.log_level = BPF_LOG_LEVEL1;
      const auto t0 = std::chrono::steady_clock::now();
      const bpf_verifier_result r = bpf_check(p.insns, o);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      CAPTURE(r.log);
      if (std::string(name) == "memcg_ops" && p.name == "reclaim") {
        // This loader test program passes a css pointer read from the SYSCALL context (a plain
        // scalar to the verifier) to a kfunc taking a trusted pointer: the kernel rejects it too.
        CHECK_FALSE(r.ok());
        CHECK_THAT(r.log, Catch::Contains("expected pointer to STRUCT cgroup_subsys_state"));
      } else {
        CHECK(r.ok());
      }
      WARN(name << ":" << p.name << " verified in " << ms << " ms, " << r.insn_processed
                << " insns processed");
    }
  }
}
