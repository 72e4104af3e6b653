// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/kfunc.h: the kfunc registry. Each kfunc has a typed signature, the
// kernel's KF_* flags, the native function the interpreter calls, and the set
// of program types allowed to call it (register_btf_kfunc_id_set with
// BPF_PROG_TYPE_UNSPEC meaning every type).
// Mirrors: include/linux/btf.h (KF_* flags), kernel/bpf/btf.c
//          (register_btf_kfunc_id_set, btf_kfunc_id_set_contains) (Linux 6.19)
// Emulation:
//  - kfuncs are found by name, not by a vmlinux BTF id, and their signature is
//    written as a KfuncDesc instead of being read from vmlinux BTF.
//  - the registry is immutable once objects are loaded against it: objects
//    keep pointers to its KfuncDesc entries.
#pragma once

#include <linux/bpf.h>

#include <deque>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "shim/types.h"

namespace umemcg {

// include/linux/btf.h, Linux 6.19 values (bit 3 was KF_KPTR_GET, removed).
inline constexpr u32 KF_ACQUIRE = 1u << 0;        // returns a referenced pointer
inline constexpr u32 KF_RELEASE = 1u << 1;        // releases argument 0
inline constexpr u32 KF_RET_NULL = 1u << 2;       // result must be NULL-checked
inline constexpr u32 KF_TRUSTED_ARGS = 1u << 4;   // pointer args must be trusted
inline constexpr u32 KF_SLEEPABLE = 1u << 5;      // sleepable programs only
inline constexpr u32 KF_DESTRUCTIVE = 1u << 6;    // destructive, CAP_SYS_BOOT
inline constexpr u32 KF_RCU = 1u << 7;            // RCU or trusted pointer args
inline constexpr u32 KF_ITER_NEW = 1u << 8;
inline constexpr u32 KF_ITER_NEXT = 1u << 9;
inline constexpr u32 KF_ITER_DESTROY = 1u << 10;
inline constexpr u32 KF_RCU_PROTECTED = 1u << 11; // only inside an RCU section
inline constexpr u32 KF_FASTCALL = 1u << 12;
inline constexpr u32 KF_ARENA_RET = 1u << 13;
inline constexpr u32 KF_ARENA_ARG1 = 1u << 14;
inline constexpr u32 KF_ARENA_ARG2 = 1u << 15;

}  // namespace umemcg

namespace umemcg::emu {

// The BPF calling convention: at most five u64 arguments, one u64 result.
using KfuncFn = u64 (*)(u64, u64, u64, u64, u64);

enum class KfuncArgKind {
	kVoid,         // return only
	kScalar,       // integer or enum of `size` bytes
	kPtrToStruct,  // pointer to kernel struct `struct_name`
	kPtrToMem,     // pointer to memory whose size is argument `size_arg`
	kMemSize,      // the size of a kPtrToMem argument (a scalar)
	kPtrToWq,      // pointer to a struct bpf_wq inside a map value
	kPtrToMap,     // pointer to a map (void * in BPF C)
	kPtrToMapValue,// pointer to a map value (void *)
	kCallback,     // a BPF subprogram (function pointer)
	kIgnored,      // an __ign/__prog argument: not checked, the kfunc does not read it
};

struct KfuncArg {
	KfuncArgKind kind = KfuncArgKind::kScalar;
	u32 size = 8;              // kScalar/kMemSize: bytes
	bool is_signed = false;    // kScalar
	std::string struct_name;   // kPtrToStruct: "mem_cgroup"
	int size_arg = -1;         // kPtrToMem: index of its kMemSize argument
	bool nullable = false;     // a __nullable argument

	static KfuncArg void_();
	static KfuncArg scalar(u32 size, bool is_signed = false);
	static KfuncArg ptr_to(std::string struct_name, bool nullable = false);
	static KfuncArg mem(int size_arg);
	static KfuncArg mem_size(u32 size = 8);
	static KfuncArg wq();
	static KfuncArg map();
	static KfuncArg map_value();
	static KfuncArg callback();
	static KfuncArg ignored();
};

struct KfuncDesc {
	std::string name;
	KfuncArg ret = KfuncArg::void_();
	std::vector<KfuncArg> args;
	u32 flags = 0;  // KF_*
	KfuncFn fn = nullptr;
	// Program types that may call it; BPF_PROG_TYPE_UNSPEC means all.
	std::vector<bpf_prog_type> prog_types = {BPF_PROG_TYPE_UNSPEC};

	bool allowed_for(bpf_prog_type type) const;
	bool has(u32 flag) const { return (flags & flag) == flag; }
};

class KfuncRegistry {
public:
	KfuncRegistry() = default;
	KfuncRegistry(const KfuncRegistry &) = delete;
	KfuncRegistry &operator=(const KfuncRegistry &) = delete;

	// Adds a kfunc. Errors: a duplicate name, more than 5 arguments, a
	// kPtrToMem without a valid kMemSize argument, KF_RELEASE without a
	// pointer argument 0, KF_ACQUIRE/KF_RET_NULL without a pointer result.
	absl::Status add(KfuncDesc desc);

	// The kfunc called name, or nullptr. The pointer stays valid for the
	// registry's lifetime.
	const KfuncDesc *find(const std::string &name) const;
	size_t size() const { return descs_.size(); }

private:
	std::deque<KfuncDesc> descs_;  // stable addresses
	absl::flat_hash_map<std::string, const KfuncDesc *> by_name_;
};

// "u64 (struct mem_cgroup *, u32)" style rendering, for messages and dumps.
std::string kfunc_signature(const KfuncDesc &desc);
std::string kfunc_flags_string(u32 flags);

}  // namespace umemcg::emu
