// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/loader_externs.cc: .ksyms externs (kfuncs and ksym variables) from
// the undefined ELF symbols and their BTF.
// Mirrors: tools/lib/bpf/libbpf.c (bpf_object__collect_externs) (Linux 6.19)
// Emulation:
//  - .kconfig externs (CONFIG_*, LINUX_KERNEL_VERSION) are rejected: the
//    emulator has no kernel configuration to read them from.
#include <elf.h>

#include "absl/strings/str_format.h"
#include "bpfvm/btf_util.h"
#include "bpfvm/loader_internal.h"

namespace umemcg::emu::loader {

namespace {

// The BTF id of a FUNC or VAR called name inside DATASEC ds, 0 if none.
u32 find_in_datasec(const struct btf *btf, u32 ds, const std::string &name)
{
	if (!ds)
		return 0;
	const struct btf_type *dt = btf_type_at(btf, ds);
	const struct btf_var_secinfo *vsi = btf_var_secinfos(dt);
	for (u16 i = 0; i < btf_vlen(dt); i++) {
		const struct btf_type *t = btf_type_at(btf, vsi[i].type);
		if (t && (btf_is_func(t) || btf_is_var(t)) && btf_str(btf, t->name_off) == name)
			return vsi[i].type;
	}
	return 0;
}

}  // namespace

absl::Status collect_externs(LoadCtx &ctx)
{
	u32 ksyms = ctx.btf ? btf_find_datasec(ctx.btf, ".ksyms") : 0;
	u32 kconfig = ctx.btf ? btf_find_datasec(ctx.btf, ".kconfig") : 0;

	for (size_t i = 1; i < ctx.elf.symbols.size(); i++) {
		const elf::Symbol &s = ctx.elf.symbols[i];
		if (s.shndx != SHN_UNDEF || s.name.empty())
			continue;
		if (s.bind != STB_GLOBAL && s.bind != STB_WEAK)
			continue;
		if (ctx.obj.extern_index(s.name) >= 0)
			return absl::InvalidArgumentError(absl::StrFormat(
				"extern '%s' appears twice in the symbol table", s.name));
		if (!ctx.btf)
			return absl::InvalidArgumentError(absl::StrFormat(
				"extern '%s' needs BTF, the object has no .BTF", s.name));
		if (find_in_datasec(ctx.btf, kconfig, s.name))
			return absl::UnimplementedError(absl::StrFormat(
				"extern '%s': .kconfig externs are not supported", s.name));
		u32 id = find_in_datasec(ctx.btf, ksyms, s.name);
		if (!id)
			return absl::InvalidArgumentError(absl::StrFormat(
				"extern '%s' is not described in the .ksyms BTF DATASEC", s.name));
		const struct btf_type *t = btf_type_at(ctx.btf, id);
		Extern e;
		e.name = s.name;
		e.weak = s.bind == STB_WEAK;
		e.btf_id = id;
		e.btf_type_id = t->type;
		if (btf_is_func(t)) {
			const struct btf_type *proto = btf_type_at(ctx.btf, t->type);
			if (!proto || !btf_is_func_proto(proto))
				return absl::InvalidArgumentError(absl::StrFormat(
					"kfunc extern '%s': BTF FUNC without a prototype", s.name));
			e.kind = ExternKind::kKfunc;
		} else {
			e.kind = ExternKind::kKsymVar;
		}
		ctx.obj.externs.push_back(std::move(e));
	}
	return absl::OkStatus();
}

}  // namespace umemcg::emu::loader
