// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/kernel_env.h: the emulated kernel's BPF surface, one per process: the program types,
// kernel-object structs and kfuncs that subsystems register at boot, plus the attach points
// whose program types are derived from a function signature:
//  - struct_ops types (register_bpf_struct_ops): each function member's programs get the
//    context "the member's arguments, one u64 each", pointer arguments trusted, read-only;
//  - iterator targets (bpf_iter_reg_target): the context is the target's bpf_iter__<target>
//    struct, seen as the arguments of its iterator function (meta, then the object);
//  - tracing targets (the kernel functions fentry/fexit attach to, from vmlinux BTF): the
//    function's arguments, and for fexit its return value after them.
// bpf_kernel_prog_type() then finds the descriptor of a loaded program from its SEC() kind and
// attach target, as the kernel does from attach_btf_id and expected_attach_type.
//
// Mirrors: kernel/bpf/bpf_struct_ops.c (register_bpf_struct_ops, check_member),
//          kernel/bpf/bpf_iter.c (bpf_iter_reg_target), kernel/bpf/btf.c (btf_ctx_access,
//          prog_args_trusted), kernel/bpf/verifier.c (check_attach_btf_id,
//          check_return_code) (Linux 6.19)
// Emulation: attach points are registered by name with their signature written as KfuncArg
//   lists, instead of being read from vmlinux BTF; a tracing target is an emulator function
//   that calls the attached programs, not a patched kernel text.
// Emulation: registrations happen at boot (before objects are loaded) and are never removed;
//   descriptors keep stable addresses, so verifier results may keep pointers to them.
#pragma once

#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include <linux/bpf.h>

#include <deque>
#include <utility>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "bpfvm/kfunc.h"
#include "bpfvm/loader.h"
#include "bpfvm/object.h"
#include "bpfvm/prog_type.h"

namespace umemcg::emu {

// One function member of a struct_ops type.
struct bpf_struct_ops_member {
  std::string name;                // "high_policy"
  KfuncArg ret = KfuncArg::void_();
  std::vector<KfuncArg> args;      // at most 5 (MAX_BPF_FUNC_REG_ARGS)
  std::vector<std::string> arg_names;  // optional, for messages (defaults to argN)
  // check_member(): false rejects sleepable programs (members called from atomic context).
  bool sleepable_ok = false;
};

// A struct_ops type (struct bpf_struct_ops): its name is the C struct's name.
struct bpf_struct_ops_type {
  std::string name;  // "bpf_memcg_ops"
  std::vector<bpf_struct_ops_member> members;
  std::vector<u32> helpers;  // get_func_proto: helpers its programs may call
};

// A function fentry/fexit programs attach to, or an iterator target.
struct bpf_attach_func {
  std::string name;  // "down_read", or the iterator target "cgroup"
  KfuncArg ret = KfuncArg::void_();
  std::vector<KfuncArg> args;
  std::vector<std::string> arg_names;
  std::vector<u32> helpers;
  // Tracing targets: fentry.s/fexit.s may attach (the kernel allows sleepable programs only on
  // functions in its error-injection or sleepable lists). Iterator targets: iter.s/ allowed.
  bool sleepable_ok = false;
};

class BpfKernelEnv {
 public:
  BpfKernelEnv();
  BpfKernelEnv(const BpfKernelEnv &) = delete;
  BpfKernelEnv &operator=(const BpfKernelEnv &) = delete;

  // Kernel-object structs, kfuncs and plain program types. Errors as the registries'.
  absl::Status add_struct(bpf_btf_struct s) EXCLUDES(mu_);
  absl::Status add_kfunc(KfuncDesc k) EXCLUDES(mu_);
  absl::Status add_prog_type(bpf_prog_type_desc d) EXCLUDES(mu_);

  // Registers "struct_ops/<type>.<member>" program types. Errors: a duplicate type, a member
  // with more than 5 arguments, a pointer argument naming no registered struct.
  absl::Status register_struct_ops(const bpf_struct_ops_type &t) EXCLUDES(mu_);
  // Registers "iter/<name>" (and its sleepable form, same descriptor), and the context struct
  // bpf_iter__<name> (for CO-RE relocations of programs reading it).
  absl::Status register_iter_target(const bpf_attach_func &f) EXCLUDES(mu_);
  // Registers "fentry/<name>" and "fexit/<name>".
  absl::Status register_tracing_target(const bpf_attach_func &f) EXCLUDES(mu_);

  // The descriptor a program is verified against, or nullptr with *why set (-EINVAL-like
  // reasons: "struct_ops type bpf_x_ops is not registered", "no member y in ...").
  const bpf_prog_type_desc *prog_type_for(const BpfProgram &p, std::string *why) const
      EXCLUDES(mu_);

  // The registries themselves, for the verifier and the loader. Emulation: read without the
  // lock; registration is done before any object is loaded (boot), never concurrently.
  const ProgTypeRegistry &types() const { return types_; }
  const KfuncRegistry &kfuncs() const { return kfuncs_; }
  bool has_struct_ops(const std::string &name) const EXCLUDES(mu_);
  // The registered tracing targets (name, number of arguments), in registration order.
  std::vector<std::pair<std::string, u32>> tracing_targets() const EXCLUDES(mu_);
  // A registered struct_ops type, or nullptr (stable address: types are never removed).
  const bpf_struct_ops_type *find_struct_ops(const std::string &name) const
      EXCLUDES(mu_);

 private:
  absl::Status add_func_type(const std::string &type_name, bpf_prog_type type,
                             const std::vector<KfuncArg> &args,
                             const std::vector<std::string> &names, const KfuncArg *ret_slot,
                             u32 ptr_flags, std::vector<u32> helpers, bpf_sleepable sl,
                             std::string not_sleepable_msg, bool ret_range, s64 ret_min,
                             s64 ret_max)
      REQUIRES(mu_);

  mutable absl::Mutex mu_;
  ProgTypeRegistry types_;
  KfuncRegistry kfuncs_;
  std::deque<bpf_struct_ops_type> struct_ops_ GUARDED_BY(mu_);
  std::vector<std::pair<std::string, u32>> tracing_ GUARDED_BY(mu_);
};

// Load options against the environment: its kfuncs, and its structs as the CO-RE target
// (libbpf's vmlinux BTF).
LoadOptions bpf_kernel_load_options();

// The process's environment: the built-in program types (raw_mem, syscall) plus whatever the
// subsystems registered (mm/bpf_memcontrol.cc for memcg).
BpfKernelEnv &bpf_kernel_env();

}  // namespace umemcg::emu
