// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/loader.h: opening a clang-compiled BPF object (.bpf.o): the ELF+BTF
// loader. The result is a BpfObject (object.h): programs linked with their
// subprograms and carrying relocation records, map specifications, externs
// resolved against a kfunc registry, and the object's fixed-up BTF.
//
// Every read of the object is bounded: a malformed object gives an
// InvalidArgument status naming the section/symbol/relocation at fault.
// Mirrors: tools/lib/bpf/libbpf.c (bpf_object__open_mem, bpf_object__open_file,
//          bpf_object__resolve_externs) (Linux 6.19)
// Emulation:
//  - no bpf() syscalls: nothing is created, this only reads the object.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "bpfvm/kfunc.h"
#include "bpfvm/object.h"
#include "bpfvm/prog_type.h"

namespace umemcg::emu {

// The helper id libbpf (and loader_core.cc) writes into an instruction whose CO-RE relocation
// could not be resolved.
inline constexpr u32 kCorePoisonHelper = 0xbad2310;

struct LoadOptions {
	// Registry to resolve .ksyms kfunc externs against; nullptr leaves every
	// extern unresolved (inspection only). Must outlive the object.
	const KfuncRegistry *kfuncs = nullptr;
	// The kernel-object layouts CO-RE relocations (.BTF.ext) resolve against, as libbpf
	// uses vmlinux BTF (bpf_kernel_env().types()); nullptr leaves the instructions as
	// compiled. Must outlive the load.
	const ProgTypeRegistry *core_types = nullptr;
	// Object name; load_object_file() defaults it from the file name.
	std::string name;
};

absl::StatusOr<BpfObject> load_object(absl::Span<const u8> image, const LoadOptions &opts = {});
absl::StatusOr<BpfObject> load_object_file(const std::string &path, const LoadOptions &opts = {});

// Resolves the object's externs against reg (load_object does it when given
// a registry): each kfunc extern must exist with a matching signature
// (argument count, scalar sizes, pointed-to struct names); unknown non-weak
// externs are errors, unknown weak ones stay unresolved and their address
// loads (ld_imm64) are rewritten to load 0.
absl::Status resolve_externs(BpfObject &obj, const KfuncRegistry &reg);

}  // namespace umemcg::emu
