// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/run_ctx.h: the state of one program run (struct bpf_run_ctx) and where the current
// task keeps it (bpf_set_run_ctx). Its own header so that the trampoline's fast path
// (BpfLoadedProg::run_in_rcu, inline in runtime.h) sets it up where it is called; the helpers
// (helpers_impl.h) read it.
//
// Mirrors: include/linux/bpf.h (struct bpf_run_ctx, bpf_set_run_ctx, bpf_reset_run_ctx)
//          (Linux 6.19)
// Emulation: the kernel's struct bpf_run_ctx is empty and each attach type extends it (the
//   trampoline's bpf_tramp_run_ctx, the cgroup programs' bpf_cg_run_ctx); here one struct
//   serves every run and holds what the interpreter's helpers need: the checked state, the
//   callback runner (bpf_loop, bpf_for_each_map_elem, bpf_find_vma), the program.
#pragma once

#include <type_traits>

#include "shim/sched.h"
#include "shim/types.h"

namespace umemcg {

struct bpf_run_checked;  // helpers_impl.h

// The state of one program run (the kernel's struct bpf_run_ctx, which program types extend).
// Trivially destructible and four words: a fast run (the struct_ops trampoline's, once per
// attached program) sets it up with a handful of stores and tears nothing down. What only a checked run
// needs, the fault's text included, lives in bpf_run_checked.
struct bpf_run_ctx {
  // A checked run (no verifier proof): helpers validate their arguments against this state and
  // record faults. nullptr in fast runs.
  bpf_run_checked *chk = nullptr;
  // Runs BPF callback cb (a BPF_PSEUDO_FUNC value) with r1..r5 = args; the runtime installs it.
  // Returns r0; a fault is recorded with bpf_run_fault().
  u64 (*run_callback)(bpf_run_ctx *ctx, u64 cb, const u64 args[5]) = nullptr;
  const void *prog = nullptr;  // the runtime's loaded program
  int callback_depth = 0;
  // A helper or a nested run faulted (bpf_loop stops at it). Its text is kept in chk->fault in
  // a checked run; a fast run's is dropped, as nothing reports it (run() reports the faults of
  // checked runs only, and the verifier rules out the ones a helper could find).
  bool faulted = false;
};
static_assert(std::is_trivially_destructible_v<bpf_run_ctx> && sizeof(bpf_run_ctx) == 32,
              "a fast run's context is four words with nothing to destroy");

namespace emu {
// The run context of a plain thread outside any task (host threads driving the interpreter
// directly); a task's is current->bpf_ctx.
extern __thread bpf_run_ctx *tls_run_ctx __attribute__((tls_model("initial-exec")));
inline bpf_run_ctx **bpf_run_ctx_slot() {
  return current ? reinterpret_cast<bpf_run_ctx **>(&current->bpf_ctx) : &tls_run_ctx;
}
}  // namespace emu

// bpf_set_run_ctx(): installs ctx on the current task (or the calling thread outside any task)
// and returns the previous one, which bpf_reset_run_ctx() puts back. Inline, as the kernel's
// (include/linux/bpf.h): every program run sets and resets it.
inline bpf_run_ctx *bpf_set_run_ctx(bpf_run_ctx *ctx) {
  bpf_run_ctx **slot = emu::bpf_run_ctx_slot();
  bpf_run_ctx *old = *slot;
  *slot = ctx;
  return old;
}
inline void bpf_reset_run_ctx(bpf_run_ctx *old) { *emu::bpf_run_ctx_slot() = old; }
inline bpf_run_ctx *bpf_current_run_ctx() { return *emu::bpf_run_ctx_slot(); }

}  // namespace umemcg
