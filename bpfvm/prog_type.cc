// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/prog_type.cc: program-type and kernel-object type registries, built-in types.
//
// Mirrors: kernel/bpf/syscall.c and net/bpf/test_run.c (BPF_PROG_TYPE_SYSCALL context rules:
//          any access inside U16_MAX bytes), kernel/bpf/helpers.c (bpf_base_func_proto)
//          (Linux 6.19)
// Emulation: see prog_type.h.
#include "bpfvm/prog_type.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "bpfvm/helper_proto.h"

namespace umemcg {

bpf_ctx_field bpf_ctx_field::scalar(std::string name, u32 off, u32 size, bool writable) {
  bpf_ctx_field f;
  f.name = std::move(name);
  f.off = off;
  f.size = size;
  f.writable = writable;
  return f;
}

bpf_ctx_field bpf_ctx_field::ptr(std::string name, u32 off, std::string btf_name, u32 flags) {
  bpf_ctx_field f;
  f.name = std::move(name);
  f.off = off;
  f.size = 8;
  f.read_sizes = BPF_SZ_8;  // a pointer is loaded whole
  f.reg_type = PTR_TO_BTF_ID | flags;
  f.btf_name = std::move(btf_name);
  return f;
}

bpf_ctx_field bpf_ctx_field::embed(std::string name, u32 off, u32 size, std::string btf_name) {
  bpf_ctx_field f;
  f.name = std::move(name);
  f.off = off;
  f.size = size;
  f.read_sizes = 0;
  f.embedded = true;
  f.reg_type = PTR_TO_BTF_ID;
  f.btf_name = std::move(btf_name);
  return f;
}

const bpf_ctx_field *bpf_find_field(const std::vector<bpf_ctx_field> &fields, u32 off, u32 size) {
  for (const bpf_ctx_field &f : fields)
    if (off >= f.off && (u64)off + size <= (u64)f.off + f.size) return &f;
  return nullptr;
}

bool bpf_prog_type_desc::helper_allowed(u32 func_id) const {
  return std::find(helpers.begin(), helpers.end(), func_id) != helpers.end();
}

const bpf_ctx_field *bpf_prog_type_desc::find_field(u32 off, u32 size) const {
  return bpf_find_field(ctx_fields, off, size);
}

}  // namespace umemcg

namespace umemcg::emu {

namespace {

absl::Status check_fields(const std::string &what, const std::vector<bpf_ctx_field> &fields,
                          u32 size) {
  for (const bpf_ctx_field &f : fields) {
    if (!f.size || (u64)f.off + f.size > size)
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: field %s [%u, +%u) outside its %u bytes", what, f.name, f.off,
                          f.size, size));
    if (base_type(f.reg_type) == PTR_TO_BTF_ID && f.btf_name.empty())
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: pointer field %s names no struct", what, f.name));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ProgTypeRegistry::add(bpf_prog_type_desc desc) {
  if (desc.name.empty()) return absl::InvalidArgumentError("program type without a name");
  if (by_name_.contains(desc.name))
    return absl::AlreadyExistsError("program type " + desc.name + " already registered");
  if (desc.ctx_kind != bpf_ctx_kind::fields && !desc.ctx_fields.empty())
    return absl::InvalidArgumentError("program type " + desc.name +
                                      ": only a struct context has fields");
  if (absl::Status st = check_fields("program type " + desc.name, desc.ctx_fields, desc.ctx_size);
      !st.ok())
    return st;
  if (desc.has_retval_range && desc.ret_min > desc.ret_max)
    return absl::InvalidArgumentError("program type " + desc.name + ": empty return range");
  types_.push_back(std::move(desc));
  by_name_[types_.back().name] = &types_.back();
  return absl::OkStatus();
}

absl::Status ProgTypeRegistry::add_struct(bpf_btf_struct s) {
  if (s.name.empty()) return absl::InvalidArgumentError("struct without a name");
  if (structs_by_name_.contains(s.name))
    return absl::AlreadyExistsError("struct " + s.name + " already registered");
  if (absl::Status st = check_fields("struct " + s.name, s.fields, s.size); !st.ok()) return st;
  structs_.push_back(std::move(s));
  structs_by_name_[structs_.back().name] = &structs_.back();
  return absl::OkStatus();
}

const bpf_prog_type_desc *ProgTypeRegistry::find(const std::string &name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const bpf_prog_type_desc *ProgTypeRegistry::find(bpf_prog_type type) const {
  for (const bpf_prog_type_desc &d : types_)
    if (d.type == type) return &d;
  return nullptr;
}

const bpf_btf_struct *ProgTypeRegistry::find_struct(const std::string &name) const {
  auto it = structs_by_name_.find(name);
  return it == structs_by_name_.end() ? nullptr : it->second;
}

std::vector<u32> bpf_base_helpers() {
  return {BPF_FUNC_map_lookup_elem,     BPF_FUNC_map_update_elem,    BPF_FUNC_map_delete_elem,
          BPF_FUNC_ktime_get_ns,        BPF_FUNC_ktime_get_boot_ns,  BPF_FUNC_get_prandom_u32,
          BPF_FUNC_get_smp_processor_id, BPF_FUNC_get_current_pid_tgid,
          BPF_FUNC_get_current_comm,    BPF_FUNC_ringbuf_output,     BPF_FUNC_ringbuf_reserve,
          BPF_FUNC_ringbuf_submit,      BPF_FUNC_ringbuf_discard,    BPF_FUNC_ringbuf_query,
          BPF_FUNC_task_storage_get,    BPF_FUNC_task_storage_delete, BPF_FUNC_loop,
          BPF_FUNC_spin_lock,           BPF_FUNC_spin_unlock,        BPF_FUNC_trace_printk,
          BPF_FUNC_probe_read_kernel,   BPF_FUNC_timer_init,         BPF_FUNC_timer_set_callback,
          BPF_FUNC_timer_start,         BPF_FUNC_timer_cancel,       BPF_FUNC_strtol,
          BPF_FUNC_strtoul,             BPF_FUNC_for_each_map_elem};
}

std::vector<u32> bpf_tracing_helpers() {
  std::vector<u32> h = bpf_base_helpers();
  h.push_back(BPF_FUNC_get_current_task_btf);
  h.push_back(BPF_FUNC_find_vma);
  h.push_back(BPF_FUNC_get_socket_cookie);
  h.push_back(BPF_FUNC_get_stack);
  for (u32 f : {BPF_FUNC_skc_to_tcp6_sock, BPF_FUNC_skc_to_tcp_sock,
                BPF_FUNC_skc_to_tcp_timewait_sock, BPF_FUNC_skc_to_tcp_request_sock,
                BPF_FUNC_skc_to_udp6_sock, BPF_FUNC_skc_to_unix_sock})
    h.push_back(f);
  return h;
}

const bpf_prog_type_desc &bpf_raw_mem_prog_type() {
  static const bpf_prog_type_desc d = [] {
    bpf_prog_type_desc t;
    t.name = "raw_mem";
    t.type = BPF_PROG_TYPE_UNSPEC;
    t.ctx_kind = bpf_ctx_kind::raw_mem;
    t.helpers = bpf_base_helpers();
    t.sleepable = bpf_sleepable::optional;
    return t;
  }();
  return d;
}

const bpf_prog_type_desc &bpf_syscall_prog_type() {
  static const bpf_prog_type_desc d = [] {
    bpf_prog_type_desc t;
    t.name = "syscall";
    t.type = BPF_PROG_TYPE_SYSCALL;
    t.ctx_kind = bpf_ctx_kind::bytes;
    t.ctx_size = 65535;  // U16_MAX: the largest ctx_size_in BPF_PROG_RUN accepts
    t.helpers = bpf_tracing_helpers();
    t.kfunc_prog_type = BPF_PROG_TYPE_SYSCALL;
    t.sleepable = bpf_sleepable::always;
    return t;
  }();
  return d;
}

void ProgTypeRegistry::add_builtins(ProgTypeRegistry &reg) {
  (void)reg.add(bpf_raw_mem_prog_type());
  (void)reg.add(bpf_syscall_prog_type());
}

}  // namespace umemcg::emu
