// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/runtime.cc: the link step: live maps from MapSpecs, relocations applied, kfuncs resolved,
// interpreter programs prepared.
// Mirrors: tools/lib/bpf/libbpf.c (bpf_object__create_maps, bpf_object__populate_internal_map,
//          bpf_object__relocate_data, bpf_object__load_progs) (Linux 6.19)
// Emulation: see bpfvm/runtime.h.
#include "bpfvm/runtime.h"

#include <bpf/btf.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "bpfvm/bpf_async.h"
#include "bpfvm/btf_util.h"
#include "bpfvm/coverage.h"
#include "bpfvm/helpers_impl.h"
#include "bpfvm/loader.h"
#include "bpfvm/object_dump.h"
#include "shim/errno.h"

namespace umemcg::emu {

namespace {

bool is_global_data(MapOrigin o) {
  return o == MapOrigin::kData || o == MapOrigin::kRodata || o == MapOrigin::kBss;
}

bool emulator_lacks(u32 type) {
  return type == BPF_MAP_TYPE_STRUCT_OPS || type == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
         type == BPF_MAP_TYPE_HASH_OF_MAPS;
}

void set_imm64(std::vector<bpf_insn> &insns, u32 idx, u64 v) {
  insns[idx].src_reg = 0;
  insns[idx].imm = (s32)(u32)v;
  insns[idx + 1].imm = (s32)(u32)(v >> 32);
}

// A kfunc call the registry could not resolve (an unresolved weak extern the program calls
// anyway, or a registry entry without a function).
u64 unresolved_kfunc(u64, u64, u64, u64, u64) {
  if (bpf_run_ctx *ctx = bpf_current_run_ctx()) bpf_run_fault(ctx, "call to an unresolved kfunc");
  return 0;
}

}  // namespace

BpfLoadedObject::~BpfLoadedObject() {
  // map_release_uref: no async callback of the maps may run once the programs are gone.
  for (const auto &m : maps_) bpf_map_release_async(m.get());
}

absl::StatusOr<std::unique_ptr<BpfLoadedObject>> BpfLoadedObject::open(
    const std::string &path, const KfuncRegistry *kfuncs, const BpfLinkOptions &opts) {
  LoadOptions lo;
  lo.kfuncs = kfuncs;
  return open(path, lo, opts);
}

absl::StatusOr<std::unique_ptr<BpfLoadedObject>> BpfLoadedObject::open(
    const std::string &path, const LoadOptions &lo, const BpfLinkOptions &opts) {
  auto obj = load_object_file(path, lo);
  if (!obj.ok()) return obj.status();
  return link(std::move(*obj), opts);
}

absl::StatusOr<std::unique_ptr<BpfLoadedObject>> BpfLoadedObject::link(BpfObject obj,
                                                                       const BpfLinkOptions &opts) {
  std::unique_ptr<BpfLoadedObject> lo(new BpfLoadedObject);
  lo->obj_ = std::move(obj);
  if (absl::Status s = lo->create_maps(); !s.ok()) return s;
  for (const BpfProgram &spec : lo->obj_.progs) {
    BpfLoadedProg &p = lo->progs_.emplace_back();
    p.obj_ = lo.get();
    p.spec_ = &spec;
    // One program that cannot be linked does not take the object down (the kernel loads each
    // program on its own): it is refused when run, with the reason. An unresolved kfunc
    // extern fails the whole object, as libbpf's extern resolution does.
    if (!spec.autoload) {
      p.link_error_ = "program '" + spec.name + "' is not loaded: its section '?" + spec.section +
                      "' turns autoload off";
      continue;
    }
    if (absl::Status s = lo->link_program(p, opts); !s.ok()) {
      if (absl::IsNotFound(s)) return s;
      p.link_error_ = std::string(s.message());
      p.exec_.reset();
      lo->warnings_.push_back(p.link_error_);
    }
  }
  return lo;
}

absl::Status BpfLoadedObject::create_maps() {
  for (const MapSpec &spec : obj_.maps) {
    BpfMapAttr a;
    a.map_type = spec.type;
    a.key_size = spec.key_size;
    a.value_size = spec.value_size;
    a.max_entries = spec.max_entries;
    a.map_flags = spec.map_flags;
    a.name = spec.name;
    if (is_global_data(spec.origin)) {
      // bpf_object__init_internal_map(): a one-element array of the section.
      a.map_type = BPF_MAP_TYPE_ARRAY;
      a.key_size = 4;
      a.max_entries = 1;
    } else if (spec.origin == MapOrigin::kBtfMaps) {
      a.spin_lock_off = btf_find_spin_lock_off(obj_.btf.get(), spec.btf_value_type_id);
      a.wq_off = btf_find_wq_off(obj_.btf.get(), spec.btf_value_type_id);
      a.timer_off = btf_find_timer_off(obj_.btf.get(), spec.btf_value_type_id);
    }
    if (spec.origin == MapOrigin::kStructOps || spec.origin == MapOrigin::kStructOpsLink) {
      // The struct_ops value is registered with its subsystem when attached (kernel_env), not
      // used as a map by programs: nothing to warn about.
      maps_.push_back(bpf_map_create_unsupported(a));
      continue;
    }
    if (emulator_lacks(a.map_type)) {
      warnings_.push_back("map '" + spec.name + "': " + bpf_map_type_name(a.map_type) +
                          " maps are not implemented; every operation fails with -ENOTSUPP");
      maps_.push_back(bpf_map_create_unsupported(a));
      continue;
    }
    auto m = bpf_map_create(a);
    if (!m.ok()) return m.status();
    bpf_map *map = m->get();
    if (is_global_data(spec.origin) && !spec.initial_data.empty()) {
      // bpf_object__populate_internal_map(): the section's bytes, then freeze .rodata.
      std::vector<u8> v(map->value_size, 0);
      std::memcpy(v.data(), spec.initial_data.data(), std::min<size_t>(v.size(), spec.initial_data.size()));
      const u32 zero = 0;
      if (long err = map->map_update_elem(&zero, v.data(), BPF_ANY))
        return bpf_errno_status((int)err, "map '" + spec.name + "': initial contents");
    }
    if (spec.frozen) {
      if (int err = sys_map_freeze(map)) return bpf_errno_status(err, "map '" + spec.name + "': freeze");
    }
    std::vector<BpfMapRegion> r;
    map->static_regions(&r);
    for (const BpfMapRegion &x : r) regions_.push_back({(u64)(uintptr_t)x.start, x.len, x.writable});
    maps_.push_back(std::move(*m));
  }
  return absl::OkStatus();
}

absl::Status BpfLoadedObject::link_program(BpfLoadedProg &p, const BpfLinkOptions &opts) {
  const BpfProgram &spec = *p.spec_;
  const std::string who = "program '" + spec.name + "'";
  if (opts.verify) p.verdict_ = bpf_runtime_verify(obj_, spec, opts.log_level, opts.allow_ptr_leaks);
  // Emulation: a map here is a C++ object, not laid out as the kernel's struct bpf_map, so a
  //   program the verifier accepted with reads of its fields through a map pointer (a
  //   privileged loader's, allow_ptr_leaks) is not linked.
  if (p.verdict_.accepted && p.verdict_.map_field_reads)
    return absl::FailedPreconditionError(
        who + " reads struct bpf_map fields through a map pointer, which the emulator's maps "
              "do not lay out");
  p.run_unverified_ = opts.run_unverified;

  p.insns_ = spec.insns;
  std::vector<bpf_insn> &insns = p.insns_;
  // Callback descriptors first: their addresses go into the instructions.
  for (const Reloc &r : spec.relocs) {
    if (r.kind != RelocKind::kSubprogAddr) continue;
    auto same = [&](const BpfCallback &c) { return c.target == r.target_insn; };
    if (std::find_if(p.callbacks_.begin(), p.callbacks_.end(), same) != p.callbacks_.end()) continue;
    BpfCallback &cb = p.callbacks_.emplace_back();
    cb.target = r.target_insn;
    cb.name = "insn " + std::to_string(r.target_insn);
    for (const Subprog &s : spec.subprogs)
      if (s.start == r.target_insn) cb.name = s.name;
  }
  for (const Reloc &r : spec.relocs) {
    const std::string at = who + " insn " + std::to_string(r.insn_idx);
    const bool ld64 = r.kind != RelocKind::kKfuncCall;
    if ((size_t)r.insn_idx + (ld64 ? 1 : 0) >= insns.size())
      return absl::InvalidArgumentError(at + ": relocation outside the program");
    switch (r.kind) {
      case RelocKind::kMapFd:
      case RelocKind::kMapValue: {
        if (r.map_idx >= maps_.size()) return absl::InvalidArgumentError(at + ": no such map");
        bpf_map *map = maps_[r.map_idx].get();
        u64 v = (u64)(uintptr_t)map;
        if (r.kind == RelocKind::kMapValue) {
          if (int err = map->map_direct_value_addr(&v, r.offset))
            return bpf_errno_status(err, at + ": map '" + map->name + "' value offset " +
                                             std::to_string(r.offset));
        }
        set_imm64(insns, r.insn_idx, v);
        break;
      }
      case RelocKind::kKsymAddr: {
        if (r.extern_idx >= obj_.externs.size()) return absl::InvalidArgumentError(at + ": no such extern");
        const Extern &e = obj_.externs[r.extern_idx];
        set_imm64(insns, r.insn_idx, e.kfunc && e.kfunc->fn ? (u64)(uintptr_t)e.kfunc->fn : 0);
        break;
      }
      case RelocKind::kSubprogAddr: {
        for (const BpfCallback &c : p.callbacks_)
          if (c.target == r.target_insn) set_imm64(insns, r.insn_idx, (u64)(uintptr_t)&c);
        break;
      }
      case RelocKind::kKfuncCall: {
        if (r.extern_idx >= obj_.externs.size()) return absl::InvalidArgumentError(at + ": no such extern");
        const Extern &e = obj_.externs[r.extern_idx];
        if (!e.resolved && !e.weak)
          return absl::NotFoundError(at + ": kfunc '" + e.name +
                                     "' is not resolved (no kfunc registry has it)");
        const bpf_insn &in = insns[r.insn_idx];
        bpf_func_t fn = e.kfunc && e.kfunc->fn ? e.kfunc->fn : unresolved_kfunc;
        bool dup = false;
        for (const BpfKfunc &k : p.kfuncs_) dup |= k.btf_id == in.imm && k.btf_fd_idx == in.off;
        if (!dup) p.kfuncs_.push_back({in.imm, in.off, fn});
        break;
      }
    }
  }
  // CO-RE poisoned instructions (loader_core.cc: a call to helper 0xbad2310) and writes to the
  // frame pointer: the verifier refuses a program that can reach one; in the code it proved
  // unreachable they become the kernel's dead-code filler, "ja -1" (sanitize_dead_code). A
  // checked run that reaches one spins until its instruction budget ends the run with a fault.
  auto writes_fp = [](const bpf_insn &in) {
    const u8 cls = in.code & 7;
    return in.dst_reg == BPF_REG_10 && (cls == BPF_ALU || cls == BPF_ALU64 || cls == BPF_LDX ||
                                        in.code == (BPF_LD | BPF_IMM | BPF_DW));
  };
  for (size_t i = 0; i < insns.size(); i++) {
    bpf_insn &in = insns[i];
    if (writes_fp(in)) {
      const bool ld64 = in.code == (BPF_LD | BPF_IMM | BPF_DW);
      in = bpf_insn{};
      in.code = BPF_JMP | BPF_JA;
      in.off = -1;
      if (ld64 && i + 1 < insns.size()) {
        insns[i + 1] = in;  // the second slot becomes a filler too
        i++;
      }
      continue;
    }
    if (in.code == (BPF_LD | BPF_IMM | BPF_DW)) {
      i++;  // the second slot is data
      continue;
    }
    if (in.code == (BPF_JMP | BPF_CALL) && in.src_reg == 0 && (u32)in.imm == kCorePoisonHelper) {
      in = bpf_insn{};
      in.code = BPF_JMP | BPF_JA;
      in.off = -1;
    }
  }
  // Verified programs run in the fast and checked modes: no safe-mode code.
  const BpfPrepareOpts popts{.safe_mode = false};
  auto exec = BpfExecProg::prepare({insns, bpf_helper_table(), p.kfuncs_}, popts);
  if (!exec.ok()) return absl::InvalidArgumentError(who + ": " + std::string(exec.status().message()));
  p.exec_ = std::make_unique<BpfExecProg>(std::move(*exec));
  bpf_coverage_attach(*p.exec_, p.name(), insns, 0);  // (a no-op unless coverage is on)
  for (BpfCallback &cb : p.callbacks_) {
    // Trampoline: "call <target>; exit" in front of the program (relative offsets unchanged).
    std::vector<bpf_insn> t(2);
    t[0].code = BPF_JMP | BPF_CALL;
    t[0].src_reg = BPF_PSEUDO_CALL;
    t[0].imm = (s32)cb.target + 1;
    t[1].code = BPF_JMP | BPF_EXIT;
    t.insert(t.end(), insns.begin(), insns.end());
    auto ce = BpfExecProg::prepare({t, bpf_helper_table(), p.kfuncs_}, popts);
    if (!ce.ok())
      return absl::InvalidArgumentError(who + ": callback " + cb.name + ": " +
                                        std::string(ce.status().message()));
    cb.exec = std::make_unique<BpfExecProg>(std::move(*ce));
    bpf_coverage_attach(*cb.exec, p.name(), insns, t.size() - insns.size());
  }
  return absl::OkStatus();
}

BpfLoadedProg *BpfLoadedObject::find_program(const std::string &name) {
  for (BpfLoadedProg &p : progs_)
    if (p.name() == name) return &p;
  return nullptr;
}

bpf_map *BpfLoadedObject::find_map(const std::string &name) {
  for (auto &m : maps_)
    if (m->name == name) return m.get();
  return nullptr;
}

}  // namespace umemcg::emu
