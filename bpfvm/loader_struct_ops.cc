// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/loader_struct_ops.cc: struct_ops maps from SEC(".struct_ops") and
// SEC(".struct_ops.link"): the struct's layout from BTF, its initial bytes,
// and which program each function pointer member points at (R_BPF_64_ABS64
// relocations in .rel.struct_ops[.link]).
// Mirrors: tools/lib/bpf/libbpf.c (init_struct_ops_maps,
//          bpf_object__collect_st_ops_relos) (Linux 6.19)
// Emulation:
//  - the layout is the object's own BTF view of the struct; matching it to
//    the emulator's registered struct_ops type (the kernel BTF in libbpf) is
//    the runtime's job at map creation.
#include <elf.h>

#include <cstring>

#include "absl/strings/str_format.h"
#include "bpfvm/btf_util.h"
#include "bpfvm/loader_internal.h"

namespace umemcg::emu::loader {

namespace {

absl::Status err(const std::string &msg) { return absl::InvalidArgumentError(msg); }

absl::StatusOr<StructOpsSpec> struct_layout(const struct btf *btf, u32 type_id,
					    const struct btf_type *t, const std::string &map)
{
	StructOpsSpec spec;
	spec.type_name = btf_str(btf, t->name_off);
	spec.type_id = type_id;
	if (spec.type_name.empty())
		return err(absl::StrFormat("struct_ops map '%s': anonymous struct type", map));
	const struct btf_member *m = btf_members(t);
	for (u16 i = 0; i < btf_vlen(t); i++) {
		StructOpsMember sm;
		sm.name = btf_str(btf, m[i].name_off);
		sm.index = i;
		sm.btf_type_id = m[i].type;
		u32 bit_off = btf_member_bit_offset(t, i);
		u32 bits = btf_member_bitfield_size(t, i);
		sm.offset = bit_off / 8;
		if (bits == 0 && bit_off % 8 == 0) {
			absl::StatusOr<u32> sz = btf_type_size(btf, m[i].type);
			if (!sz.ok())
				return err(absl::StrFormat("struct_ops map '%s': member '%s': %s", map, sm.name,
							   sz.status().message()));
			sm.size = *sz;
		}
		if (sm.offset > t->size || sm.size > t->size - sm.offset)
			return err(absl::StrFormat("struct_ops map '%s': member '%s' outside the struct",
						   map, sm.name));
		const struct btf_type *mt;
		absl::StatusOr<u32> id = btf_skip_mods(btf, m[i].type, &mt);
		if (!id.ok())
			return err(absl::StrFormat("struct_ops map '%s': member '%s': %s", map, sm.name,
						   id.status().message()));
		if (mt && btf_is_ptr(mt)) {
			const struct btf_type *pt;
			absl::StatusOr<u32> pid = btf_skip_mods(btf, mt->type, &pt);
			if (!pid.ok())
				return err(absl::StrFormat("struct_ops map '%s': member '%s': %s", map,
							   sm.name, pid.status().message()));
			if (pt && btf_is_func_proto(pt)) {
				sm.is_func_ptr = true;
				sm.func_proto_id = *pid;
			}
		}
		spec.members.push_back(std::move(sm));
	}
	return spec;
}

absl::Status collect_section(LoadCtx &ctx, const std::string &sec_name, bool link)
{
	const elf::Section *sec = ctx.elf.by_name(sec_name);
	if (!sec)
		return absl::OkStatus();
	if (sec->type != SHT_PROGBITS)
		return err(absl::StrFormat("section '%s' is not PROGBITS", sec_name));
	if (!ctx.btf)
		return err(absl::StrFormat("section '%s' without .BTF", sec_name));
	u32 ds = btf_find_datasec(ctx.btf, sec_name);
	if (!ds)
		return err(absl::StrFormat("section '%s' without a BTF DATASEC", sec_name));
	const struct btf_type *dt = btf_type_at(ctx.btf, ds);
	const struct btf_var_secinfo *vsi = btf_var_secinfos(dt);
	size_t first = ctx.obj.maps.size();

	for (u16 i = 0; i < btf_vlen(dt); i++) {
		const struct btf_type *var = btf_type_at(ctx.btf, vsi[i].type);
		if (!var || !btf_is_var(var))
			return err(absl::StrFormat("'%s' entry %u is not a variable", sec_name, i));
		MapSpec m;
		m.name = btf_str(ctx.btf, var->name_off);
		m.origin = link ? MapOrigin::kStructOpsLink : MapOrigin::kStructOps;
		m.section = sec_name;
		m.sec_offset = vsi[i].offset;
		m.btf_var_id = vsi[i].type;
		const struct btf_type *t;
		absl::StatusOr<u32> tid = btf_skip_mods(ctx.btf, var->type, &t);
		if (!tid.ok())
			return err(absl::StrFormat("struct_ops map '%s': %s", m.name, tid.status().message()));
		if (!t || !btf_is_struct(t))
			return err(absl::StrFormat("struct_ops map '%s' is not a struct", m.name));
		if (m.sec_offset > sec->data.size() || t->size > sec->data.size() - m.sec_offset)
			return err(absl::StrFormat("struct_ops map '%s' (offset %u, size %u) outside '%s'",
						   m.name, m.sec_offset, t->size, sec_name));
		absl::StatusOr<StructOpsSpec> spec = struct_layout(ctx.btf, *tid, t, m.name);
		if (!spec.ok())
			return spec.status();
		spec->var_id = vsi[i].type;
		m.type = BPF_MAP_TYPE_STRUCT_OPS;
		m.key_size = 4;
		m.value_size = t->size;
		m.max_entries = 1;
		m.map_flags = link ? kBpfFLink : 0;
		m.btf_value_type_id = *tid;
		m.initial_data.assign(sec->data.begin() + static_cast<long>(m.sec_offset),
				      sec->data.begin() + static_cast<long>(m.sec_offset + t->size));
		m.st_ops = std::move(*spec);
		if (ctx.obj.map_index(m.name) >= 0)
			return err(absl::StrFormat("map '%s' defined twice", m.name));
		ctx.obj.maps.push_back(std::move(m));
	}

	const elf::RelSection *rs = ctx.elf.rels_for(sec->idx);
	if (!rs)
		return absl::OkStatus();
	for (const elf::Rel &r : rs->rels) {
		const elf::Symbol &sym = ctx.elf.symbols[r.sym];
		auto where = [&] {
			return absl::StrFormat("'%s' relocation at offset %u (symbol '%s')", sec_name,
					       r.offset, sym.name);
		};
		if (r.type != elf::kRBpf64Abs64)
			return err(where() + absl::StrFormat(": type %u, expected R_BPF_64_ABS64", r.type));
		if (sym.type != STT_FUNC || sym.shndx == SHN_UNDEF || sym.shndx >= ctx.elf.sections.size())
			return err(where() + ": not a program symbol");
		if (sym.value % 8)
			return err(where() + ": misaligned program symbol");
		MapSpec *map = nullptr;
		for (size_t mi = first; mi < ctx.obj.maps.size(); mi++) {
			MapSpec &m = ctx.obj.maps[mi];
			if (r.offset >= m.sec_offset && r.offset < m.sec_offset + m.value_size)
				map = &m;
		}
		if (!map)
			return err(where() + ": outside every struct_ops variable");
		u64 moff = r.offset - map->sec_offset;
		StructOpsMember *member = nullptr;
		for (StructOpsMember &sm : map->st_ops->members)
			if (sm.offset == moff && sm.size == 8)
				member = &sm;
		if (!member || !member->is_func_ptr)
			return err(where() + absl::StrFormat(": offset %u of '%s' is not a function pointer member",
							     moff, map->name));
		int pi = -1;
		for (size_t p = 0; p < ctx.obj.progs.size(); p++) {
			const BpfProgram &prog = ctx.obj.progs[p];
			if (prog.section == ctx.elf.sections[sym.shndx].name &&
			    prog.sec_insn_off == sym.value / 8)
				pi = static_cast<int>(p);
		}
		if (pi < 0)
			return err(where() + ": no program at that symbol");
		BpfProgram &prog = ctx.obj.progs[static_cast<size_t>(pi)];
		if (prog.kind != ProgKind::kStructOps)
			return err(where() + absl::StrFormat(": program '%s' (SEC(\"%s\")) is not a struct_ops program",
							     prog.name, prog.section));
		// libbpf: a program implements one member of one struct_ops type.
		if (!prog.st_ops_type.empty() &&
		    (prog.st_ops_type != map->st_ops->type_name || prog.expected_attach_type != member->index))
			return err(absl::StrFormat(
				"program '%s' is used for '%s.%s' and for '%s' member %u", prog.name,
				prog.st_ops_type, prog.st_ops_member, map->st_ops->type_name, member->index));
		prog.st_ops_type = map->st_ops->type_name;
		prog.st_ops_member = member->name;
		prog.expected_attach_type = member->index;
		member->prog_idx = pi;
		std::memset(map->initial_data.data() + moff, 0, 8);
	}
	return absl::OkStatus();
}

}  // namespace

absl::Status collect_struct_ops(LoadCtx &ctx)
{
	if (absl::Status st = collect_section(ctx, ".struct_ops", false); !st.ok())
		return st;
	return collect_section(ctx, ".struct_ops.link", true);
}

}  // namespace umemcg::emu::loader
