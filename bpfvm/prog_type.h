// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/prog_type.h: program-type descriptors and kernel-object (BTF struct) layouts, both
// registered at run time by the subsystems that own them; bpfvm itself knows no memcg.
//
// A program type says what the verifier must know about a program's environment:
//  - its context: a struct with per-field access rules (bpf_ctx_field: offset, size, which
//    access sizes, read/write, and what a load yields: a scalar or a typed kernel-object
//    handle), or raw memory (r1 = memory, r2 = its length), or plain bytes up to a maximum
//    size (BPF_PROG_TYPE_SYSCALL);
//  - the helpers and kfunc program type it may call, whether it is sleepable, and the range
//    its return value must be in.
// A kernel-object type (bpf_btf_struct) is a struct the program reaches through a
// PTR_TO_BTF_ID handle ("struct task_struct *"): its size and the fields a program may read,
// each yielding a scalar or another handle. Embedded structs (cgroup.self) make a handle plus
// the field's offset a handle of the embedded type.
//
// Mirrors: include/linux/bpf.h (struct bpf_verifier_ops: get_func_proto, is_valid_access;
//          struct bpf_prog_ops), include/linux/bpf_types.h, kernel/bpf/btf.c
//          (btf_struct_access, btf_ctx_access), the retval ranges of check_return_code() in
//          kernel/bpf/verifier.c (Linux 6.19)
// Emulation: program types are data, not a bpf_verifier_ops callback table; field rules are
//   listed instead of being computed from vmlinux BTF, so a program can read only fields a
//   subsystem chose to expose (the emulated objects are not laid out like the kernel's).
// Emulation: "raw_mem" is the emulator's type for ISA tests and conformance (r1 = memory,
//   r2 = length), with no kernel counterpart.
#pragma once

#include <linux/bpf.h>

#include <deque>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "bpfvm/verifier_types.h"
#include "shim/types.h"

namespace umemcg {

// Access sizes as a mask: bit n set = an access of (1 << n) bytes is allowed.
inline constexpr u8 BPF_SZ_1 = 1u << 0, BPF_SZ_2 = 1u << 1, BPF_SZ_4 = 1u << 2,
                    BPF_SZ_8 = 1u << 3, BPF_SZ_ANY = 0xf;

// One field of a context or kernel-object struct.
struct bpf_ctx_field {
  std::string name;
  u32 off = 0;
  u32 size = 0;
  // Sizes a read may use; a read narrower than the field reads its low-addressed bytes
  // (narrow loads, as is_valid_access allows for scalar fields).
  u8 read_sizes = BPF_SZ_ANY;
  bool writable = false;
  // What a full-width load yields: SCALAR_VALUE, or PTR_TO_BTF_ID with flags (PTR_TRUSTED,
  // MEM_RCU, PTR_MAYBE_NULL, PTR_UNTRUSTED) naming btf_name, or PTR_TO_MEM (mem_size).
  u32 reg_type = SCALAR_VALUE;
  std::string btf_name;
  u32 mem_size = 0;
  // An embedded struct (not a pointer): a handle to the outer struct plus `off` is a handle
  // of type btf_name. Embedded fields are not loads.
  bool embedded = false;

  static bpf_ctx_field scalar(std::string name, u32 off, u32 size, bool writable = false);
  static bpf_ctx_field ptr(std::string name, u32 off, std::string btf_name, u32 flags);
  static bpf_ctx_field embed(std::string name, u32 off, u32 size, std::string btf_name);
};

// A kernel-object type reachable through PTR_TO_BTF_ID.
struct bpf_btf_struct {
  std::string name;  // "task_struct"
  u32 size = 0;
  std::vector<bpf_ctx_field> fields;
};

enum class bpf_ctx_kind : u8 {
  fields,   // a struct: ctx_size bytes, accesses must hit a listed field
  raw_mem,  // r1 = PTR_TO_MEM of the run's memory, r2 = its length (known at verification)
  bytes,    // any access inside [0, ctx_size); the verifier reports the highest byte used
};

enum class bpf_sleepable : u8 { never, always, optional };

struct bpf_prog_type_desc {
  std::string name;                        // "syscall", "raw_mem", "struct_ops/x.member"
  bpf_prog_type type = BPF_PROG_TYPE_UNSPEC;  // kernel enum value
  bpf_ctx_kind ctx_kind = bpf_ctx_kind::fields;
  u32 ctx_size = 0;
  std::vector<bpf_ctx_field> ctx_fields;   // ctx_kind::fields
  std::vector<u32> helpers;                // allowed helper ids (bpf_func_id)
  // The program type kfunc sets are matched against (KfuncDesc::allowed_for); the kernel
  // uses the program's own type.
  bpf_prog_type kfunc_prog_type = BPF_PROG_TYPE_UNSPEC;
  bpf_sleepable sleepable = bpf_sleepable::never;
  // The verifier's message for a sleepable program of a `never` type; empty: the kernel's
  // generic one ("Only fentry/fexit/... can be sleepable").
  std::string not_sleepable_msg;
  // check_return_code(): r0 at exit of the main program must be in [ret_min, ret_max].
  bool has_retval_range = false;
  s64 ret_min = 0;
  s64 ret_max = 0;

  bool helper_allowed(u32 func_id) const;
  const bpf_ctx_field *find_field(u32 off, u32 size) const;
};

// The fields of `s` that contain [off, off + size) (nullptr if none).
const bpf_ctx_field *bpf_find_field(const std::vector<bpf_ctx_field> &fields, u32 off, u32 size);

}  // namespace umemcg

namespace umemcg::emu {

// Program types by name and by kernel enum, and kernel-object types by struct name.
// Registration happens before programs are verified; descriptors keep stable addresses.
class ProgTypeRegistry {
 public:
  ProgTypeRegistry() = default;
  ProgTypeRegistry(const ProgTypeRegistry &) = delete;
  ProgTypeRegistry &operator=(const ProgTypeRegistry &) = delete;

  // Errors: duplicate name, a field outside the context, a raw_mem/bytes type with fields.
  absl::Status add(bpf_prog_type_desc desc);
  absl::Status add_struct(bpf_btf_struct s);
  // A program type by name, or nullptr.
  const bpf_prog_type_desc *find(const std::string &name) const;
  // The first registered type with this kernel enum value, or nullptr.
  const bpf_prog_type_desc *find(bpf_prog_type type) const;
  const bpf_btf_struct *find_struct(const std::string &name) const;

  // A registry holding the built-in types: "raw_mem" and "syscall".
  static void add_builtins(ProgTypeRegistry &reg);

 private:
  std::deque<bpf_prog_type_desc> types_;
  std::deque<bpf_btf_struct> structs_;
  absl::flat_hash_map<std::string, const bpf_prog_type_desc *> by_name_;
  absl::flat_hash_map<std::string, const bpf_btf_struct *> structs_by_name_;
};

// The built-in descriptors, also usable without a registry.
const bpf_prog_type_desc &bpf_raw_mem_prog_type();
const bpf_prog_type_desc &bpf_syscall_prog_type();
// The helpers every program type may call in this emulator (bpf_base_func_proto's subset that
// has prototypes here), without the sleepable-only ones.
std::vector<u32> bpf_base_helpers();
// The tracing programs' set (kernel: bpf_tracing_func_proto, which SYSCALL programs reach
// through tracing_prog_func_proto): the base helpers plus bpf_get_current_task_btf,
// bpf_find_vma, bpf_get_socket_cookie and the socket casts.
std::vector<u32> bpf_tracing_helpers();

}  // namespace umemcg::emu
