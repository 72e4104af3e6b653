// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_obj.cc: verifier tables from a loaded BpfObject.
//
// Mirrors: kernel/bpf/syscall.c (bpf_prog_load) (Linux 6.19)
// Emulation: see verifier_obj.h.
#include "bpfvm/verifier_obj.h"

#include "bpfvm/btf_util.h"

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
  o.btf = obj.btf.get();
  for (const Reloc &r : prog.relocs)  // sorted by insn_idx
    if (r.kind == RelocKind::kMapFd || r.kind == RelocKind::kMapValue)
      o.map_reloc_insns.push_back(r.insn_idx);
  return o;
}

}  // namespace umemcg::emu
