// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/loader_maps.cc: map specifications from BTF-defined SEC(".maps") and
// from the global data sections (.data, .rodata, .bss and their .* forms).
// Mirrors: tools/lib/bpf/libbpf.c (bpf_object__init_user_btf_maps,
//          parse_btf_map_def, bpf_object__init_global_data_maps,
//          bpf_object__collect_map_relos) (Linux 6.19)
// Emulation:
//  - legacy `struct bpf_map_def SEC("maps")` is rejected, as libbpf 1.0 does.
//  - initial slots of map-in-map and prog-array maps (.values = {...}, relocated
//    through .rel.maps) are recorded in MapSpec::init_slots; the runtime has neither
//    map type (it warns and every operation fails), so nothing fills them.
#include <elf.h>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "bpfvm/btf_util.h"
#include "bpfvm/loader_internal.h"

namespace umemcg::emu::loader {

namespace {

// Global data maps are arrays with one element of the section's size: the
// kernel's array_map_alloc_check refuses value_size > KMALLOC_MAX_SIZE (4 MiB
// with SLUB on x86-64).
constexpr u64 kKmallocMaxSize = 4ull << 20;

absl::Status map_error(const std::string &map, const std::string &what)
{
	return absl::InvalidArgumentError(absl::StrFormat("map '%s': %s", map, what));
}

// __uint(name, val) is `int (*name)[val]`: a pointer to an array of val.
absl::StatusOr<u32> get_map_int(const struct btf *btf, const std::string &map,
				const std::string &field, u32 type_id)
{
	const struct btf_type *t;
	absl::StatusOr<u32> id = btf_skip_mods(btf, type_id, &t);
	if (!id.ok())
		return map_error(map, absl::StrFormat("field '%s': %s", field, id.status().message()));
	if (!t || !btf_is_ptr(t))
		return map_error(map, absl::StrFormat("field '%s' is not __uint()", field));
	const struct btf_type *arr = btf_type_at(btf, t->type);
	if (!arr || !btf_is_array(arr))
		return map_error(map, absl::StrFormat("field '%s' is not __uint()", field));
	return btf_array(arr)->nelems;
}

// __type(name, T) is `typeof(T) *name`: returns T's id and size.
absl::Status get_map_type(const struct btf *btf, const std::string &map, const std::string &field,
			  u32 type_id, u32 *out_id, u32 *out_size)
{
	const struct btf_type *t;
	absl::StatusOr<u32> id = btf_skip_mods(btf, type_id, &t);
	if (!id.ok())
		return map_error(map, absl::StrFormat("field '%s': %s", field, id.status().message()));
	if (!t || !btf_is_ptr(t))
		return map_error(map, absl::StrFormat("field '%s' is not __type()", field));
	absl::StatusOr<u32> sz = btf_type_size(btf, t->type);
	if (!sz.ok())
		return map_error(map, absl::StrFormat("field '%s': cannot size its type", field));
	*out_id = t->type;
	*out_size = *sz;
	return absl::OkStatus();
}

absl::Status parse_map_def(const struct btf *btf, const struct btf_type *def,
			   MapSpec &m, bool is_inner);

// __array(values, struct inner) is `typeof(struct inner) *values[]`.
absl::Status parse_inner(const struct btf *btf, MapSpec &m, u32 type_id, bool is_inner)
{
	const struct btf_type *t;
	absl::StatusOr<u32> id = btf_skip_mods(btf, type_id, &t);
	if (!id.ok() || !t || !btf_is_array(t))
		return map_error(m.name, "field 'values' is not __array()");
	id = btf_skip_mods(btf, btf_array(t)->type, &t);
	if (!id.ok() || !t || !btf_is_ptr(t))
		return map_error(m.name, "field 'values' is not an array of pointers");
	id = btf_skip_mods(btf, t->type, &t);
	if (!id.ok() || !t)
		return map_error(m.name, "field 'values': bad element type");
	if (btf_is_func_proto(t))
		return absl::OkStatus();  // prog array: slots are program pointers
	if (!btf_is_struct(t))
		return map_error(m.name, "field 'values' must point to a map definition");
	if (is_inner)
		return map_error(m.name, "nested map-in-map definitions are not supported");
	auto inner = std::make_shared<MapSpec>();
	inner->name = m.name + ".inner";
	inner->origin = MapOrigin::kBtfMaps;
	if (absl::Status st = parse_map_def(btf, t, *inner, true); !st.ok())
		return st;
	m.inner = std::move(inner);
	m.value_size = 4;  // an inner map's id/fd
	return absl::OkStatus();
}

absl::Status parse_map_def(const struct btf *btf, const struct btf_type *def,
			   MapSpec &m, bool is_inner)
{
	bool key_size_set = false, value_size_set = false, key_type_set = false,
	     value_type_set = false;
	const struct btf_member *mem = btf_members(def);
	u16 n = btf_vlen(def);
	for (u16 i = 0; i < n; i++) {
		std::string f = btf_str(btf, mem[i].name_off);
		u32 tid = mem[i].type;
		absl::StatusOr<u32> v = 0u;
		if (f == "type" || f == "max_entries" || f == "map_flags" || f == "numa_node" ||
		    f == "key_size" || f == "value_size" || f == "map_extra" || f == "pinning") {
			v = get_map_int(btf, m.name, f, tid);
			if (!v.ok())
				return v.status();
		}
		if (f == "type") {
			m.type = *v;
		} else if (f == "max_entries") {
			m.max_entries = *v;
		} else if (f == "map_flags") {
			m.map_flags = *v;
		} else if (f == "numa_node") {
			m.numa_node = *v;
		} else if (f == "map_extra") {
			m.map_extra = *v;
		} else if (f == "pinning") {
			if (*v != 0 && *v != 1)  // LIBBPF_PIN_NONE, LIBBPF_PIN_BY_NAME
				return map_error(m.name, absl::StrFormat("invalid pinning %u", *v));
			m.pinning = *v;
		} else if (f == "key_size" || f == "value_size") {
			bool is_key = f == "key_size";
			u32 &sz = is_key ? m.key_size : m.value_size;
			bool type_set = is_key ? key_type_set : value_type_set;
			if (type_set && sz != *v)
				return map_error(m.name, absl::StrFormat("conflicting %s %u != %u", f, sz, *v));
			sz = *v;
			(is_key ? key_size_set : value_size_set) = true;
		} else if (f == "key" || f == "value") {
			bool is_key = f == "key";
			u32 id = 0, sz = 0;
			if (absl::Status st = get_map_type(btf, m.name, f, tid, &id, &sz); !st.ok())
				return st;
			u32 &msz = is_key ? m.key_size : m.value_size;
			bool size_set = is_key ? key_size_set : value_size_set;
			if (size_set && msz != sz)
				return map_error(m.name, absl::StrFormat(
					"conflicting %s size %u != %u", f, msz, sz));
			msz = sz;
			(is_key ? m.btf_key_type_id : m.btf_value_type_id) = id;
			(is_key ? key_type_set : value_type_set) = true;
		} else if (f == "values") {
			if (absl::Status st = parse_inner(btf, m, tid, is_inner); !st.ok())
				return st;
		} else {
			return map_error(m.name, absl::StrFormat("unknown field '%s'", f));
		}
	}
	if (m.inner && m.type != BPF_MAP_TYPE_ARRAY_OF_MAPS && m.type != BPF_MAP_TYPE_HASH_OF_MAPS)
		return map_error(m.name, "'values' of a map definition needs a map-in-map type");
	return absl::OkStatus();
}

// bpf_object__collect_map_relos(): each relocation of '.maps' fills one slot of a prog array's
// or map-in-map's 'values' with a program (a function symbol) or a map (a '.maps' variable).
absl::Status collect_map_relos(LoadCtx &ctx, const elf::Section &sec)
{
	const elf::RelSection *rs = ctx.elf.rels_for(sec.idx);
	if (!rs)
		return absl::OkStatus();
	for (const elf::Rel &r : rs->rels) {
		const elf::Symbol &sym = ctx.elf.symbols[r.sym];  // index checked by read_elf
		// The map is the '.maps' variable whose symbol covers the relocated bytes.
		MapSpec *m = nullptr;
		const struct btf_type *def = nullptr;
		u64 var_off = 0;
		for (const elf::Symbol &v : ctx.elf.symbols) {
			if (v.shndx != sec.idx || v.type != STT_OBJECT || r.offset < v.value ||
			    r.offset >= v.value + v.size)
				continue;
			const int mi = ctx.obj.map_index(v.name);
			if (mi < 0)
				break;
			m = &ctx.obj.maps[static_cast<size_t>(mi)];
			const struct btf_type *var = btf_type_at(ctx.btf, m->btf_var_id);
			if (!var || !btf_skip_mods(ctx.btf, var->type, &def).ok() || !def)
				m = nullptr;
			var_off = v.value;
			break;
		}
		if (!m)
			return absl::InvalidArgumentError(absl::StrFormat(
				"'.maps': relocation at offset %u is in no map definition", r.offset));
		if (m->type != BPF_MAP_TYPE_PROG_ARRAY && m->type != BPF_MAP_TYPE_ARRAY_OF_MAPS &&
		    m->type != BPF_MAP_TYPE_HASH_OF_MAPS)
			return map_error(m->name, "initial values need a prog-array or map-in-map type");
		u32 values_off = 0;
		bool found = false;
		const struct btf_member *mem = btf_members(def);
		for (u16 j = 0; j < btf_vlen(def); j++) {
			if (btf_str(ctx.btf, mem[j].name_off) == std::string("values")) {
				values_off = btf_member_bit_offset(def, j) / 8;
				found = true;
			}
		}
		const u64 at = r.offset - var_off;
		if (!found || at < values_off || (at - values_off) % 8)
			return map_error(m->name, absl::StrFormat(
				"relocation at offset %u is not a 'values' slot", r.offset));
		if (sym.name.empty())
			return map_error(m->name, "a 'values' slot names no symbol");
		const bool prog = m->type == BPF_MAP_TYPE_PROG_ARRAY;
		if (prog != (sym.type == STT_FUNC))
			return map_error(m->name, absl::StrFormat(
				"'values' slot names '%s', not a %s", sym.name, prog ? "program" : "map"));
		m->init_slots.emplace_back(static_cast<u32>((at - values_off) / 8), sym.name);
	}
	return absl::OkStatus();
}

}  // namespace

absl::Status collect_btf_maps(LoadCtx &ctx)
{
	if (ctx.elf.by_name("maps"))
		return absl::InvalidArgumentError(
			"legacy SEC(\"maps\") map definitions are not supported; use BTF-defined SEC(\".maps\")");
	const elf::Section *sec = ctx.elf.by_name(".maps");
	if (!sec)
		return absl::OkStatus();
	ctx.maps_shndx = sec->idx;
	if (!ctx.btf)
		return absl::InvalidArgumentError("'.maps' section without .BTF");
	u32 ds = btf_find_datasec(ctx.btf, ".maps");
	if (!ds)
		return absl::InvalidArgumentError("'.maps' section without a BTF DATASEC");
	const struct btf_type *dt = btf_type_at(ctx.btf, ds);
	const struct btf_var_secinfo *vsi = btf_var_secinfos(dt);
	for (u16 i = 0; i < btf_vlen(dt); i++) {
		const struct btf_type *var = btf_type_at(ctx.btf, vsi[i].type);
		if (!var || !btf_is_var(var))
			return absl::InvalidArgumentError(absl::StrFormat(
				"'.maps' entry %u is not a variable", i));
		MapSpec m;
		m.name = btf_str(ctx.btf, var->name_off);
		m.origin = MapOrigin::kBtfMaps;
		m.section = ".maps";
		m.sec_offset = vsi[i].offset;
		m.btf_var_id = vsi[i].type;
		if (m.name.empty())
			return absl::InvalidArgumentError(absl::StrFormat("'.maps' entry %u has no name", i));
		const struct btf_type *def;
		absl::StatusOr<u32> id = btf_skip_mods(ctx.btf, var->type, &def);
		if (!id.ok())
			return map_error(m.name, std::string(id.status().message()));
		if (!def || !btf_is_struct(def))
			return map_error(m.name, "definition is not a struct");
		if (absl::Status st = parse_map_def(ctx.btf, def, m, false); !st.ok())
			return st;
		if (ctx.obj.map_index(m.name) >= 0)
			return map_error(m.name, "defined twice");
		ctx.obj.maps.push_back(std::move(m));
	}
	return collect_map_relos(ctx, *sec);
}

absl::Status collect_data_maps(LoadCtx &ctx)
{
	ctx.data_map_of_section.assign(ctx.elf.sections.size(), -1);
	for (const elf::Section &s : ctx.elf.sections) {
		MapOrigin origin;
		if (s.idx == 0 || s.size == 0)
			continue;
		if (s.type == SHT_PROGBITS &&
		    (s.name == ".data" || absl::StartsWith(s.name, ".data.")))
			origin = MapOrigin::kData;
		else if (s.type == SHT_PROGBITS &&
			 (s.name == ".rodata" || absl::StartsWith(s.name, ".rodata.")))
			origin = MapOrigin::kRodata;
		else if (s.type == SHT_NOBITS &&
			 (s.name == ".bss" || absl::StartsWith(s.name, ".bss.")))
			origin = MapOrigin::kBss;
		else
			continue;
		if (s.size > kKmallocMaxSize)
			return absl::InvalidArgumentError(absl::StrFormat(
				"section '%s': %u bytes of global data exceed the %u-byte map value limit",
				s.name, s.size, kKmallocMaxSize));
		MapSpec m;
		m.name = s.name;
		m.origin = origin;
		m.section = s.name;
		m.type = BPF_MAP_TYPE_ARRAY;
		m.key_size = 4;
		m.value_size = static_cast<u32>(s.size);
		m.max_entries = 1;
		m.map_flags = BPF_F_MMAPABLE;
		if (origin == MapOrigin::kRodata) {
			m.map_flags |= BPF_F_RDONLY_PROG;
			m.frozen = true;
		}
		if (ctx.btf)
			m.btf_value_type_id = btf_find_datasec(ctx.btf, s.name);
		if (origin == MapOrigin::kBss)
			m.initial_data.assign(static_cast<size_t>(s.size), 0);
		else
			m.initial_data = s.data;
		ctx.data_map_of_section[s.idx] = static_cast<int>(ctx.obj.maps.size());
		ctx.obj.maps.push_back(std::move(m));
	}
	return absl::OkStatus();
}

}  // namespace umemcg::emu::loader
