// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/runtime_test_util.h: helpers shared by the runtime tests: a compiled test/progs
// object opened and linked (the test fails if it does not link), and a test run of one of its
// programs on a context struct the program reads and writes back, and a map value as user space
// reads it. Include after Catch2.
#pragma once

#include <cstring>
#include <memory>
#include <string>

#include "bpfvm/loader.h"
#include "bpfvm/map.h"
#include "bpfvm/runtime.h"

#ifndef UMEMCG_BPF_PROGS_DIR
#error "UMEMCG_BPF_PROGS_DIR must name the compiled test programs"
#endif

namespace umemcg::emu::testing {

// The test/progs object `file` ("rt_wq.bpf.o") loaded with lopts and linked with link.
inline std::unique_ptr<BpfLoadedObject> open_progs_object(const char *file,
                                                          const LoadOptions &lopts,
                                                          const BpfLinkOptions &link = {}) {
  auto lo = BpfLoadedObject::open(std::string(UMEMCG_BPF_PROGS_DIR) + "/" + file, lopts, link);
  INFO(lo.status().message());
  REQUIRE(lo.ok());
  return std::move(*lo);
}

// Test-runs program `prog` of lo with *ctx as its context, and copies the context back into
// *ctx as the program left it. verified: the program must have passed the verifier (it runs in
// the fast interpreter).
template <typename T>
BpfTestRunResult test_run_ctx(BpfLoadedObject &lo, const char *prog, T *ctx,
                              bool verified = false) {
  BpfLoadedProg *p = lo.find_program(prog);
  REQUIRE(p);
  if (verified) {
    INFO(p->verdict().error);
    REQUIRE(p->fast());
  }
  BpfTestRunOpts o;
  o.ctx_in.resize(sizeof(T));
  std::memcpy(o.ctx_in.data(), ctx, sizeof(T));
  BpfTestRunResult r = bpf_prog_test_run(*p, o);
  std::memcpy(ctx, o.ctx_in.data(), sizeof(T));
  return r;
}

// The value of map m at key as user space reads it (a bpf_timer or bpf_wq in it reads as zero);
// the test fails if the key has none.
template <typename V>
V lookup_value(bpf_map *m, u32 key) {
  V v{};
  REQUIRE(sys_map_lookup_elem(m, &key, &v) == 0);
  return v;
}

}  // namespace umemcg::emu::testing
