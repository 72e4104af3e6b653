// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/btf_util.cc: bounded BTF helpers and the DATASEC fix-up.
// Mirrors: tools/lib/bpf/libbpf.c (btf_fixup_datasec, find_elf_var_sym) (Linux 6.19)
// Emulation:
//  - a static VAR whose ELF symbol cannot be found keeps offset 0, as in
//    libbpf; a global one is an error.
#include "bpfvm/btf_util.h"

#include <elf.h>

#include <algorithm>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"

namespace umemcg::emu {

namespace {

// libbpf's diagnostics for the parse in progress on this thread.
thread_local std::string libbpf_log;

int capture_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	char buf[256];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	std::string line(buf);
	while (!line.empty() && line.back() == '\n')
		line.pop_back();
	if (!libbpf_log.empty())
		libbpf_log += "; ";
	libbpf_log += line;
	return n;
}

}  // namespace

absl::StatusOr<struct btf *> btf_parse_bytes(absl::Span<const u8> data)
{
	// Emulation: libbpf's print callback is process-wide; the loader
	// installs one that keeps warnings for the error message instead of
	// printing them to stderr.
	static const bool installed = [] {
		libbpf_set_print(capture_libbpf_print);
		return true;
	}();
	(void)installed;

	if (data.size() > 0xffffffffu)
		return absl::InvalidArgumentError("BTF: section too large");
	libbpf_log.clear();
	struct btf *b = btf__new(data.data(), static_cast<u32>(data.size()));
	int err = libbpf_get_error(b);
	if (err || !b)
		return absl::InvalidArgumentError(absl::StrFormat(
			"BTF: malformed .BTF section (%s%s%s)", strerror(err < 0 ? -err : EINVAL),
			libbpf_log.empty() ? "" : ": ", libbpf_log));
	return b;
}

const struct btf_type *btf_type_at(const struct btf *btf, u32 id)
{
	if (id == 0 || id >= btf__type_cnt(btf))
		return nullptr;
	return btf__type_by_id(btf, id);
}

std::string btf_str(const struct btf *btf, u32 name_off)
{
	const char *s = btf__name_by_offset(btf, name_off);
	return s ? std::string(s) : std::string();
}

absl::StatusOr<u32> btf_skip_mods(const struct btf *btf, u32 id, const struct btf_type **out)
{
	for (int depth = 0; depth < kBtfMaxResolveDepth; depth++) {
		if (id == 0) {
			*out = nullptr;
			return 0u;
		}
		const struct btf_type *t = btf_type_at(btf, id);
		if (!t)
			return absl::InvalidArgumentError(absl::StrFormat("BTF: type id %u out of range", id));
		switch (btf_kind(t)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_CONST:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			continue;
		default:
			*out = t;
			return id;
		}
	}
	return absl::InvalidArgumentError(absl::StrFormat(
		"BTF: type chain from id %u longer than %d (a loop?)", id, kBtfMaxResolveDepth));
}

absl::StatusOr<u32> btf_type_size(const struct btf *btf, u32 id)
{
	if (!btf_type_at(btf, id))
		return absl::InvalidArgumentError(absl::StrFormat("BTF: type id %u has no size", id));
	__s64 sz = btf__resolve_size(btf, id);
	if (sz < 0 || sz > 0xffffffffLL)
		return absl::InvalidArgumentError(absl::StrFormat("BTF: cannot size type id %u", id));
	return static_cast<u32>(sz);
}

u32 btf_find_datasec(const struct btf *btf, const std::string &name)
{
	u32 n = btf__type_cnt(btf);
	for (u32 id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		if (t && btf_is_datasec(t) && btf_str(btf, t->name_off) == name)
			return id;
	}
	return 0;
}

absl::StatusOr<std::string> btf_ptr_target_struct(const struct btf *btf, u32 ptr_id)
{
	const struct btf_type *t;
	absl::StatusOr<u32> id = btf_skip_mods(btf, ptr_id, &t);
	if (!id.ok())
		return id.status();
	if (!t || !btf_is_ptr(t))
		return absl::InvalidArgumentError("BTF: not a pointer");
	id = btf_skip_mods(btf, t->type, &t);
	if (!id.ok())
		return id.status();
	if (!t)
		return std::string();
	if (btf_is_composite(t) || btf_is_fwd(t))
		return btf_str(btf, t->name_off);
	return std::string();
}

namespace {

// The OBJECT symbol defining var_name in section shndx; global/weak first,
// then (for static variables) local.
const elf::Symbol *find_var_sym(const elf::ElfFile &elf, u32 shndx,
				const std::string &var_name, bool allow_local)
{
	const elf::Symbol *local = nullptr;
	for (const elf::Symbol &s : elf.symbols) {
		if (s.type != STT_OBJECT || s.shndx != shndx || s.name != var_name)
			continue;
		if (s.bind == STB_GLOBAL || s.bind == STB_WEAK)
			return &s;
		if (s.bind == STB_LOCAL && allow_local && !local)
			local = &s;
	}
	return local;
}

absl::Status fixup_one(struct btf *btf, struct btf_type *t, const std::string &sec_name,
		       const elf::ElfFile &elf)
{
	const elf::Section *sec = elf.by_name(sec_name);
	if (!sec)
		return absl::InvalidArgumentError(absl::StrFormat(
			"BTF: DATASEC '%s' has no ELF section", sec_name));
	if (sec->size > 0xffffffffu)
		return absl::InvalidArgumentError(absl::StrFormat(
			"ELF: section '%s' too large for BTF", sec_name));
	// The DATASEC lives in btf's own malloc'd copy of the raw bytes:
	// writing through it is how libbpf fixes it up too.
	t->size = static_cast<u32>(sec->size);
	struct btf_var_secinfo *vsi = btf_var_secinfos(t);
	u16 n = btf_vlen(t);
	for (u16 i = 0; i < n; i++) {
		const struct btf_type *v = btf_type_at(btf, vsi[i].type);
		if (!v)
			return absl::InvalidArgumentError(absl::StrFormat(
				"BTF: DATASEC '%s' entry %u: type id %u out of range",
				sec_name, i, vsi[i].type));
		if (!btf_is_var(v)) {
			// Functions sit only in .ksyms, which has no ELF section.
			return absl::InvalidArgumentError(absl::StrFormat(
				"BTF: DATASEC '%s' entry %u is not a VAR", sec_name, i));
		}
		std::string var_name = btf_str(btf, v->name_off);
		u32 linkage = btf_var(v)->linkage;
		if (linkage == BTF_VAR_GLOBAL_EXTERN)
			continue;
		bool is_static = linkage == BTF_VAR_STATIC;
		const elf::Symbol *sym = find_var_sym(elf, sec->idx, var_name, is_static);
		if (!sym) {
			if (is_static)
				continue;
			return absl::InvalidArgumentError(absl::StrFormat(
				"BTF: variable '%s' of DATASEC '%s' has no ELF symbol", var_name, sec_name));
		}
		if (sym->value > sec->size || vsi[i].size > sec->size - sym->value)
			return absl::InvalidArgumentError(absl::StrFormat(
				"BTF: variable '%s' (offset %u, size %u) outside section '%s' (%u bytes)",
				var_name, sym->value, vsi[i].size, sec_name, sec->size));
		vsi[i].offset = static_cast<u32>(sym->value);
	}
	std::sort(vsi, vsi + n, [](const btf_var_secinfo &a, const btf_var_secinfo &b) {
		return a.offset < b.offset;
	});
	return absl::OkStatus();
}

}  // namespace

absl::Status btf_fixup_datasecs(struct btf *btf, const elf::ElfFile &elf)
{
	u32 n = btf__type_cnt(btf);
	for (u32 id = 1; id < n; id++) {
		auto *t = const_cast<struct btf_type *>(btf__type_by_id(btf, id));
		if (!t || !btf_is_datasec(t))
			continue;
		std::string name = btf_str(btf, t->name_off);
		if (name == ".ksyms" || name == ".kconfig")
			continue;
		if (absl::Status st = fixup_one(btf, t, name, elf); !st.ok())
			return st;
	}
	return absl::OkStatus();
}

namespace {

// The byte offset of the first top-level member of struct type_id whose type is struct
// @struct_name, -1 if none.
s32 btf_find_struct_member_off(const struct btf *btf, u32 type_id, const char *struct_name) {
  if (!btf || !type_id) return -1;
  const struct btf_type *t = nullptr;
  if (!btf_skip_mods(btf, type_id, &t).ok() || !t || !btf_is_struct(t)) return -1;
  const struct btf_member *m = btf_members(t);
  for (u16 i = 0; i < btf_vlen(t); i++) {
    const struct btf_type *mt = nullptr;
    if (!btf_skip_mods(btf, m[i].type, &mt).ok() || !mt || !btf_is_struct(mt)) continue;
    if (btf_str(btf, mt->name_off) == struct_name) return (s32)(btf_member_bit_offset(t, i) / 8);
  }
  return -1;
}

}  // namespace

s32 btf_find_spin_lock_off(const struct btf *btf, u32 type_id) {
  return btf_find_struct_member_off(btf, type_id, "bpf_spin_lock");
}

s32 btf_find_wq_off(const struct btf *btf, u32 type_id) {
  return btf_find_struct_member_off(btf, type_id, "bpf_wq");
}

s32 btf_find_timer_off(const struct btf *btf, u32 type_id) {
  return btf_find_struct_member_off(btf, type_id, "bpf_timer");
}

}  // namespace umemcg::emu
