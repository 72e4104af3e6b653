// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/helper_proto.h: BPF helper prototypes (what the verifier checks at a helper call) and
// the registry of their implementations (what the runtime calls).
//
// A prototype says what each of r1-r5 must hold (enum bpf_arg_type plus type flags), what r0
// holds afterwards (enum bpf_return_type), and whether the helper is GPL-only or may sleep.
// Prototypes are the kernel's facts, so they are a fixed table keyed by the uapi helper id
// (enum bpf_func_id of <linux/bpf.h>); implementations are filled in at run time by whoever
// implements them (emu::HelperRegistry), and a program type says which ids it may call.
//
// Mirrors: include/linux/bpf.h (struct bpf_func_proto, enum bpf_arg_type, enum bpf_return_type,
//          enum bpf_type_flag), kernel/bpf/helpers.c, kernel/bpf/ringbuf.c,
//          kernel/bpf/bpf_task_storage.c, kernel/trace/bpf_trace.c (Linux 6.19)
// Emulation: only the helpers the project needs have a prototype (bpf_helper_proto() returns
//   nullptr for the others, which the verifier reports as an unknown helper). ARG_PTR_TO_BTF_ID
//   names its struct by name (arg_btf_name) instead of a BTF id.
#pragma once

#include <linux/bpf.h>

#include <array>
#include <string>

#include "bpfvm/verifier_types.h"
#include "shim/types.h"

namespace umemcg {

enum bpf_arg_type : u32 {
  ARG_DONTCARE = 0,
  ARG_CONST_MAP_PTR,        // const argument used as pointer to bpf_map
  ARG_PTR_TO_MAP_KEY,       // pointer to stack (or map value, mem) used as a map key
  ARG_PTR_TO_MAP_VALUE,     // pointer to memory of the map's value size
  ARG_PTR_TO_MEM,           // pointer to memory; the next argument is its size
  ARG_CONST_SIZE,           // number of bytes accessed from memory, > 0
  ARG_CONST_SIZE_OR_ZERO,   // number of bytes accessed from memory, >= 0
  ARG_PTR_TO_CTX,           // pointer to the program's context
  ARG_ANYTHING,             // any initialised value
  ARG_PTR_TO_SPIN_LOCK,     // pointer to a bpf_spin_lock in a map value
  ARG_PTR_TO_BTF_ID,        // a typed kernel object (arg_btf_name)
  ARG_CONST_ALLOC_SIZE_OR_ZERO,  // known-constant allocation size
  ARG_PTR_TO_FUNC,          // a BPF subprogram (callback)
  ARG_PTR_TO_STACK,         // pointer to the stack
  ARG_PTR_TO_TIMER,         // pointer to a bpf_timer in a map value
  // A socket (kernel: ARG_PTR_TO_BTF_ID_SOCK_COMMON). Emulation: no socket objects exist here,
  // so only NULL passes, where the argument may be NULL.
  ARG_PTR_TO_BTF_ID_SOCK_COMMON,
  __BPF_ARG_TYPE_MAX,

  ARG_PTR_TO_MAP_VALUE_OR_NULL = PTR_MAYBE_NULL | ARG_PTR_TO_MAP_VALUE,
  ARG_PTR_TO_MEM_OR_NULL = PTR_MAYBE_NULL | ARG_PTR_TO_MEM,
  ARG_PTR_TO_CTX_OR_NULL = PTR_MAYBE_NULL | ARG_PTR_TO_CTX,
  ARG_PTR_TO_BTF_ID_OR_NULL = PTR_MAYBE_NULL | ARG_PTR_TO_BTF_ID,
  ARG_PTR_TO_STACK_OR_NULL = PTR_MAYBE_NULL | ARG_PTR_TO_STACK,
  // Memory the helper only writes (MEM_UNINIT): it need not be initialised.
  ARG_PTR_TO_UNINIT_MEM = MEM_UNINIT | ARG_PTR_TO_MEM,
  // Memory of the prototype's arg_size bytes (no size argument).
  ARG_PTR_TO_FIXED_SIZE_MEM = MEM_FIXED_SIZE | ARG_PTR_TO_MEM,
  // A ring-buffer record to submit or discard: releases its reference.
  ARG_PTR_TO_RINGBUF_MEM = MEM_RINGBUF | OBJ_RELEASE | ARG_PTR_TO_MEM,
};

enum bpf_return_type : u32 {
  RET_INTEGER = 0,
  RET_VOID,
  RET_PTR_TO_MAP_VALUE,
  RET_PTR_TO_MEM,           // size from the ARG_CONST_ALLOC_SIZE_OR_ZERO argument
  RET_PTR_TO_BTF_ID,
  __BPF_RET_TYPE_MAX,

  RET_PTR_TO_MAP_VALUE_OR_NULL = PTR_MAYBE_NULL | RET_PTR_TO_MAP_VALUE,
  RET_PTR_TO_MEM_OR_NULL = PTR_MAYBE_NULL | RET_PTR_TO_MEM,
  RET_PTR_TO_RINGBUF_MEM_OR_NULL = PTR_MAYBE_NULL | MEM_RINGBUF | RET_PTR_TO_MEM,
  RET_PTR_TO_BTF_ID_TRUSTED = PTR_TRUSTED | RET_PTR_TO_BTF_ID,  // ret_btf_name
  RET_PTR_TO_BTF_ID_OR_NULL = PTR_MAYBE_NULL | RET_PTR_TO_BTF_ID,  // ret_btf_name
};

struct bpf_func_proto {
  const char *name;  // "bpf_map_lookup_elem"
  u32 func_id;
  bool gpl_only;
  bool might_sleep;
  // Emulation: the kernel's check_map_func_compatibility() table as data: the map type the
  // helper's ARG_CONST_MAP_PTR must have (0 = any map type not reserved for other helpers).
  u32 map_type;
  bpf_return_type ret_type;
  std::array<u32, 5> arg_type;      // bpf_arg_type values (with flags)
  std::array<const char *, 5> arg_btf_name;  // ARG_PTR_TO_BTF_ID: the struct's name
  const char *ret_btf_name = nullptr;        // RET_PTR_TO_BTF_ID*: the struct's name
  std::array<u32, 5> arg_size = {};          // ARG_PTR_TO_FIXED_SIZE_MEM: its size in bytes
};

// The prototype of helper `func_id`, or nullptr when the project has none.
const bpf_func_proto *bpf_helper_proto(u32 func_id);
// The helper's uapi name without the "bpf_" prefix ("map_lookup_elem"), "unknown" if the id is
// not in this build's <linux/bpf.h>.
const char *bpf_func_id_name(u32 func_id);
// Map types that only some helpers accept (ringbuf, task storage): true if func_id may take a
// map of map_type (kernel: check_map_func_compatibility()).
bool bpf_map_func_compatible(u32 map_type, u32 func_id);
// Helpers that call a callback of the program before they return (bpf_loop,
// bpf_for_each_map_elem, bpf_find_vma; kernel: is_sync_callback_calling_function()): the
// verifier walks the callback again from the call until its iterations converge.
bool bpf_is_sync_callback_calling_function(u32 func_id);

// Not in the uapi header this project builds against (Linux 6.1): ids of Linux 6.19.
inline constexpr u32 kBpfFuncMaxId = 212;

}  // namespace umemcg

namespace umemcg::emu {

// The implementations, filled by the runtime: r0 = fn(r1, ..., r5).
using BpfHelperFn = u64 (*)(u64, u64, u64, u64, u64);

class HelperRegistry {
 public:
  HelperRegistry() { fns_.fill(nullptr); }
  HelperRegistry(const HelperRegistry &) = delete;
  HelperRegistry &operator=(const HelperRegistry &) = delete;

  // Installs the implementation of helper func_id. False (nothing installed) if the id has no
  // prototype: the verifier could never let a program call it.
  bool set(u32 func_id, BpfHelperFn fn);
  BpfHelperFn get(u32 func_id) const { return func_id < fns_.size() ? fns_[func_id] : nullptr; }
  // The table indexed by helper id, for an interpreter's helper span.
  const std::array<BpfHelperFn, kBpfFuncMaxId> &table() const { return fns_; }

 private:
  std::array<BpfHelperFn, kBpfFuncMaxId> fns_;
};

}  // namespace umemcg::emu
