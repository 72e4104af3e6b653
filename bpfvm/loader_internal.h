// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/loader_internal.h: state shared by the loader's phases.
// Mirrors: tools/lib/bpf/libbpf.c (bpf_object__open phases) (Linux 6.19)
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bpfvm/elf_reader.h"
#include "bpfvm/object.h"
#include "bpfvm/prog_type.h"

struct btf;

namespace umemcg::emu::loader {

struct LoadCtx {
	const elf::ElfFile &elf;
	BpfObject &obj;
	struct btf *btf = nullptr;  // owned by obj.btf; nullptr if no .BTF
	u32 text_shndx = 0;         // 0 if the object has no .text
	u32 maps_shndx = 0;         // 0 if no .maps
	std::vector<int> data_map_of_section;  // section index -> map, -1
	// Kernel-object layouts CO-RE relocations resolve against; nullptr: not applied.
	const ProgTypeRegistry *core_types = nullptr;
};

// Phases, in the order load_object runs them.
absl::Status collect_btf_maps(LoadCtx &ctx);      // loader_maps.cc
absl::Status collect_data_maps(LoadCtx &ctx);     // loader_maps.cc
absl::Status collect_externs(LoadCtx &ctx);       // loader_externs.cc
absl::Status collect_programs(LoadCtx &ctx);      // loader_progs.cc
absl::Status collect_struct_ops(LoadCtx &ctx);    // loader_struct_ops.cc

// CO-RE relocations of section sec applied to its instructions (loader_core.cc), before
// programs are split and .text is appended.
// One info part of .BTF.ext (line_info, core_relo): its bytes [base, end) in *d, the first
// word being the record size. d is null when the object has no .BTF.ext (or no BTF) or its
// header is too short to hold the part's offset and length at @off_field, or the part is empty.
struct BtfExtPart {
	const std::vector<u8> *d = nullptr;
	size_t base = 0, end = 0;
};
absl::StatusOr<BtfExtPart> btf_ext_part(const LoadCtx &ctx, u32 off_field, const char *what);
u32 btf_ext_rd32(const std::vector<u8> &d, size_t off);
// The instructions it poisons are appended to *poisoned (section instruction indices).
absl::Status apply_core_relos(LoadCtx &ctx, const elf::Section &sec, std::vector<bpf_insn> &insns,
			      std::vector<CorePoison> *poisoned);

// The .BTF.ext line_info records of section sec (loader_btf_ext.cc), in file order, insn_off
// in instructions from the section's start. Empty without .BTF.ext or records for sec.
absl::StatusOr<std::vector<bpf_line_info>> section_line_info(const LoadCtx &ctx, const elf::Section &sec);

}  // namespace umemcg::emu::loader
