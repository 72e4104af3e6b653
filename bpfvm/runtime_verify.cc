// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/runtime_verify.cc: the runtime's verifier hook.
// Mirrors: kernel/bpf/syscall.c (bpf_prog_load -> bpf_check) (Linux 6.19)
// Emulation: no verifier is built in yet (see bpfvm/runtime_verify.h).
#include "bpfvm/runtime_verify.h"

namespace umemcg::emu {

bool bpf_verifier_available() { return false; }

BpfVerdict bpf_runtime_verify(const BpfObject &, const BpfProgram &, u32) {
  BpfVerdict v;
  v.error = "verification is not available in this build";
  return v;
}

}  // namespace umemcg::emu
