// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/kernel_env.cc: the process's BPF kernel environment (see kernel_env.h).
//
// Mirrors: kernel/bpf/btf.c (btf_ctx_access, prog_args_trusted), kernel/bpf/bpf_struct_ops.c,
//          kernel/bpf/bpf_iter.c, kernel/bpf/verifier.c (check_attach_btf_id,
//          check_return_code) (Linux 6.19)
// Emulation: see kernel_env.h.
#include "bpfvm/kernel_env.h"

#include "absl/strings/str_format.h"
#include "bpfvm/bpf_async.h"
#include "bpfvm/object_dump.h"
#include "shim/bug.h"

namespace umemcg::emu {

BpfKernelEnv::BpfKernelEnv() {
  ProgTypeRegistry::add_builtins(types_);
  // kernel/bpf/helpers.c's common kfunc set (every program type): the bpf_wq kfuncs.
  for (KfuncDesc &k : bpf_async_kfuncs()) {
    absl::Status st = kfuncs_.add(std::move(k));
    BUG_ON(!st.ok());
  }
}

absl::Status BpfKernelEnv::add_struct(bpf_btf_struct s) {
  absl::MutexLock l(&mu_);
  return types_.add_struct(std::move(s));
}

absl::Status BpfKernelEnv::add_kfunc(KfuncDesc k) {
  absl::MutexLock l(&mu_);
  return kfuncs_.add(std::move(k));
}

absl::Status BpfKernelEnv::add_prog_type(bpf_prog_type_desc d) {
  absl::MutexLock l(&mu_);
  return types_.add(std::move(d));
}

// The context of a program attached to a function: one u64 slot per argument (btf_ctx_access:
// the offset must be a multiple of 8; a pointer argument is loaded whole and yields a handle
// of its struct, with ptr_flags; a scalar may be read narrower, from its low bytes), then for
// fexit the return value. A pointer to a struct nobody registered is an error: the verifier
// could not type the loads through it.
absl::Status BpfKernelEnv::add_func_type(const std::string &type_name, bpf_prog_type type,
                                         const std::vector<KfuncArg> &args,
                                         const std::vector<std::string> &names,
                                         const KfuncArg *ret_slot, u32 ptr_flags,
                                         std::vector<u32> helpers, bpf_sleepable sl,
                                         std::string not_sleepable_msg, bool ret_range,
                                         s64 ret_min, s64 ret_max) {
  if (args.size() > 5)
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %zu arguments, at most 5", type_name, args.size()));
  bpf_prog_type_desc d;
  d.name = type_name;
  d.type = type;
  d.ctx_kind = bpf_ctx_kind::fields;
  auto slot = [&](const KfuncArg &a, const std::string &name, u32 off) -> absl::Status {
    switch (a.kind) {
      case KfuncArgKind::kScalar:
      case KfuncArgKind::kMemSize:
        d.ctx_fields.push_back(bpf_ctx_field::scalar(name, off, 8));
        return absl::OkStatus();
      case KfuncArgKind::kPtrToStruct:
        if (!types_.find_struct(a.struct_name))
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s: argument %s points to struct %s, which is not registered", type_name, name,
              a.struct_name));
        d.ctx_fields.push_back(bpf_ctx_field::ptr(name, off, a.struct_name,
                                                  ptr_flags | (a.nullable ? PTR_MAYBE_NULL : 0)));
        return absl::OkStatus();
      default:
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: argument %s has a type an attach point cannot have", type_name,
                            name));
    }
  };
  u32 off = 0;
  for (size_t i = 0; i < args.size(); i++, off += 8) {
    const std::string name = i < names.size() ? names[i] : absl::StrFormat("arg%zu", i);
    if (absl::Status st = slot(args[i], name, off); !st.ok()) return st;
  }
  if (ret_slot && ret_slot->kind != KfuncArgKind::kVoid) {
    if (absl::Status st = slot(*ret_slot, "retval", off); !st.ok()) return st;
    off += 8;
  }
  d.ctx_size = off ? off : 8;
  d.helpers = std::move(helpers);
  d.kfunc_prog_type = type;
  d.sleepable = sl;
  d.not_sleepable_msg = std::move(not_sleepable_msg);
  d.has_retval_range = ret_range;
  d.ret_min = ret_min;
  d.ret_max = ret_max;
  return types_.add(std::move(d));
}

absl::Status BpfKernelEnv::register_struct_ops(const bpf_struct_ops_type &t) {
  absl::MutexLock l(&mu_);
  for (const bpf_struct_ops_type &o : struct_ops_)
    if (o.name == t.name)
      return absl::AlreadyExistsError("struct_ops type " + t.name + " already registered");
  for (const bpf_struct_ops_member &m : t.members) {
    // struct_ops arguments are trusted (prog_args_trusted) and the context is read-only
    // (is_valid_access of a struct_ops with BPF_READ only). No return range: the kernel checks
    // none for a struct_ops member with a non-void result, and r0 is not read for void.
    const std::vector<u32> helpers = t.helpers.empty() ? bpf_base_helpers() : t.helpers;
    if (absl::Status st = add_func_type("struct_ops/" + t.name + "." + m.name,
                                        BPF_PROG_TYPE_STRUCT_OPS, m.args, m.arg_names, nullptr,
                                        PTR_TRUSTED, helpers,
                                        m.sleepable_ok ? bpf_sleepable::optional
                                                       : bpf_sleepable::never,
                                        // check_struct_ops_btf_id() when check_member refuses
                                        "attach to unsupported member " + m.name +
                                            " of struct " + t.name,
                                        false, 0, 0);
        !st.ok())
      return st;
  }
  struct_ops_.push_back(t);
  return absl::OkStatus();
}

absl::Status BpfKernelEnv::register_iter_target(const bpf_attach_func &f) {
  absl::MutexLock l(&mu_);
  // Iterator arguments are trusted (prog_args_trusted for BPF_TRACE_ITER); r0 must be 0 or 1
  // (check_return_code's default range for iterators); iter.s/ makes it sleepable.
  if (absl::Status st =
          add_func_type("iter/" + f.name, BPF_PROG_TYPE_TRACING, f.args, f.arg_names, nullptr,
                        PTR_TRUSTED, f.helpers.empty() ? bpf_tracing_helpers() : f.helpers,
                        f.sleepable_ok ? bpf_sleepable::optional : bpf_sleepable::never, {},
                        true, 0, 1);
      !st.ok())
    return st;
  // struct bpf_iter__<name> { meta; object; }: the same fields as the context.
  const bpf_prog_type_desc *d = types_.find("iter/" + f.name);
  return types_.add_struct({"bpf_iter__" + f.name, d->ctx_size, d->ctx_fields});
}

absl::Status BpfKernelEnv::register_tracing_target(const bpf_attach_func &f) {
  absl::MutexLock l(&mu_);
  // fentry/fexit arguments are plain PTR_TO_BTF_ID (not trusted: prog_args_trusted is false for
  // them); both must return 0.
  const std::vector<u32> helpers = f.helpers.empty() ? bpf_tracing_helpers() : f.helpers;
  // check_attach_btf_id(): "<func> is not sleepable" for a target outside the kernel's lists.
  const bpf_sleepable sl = f.sleepable_ok ? bpf_sleepable::optional : bpf_sleepable::never;
  const std::string msg = f.name + " is not sleepable";
  if (absl::Status st = add_func_type("fentry/" + f.name, BPF_PROG_TYPE_TRACING, f.args,
                                      f.arg_names, nullptr, 0, helpers, sl, msg, true, 0, 0);
      !st.ok())
    return st;
  if (absl::Status st = add_func_type("fexit/" + f.name, BPF_PROG_TYPE_TRACING, f.args,
                                      f.arg_names, &f.ret, 0, helpers, sl, msg, true, 0, 0);
      !st.ok())
    return st;
  tracing_.emplace_back(f.name, static_cast<u32>(f.args.size()));
  return absl::OkStatus();
}

std::vector<std::pair<std::string, u32>> BpfKernelEnv::tracing_targets() const {
  absl::MutexLock l(&mu_);
  return tracing_;
}

bool BpfKernelEnv::has_struct_ops(const std::string &name) const {
  return find_struct_ops(name) != nullptr;
}

const bpf_struct_ops_type *BpfKernelEnv::find_struct_ops(const std::string &name) const {
  absl::MutexLock l(&mu_);
  for (const bpf_struct_ops_type &o : struct_ops_)
    if (o.name == name) return &o;
  return nullptr;
}

const bpf_prog_type_desc *BpfKernelEnv::prog_type_for(const BpfProgram &p,
                                                      std::string *why) const {
  absl::MutexLock l(&mu_);
  std::string name;
  switch (p.kind) {
    case ProgKind::kStructOps:
      if (p.st_ops_type.empty()) {
        *why = "struct_ops program is not used by any struct_ops map";
        return nullptr;
      }
      name = "struct_ops/" + p.st_ops_type + "." + p.st_ops_member;
      if (!types_.find(name)) {
        bool known = false;
        for (const bpf_struct_ops_type &o : struct_ops_) known |= o.name == p.st_ops_type;
        *why = known ? absl::StrFormat("struct_ops type %s has no function member %s",
                                       p.st_ops_type, p.st_ops_member)
                     : absl::StrFormat("struct_ops type %s is not registered", p.st_ops_type);
        return nullptr;
      }
      break;
    case ProgKind::kIter: name = "iter/" + p.attach_target; break;
    case ProgKind::kFentry: name = "fentry/" + p.attach_target; break;
    case ProgKind::kFexit: name = "fexit/" + p.attach_target; break;
    default: {
      // Types whose descriptor depends on the attach point (tp_btf, fmod_ret, lsm, ...) have
      // none registered in the emulator.
      const bpf_prog_type_desc *d =
          p.prog_type == BPF_PROG_TYPE_TRACING || p.prog_type == BPF_PROG_TYPE_STRUCT_OPS ||
                  p.prog_type == BPF_PROG_TYPE_LSM
              ? nullptr
              : types_.find(p.prog_type);
      if (!d)
        *why = absl::StrFormat("program type %s is not registered", bpf_prog_type_name(p.prog_type));
      return d;
    }
  }
  const bpf_prog_type_desc *d = types_.find(name);
  if (!d) {
    const char *what = p.kind == ProgKind::kIter ? "iterator target" : "attach target";
    *why = absl::StrFormat("%s %s is not registered (%s)", what, p.attach_target, p.section);
  }
  return d;
}

LoadOptions bpf_kernel_load_options() {
  LoadOptions lo;
  lo.kfuncs = &bpf_kernel_env().kfuncs();
  lo.core_types = &bpf_kernel_env().types();
  return lo;
}

BpfKernelEnv &bpf_kernel_env() {
  static BpfKernelEnv *env = new BpfKernelEnv;  // never destroyed: programs point into it
  return *env;
}

}  // namespace umemcg::emu
