// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_obj.h: handing a loaded object's program (bpfvm/object.h) to the verifier.
//
// The loader leaves map references as indices into BpfObject::maps (ld_imm64 imm) and kfunc
// calls as indices into BpfObject::externs (call imm), so the verifier's tables are those two
// vectors in the same order: bpf_verifier_inputs() builds them once per object.
//
// Mirrors: kernel/bpf/syscall.c (bpf_prog_load -> bpf_check with the program's maps and
//          kfunc descriptors) (Linux 6.19)
// Emulation: map facts come from the MapSpec and the object's BTF (the kernel reads them from
//   the created maps).
#pragma once

#include <memory>
#include <vector>

#include "bpfvm/object.h"
#include "bpfvm/verifier.h"

namespace umemcg::emu {

struct BpfVerifierInputs {
  std::vector<bpf_verifier_map> maps;      // index = BpfObject::maps index
  std::vector<const KfuncDesc *> kfuncs;   // index = BpfObject::externs index (nullptr: none)
  // The inner-map templates maps[i].inner_map points to (heap-held: moving the inputs keeps
  // them where they are).
  std::vector<std::shared_ptr<const bpf_verifier_map>> inner_maps;
};

// The tables for every program of obj. Frozen .rodata contents are exposed for constant loads;
// they point into obj, which must outlive the verification.
BpfVerifierInputs bpf_verifier_inputs(const BpfObject &obj);

// Options to verify prog of obj as program type pt (sleepable and license from the object).
bpf_verifier_opts bpf_verifier_opts_for(const BpfObject &obj, const BpfProgram &prog,
                                        const BpfVerifierInputs &in, const bpf_prog_type_desc *pt);

// libbpf's log fixup after a failed load (fixup_log_failed_core_relo): a rejection at an
// instruction a CO-RE relocation poisoned ("invalid func unknown#195896080") names the
// relocation instead, in the error and in the log:
//   12: <invalid CO-RE relocation>
//   failed to resolve CO-RE relocation <byte_off> [7] struct s.f (0:1 @ offset 4)
void bpf_fixup_verifier_log(const BpfProgram &prog, bpf_verifier_result &r);

}  // namespace umemcg::emu
