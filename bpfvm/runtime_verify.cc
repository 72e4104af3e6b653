// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/runtime_verify.cc: the runtime's verifier hook (see runtime_verify.h).
// Mirrors: kernel/bpf/syscall.c (bpf_prog_load -> bpf_check) (Linux 6.19)
// Emulation: program types are looked up in one process-wide registry holding the built-in
//   descriptors (raw_mem, syscall); a program of a type nobody registered yet (struct_ops,
//   iterators, tracing until their subsystems register them) is reported as rejected with that
//   reason, and runs in the checked interpreter.
#include "bpfvm/runtime_verify.h"

#include "bpfvm/prog_type.h"
#include "bpfvm/verifier.h"
#include "bpfvm/verifier_obj.h"

namespace umemcg::emu {

namespace {
const ProgTypeRegistry &registry() {
  static const ProgTypeRegistry *reg = [] {
    auto *r = new ProgTypeRegistry;
    ProgTypeRegistry::add_builtins(*r);
    return r;
  }();
  return *reg;
}
}  // namespace

bool bpf_verifier_available() { return true; }

BpfVerdict bpf_runtime_verify(const BpfObject &obj, const BpfProgram &prog, u32 log_level) {
  BpfVerdict v;
  v.available = true;
  const bpf_prog_type_desc *pt = registry().find(static_cast<bpf_prog_type>(prog.prog_type));
  if (!pt) {
    v.err = -22;  // -EINVAL, as bpf_prog_load() for an unknown type
    v.error = "program type " + std::to_string(prog.prog_type) + " is not registered";
    return v;
  }
  const BpfVerifierInputs in = bpf_verifier_inputs(obj);
  bpf_verifier_opts o = bpf_verifier_opts_for(obj, prog, in, pt);
  o.log_level = log_level;
  o.types = &registry();
  const bpf_verifier_result r = bpf_check(prog.insns, o);
  v.accepted = r.ok();
  v.err = r.err;
  v.error = r.error;
  v.log = r.log;
  v.max_ctx_offset = r.max_ctx_offset;
  return v;
}

}  // namespace umemcg::emu
