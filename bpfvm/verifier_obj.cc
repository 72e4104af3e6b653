// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_obj.cc: verifier tables from a loaded BpfObject, and libbpf's fixup of the
// log of a failed load.
//
// Mirrors: kernel/bpf/syscall.c (bpf_prog_load), tools/lib/bpf/libbpf.c
//          (fixup_log_failed_core_relo) (Linux 6.19)
// Emulation: see verifier_obj.h.
#include "bpfvm/verifier_obj.h"

#include "bpfvm/btf_util.h"
#include "bpfvm/loader.h"

namespace umemcg::emu {

namespace {

bpf_verifier_map verifier_map(const BpfObject &obj, const MapSpec &m) {
  bpf_verifier_map vm;
  vm.name = m.name;
  vm.map_type = m.type;
  vm.key_size = m.key_size;
  vm.value_size = m.value_size;
  vm.max_entries = m.max_entries;
  vm.map_flags = m.map_flags;
  vm.rdonly_prog = m.frozen || (m.map_flags & BPF_F_RDONLY_PROG);
  if (m.frozen && m.initial_data.size() >= m.value_size) vm.frozen_value = m.initial_data.data();
  // The same lookup as the map's creation (runtime.cc): the verifier and the map agree.
  vm.spin_lock_off = btf_find_spin_lock_off(obj.btf.get(), m.btf_value_type_id);
  vm.wq_off = btf_find_wq_off(obj.btf.get(), m.btf_value_type_id);
  vm.timer_off = btf_find_timer_off(obj.btf.get(), m.btf_value_type_id);
  return vm;
}

}  // namespace

BpfVerifierInputs bpf_verifier_inputs(const BpfObject &obj) {
  BpfVerifierInputs in;
  for (const MapSpec &m : obj.maps) {
    bpf_verifier_map vm = verifier_map(obj, m);
    if (m.inner) {
      auto inner = std::make_shared<const bpf_verifier_map>(verifier_map(obj, *m.inner));
      vm.inner_map = inner.get();
      in.inner_maps.push_back(std::move(inner));
    }
    in.maps.push_back(vm);
  }
  for (const Extern &e : obj.externs) in.kfuncs.push_back(e.kind == ExternKind::kKfunc ? e.kfunc : nullptr);
  return in;
}

bpf_verifier_opts bpf_verifier_opts_for(const BpfObject &obj, const BpfProgram &prog,
                                        const BpfVerifierInputs &in, const bpf_prog_type_desc *pt) {
  bpf_verifier_opts o;
  o.prog_type = pt;
  o.sleepable = prog.sleepable;
  o.gpl_compatible = license_is_gpl_compatible(obj.license);
  o.maps = in.maps;
  o.kfuncs = in.kfuncs;
  o.maps_by_reloc = true;
  o.line_info = prog.line_info;
  o.func_info = prog.func_info;
  o.btf = obj.btf.get();
  for (const Reloc &r : prog.relocs)  // sorted by insn_idx
    if (r.kind == RelocKind::kMapFd || r.kind == RelocKind::kMapValue)
      o.map_reloc_insns.push_back(r.insn_idx);
  return o;
}

void bpf_fixup_verifier_log(const BpfProgram &prog, bpf_verifier_result &r) {
  const std::string poison = "invalid func unknown#" + std::to_string(kCorePoisonHelper);
  if (r.ok() || r.error_insn < 0) return;
  const size_t nl = r.error.rfind('\n');
  const size_t from = nl == std::string::npos ? 0 : nl + 1;
  if (r.error.compare(from, std::string::npos, poison) != 0) return;
  const CorePoison *cp = nullptr;
  for (const CorePoison &c : prog.core_poison)
    if (c.insn_idx == (u32)r.error_insn) cp = &c;
  if (!cp) return;
  const std::string why = "failed to resolve CO-RE relocation " + cp->spec;
  r.error = r.error.substr(0, from) + why;
  // The log: the call's line and the reason become the relocation's two lines.
  const std::string call = std::to_string(r.error_insn) + ": (85) call unknown#" +
                           std::to_string(kCorePoisonHelper);
  const size_t at = r.log.rfind(call + "\n" + poison + "\n");
  if (at != std::string::npos && (at == 0 || r.log[at - 1] == '\n'))
    r.log.replace(at, call.size() + poison.size() + 2,
                  std::to_string(r.error_insn) + ": <invalid CO-RE relocation>\n" + why + "\n");
}

}  // namespace umemcg::emu
