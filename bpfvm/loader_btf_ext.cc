// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/loader_btf_ext.cc: the .BTF.ext header and its info parts (btf_ext_part(), shared
// with the CO-RE relocations of loader_core.cc), and the line_info records of one executable
// section, as libbpf reads them to hand each program its own records (bpf_attr line_info).
//
// Layout (tools/lib/bpf/libbpf_internal.h, struct btf_ext_header): magic 0xeB9F, version,
// flags, hdr_len, then func_info_off/len, line_info_off/len (offsets from the end of the
// header). The line_info part is a record size, then per section: the section's name (a BTF
// string offset), a record count and the records (struct bpf_line_info: insn_off in bytes
// from the section start, file_name_off, line_off, line_col).
//
// Mirrors: tools/lib/bpf/btf.c (btf_ext_parse_info, btf_ext_setup_line_info) (Linux 6.19)
// Emulation: a record whose insn_off is misaligned or beyond its section refuses the object
//   here; libbpf drops such a record silently when it picks each program's records. Order,
//   string offsets and coverage of every function are the verifier's check (check_btf_line,
//   bpfvm/verifier_linfo.cc), as in the kernel.
#include <cstring>

#include "absl/strings/str_format.h"
#include "bpfvm/loader_internal.h"

#include <bpf/btf.h>

namespace umemcg::emu::loader {

namespace {

absl::Status err(const std::string &m) { return absl::InvalidArgumentError(".BTF.ext: " + m); }

u32 rd32(const std::vector<u8> &d, size_t off) { return btf_ext_rd32(d, off); }

}  // namespace

u32 btf_ext_rd32(const std::vector<u8> &d, size_t off)
{
	u32 v;
	std::memcpy(&v, d.data() + off, 4);
	return v;
}

absl::StatusOr<BtfExtPart> btf_ext_part(const LoadCtx &ctx, u32 off_field, const char *what)
{
	BtfExtPart part;
	const elf::Section *ext = ctx.elf.by_name(".BTF.ext");
	if (!ext || !ctx.btf)
		return part;
	const std::vector<u8> &d = ext->data;
	if (d.size() < 8)
		return err("truncated header");
	u16 magic;
	std::memcpy(&magic, d.data(), 2);
	if (magic != 0xeB9F)
		return err("bad magic");
	const u32 hdr_len = rd32(d, 4);
	if (hdr_len < off_field + 8 || hdr_len > d.size())
		return part;  // a header without this part's fields
	const u32 off = rd32(d, off_field), len = rd32(d, off_field + 4);
	if (!len)
		return part;
	if ((u64)hdr_len + off + len > d.size() || len < 4)
		return err(absl::StrFormat("%s section out of bounds", what));
	part.d = &d;
	part.base = (size_t)hdr_len + off;
	part.end = part.base + len;
	return part;
}

absl::StatusOr<std::vector<bpf_line_info>> section_line_info(const LoadCtx &ctx, const elf::Section &sec)
{
	std::vector<bpf_line_info> out;
	auto part = btf_ext_part(ctx, 16, "line_info");  // line_info_off, line_info_len
	if (!part.ok())
		return part.status();
	if (!part->d)
		return out;
	const std::vector<u8> &d = *part->d;
	const size_t base = part->base, end = part->end;
	const u32 rec_size = rd32(d, base);
	if (rec_size < sizeof(bpf_line_info) || rec_size % 4)
		return err(absl::StrFormat("line_info record size %u", rec_size));
	const size_t n_insns = sec.data.size() / sizeof(bpf_insn);
	size_t p = base + 4;
	while (p < end) {
		if (end - p < 8)
			return err("truncated line_info section header");
		const u32 name_off = rd32(d, p), num = rd32(d, p + 4);
		p += 8;
		if (!num)
			return err("line_info section with no records");
		if ((u64)num * rec_size > end - p)
			return err("line_info records out of bounds");
		const char *sn = btf__name_by_offset(ctx.btf, name_off);
		if (!sn)
			return err(absl::StrFormat("line_info section name offset %u", name_off));
		if (sec.name == sn) {
			for (u32 r = 0; r < num; r++) {
				const size_t at = p + (size_t)r * rec_size;
				bpf_line_info li;
				li.insn_off = rd32(d, at);
				li.file_name_off = rd32(d, at + 4);
				li.line_off = rd32(d, at + 8);
				li.line_col = rd32(d, at + 12);
				if (li.insn_off % sizeof(bpf_insn) || li.insn_off / sizeof(bpf_insn) >= n_insns)
					return err(absl::StrFormat(
						"line_info of section '%s' record %u: insn_off %u outside the section (%u instructions)",
						sec.name, r, li.insn_off, n_insns));
				li.insn_off /= sizeof(bpf_insn);
				out.push_back(li);
			}
		}
		p += (size_t)num * rec_size;
	}
	return out;
}

}  // namespace umemcg::emu::loader
