// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/loader_sec_def.cc: the SEC() name table.
// Mirrors: tools/lib/bpf/libbpf.c (section_defs[]) (Linux 6.19)
#include "bpfvm/loader_sec_def.h"

#include <array>

namespace umemcg::emu {

namespace {

struct Entry {
	const char *prefix;
	ProgKind kind;
	bpf_prog_type type;
	u32 attach;
	bool sleepable;
	bool exact;  // no "/target" form (libbpf's SEC_DEF without '+' or '/')
};

constexpr std::array<Entry, 27> kSecDefs = {{
	{"struct_ops", ProgKind::kStructOps, BPF_PROG_TYPE_STRUCT_OPS, 0, false, false},
	{"struct_ops.s", ProgKind::kStructOps, BPF_PROG_TYPE_STRUCT_OPS, 0, true, false},
	{"syscall", ProgKind::kSyscall, BPF_PROG_TYPE_SYSCALL, 0, true, true},
	{"iter", ProgKind::kIter, BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, false, false},
	{"iter.s", ProgKind::kIter, BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, true, false},
	{"fentry", ProgKind::kFentry, BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, false, false},
	{"fentry.s", ProgKind::kFentry, BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, true, false},
	{"fexit", ProgKind::kFexit, BPF_PROG_TYPE_TRACING, BPF_TRACE_FEXIT, false, false},
	{"fexit.s", ProgKind::kFexit, BPF_PROG_TYPE_TRACING, BPF_TRACE_FEXIT, true, false},
	{"fmod_ret", ProgKind::kFmodRet, BPF_PROG_TYPE_TRACING, BPF_MODIFY_RETURN, false, false},
	{"fmod_ret.s", ProgKind::kFmodRet, BPF_PROG_TYPE_TRACING, BPF_MODIFY_RETURN, true, false},
	{"tp_btf", ProgKind::kTpBtf, BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP, false, false},
	{"raw_tp", ProgKind::kRawTp, BPF_PROG_TYPE_RAW_TRACEPOINT, 0, false, false},
	{"raw_tracepoint", ProgKind::kRawTp, BPF_PROG_TYPE_RAW_TRACEPOINT, 0, false, false},
	{"tp", ProgKind::kTracepoint, BPF_PROG_TYPE_TRACEPOINT, 0, false, false},
	{"tracepoint", ProgKind::kTracepoint, BPF_PROG_TYPE_TRACEPOINT, 0, false, false},
	{"kprobe", ProgKind::kKprobe, BPF_PROG_TYPE_KPROBE, 0, false, false},
	{"kretprobe", ProgKind::kKretprobe, BPF_PROG_TYPE_KPROBE, 0, false, false},
	{"lsm", ProgKind::kLsm, BPF_PROG_TYPE_LSM, BPF_LSM_MAC, false, false},
	{"lsm.s", ProgKind::kLsm, BPF_PROG_TYPE_LSM, BPF_LSM_MAC, true, false},
	{"perf_event", ProgKind::kPerfEvent, BPF_PROG_TYPE_PERF_EVENT, 0, false, true},
	{"socket", ProgKind::kSocketFilter, BPF_PROG_TYPE_SOCKET_FILTER, 0, false, false},
	{"xdp", ProgKind::kXdp, BPF_PROG_TYPE_XDP, BPF_XDP, false, true},
	{"xdp.frags", ProgKind::kXdp, BPF_PROG_TYPE_XDP, BPF_XDP, false, true},
	{"tc", ProgKind::kTc, BPF_PROG_TYPE_SCHED_CLS, 0, false, false},
	{"classifier", ProgKind::kTc, BPF_PROG_TYPE_SCHED_CLS, 0, false, false},
	{"action", ProgKind::kTc, BPF_PROG_TYPE_SCHED_ACT, 0, false, false},
}};

}  // namespace

SecDef parse_sec_name(const std::string &sec)
{
	SecDef d;
	size_t slash = sec.find('/');
	std::string head = sec.substr(0, slash);
	for (const Entry &e : kSecDefs) {
		if (head != e.prefix)
			continue;
		if (e.exact && slash != std::string::npos)
			break;
		d.kind = e.kind;
		d.prog_type = e.type;
		d.expected_attach_type = e.attach;
		d.sleepable = e.sleepable;
		if (slash != std::string::npos)
			d.target = sec.substr(slash + 1);
		return d;
	}
	return d;
}

}  // namespace umemcg::emu
