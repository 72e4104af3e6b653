// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/runtime_verify.cc: the runtime's verifier hook (see runtime_verify.h).
// Mirrors: kernel/bpf/syscall.c (bpf_prog_load -> bpf_check) (Linux 6.19)
// Emulation: program types, structs and kfuncs come from the process's BpfKernelEnv
//   (kernel_env.h): the built-in descriptors (raw_mem, syscall) plus what subsystems registered.
//   A program whose type or attach point nobody registered is reported as rejected with that
//   reason (-EINVAL, as bpf_prog_load() for an unknown attach target).
#include "bpfvm/runtime_verify.h"

#include "bpfvm/kernel_env.h"
#include "bpfvm/prog_type.h"
#include "bpfvm/verifier.h"
#include "bpfvm/verifier_obj.h"

namespace umemcg::emu {

bool bpf_verifier_available() { return true; }

BpfVerdict bpf_runtime_verify(const BpfObject &obj, const BpfProgram &prog, u32 log_level,
                              bool allow_ptr_leaks) {
  BpfVerdict v;
  v.available = true;
  const BpfKernelEnv &env = bpf_kernel_env();
  std::string why;
  const bpf_prog_type_desc *pt = env.prog_type_for(prog, &why);
  if (!pt) {
    v.err = -22;  // -EINVAL, as bpf_prog_load() for an unknown type or attach target
    v.error = why;
    return v;
  }
  const BpfVerifierInputs in = bpf_verifier_inputs(obj);
  bpf_verifier_opts o = bpf_verifier_opts_for(obj, prog, in, pt);
  o.log_level = log_level;
  o.allow_ptr_leaks = allow_ptr_leaks;
  o.types = &env.types();
  bpf_verifier_result r = bpf_check(prog.insns, o);
  bpf_fixup_verifier_log(prog, r);
  v.accepted = r.ok();
  v.err = r.err;
  v.error = r.error;
  v.log = r.log;
  v.max_ctx_offset = r.max_ctx_offset;
  v.map_field_reads = r.map_field_reads;
  return v;
}

}  // namespace umemcg::emu
