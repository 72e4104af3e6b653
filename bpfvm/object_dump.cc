// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/object_dump.cc: the object summary printer.
#include "bpfvm/object_dump.h"

#include <bpf/btf.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bpfvm/kfunc.h"

namespace umemcg::emu {

const char *bpf_prog_type_name(u32 type)
{
	switch (type) {
	case BPF_PROG_TYPE_UNSPEC: return "unspec";
	case BPF_PROG_TYPE_SOCKET_FILTER: return "socket_filter";
	case BPF_PROG_TYPE_KPROBE: return "kprobe";
	case BPF_PROG_TYPE_SCHED_CLS: return "sched_cls";
	case BPF_PROG_TYPE_SCHED_ACT: return "sched_act";
	case BPF_PROG_TYPE_TRACEPOINT: return "tracepoint";
	case BPF_PROG_TYPE_XDP: return "xdp";
	case BPF_PROG_TYPE_PERF_EVENT: return "perf_event";
	case BPF_PROG_TYPE_RAW_TRACEPOINT: return "raw_tracepoint";
	case BPF_PROG_TYPE_TRACING: return "tracing";
	case BPF_PROG_TYPE_STRUCT_OPS: return "struct_ops";
	case BPF_PROG_TYPE_LSM: return "lsm";
	case BPF_PROG_TYPE_SYSCALL: return "syscall";
	default: return "other";
	}
}

const char *bpf_map_type_name(u32 type)
{
	switch (type) {
	case BPF_MAP_TYPE_HASH: return "hash";
	case BPF_MAP_TYPE_ARRAY: return "array";
	case BPF_MAP_TYPE_PROG_ARRAY: return "prog_array";
	case BPF_MAP_TYPE_PERCPU_HASH: return "percpu_hash";
	case BPF_MAP_TYPE_PERCPU_ARRAY: return "percpu_array";
	case BPF_MAP_TYPE_LRU_HASH: return "lru_hash";
	case BPF_MAP_TYPE_LRU_PERCPU_HASH: return "lru_percpu_hash";
	case BPF_MAP_TYPE_ARRAY_OF_MAPS: return "array_of_maps";
	case BPF_MAP_TYPE_HASH_OF_MAPS: return "hash_of_maps";
	case BPF_MAP_TYPE_STRUCT_OPS: return "struct_ops";
	case BPF_MAP_TYPE_RINGBUF: return "ringbuf";
	case BPF_MAP_TYPE_TASK_STORAGE: return "task_storage";
	case kBpfMapTypeCgrpStorage: return "cgrp_storage";
	default: return "other";
	}
}

namespace {

std::string reloc_string(const BpfObject &obj, const Reloc &r)
{
	auto map_name = [&](u32 i) { return i < obj.maps.size() ? obj.maps[i].name : std::string("?"); };
	auto ext_name = [&](u32 i) { return i < obj.externs.size() ? obj.externs[i].name : std::string("?"); };
	switch (r.kind) {
	case RelocKind::kMapFd: return absl::StrFormat("map %s", map_name(r.map_idx));
	case RelocKind::kMapValue:
		return absl::StrFormat("map_value %s+%u", map_name(r.map_idx), r.offset);
	case RelocKind::kKfuncCall: return absl::StrFormat("kfunc_call %s", ext_name(r.extern_idx));
	case RelocKind::kKsymAddr: return absl::StrFormat("ksym_addr %s", ext_name(r.extern_idx));
	case RelocKind::kSubprogAddr: return absl::StrFormat("subprog_addr insn %u", r.target_insn);
	}
	return "?";
}

void dump_programs(const BpfObject &obj, std::string &out)
{
	absl::StrAppendFormat(&out, "programs (%u):\n", obj.progs.size());
	for (size_t i = 0; i < obj.progs.size(); i++) {
		const BpfProgram &p = obj.progs[i];
		absl::StrAppendFormat(&out, "  [%u] %s SEC(\"%s\") kind=%s prog_type=%s(%u)", i, p.name,
				      p.section, prog_kind_name(p.kind), bpf_prog_type_name(p.prog_type),
				      static_cast<u32>(p.prog_type));
		if (!p.attach_target.empty())
			absl::StrAppendFormat(&out, " target=%s", p.attach_target);
		if (p.sleepable)
			out += " sleepable";
		absl::StrAppendFormat(&out, " insns=%u (own %u)\n", p.insns.size(), p.main_len);
		if (!p.st_ops_type.empty())
			absl::StrAppendFormat(&out, "      implements %s.%s (member %u)\n", p.st_ops_type,
					      p.st_ops_member, p.expected_attach_type);
		for (const Subprog &s : p.subprogs)
			absl::StrAppendFormat(&out, "      subprog %s at insn %u (%u insns)\n", s.name,
					      s.start, s.len);
		for (const Reloc &r : p.relocs)
			absl::StrAppendFormat(&out, "      reloc insn %u: %s\n", r.insn_idx,
					      reloc_string(obj, r));
	}
}

void dump_maps(const BpfObject &obj, std::string &out)
{
	absl::StrAppendFormat(&out, "maps (%u):\n", obj.maps.size());
	for (size_t i = 0; i < obj.maps.size(); i++) {
		const MapSpec &m = obj.maps[i];
		absl::StrAppendFormat(&out,
			"  [%u] %s (%s) type=%s(%u) key=%u value=%u max_entries=%u flags=0x%x",
			i, m.name, map_origin_name(m.origin), bpf_map_type_name(m.type), m.type,
			m.key_size, m.value_size, m.max_entries, m.map_flags);
		if (m.map_extra)
			absl::StrAppendFormat(&out, " map_extra=%u", m.map_extra);
		if (m.pinning)
			out += " pinned-by-name";
		if (m.frozen)
			out += " frozen";
		out += "\n";
		if (m.inner)
			absl::StrAppendFormat(&out, "      inner: type=%s(%u) key=%u value=%u max_entries=%u\n",
					      bpf_map_type_name(m.inner->type), m.inner->type,
					      m.inner->key_size, m.inner->value_size, m.inner->max_entries);
		if (!m.st_ops)
			continue;
		absl::StrAppendFormat(&out, "      struct %s (%u bytes)\n", m.st_ops->type_name, m.value_size);
		for (const StructOpsMember &sm : m.st_ops->members) {
			absl::StrAppendFormat(&out, "        +%-4u %s", sm.offset, sm.name);
			if (sm.is_func_ptr)
				absl::StrAppendFormat(&out, " -> %s\n", sm.prog_idx >= 0
					? obj.progs[static_cast<size_t>(sm.prog_idx)].name : std::string("NULL"));
			else
				absl::StrAppendFormat(&out, " (%u bytes)\n", sm.size);
		}
	}
}

void dump_externs(const BpfObject &obj, std::string &out)
{
	absl::StrAppendFormat(&out, "externs (%u):\n", obj.externs.size());
	for (size_t i = 0; i < obj.externs.size(); i++) {
		const Extern &e = obj.externs[i];
		absl::StrAppendFormat(&out, "  [%u] %s %s%s", i, e.name,
				      e.kind == ExternKind::kKfunc ? "kfunc" : "ksym-var",
				      e.weak ? " weak" : "");
		if (e.kfunc)
			absl::StrAppendFormat(&out, " -> %s [%s]", kfunc_signature(*e.kfunc),
					      kfunc_flags_string(e.kfunc->flags));
		else
			out += " (unresolved)";
		out += "\n";
	}
}

}  // namespace

std::string dump_object(const BpfObject &obj)
{
	std::string out = absl::StrFormat(
		"object %s: license \"%s\"%s, BTF %s\n", obj.name.empty() ? "(unnamed)" : obj.name,
		obj.license, license_is_gpl_compatible(obj.license) ? " (GPL-compatible)" : "",
		obj.btf ? absl::StrFormat("%u types", btf__type_cnt(obj.btf.get()) - 1) : "none");
	dump_programs(obj, out);
	dump_maps(obj, out);
	dump_externs(obj, out);
	return out;
}

}  // namespace umemcg::emu
