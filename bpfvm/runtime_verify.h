// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/runtime_verify.h: the one place where the runtime asks the verifier about a program.
//
// The link step (runtime.h) calls bpf_runtime_verify() for every program of an object, with the
// loader's instructions (before any relocation is applied, as the kernel's bpf_check() sees
// them). A program whose verdict is `accepted` runs in the interpreter's fast mode; any other
// program (rejected, or no verifier available) runs in the checked mode, where every memory
// access, register read and helper argument is checked at run time.
//
// Mirrors: kernel/bpf/syscall.c (bpf_prog_load -> bpf_check) (Linux 6.19)
// Emulation: while no verifier is built in, bpf_verifier_available() is false and every verdict
//   says so (available = false, accepted = false).
#pragma once

#include <string>

#include "bpfvm/object.h"

namespace umemcg::emu {

struct BpfVerdict {
  bool available = false;  // a verifier examined the program
  bool accepted = false;   // ... and accepted it
  int err = 0;             // the verifier's error (-EINVAL, -EACCES, ...), 0 when accepted
  std::string error;       // the reason of a rejection
  std::string log;         // the verifier log
  u32 max_ctx_offset = 0;  // end of the highest ctx byte the program reads (test-run check)
  bool map_field_reads = false;  // bpf_verifier_result::map_field_reads
};

bool bpf_verifier_available();

// Verifies prog (a program of obj) at log level log_level (0, 1 or 2); allow_ptr_leaks as
// BpfLinkOptions::allow_ptr_leaks (runtime.h).
BpfVerdict bpf_runtime_verify(const BpfObject &obj, const BpfProgram &prog, u32 log_level = 1,
                              bool allow_ptr_leaks = false);

}  // namespace umemcg::emu
