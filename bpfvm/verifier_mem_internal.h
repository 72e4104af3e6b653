// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_mem_internal.h: stack-access functions shared by verifier_mem.cc and
// verifier_stack.cc (internal).
//
// Mirrors: kernel/bpf/verifier.c (check_stack_* family) (Linux 6.19)
// Emulation: none beyond verifier_stack.cc's.
#pragma once

#include "bpfvm/verifier_state.h"

namespace umemcg {

// [*min_off, *max_off) are frame-pointer offsets the access may touch.
int check_stack_access_within_bounds(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg,
                                     s32 off, int size, bpf_access_type t,
                                     s64 *min_off, s64 *max_off);
int check_stack_write(bpf_verifier_env &env, bpf_func_state &f, u32 regno, s64 min_off,
                      s64 max_off, int size, const bpf_reg_state &val, bool var_off);
int check_stack_read(bpf_verifier_env &env, bpf_func_state &f, u32 regno, const bpf_reg_state &ptr,
                     s64 min_off, s64 max_off, int size, bpf_reg_state *out, bool sign_ext);
int check_stack_helper_access(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg,
                              int size, bpf_access_type t);

}  // namespace umemcg
