// SPDX-License-Identifier: GPL-2.0-only
// bench/bpfvm_verify_bench.cc: verification time of the sample policies (target S10: each
// verifies in <= 5 ms), one benchmark per program: BM_verify/<object>:<program>, timing
// bpf_runtime_verify() (the verifier at log level 0, as a plain load) on the loaded object.
// The objects are the clang-compiled test programs (those the verifier accepts); memcg's types
// are registered first. tools/bench_ratios.py prints the slowest against the target.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bpfvm/kernel_env.h"
#include "bpfvm/loader.h"
#include "bpfvm/runtime_verify.h"
#include "mm/bpf_memcontrol.h"

namespace {

using namespace umemcg;
using namespace umemcg::emu;

#ifdef UMEMCG_BPF_PROGS_DIR

struct Registrar {
  std::vector<std::unique_ptr<BpfObject>> objs;

  Registrar() {
    bpf_memcontrol_init();
    const LoadOptions lo = bpf_kernel_load_options();
    for (const char *name : {"memcg_policy", "memcg_core", "globals", "rt_maps", "rt_loop"}) {
      const std::string path = std::string(UMEMCG_BPF_PROGS_DIR) + "/" + name + ".bpf.o";
      absl::StatusOr<BpfObject> obj = load_object_file(path, lo);
      if (!obj.ok()) {
        std::fprintf(stderr, "bpfvm_verify_bench: %s: %s\n", path.c_str(),
                     std::string(obj.status().message()).c_str());
        continue;
      }
      objs.push_back(std::make_unique<BpfObject>(std::move(*obj)));
      const BpfObject *o = objs.back().get();
      for (size_t i = 0; i < o->progs.size(); i++) {
        // Programs that are rejected on purpose (negative tests) are not policies.
        if (!bpf_runtime_verify(*o, o->progs[i], 0).accepted) continue;
        const std::string bname = std::string("BM_verify/") + name + ":" + o->progs[i].name;
        benchmark::RegisterBenchmark(bname.c_str(), [o, i](benchmark::State &s) {
          bool accepted = true;
          for (auto _ : s) {
            BpfVerdict v = bpf_runtime_verify(*o, o->progs[i], 0);
            accepted &= v.accepted;
            benchmark::DoNotOptimize(v);
          }
          if (!accepted) s.SkipWithError("the verifier rejected the program");
        })->Unit(benchmark::kMicrosecond);
      }
    }
  }
};

const Registrar registrar;

#endif

}  // namespace
