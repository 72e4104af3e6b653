// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_refs.cc: reference tracking: acquired kernel objects and ring-buffer records
// must be released exactly once on every path.
//
// Mirrors: kernel/bpf/verifier.c (acquire_reference_state, release_reference_state,
//          release_reference, mark_reg_invalid, check_reference_leak) (Linux 6.19)
// A callback has no rule of its own (since Linux 6.13): it may release a reference its caller
// acquired and leave one it acquired to its caller. The walk of its iterations finds what goes
// wrong: a second release finds a register that no longer holds the reference, a leak is found
// at the main program's exit.
// Emulation: registers that held a released reference become NOT_INIT (the kernel's choice for
//   loaders without pointer-leak rights), so a use after release or a second release is an
//   uninitialised-register read.
#include <algorithm>

#include "bpfvm/verifier_state.h"

namespace umemcg {

u32 acquire_reference_state(bpf_verifier_env &env, u32 insn_idx, bpf_ref_kind kind) {
  bpf_reference_state r;
  r.id = env.new_id();
  r.insn_idx = (int)insn_idx;
  r.kind = kind;
  env.cur->refs.push_back(r);
  return r.id;
}

int release_reference(bpf_verifier_env &env, u32 ref_obj_id) {
  auto &refs = env.cur->refs;
  auto it = std::find_if(refs.begin(), refs.end(),
                         [&](const bpf_reference_state &s) { return s.id == ref_obj_id; });
  if (!ref_obj_id || it == refs.end()) {
    env.verbose_err("verifier internal error: reference id=%u not acquired", ref_obj_id);
    return -EFAULT;
  }
  refs.erase(it);
  bpf_for_each_reg(*env.cur, [&](bpf_reg_state &r) {
    // mark_reg_invalid(): a loader allowed to leak pointers keeps an unknown scalar.
    if (r.ref_obj_id != ref_obj_id) return;
    if (env.opts.allow_ptr_leaks) __mark_reg_unknown(r);
    else mark_reg_not_init(r);
  });
  return 0;
}

int check_reference_leak(bpf_verifier_env &env, bool exception_exit) {
  (void)exception_exit;
  int err = 0;
  // A subprogram's or a callback's references go back to its caller.
  if (env.cur->curframe() > 0) return 0;
  for (const bpf_reference_state &r : env.cur->refs) {
    env.verbose_err("Unreleased reference id=%u alloc_insn=%d", r.id, r.insn_idx);
    err = -EINVAL;
  }
  if (err)
    env.verbose_err("BPF_EXIT instruction in main prog would lead to reference leak");
  return err;
}

}  // namespace umemcg
