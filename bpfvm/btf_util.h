// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/btf_util.h: bounded helpers over libbpf's BTF API for the loader.
// libbpf 1.1's btf__new() checks the header, the string section and that each
// type's variable part fits, but not that type ids and name offsets point
// anywhere valid: every look-up here checks both and every chain walk is
// depth-limited, so BTF garbage and reference loops give errors.
// Mirrors: tools/lib/bpf/libbpf.c (btf_fixup_datasec, skip_mods_and_typedefs) (Linux 6.19)
#pragma once

#include <bpf/btf.h>
#include <linux/btf.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "bpfvm/elf_reader.h"
#include "shim/types.h"

namespace umemcg::emu {

// The deepest chain of modifiers/typedefs/pointers the helpers follow;
// libbpf and the kernel use 32 too (MAX_RESOLVE_DEPTH).
inline constexpr int kBtfMaxResolveDepth = 32;

// Parses .BTF bytes into a struct btf the caller owns (btf__free).
absl::StatusOr<struct btf *> btf_parse_bytes(absl::Span<const u8> data);

// The type with this id, or nullptr (id 0 = void, out of range).
const struct btf_type *btf_type_at(const struct btf *btf, u32 id);

// The name at this string offset, "" when out of range.
std::string btf_str(const struct btf *btf, u32 name_off);

// Follows typedefs and CONST/VOLATILE/RESTRICT/TYPE_TAG from id. Returns the
// final id (0 for void) and its type in *out (nullptr for void); an error for
// a dangling id or a chain longer than kBtfMaxResolveDepth (a loop).
absl::StatusOr<u32> btf_skip_mods(const struct btf *btf, u32 id, const struct btf_type **out);
// The byte offset of a struct bpf_spin_lock member at the top level of struct type_id, -1 if
// none or if btf is null (the kernel's btf_find_field() for BPF_SPIN_LOCK, map values only).
s32 btf_find_spin_lock_off(const struct btf *btf, u32 type_id);
// The same for a struct bpf_wq member (BPF_WORKQUEUE), -1 if none.
s32 btf_find_wq_off(const struct btf *btf, u32 type_id);
// The same for a struct bpf_timer member (BPF_TIMER), -1 if none.
s32 btf_find_timer_off(const struct btf *btf, u32 type_id);

// The size in bytes of type id (btf__resolve_size), as an error if none.
absl::StatusOr<u32> btf_type_size(const struct btf *btf, u32 id);

// The id of the DATASEC named name, 0 if absent.
u32 btf_find_datasec(const struct btf *btf, const std::string &name);

// For a pointer type (after modifiers): "struct foo" target name, or "" for
// a non-struct target. Errors on dangling ids.
absl::StatusOr<std::string> btf_ptr_target_struct(const struct btf *btf, u32 ptr_id);

// Fixes every DATASEC of the raw object in place: its size from the ELF
// section of the same name and each VAR's offset from the ELF symbol table,
// then sorts the variables by offset. .ksyms/.kconfig have no section.
absl::Status btf_fixup_datasecs(struct btf *btf, const elf::ElfFile &elf);

}  // namespace umemcg::emu
