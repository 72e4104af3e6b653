// SPDX-License-Identifier: GPL-2.0-only
// test/fuzz/fuzz_policy.cc: libFuzzer target: `umemcg fuzz` at scale. The fuzzer's bytes choose
// the case: FuzzByteChooser decodes them into the choices of the same generator the command
// uses (tools/fuzz/fuzz_case.h), so every input is a well-formed case (a cgroup tree with
// limits, the policy object loaded and attached, workloads, control-file writes, detach and
// attach, kills, the teardown). The case runs in this process on a freshly booted simulated
// machine and is judged as the command judges it (tools/fuzz/fuzz_run.h): a kernel warning,
// a process that can never finish, a task blocked in the kernel past the stall limit, or a
// deferred memory.high debt past the debt limit aborts, after printing the case's script and
// the command that replays it; a crash of the emulated kernel is the engine's to catch.
//
// Guidance: the policy's own instruction and branch coverage (bpfvm/coverage.h), folded into
// libFuzzer's extra counters after each run, besides the edges of this file.
//
// The policy object: $UMEMCG_FUZZ_POLICY, or policy.bpf.o next to the binary (the layout of
// ClusterFuzzLite and OSS-Fuzz, see .clusterfuzzlite/build.sh). $UMEMCG_FUZZ_DEBT_LIMIT
// (pages, default 128), $UMEMCG_FUZZ_STALL_LIMIT (seconds, default 120) and
// $UMEMCG_FUZZ_ASSERT (a .bss/.data variable of the object) are the command's --debt-limit,
// --stall-limit and --assert.
//
// Run (a clang build, -Dfuzz=true):
//   mkdir -p policy-corpus
//   UMEMCG_FUZZ_POLICY=<build>/test/progs/kernfs_lockholder.bpf.o \
//     <build>/test/fuzz/umemcg-policy-fuzzer -max_total_time=600 -max_len=256 policy-corpus
// A policy author's assertion (as `umemcg fuzz --assert violated`):
//   UMEMCG_FUZZ_POLICY=<build>/test/progs/fuzz_broken.bpf.o UMEMCG_FUZZ_ASSERT=violated \
//     <build>/test/fuzz/umemcg-policy-fuzzer -max_total_time=60 -max_len=256
// shim/thread_annotations.h before abseil (see bpfvm/map.h).
#include "shim/thread_annotations.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bpfvm/coverage.h"
#include "mm/bpf_memcontrol.h"
#include "tools/fuzz/fuzz.h"
#include "tools/fuzz/fuzz_case.h"
#include "tools/fuzz/fuzz_run.h"
#include "tools/sh/sh_options.h"

namespace {

umemcg::fuzz::FuzzTarget g_target;
umemcg::fuzz::FuzzRunOptions g_run;

// libFuzzer's extra counters: a byte per (program, instruction slot, what was seen), hashed.
constexpr std::size_t kCounters = 1 << 14;
__attribute__((used, section("__libfuzzer_extra_counters"))) std::uint8_t g_counters[kCounters];

void fold_coverage(const umemcg::fuzz::FuzzOutcome &o) {
  for (const umemcg::emu::BpfCoverageProg &p : o.coverage) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the name
    for (char ch : p.name) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
    for (std::size_t i = 0; i < p.state.size(); i++) {
      for (std::uint8_t bit : {umemcg::emu::BPF_COV_HIT, umemcg::emu::BPF_COV_TAKEN,
                               umemcg::emu::BPF_COV_FALL}) {
        if (!(p.state[i] & bit)) continue;
        const std::uint64_t k = (h ^ (i * 0x9e3779b97f4a7c15ull)) * 31 + bit;
        g_counters[k % kCounters] = 1;
      }
    }
  }
}

std::string object_path(const char *argv0) {
  if (const char *env = std::getenv("UMEMCG_FUZZ_POLICY")) return env;
  std::string dir = argv0;
  const std::size_t slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  return dir + "/policy.bpf.o";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  g_target.object = object_path((*argv)[0]);
  if (char *abs = ::realpath(g_target.object.c_str(), nullptr)) {
    g_target.object = abs;
    std::free(abs);
  }
  // The kernel's BTF, kfuncs and struct_ops types, as `umemcg` registers them at start.
  umemcg::bpf_memcontrol_init();
  auto obj = umemcg::fuzz::fuzz_open_target(&g_target);
  if (!obj.ok()) {
    std::fprintf(stderr, "umemcg-policy-fuzzer: %s: %s (set UMEMCG_FUZZ_POLICY)\n",
                 g_target.object.c_str(), std::string(obj.status().message()).c_str());
    std::exit(2);
  }
  g_target.debt_limit = 128;
  if (const char *env = std::getenv("UMEMCG_FUZZ_DEBT_LIMIT"))
    g_target.debt_limit = std::strtoul(env, nullptr, 10);
  g_target.stall_limit_ns = 120ull * 1000000000ull;
  if (const char *env = std::getenv("UMEMCG_FUZZ_STALL_LIMIT")) {
    if (!umemcg::sh::parse_seconds(env, &g_target.stall_limit_ns)) {
      std::fprintf(stderr, "umemcg-policy-fuzzer: UMEMCG_FUZZ_STALL_LIMIT=%s: not seconds\n", env);
      std::exit(2);
    }
  }
  if (const char *var = std::getenv("UMEMCG_FUZZ_ASSERT"); var && *var) {
    std::string why;
    if (!umemcg::fuzz::fuzz_find_assert_var(*obj, var, &g_target, &g_run.assert_offset,
                                            &g_run.assert_size, &why)) {
      std::fprintf(stderr, "umemcg-policy-fuzzer: UMEMCG_FUZZ_ASSERT: %s\n", why.c_str());
      std::exit(2);
    }
  }
  std::fprintf(stderr, "umemcg-policy-fuzzer: %s: %zu struct_ops map(s), %zu tracing program(s)%s\n",
               g_target.object.c_str(), g_target.struct_ops_maps.size(),
               g_target.tracing_progs.size(),
               g_target.assert_var.empty() ? "" : (", asserting " + g_target.assert_var + " == 0").c_str());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  umemcg::fuzz::FuzzByteChooser ch(data, size);
  const umemcg::fuzz::FuzzCase c = umemcg::fuzz::fuzz_generate_case_from(g_target, ch);
  umemcg::emu::bpf_coverage_reset();
  const umemcg::fuzz::FuzzOutcome o = umemcg::fuzz::fuzz_run_case_here(c, g_run);
  fold_coverage(o);
  if (o.failed()) {
    std::fprintf(stderr, "umemcg-policy-fuzzer: %s: %s\n--- case (umemcg sh %s FILE) ---\n%s---\n",
                 umemcg::fuzz::fuzz_kind_name(o.kind), o.detail.c_str(),
                 umemcg::fuzz::fuzz_case_sh_options(c).c_str(),
                 umemcg::fuzz::fuzz_case_script(c).c_str());
    std::abort();
  }
  return 0;
}
