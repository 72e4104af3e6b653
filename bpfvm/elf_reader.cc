// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/elf_reader.cc: bounded ELF parsing with libelf.
// Mirrors: tools/lib/bpf/libbpf.c (bpf_object__elf_init, bpf_object__elf_collect) (Linux 6.19)
// Emulation:
//  - section contents are copied out of libelf so no pointer into the image
//    outlives this file's functions.
#include "bpfvm/elf_reader.h"

#include <gelf.h>
#include <libelf.h>

#include <cstring>
#include <memory>

#include "absl/strings/str_format.h"

namespace umemcg::emu::elf {

namespace {

struct ElfCloser {
	void operator()(Elf *e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

absl::Status elf_error(const std::string &what)
{
	return absl::InvalidArgumentError(
		absl::StrFormat("ELF: %s: %s", what, elf_errmsg(-1)));
}

absl::Status read_sections(Elf *e, size_t image_size, ElfFile &f)
{
	size_t shnum = 0, shstrndx = 0;

	if (elf_getshdrnum(e, &shnum) != 0)
		return elf_error("cannot read the section count");
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return elf_error("cannot read the section name table index");
	if (shnum == 0)
		return absl::InvalidArgumentError("ELF: no sections");
	if (shstrndx >= shnum)
		return absl::InvalidArgumentError(absl::StrFormat(
			"ELF: section name table index %u out of range (%u sections)",
			shstrndx, shnum));
	f.sections.resize(shnum);
	for (size_t i = 1; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(e, i);
		GElf_Shdr sh;

		if (!scn || !gelf_getshdr(scn, &sh))
			return elf_error(absl::StrFormat("section %u: bad header", i));
		Section &s = f.sections[i];
		s.idx = static_cast<u32>(i);
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name)
			return elf_error(absl::StrFormat("section %u: bad name offset %u", i, sh.sh_name));
		s.name = name;
		s.type = sh.sh_type;
		s.flags = sh.sh_flags;
		s.size = sh.sh_size;
		s.link = sh.sh_link;
		s.info = sh.sh_info;
		s.addralign = sh.sh_addralign;
		if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL || sh.sh_size == 0)
			continue;
		// Overflow-safe: offset and size each bounded by the image first.
		if (sh.sh_offset > image_size || sh.sh_size > image_size - sh.sh_offset)
			return absl::InvalidArgumentError(absl::StrFormat(
				"ELF: section %u '%s': offset %u size %u outside the %u-byte file",
				i, s.name, sh.sh_offset, sh.sh_size, image_size));
		Elf_Data *d = elf_rawdata(scn, nullptr);
		if (!d)
			return elf_error(absl::StrFormat("section %u '%s': no data", i, s.name));
		if (d->d_size != sh.sh_size || (d->d_size && !d->d_buf))
			return absl::InvalidArgumentError(absl::StrFormat(
				"ELF: section %u '%s': data size %u differs from header size %u",
				i, s.name, d->d_size, sh.sh_size));
		const u8 *p = static_cast<const u8 *>(d->d_buf);
		s.data.assign(p, p + d->d_size);
	}
	return absl::OkStatus();
}

absl::Status read_symbols(Elf *e, ElfFile &f)
{
	const Section *symtab = nullptr;

	for (const Section &s : f.sections) {
		if (s.type != SHT_SYMTAB)
			continue;
		if (symtab)
			return absl::InvalidArgumentError("ELF: more than one symbol table");
		symtab = &s;
	}
	if (!symtab)
		return absl::InvalidArgumentError("ELF: no symbol table");
	if (symtab->link == 0 || symtab->link >= f.sections.size() ||
	    f.sections[symtab->link].type != SHT_STRTAB)
		return absl::InvalidArgumentError(absl::StrFormat(
			"ELF: symbol table links to section %u, not a string table", symtab->link));
	if (symtab->data.size() % sizeof(Elf64_Sym) != 0)
		return absl::InvalidArgumentError(absl::StrFormat(
			"ELF: symbol table size %u is not a multiple of %u",
			symtab->data.size(), sizeof(Elf64_Sym)));
	size_t n = symtab->data.size() / sizeof(Elf64_Sym);
	f.symbols.resize(n);
	for (size_t i = 0; i < n; i++) {
		Elf64_Sym raw;
		// The copy is ours: read each entry by memcpy, no alignment assumed.
		std::memcpy(&raw, symtab->data.data() + i * sizeof(raw), sizeof(raw));
		Symbol &sym = f.symbols[i];
		const char *name = elf_strptr(e, symtab->link, raw.st_name);
		if (!name)
			return elf_error(absl::StrFormat("symbol %u: bad name offset %u", i, raw.st_name));
		sym.name = name;
		sym.value = raw.st_value;
		sym.size = raw.st_size;
		sym.shndx = raw.st_shndx;
		sym.bind = GELF_ST_BIND(raw.st_info);
		sym.type = GELF_ST_TYPE(raw.st_info);
		if (sym.shndx >= f.sections.size() && sym.shndx < SHN_LORESERVE)
			return absl::InvalidArgumentError(absl::StrFormat(
				"ELF: symbol %u '%s': section index %u out of range", i, sym.name, sym.shndx));
	}
	return absl::OkStatus();
}

absl::Status read_rels(ElfFile &f)
{
	for (const Section &s : f.sections) {
		if (s.type == SHT_RELA)
			return absl::InvalidArgumentError(absl::StrFormat(
				"ELF: section '%s': RELA relocations are not used by BPF", s.name));
		if (s.type != SHT_REL)
			continue;
		if (s.info == 0 || s.info >= f.sections.size())
			return absl::InvalidArgumentError(absl::StrFormat(
				"ELF: relocation section '%s' targets section %u, out of range", s.name, s.info));
		if (s.data.size() % sizeof(Elf64_Rel) != 0)
			return absl::InvalidArgumentError(absl::StrFormat(
				"ELF: relocation section '%s': size %u is not a multiple of %u",
				s.name, s.data.size(), sizeof(Elf64_Rel)));
		RelSection rs;
		rs.idx = s.idx;
		rs.target = s.info;
		size_t n = s.data.size() / sizeof(Elf64_Rel);
		rs.rels.resize(n);
		for (size_t i = 0; i < n; i++) {
			Elf64_Rel raw;
			std::memcpy(&raw, s.data.data() + i * sizeof(raw), sizeof(raw));
			u64 sym = GELF_R_SYM(raw.r_info);
			if (sym >= f.symbols.size())
				return absl::InvalidArgumentError(absl::StrFormat(
					"ELF: relocation section '%s' entry %u: symbol index %u out of range (%u symbols)",
					s.name, i, sym, f.symbols.size()));
			rs.rels[i] = Rel{raw.r_offset, static_cast<u32>(sym),
					 static_cast<u32>(GELF_R_TYPE(raw.r_info))};
		}
		f.rel_sections.push_back(std::move(rs));
	}
	return absl::OkStatus();
}

}  // namespace

const Section *ElfFile::by_name(const std::string &name) const
{
	for (const Section &s : sections)
		if (s.idx != 0 && s.name == name)
			return &s;
	return nullptr;
}

const RelSection *ElfFile::rels_for(u32 target) const
{
	for (const RelSection &r : rel_sections)
		if (r.target == target)
			return &r;
	return nullptr;
}

absl::StatusOr<ElfFile> read_elf(absl::Span<const u8> image)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return elf_error("libelf initialisation failed");
	if (image.size() < EI_NIDENT || std::memcmp(image.data(), ELFMAG, SELFMAG) != 0)
		return absl::InvalidArgumentError("ELF: not an ELF file (bad magic)");
	if (image[EI_CLASS] != ELFCLASS64)
		return absl::InvalidArgumentError("ELF: not a 64-bit ELF object");
	if (image[EI_DATA] != ELFDATA2LSB)
		return absl::InvalidArgumentError(
			"ELF: only little-endian BPF objects are supported (-target bpf on x86)");

	// libelf may keep pointers into the image for the life of the handle:
	// give it a private copy that lives until elf_end.
	std::vector<char> copy(image.begin(), image.end());
	ElfPtr e(elf_memory(copy.data(), copy.size()));
	if (!e)
		return elf_error("cannot open image");
	if (elf_kind(e.get()) != ELF_K_ELF)
		return absl::InvalidArgumentError("ELF: not an ELF object");
	GElf_Ehdr eh;
	if (!gelf_getehdr(e.get(), &eh))
		return elf_error("bad ELF header");
	if (eh.e_machine != EM_BPF)
		return absl::InvalidArgumentError(absl::StrFormat(
			"ELF: machine %u is not EM_BPF (%u)", eh.e_machine, EM_BPF));
	if (eh.e_type != ET_REL)
		return absl::InvalidArgumentError("ELF: not a relocatable object (ET_REL)");

	ElfFile f;
	if (absl::Status st = read_sections(e.get(), copy.size(), f); !st.ok())
		return st;
	if (absl::Status st = read_symbols(e.get(), f); !st.ok())
		return st;
	if (absl::Status st = read_rels(f); !st.ok())
		return st;
	return f;
}

}  // namespace umemcg::emu::elf
