// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_types.h: the type vocabulary shared by the verifier, helper prototypes and
// program-type descriptors: register (pointer) types and the type flags that refine them.
//
// A type is a u32: the base type (enum bpf_reg_type) in the low 8 bits, bpf_type_flag bits
// above, as in the kernel (e.g. PTR_TO_MAP_VALUE | PTR_MAYBE_NULL is "map_value_or_null").
//
// Mirrors: include/linux/bpf.h (enum bpf_reg_type, enum bpf_type_flag) (Linux 6.19)
// Emulation: only the register types this machine has: no packet, socket, dynptr, arena or
//   iterator types. PTR_TO_BTF_ID names its struct by name (a kernel-object handle type
//   registered at run time), not by a vmlinux BTF id.
#pragma once

#include "shim/types.h"

namespace umemcg {

enum bpf_reg_type : u32 {
  NOT_INIT = 0,       // nothing was written into the register
  SCALAR_VALUE,       // not a pointer: a number with tracked bounds
  PTR_TO_CTX,         // the program's context (r1 at entry)
  CONST_PTR_TO_MAP,   // a struct bpf_map (ld_imm64 of a map)
  PTR_TO_MAP_VALUE,   // into a map element's value
  PTR_TO_MAP_KEY,     // into a map key (callbacks of map iteration)
  PTR_TO_STACK,       // frame pointer plus offset
  PTR_TO_BTF_ID,      // a typed kernel object (struct task_struct *, ...)
  PTR_TO_MEM,         // a memory region of known size (ring-buffer record, helper memory)
  PTR_TO_FUNC,        // a BPF subprogram (callback)
  __BPF_REG_TYPE_MAX,
};

// Type flags shared by argument, return and register types (enum bpf_type_flag). The base type
// lives in the low 8 bits.
// (enum bpf_type_flag)
inline constexpr u32 PTR_MAYBE_NULL = 1u << 8;
inline constexpr u32 MEM_RDONLY = 1u << 9;
inline constexpr u32 MEM_RINGBUF = 1u << 10;
inline constexpr u32 MEM_USER = 1u << 11;
inline constexpr u32 MEM_PERCPU = 1u << 12;
inline constexpr u32 OBJ_RELEASE = 1u << 13;
inline constexpr u32 PTR_UNTRUSTED = 1u << 14;
inline constexpr u32 MEM_UNINIT = 1u << 15;
inline constexpr u32 DYNPTR_TYPE_LOCAL = 1u << 16;
inline constexpr u32 MEM_FIXED_SIZE = 1u << 17;
inline constexpr u32 MEM_ALLOC = 1u << 18;
inline constexpr u32 PTR_TRUSTED = 1u << 19;
inline constexpr u32 MEM_RCU = 1u << 20;
inline constexpr u32 NON_OWN_REF = 1u << 21;
inline constexpr u32 MEM_ALIGNED = 1u << 22;  // aligned to its fixed size (strict alignment)
inline constexpr u32 MEM_WRITE = 1u << 23;    // the helper writes the memory
inline constexpr u32 BPF_BASE_TYPE_MASK = 0xff;
inline constexpr u32 base_type(u32 t) { return t & BPF_BASE_TYPE_MASK; }
inline constexpr u32 type_flag(u32 t) { return t & ~BPF_BASE_TYPE_MASK; }
inline constexpr bool type_may_be_null(u32 t) { return t & PTR_MAYBE_NULL; }

}  // namespace umemcg
