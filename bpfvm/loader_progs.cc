// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/loader_progs.cc: programs from the executable sections, their
// relocations, and bpf-to-bpf linking: each program gets its own copy of the
// .text subprograms it reaches, appended after its own code, with call and
// callback offsets rewritten to the appended copies, and the .BTF.ext line info
// of each piece carried to where it landed.
// Mirrors: tools/lib/bpf/libbpf.c (bpf_object__add_programs,
//          bpf_program__record_reloc, bpf_object__reloc_code,
//          bpf_object__relocate_data, adjust_prog_btf_ext_info) (Linux 6.19)
// Emulation:
//  - map and extern references are rewritten to indices into the object's
//    maps and externs instead of file descriptors and kernel BTF ids; a Reloc
//    records each one for the runtime (see object.h).
#include <elf.h>

#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "bpfvm/btf_util.h"
#include "bpfvm/loader_internal.h"
#include "bpfvm/loader_sec_def.h"

namespace umemcg::emu::loader {

namespace {

constexpr u8 kCallCode = BPF_JMP | BPF_CALL;
constexpr u8 kLdImm64Code = BPF_LD | BPF_IMM | BPF_DW;

// A relocation of one instruction of a section, classified.
struct SecReloc {
	enum Type { kCall, kSubprogAddr, kMap, kData, kExternCall, kExternLd } type;
	u32 map_idx = 0;
	u32 offset = 0;
	u32 extern_idx = 0;
	u32 text_target = 0;  // instruction index in .text
};
using SecRelocs = absl::flat_hash_map<u32, SecReloc>;

struct Func {
	std::string name;
	u32 start = 0;  // in its section, in instructions
	u32 len = 0;
};

absl::Status err(const std::string &msg) { return absl::InvalidArgumentError(msg); }

std::vector<bpf_insn> section_insns(const elf::Section &s)
{
	std::vector<bpf_insn> v(s.data.size() / sizeof(bpf_insn));
	if (!v.empty())
		std::memcpy(v.data(), s.data.data(), v.size() * sizeof(bpf_insn));
	return v;
}

// FUNC symbols of section s, as instruction ranges, sorted by start.
absl::StatusOr<std::vector<Func>> section_funcs(const LoadCtx &ctx, const elf::Section &s)
{
	std::vector<Func> out;
	u64 n = s.data.size() / sizeof(bpf_insn);
	for (const elf::Symbol &sym : ctx.elf.symbols) {
		if (sym.type != STT_FUNC || sym.shndx != s.idx)
			continue;
		if (sym.value % 8 || sym.size % 8 || sym.value / 8 > n || sym.size / 8 > n - sym.value / 8)
			return err(absl::StrFormat(
				"section '%s': function '%s' (offset %u, size %u) is misaligned or outside the section",
				s.name, sym.name, sym.value, sym.size));
		if (sym.size == 0)
			return err(absl::StrFormat("section '%s': function '%s' is empty", s.name, sym.name));
		if (s.idx != ctx.text_shndx && sym.bind == STB_LOCAL)
			return err(absl::StrFormat(
				"section '%s': program '%s' is static, programs must be global", s.name, sym.name));
		out.push_back(Func{sym.name, static_cast<u32>(sym.value / 8), static_cast<u32>(sym.size / 8)});
	}
	std::sort(out.begin(), out.end(), [](const Func &a, const Func &b) { return a.start < b.start; });
	for (size_t i = 1; i < out.size(); i++)
		if (out[i].start < out[i - 1].start + out[i - 1].len)
			return err(absl::StrFormat("section '%s': functions '%s' and '%s' overlap",
						   s.name, out[i - 1].name, out[i].name));
	return out;
}

// Classifies one relocation of an executable section (bpf_program__record_reloc).
absl::StatusOr<SecReloc> classify(const LoadCtx &ctx, const elf::Section &s,
				  const std::vector<bpf_insn> &insns, const elf::Rel &r,
				  u32 text_len)
{
	const elf::Symbol &sym = ctx.elf.symbols[r.sym];  // index checked by read_elf
	auto where = [&] {
		return absl::StrFormat("section '%s' relocation at offset %u (symbol '%s')",
				       s.name, r.offset, sym.name);
	};
	if (r.offset % sizeof(bpf_insn) || r.offset / sizeof(bpf_insn) >= insns.size())
		return err(where() + ": offset misaligned or outside the section");
	u32 idx = static_cast<u32>(r.offset / sizeof(bpf_insn));
	const bpf_insn &insn = insns[idx];
	SecReloc out{};

	if (insn.code == kCallCode) {
		if (r.type != elf::kRBpf64_32)
			return err(where() + absl::StrFormat(": type %u on a call, expected R_BPF_64_32", r.type));
		if (insn.src_reg != BPF_PSEUDO_CALL)
			return err(where() + ": call instruction is not a BPF_PSEUDO_CALL");
		if (sym.shndx == SHN_UNDEF) {
			int e = ctx.obj.extern_index(sym.name);
			if (e < 0 || ctx.obj.externs[static_cast<size_t>(e)].kind != ExternKind::kKfunc)
				return err(where() + ": call to an unknown extern (not a .ksyms kfunc)");
			out.type = SecReloc::kExternCall;
			out.extern_idx = static_cast<u32>(e);
			return out;
		}
		if (sym.shndx != ctx.text_shndx || ctx.text_shndx == 0)
			return err(where() + ": call target is not in .text");
		if (sym.value % 8)
			return err(where() + ": misaligned call target");
		// libbpf: the callee is sym_off / 8 + imm + 1 instructions into .text.
		s64 t = static_cast<s64>(sym.value / 8) + insn.imm + 1;
		if (t < 0 || t >= text_len)
			return err(where() + absl::StrFormat(": call target %d outside .text", t));
		out.type = SecReloc::kCall;
		out.text_target = static_cast<u32>(t);
		return out;
	}
	if (insn.code != kLdImm64Code)
		return err(where() + absl::StrFormat(": instruction %u (code 0x%02x) is neither a call nor ld_imm64",
						     idx, insn.code));
	if (idx + 1 >= insns.size())
		return err(where() + ": ld_imm64 truncated at the end of the section");
	if (r.type != elf::kRBpf64_64)
		return err(where() + absl::StrFormat(": type %u on ld_imm64, expected R_BPF_64_64", r.type));
	if (sym.shndx == SHN_UNDEF) {
		int e = ctx.obj.extern_index(sym.name);
		if (e < 0)
			return err(where() + ": reference to an unknown extern");
		out.type = SecReloc::kExternLd;
		out.extern_idx = static_cast<u32>(e);
		return out;
	}
	if (sym.shndx >= ctx.elf.sections.size())
		return err(where() + ": symbol in a special section");
	if (sym.shndx == ctx.text_shndx && ctx.text_shndx != 0) {
		s64 off = static_cast<s64>(sym.value) + insn.imm;
		if (off < 0 || off % 8 || off / 8 >= text_len)
			return err(where() + absl::StrFormat(": callback address %d outside .text", off));
		out.type = SecReloc::kSubprogAddr;
		out.text_target = static_cast<u32>(off / 8);
		return out;
	}
	if (sym.shndx == ctx.maps_shndx && ctx.maps_shndx != 0) {
		if (sym.type == STT_SECTION)
			return err(where() + ": map reference through a section symbol");
		for (size_t m = 0; m < ctx.obj.maps.size(); m++) {
			const MapSpec &ms = ctx.obj.maps[m];
			if (ms.origin == MapOrigin::kBtfMaps && ms.sec_offset == sym.value) {
				out.type = SecReloc::kMap;
				out.map_idx = static_cast<u32>(m);
				return out;
			}
		}
		return err(where() + ": no map at this offset of '.maps'");
	}
	int dm = ctx.data_map_of_section[sym.shndx];
	if (dm >= 0) {
		// For a section symbol the addend is in imm; for a variable
		// symbol imm is 0 and the offset is the symbol's value.
		s64 off = static_cast<s64>(sym.value) + insn.imm;
		const MapSpec &ms = ctx.obj.maps[static_cast<size_t>(dm)];
		if (off < 0 || off >= ms.value_size)
			return err(where() + absl::StrFormat(": offset %d outside '%s' (%u bytes)",
							     off, ms.name, ms.value_size));
		out.type = SecReloc::kData;
		out.map_idx = static_cast<u32>(dm);
		out.offset = static_cast<u32>(off);
		return out;
	}
	return err(where() + absl::StrFormat(": reference to section '%s', which is not a map or data section",
					     ctx.elf.sections[sym.shndx].name));
}

absl::StatusOr<SecRelocs> section_relocs(const LoadCtx &ctx, const elf::Section &s,
					 const std::vector<bpf_insn> &insns, u32 text_len)
{
	SecRelocs out;
	const elf::RelSection *rs = ctx.elf.rels_for(s.idx);
	if (!rs)
		return out;
	for (const elf::Rel &r : rs->rels) {
		absl::StatusOr<SecReloc> c = classify(ctx, s, insns, r, text_len);
		if (!c.ok())
			return c.status();
		if (!out.emplace(static_cast<u32>(r.offset / 8), *c).second)
			return err(absl::StrFormat("section '%s': two relocations at offset %u",
						   s.name, r.offset));
	}
	return out;
}

// One piece of a program being linked: its own code or an appended subprog.
struct Chunk {
	bool text;       // from .text
	u32 sec_start;   // first instruction in its section
	u32 base;        // first instruction in the program
	u32 len;
};

struct Linker {
	const std::vector<bpf_insn> &text;
	const std::vector<Func> &text_funcs;
	const SecRelocs &text_relocs;

	// Links p; chunks receives its own code and each appended subprogram, in program order.
	absl::Status link(BpfProgram &p, const SecRelocs &own_relocs, std::vector<Chunk> &chunks);

private:
	absl::StatusOr<u32> place(BpfProgram &p, std::vector<Chunk> &chunks,
				  absl::flat_hash_map<size_t, u32> &placed, u32 text_target);
};

// The program index of .text instruction t, appending its function first.
absl::StatusOr<u32> Linker::place(BpfProgram &p, std::vector<Chunk> &chunks,
				  absl::flat_hash_map<size_t, u32> &placed, u32 t)
{
	for (size_t f = 0; f < text_funcs.size(); f++) {
		const Func &fn = text_funcs[f];
		if (t < fn.start || t >= fn.start + fn.len)
			continue;
		auto it = placed.find(f);
		if (it == placed.end()) {
			u32 base = static_cast<u32>(p.insns.size());
			p.insns.insert(p.insns.end(), text.begin() + fn.start,
				       text.begin() + fn.start + fn.len);
			chunks.push_back(Chunk{true, fn.start, base, fn.len});
			p.subprogs.push_back(Subprog{fn.name, base, fn.len});
			it = placed.emplace(f, base).first;
		}
		return it->second + (t - fn.start);
	}
	return err(absl::StrFormat("program '%s': reference to .text instruction %u, which is in no function",
				   p.name, t));
}

absl::Status Linker::link(BpfProgram &p, const SecRelocs &own_relocs, std::vector<Chunk> &chunks)
{
	chunks = {Chunk{false, p.sec_insn_off, 0, p.main_len}};
	absl::flat_hash_map<size_t, u32> placed;  // text function -> base
	size_t c = 0;

	// p.insns grows while we walk it: appended subprograms are linked too.
	for (u32 i = 0; i < p.insns.size(); i++) {
		while (i >= chunks[c].base + chunks[c].len)
			c++;
		const Chunk &ch = chunks[c];
		u32 sec_i = ch.sec_start + (i - ch.base);
		const SecRelocs &relocs = ch.text ? text_relocs : own_relocs;
		auto r = relocs.find(sec_i);
		bpf_insn &insn = p.insns[i];
		bool ld64 = insn.code == kLdImm64Code;
		if (ld64 && i + 1 >= ch.base + ch.len)
			return err(absl::StrFormat("program '%s': ld_imm64 at instruction %u is truncated",
						   p.name, i));

		std::optional<SecReloc> rel;
		if (r != relocs.end()) {
			rel = r->second;
		} else if ((insn.code == kCallCode && insn.src_reg == BPF_PSEUDO_CALL) ||
			   (ld64 && insn.src_reg == BPF_PSEUDO_FUNC)) {
			// Unrelocated local call or callback: only .text code
			// reaches its neighbours without a relocation.
			if (!ch.text)
				return err(absl::StrFormat(
					"program '%s': bpf-to-bpf reference at instruction %u without a relocation",
					p.name, i));
			s64 t = static_cast<s64>(sec_i) + insn.imm + 1;
			if (t < 0 || t >= static_cast<s64>(text.size()))
				return err(absl::StrFormat("program '%s': call at instruction %u leaves .text",
							   p.name, i));
			rel = SecReloc{insn.code == kCallCode ? SecReloc::kCall : SecReloc::kSubprogAddr,
				       0, 0, 0, static_cast<u32>(t)};
		}
		if (rel) {
			Reloc out{};
			out.insn_idx = i;
			bool record = true;
			switch (rel->type) {
			case SecReloc::kCall:
			case SecReloc::kSubprogAddr: {
				absl::StatusOr<u32> at = place(p, chunks, placed, rel->text_target);
				if (!at.ok())
					return at.status();
				// place() may have grown p.insns: re-take the reference.
				bpf_insn &in = p.insns[i];
				in.imm = static_cast<s32>(static_cast<s64>(*at) - i - 1);
				if (rel->type == SecReloc::kCall) {
					record = false;  // fully linked, nothing left to do
				} else {
					in.src_reg = BPF_PSEUDO_FUNC;
					p.insns[i + 1].imm = 0;
					out.kind = RelocKind::kSubprogAddr;
					out.target_insn = *at;
				}
				break;
			}
			case SecReloc::kMap:
				insn.src_reg = BPF_PSEUDO_MAP_FD;
				insn.imm = static_cast<s32>(rel->map_idx);
				p.insns[i + 1].imm = 0;
				out.kind = RelocKind::kMapFd;
				out.map_idx = rel->map_idx;
				break;
			case SecReloc::kData:
				insn.src_reg = BPF_PSEUDO_MAP_VALUE;
				insn.imm = static_cast<s32>(rel->map_idx);
				p.insns[i + 1].imm = static_cast<s32>(rel->offset);
				out.kind = RelocKind::kMapValue;
				out.map_idx = rel->map_idx;
				out.offset = rel->offset;
				break;
			case SecReloc::kExternCall:
				insn.src_reg = BPF_PSEUDO_KFUNC_CALL;
				insn.imm = static_cast<s32>(rel->extern_idx);
				insn.off = 0;
				out.kind = RelocKind::kKfuncCall;
				out.extern_idx = rel->extern_idx;
				break;
			case SecReloc::kExternLd:
				insn.src_reg = BPF_PSEUDO_BTF_ID;
				insn.imm = static_cast<s32>(rel->extern_idx);
				p.insns[i + 1].imm = 0;
				out.kind = RelocKind::kKsymAddr;
				out.extern_idx = rel->extern_idx;
				break;
			}
			if (record)
				p.relocs.push_back(out);
		}
		if (ld64)
			i++;  // the second slot is data, never an instruction
	}
	return absl::OkStatus();
}

// The line info of a linked program: each chunk's records from its section, shifted to the
// chunk's place in the program (libbpf's adjust_prog_btf_ext_info). Chunks are in program
// order and each section's records in file order, so the result is in the order the section
// gave (check_btf_line in the verifier refuses an unsorted one).
std::vector<bpf_line_info> program_line_info(const std::vector<Chunk> &chunks,
					     const std::vector<bpf_line_info> &own,
					     const std::vector<bpf_line_info> &text)
{
	std::vector<bpf_line_info> out;
	for (const Chunk &ch : chunks)
		for (const bpf_line_info &li : ch.text ? text : own)
			if (li.insn_off >= ch.sec_start && li.insn_off - ch.sec_start < ch.len) {
				bpf_line_info r = li;
				r.insn_off = li.insn_off - ch.sec_start + ch.base;
				out.push_back(r);
			}
	return out;
}

// The func info of a linked program: the FUNC of each of its functions, in program order (what
// libbpf hands the kernel from .BTF.ext func_info). Empty when one has no FUNC.
// Emulation: the records are the FUNCs of the functions' names in .BTF (clang writes one
//   func_info record per function, naming its FUNC), not read from .BTF.ext.
std::vector<bpf_func_info> program_func_info(const LoadCtx &ctx, const BpfProgram &p)
{
	std::vector<bpf_func_info> out;
	if (!ctx.btf || !p.btf_func_id)
		return out;
	out.push_back({0, p.btf_func_id});
	for (const Subprog &s : p.subprogs) {
		const s32 id = btf__find_by_name_kind(ctx.btf, s.name.c_str(), BTF_KIND_FUNC);
		if (id <= 0)
			return {};
		out.push_back({s.start, (u32)id});
	}
	return out;
}

// The poisoned CO-RE relocations of a linked program, placed as its line info is.
std::vector<CorePoison> program_core_poison(const std::vector<Chunk> &chunks,
					    const std::vector<CorePoison> &own,
					    const std::vector<CorePoison> &text)
{
	std::vector<CorePoison> out;
	for (const Chunk &ch : chunks)
		for (const CorePoison &cp : ch.text ? text : own)
			if (cp.insn_idx >= ch.sec_start && cp.insn_idx - ch.sec_start < ch.len)
				out.push_back({cp.insn_idx - ch.sec_start + ch.base, cp.spec});
	return out;
}

}  // namespace

absl::Status collect_programs(LoadCtx &ctx)
{
	std::vector<bpf_insn> text;
	std::vector<Func> text_funcs;
	SecRelocs text_relocs;
	std::vector<bpf_line_info> text_linfo;
	std::vector<CorePoison> text_poison;

	if (const elf::Section *t = ctx.elf.by_name(".text");
	    t && t->type == SHT_PROGBITS && (t->flags & SHF_EXECINSTR))
		ctx.text_shndx = t->idx;
	for (const elf::Section &s : ctx.elf.sections)
		if (s.type == SHT_PROGBITS && (s.flags & SHF_EXECINSTR) && s.data.size() % sizeof(bpf_insn))
			return err(absl::StrFormat("section '%s': size %u is not a multiple of 8",
						   s.name, s.data.size()));
	if (ctx.text_shndx) {
		const elf::Section &ts = ctx.elf.sections[ctx.text_shndx];
		text = section_insns(ts);
		if (absl::Status st = apply_core_relos(ctx, ts, text, &text_poison); !st.ok())
			return st;
		absl::StatusOr<std::vector<Func>> f = section_funcs(ctx, ts);
		if (!f.ok())
			return f.status();
		text_funcs = std::move(*f);
		absl::StatusOr<SecRelocs> r = section_relocs(ctx, ts, text, static_cast<u32>(text.size()));
		if (!r.ok())
			return r.status();
		text_relocs = std::move(*r);
		absl::StatusOr<std::vector<bpf_line_info>> li = section_line_info(ctx, ts);
		if (!li.ok())
			return li.status();
		text_linfo = std::move(*li);
	}
	Linker linker{text, text_funcs, text_relocs};

	for (const elf::Section &s : ctx.elf.sections) {
		if (s.idx == 0 || s.idx == ctx.text_shndx || s.type != SHT_PROGBITS ||
		    !(s.flags & SHF_EXECINSTR) || s.data.empty())
			continue;
		std::vector<bpf_insn> insns = section_insns(s);
		std::vector<CorePoison> poison;
		if (absl::Status st = apply_core_relos(ctx, s, insns, &poison); !st.ok())
			return st;
		absl::StatusOr<std::vector<Func>> funcs = section_funcs(ctx, s);
		if (!funcs.ok())
			return funcs.status();
		absl::StatusOr<SecRelocs> relocs =
			section_relocs(ctx, s, insns, static_cast<u32>(text.size()));
		if (!relocs.ok())
			return relocs.status();
		absl::StatusOr<std::vector<bpf_line_info>> linfo = section_line_info(ctx, s);
		if (!linfo.ok())
			return linfo.status();
		// libbpf: a leading '?' turns autoload off and is not part of the section's name.
		const bool autoload = s.name.empty() || s.name[0] != '?';
		const std::string sec_name = autoload ? s.name : s.name.substr(1);
		SecDef def = parse_sec_name(sec_name);
		for (const Func &f : *funcs) {
			BpfProgram p;
			p.name = f.name;
			p.section = sec_name;
			p.autoload = autoload;
			p.kind = def.kind;
			p.prog_type = def.prog_type;
			p.expected_attach_type = def.expected_attach_type;
			p.attach_target = def.target;
			p.sleepable = def.sleepable;
			p.sec_insn_off = f.start;
			p.main_len = f.len;
			p.insns.assign(insns.begin() + f.start, insns.begin() + f.start + f.len);
			if (ctx.btf) {
				s32 id = btf__find_by_name_kind(ctx.btf, f.name.c_str(), BTF_KIND_FUNC);
				p.btf_func_id = id > 0 ? static_cast<u32>(id) : 0;
			}
			if (ctx.obj.program_index(p.name) >= 0)
				return err(absl::StrFormat("program '%s' defined twice", p.name));
			std::vector<Chunk> chunks;
			if (absl::Status st = linker.link(p, *relocs, chunks); !st.ok())
				return st;
			p.line_info = program_line_info(chunks, *linfo, text_linfo);
			p.core_poison = program_core_poison(chunks, poison, text_poison);
			p.func_info = program_func_info(ctx, p);
			ctx.obj.progs.push_back(std::move(p));
		}
	}
	return absl::OkStatus();
}

}  // namespace umemcg::emu::loader
