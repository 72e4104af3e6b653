// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/loader_internal.h: state shared by the loader's phases.
// Mirrors: tools/lib/bpf/libbpf.c (bpf_object__open phases) (Linux 6.19)
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "bpfvm/elf_reader.h"
#include "bpfvm/object.h"

struct btf;

namespace umemcg::emu::loader {

struct LoadCtx {
	const elf::ElfFile &elf;
	BpfObject &obj;
	struct btf *btf = nullptr;  // owned by obj.btf; nullptr if no .BTF
	u32 text_shndx = 0;         // 0 if the object has no .text
	u32 maps_shndx = 0;         // 0 if no .maps
	std::vector<int> data_map_of_section;  // section index -> map, -1
};

// Phases, in the order load_object runs them.
absl::Status collect_btf_maps(LoadCtx &ctx);      // loader_maps.cc
absl::Status collect_data_maps(LoadCtx &ctx);     // loader_maps.cc
absl::Status collect_externs(LoadCtx &ctx);       // loader_externs.cc
absl::Status collect_programs(LoadCtx &ctx);      // loader_progs.cc
absl::Status collect_struct_ops(LoadCtx &ctx);    // loader_struct_ops.cc

}  // namespace umemcg::emu::loader
