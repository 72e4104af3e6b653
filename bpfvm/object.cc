// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/object.cc: look-ups on a loaded BPF object and the license check.
// Mirrors: include/linux/license.h (license_is_gpl_compatible) (Linux 6.19)
#include "bpfvm/object.h"

#include <bpf/btf.h>

#include <array>

namespace umemcg::emu {

void BtfDeleter::operator()(struct btf *b) const
{
	btf__free(b);
}

namespace {
template <typename T>
int index_by_name(const std::vector<T> &v, const std::string &name)
{
	for (size_t i = 0; i < v.size(); i++)
		if (v[i].name == name)
			return static_cast<int>(i);
	return -1;
}
}  // namespace

const BpfProgram *BpfObject::find_program(const std::string &n) const
{
	int i = program_index(n);
	return i < 0 ? nullptr : &progs[static_cast<size_t>(i)];
}

const MapSpec *BpfObject::find_map(const std::string &n) const
{
	int i = map_index(n);
	return i < 0 ? nullptr : &maps[static_cast<size_t>(i)];
}

int BpfObject::map_index(const std::string &n) const { return index_by_name(maps, n); }
int BpfObject::program_index(const std::string &n) const { return index_by_name(progs, n); }
int BpfObject::extern_index(const std::string &n) const { return index_by_name(externs, n); }

bool license_is_gpl_compatible(const std::string &license)
{
	static constexpr std::array<const char *, 6> kCompatible = {
		"GPL", "GPL v2", "GPL and additional rights",
		"Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL",
	};
	for (const char *l : kCompatible)
		if (license == l)
			return true;
	return false;
}

const char *prog_kind_name(ProgKind kind)
{
	switch (kind) {
	case ProgKind::kUnknown: return "unknown";
	case ProgKind::kStructOps: return "struct_ops";
	case ProgKind::kSyscall: return "syscall";
	case ProgKind::kIter: return "iter";
	case ProgKind::kFentry: return "fentry";
	case ProgKind::kFexit: return "fexit";
	case ProgKind::kFmodRet: return "fmod_ret";
	case ProgKind::kTpBtf: return "tp_btf";
	case ProgKind::kRawTp: return "raw_tp";
	case ProgKind::kTracepoint: return "tracepoint";
	case ProgKind::kKprobe: return "kprobe";
	case ProgKind::kKretprobe: return "kretprobe";
	case ProgKind::kLsm: return "lsm";
	case ProgKind::kPerfEvent: return "perf_event";
	case ProgKind::kSocketFilter: return "socket";
	case ProgKind::kXdp: return "xdp";
	case ProgKind::kTc: return "tc";
	}
	return "?";
}

const char *map_origin_name(MapOrigin origin)
{
	switch (origin) {
	case MapOrigin::kBtfMaps: return ".maps";
	case MapOrigin::kData: return "data";
	case MapOrigin::kRodata: return "rodata";
	case MapOrigin::kBss: return "bss";
	case MapOrigin::kStructOps: return "struct_ops";
	case MapOrigin::kStructOpsLink: return "struct_ops.link";
	}
	return "?";
}

const char *reloc_kind_name(RelocKind kind)
{
	switch (kind) {
	case RelocKind::kMapFd: return "map";
	case RelocKind::kMapValue: return "map_value";
	case RelocKind::kKfuncCall: return "kfunc_call";
	case RelocKind::kKsymAddr: return "ksym_addr";
	case RelocKind::kSubprogAddr: return "subprog_addr";
	}
	return "?";
}

}  // namespace umemcg::emu
