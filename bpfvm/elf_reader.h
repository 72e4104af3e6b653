// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/elf_reader.h: a bounded reader of BPF relocatable ELF objects.
// Every section, symbol and relocation is read through libelf (gelf) and
// copied into plain structures after its bounds were checked, so the rest of
// the loader never touches raw file offsets.
// Mirrors: tools/lib/bpf/libbpf.c (bpf_object__elf_init, elf_sym_by_idx) (Linux 6.19)
// Emulation:
//  - big-endian BPF objects (-target bpfeb) are rejected, libbpf swaps them.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "shim/types.h"

namespace umemcg::emu::elf {

// Relocation types of the BPF ELF ABI (llvm's BPF.def). glibc's elf.h only
// names R_BPF_64_64 and R_BPF_64_32.
inline constexpr u32 kRBpfNone = 0;
inline constexpr u32 kRBpf64_64 = 1;      // ld_imm64 of an address
inline constexpr u32 kRBpf64Abs64 = 2;    // 64-bit data word (struct_ops)
inline constexpr u32 kRBpf64Abs32 = 3;    // 32-bit data word (DWARF, BTF.ext)
inline constexpr u32 kRBpf64NoDyld32 = 4; // like ABS32, BTF.ext
inline constexpr u32 kRBpf64_32 = 10;     // call instruction

struct Section {
	u32 idx = 0;
	std::string name;
	u32 type = 0;   // SHT_*
	u64 flags = 0;  // SHF_*
	u64 size = 0;   // sh_size (also for SHT_NOBITS)
	u32 link = 0;
	u32 info = 0;
	u64 addralign = 0;
	std::vector<u8> data;  // empty for SHT_NOBITS
};

struct Symbol {
	std::string name;
	u64 value = 0;
	u64 size = 0;
	u32 shndx = 0;  // SHN_UNDEF, SHN_ABS, ... or a section index
	u8 bind = 0;    // STB_*
	u8 type = 0;    // STT_*
};

struct Rel {
	u64 offset = 0;  // in the target section
	u32 sym = 0;     // index into ElfFile::symbols, checked
	u32 type = 0;    // kRBpf*
};

struct RelSection {
	u32 idx = 0;      // the SHT_REL section
	u32 target = 0;   // the section it applies to
	std::vector<Rel> rels;
};

struct ElfFile {
	std::vector<Section> sections;  // index = ELF section index
	std::vector<Symbol> symbols;    // index = ELF symbol index
	std::vector<RelSection> rel_sections;

	const Section *by_name(const std::string &name) const;
	const RelSection *rels_for(u32 target) const;
};

// Parses an object image. Errors name the section, symbol or relocation.
absl::StatusOr<ElfFile> read_elf(absl::Span<const u8> image);

}  // namespace umemcg::emu::elf
