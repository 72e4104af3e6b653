// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/loader_sec_def.h: what a SEC() name means: program type, expected
// attach type, attach target and sleepability.
// Mirrors: tools/lib/bpf/libbpf.c (section_defs[], find_sec_def) (Linux 6.19)
// Emulation:
//  - only the program types the emulator can meet are listed; any other
//    section gives ProgKind::kUnknown with BPF_PROG_TYPE_UNSPEC, which
//    libbpf also accepts at open time and rejects at load time.
#pragma once

#include <linux/bpf.h>

#include <string>

#include "bpfvm/object.h"

namespace umemcg::emu {

struct SecDef {
	ProgKind kind = ProgKind::kUnknown;
	bpf_prog_type prog_type = BPF_PROG_TYPE_UNSPEC;
	u32 expected_attach_type = 0;  // enum bpf_attach_type
	bool sleepable = false;
	std::string target;  // what follows the first '/', "" if none
};

// "iter.s/cgroup" -> {kIter, TRACING, BPF_TRACE_ITER, sleepable, "cgroup"}.
SecDef parse_sec_name(const std::string &sec);

}  // namespace umemcg::emu
