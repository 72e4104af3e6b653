// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/loader_malformed_test.cc: the malformed-object corpus. Real
// objects from test/progs are truncated, bit-flipped in the ELF header, the
// section table, .BTF and relocations, and given out-of-range indices; each
// load must give an error or a valid object, never a crash (run under
// ASan+UBSan), and the targeted corruptions must give their specific error.
#include <catch2/catch.hpp>

#include <bpf/btf.h>
#include <elf.h>

#include <cstring>
#include <random>

#include "loader_test_util.h"

namespace umemcg::emu {
namespace {

using testing::prog_bytes;

// Raw access to an object image, for corrupting it on purpose.
struct RawElf {
	std::vector<u8> b;

	Elf64_Ehdr ehdr() const
	{
		Elf64_Ehdr e;
		std::memcpy(&e, b.data(), sizeof(e));
		return e;
	}
	size_t shdr_off(size_t i) const { return ehdr().e_shoff + i * sizeof(Elf64_Shdr); }
	Elf64_Shdr shdr(size_t i) const
	{
		Elf64_Shdr s;
		std::memcpy(&s, b.data() + shdr_off(i), sizeof(s));
		return s;
	}
	void set_shdr(size_t i, const Elf64_Shdr &s) { std::memcpy(b.data() + shdr_off(i), &s, sizeof(s)); }
	std::string name(size_t i) const
	{
		Elf64_Shdr strtab = shdr(ehdr().e_shstrndx);
		return reinterpret_cast<const char *>(b.data() + strtab.sh_offset + shdr(i).sh_name);
	}
	size_t find(const std::string &n) const
	{
		for (size_t i = 1; i < ehdr().e_shnum; i++)
			if (name(i) == n)
				return i;
		FAIL("no section " << n);
		return 0;
	}
	Elf64_Rel rel(size_t sec, size_t i) const
	{
		Elf64_Rel r;
		std::memcpy(&r, b.data() + shdr(sec).sh_offset + i * sizeof(r), sizeof(r));
		return r;
	}
	void set_rel(size_t sec, size_t i, const Elf64_Rel &r)
	{
		std::memcpy(b.data() + shdr(sec).sh_offset + i * sizeof(r), &r, sizeof(r));
	}
	// Replaces the first occurrence of `from` by `to` (same length)
	// inside section `sec`.
	void replace_in(const std::string &sec, const std::string &from, const std::string &to)
	{
		REQUIRE(from.size() == to.size());
		Elf64_Shdr sh = shdr(find(sec));
		auto first = b.begin() + static_cast<long>(sh.sh_offset);
		auto last = first + static_cast<long>(sh.sh_size);
		auto it = std::search(first, last, from.begin(), from.end());
		REQUIRE(it != last);
		std::copy(to.begin(), to.end(), it);
	}
	// Rewrites the .symtab entry named `sym_name` with `edit`; the test fails if there is none.
	template <typename Edit>
	void edit_symbol(const std::string &sym_name, Edit edit)
	{
		Elf64_Shdr sh = shdr(find(".symtab"));
		bool done = false;
		for (size_t i = 0; i < sh.sh_size / sizeof(Elf64_Sym); i++) {
			Elf64_Sym sym;
			size_t at = sh.sh_offset + i * sizeof(sym);
			std::memcpy(&sym, b.data() + at, sizeof(sym));
			const char *nm = reinterpret_cast<const char *>(
				b.data() + shdr(sh.sh_link).sh_offset + sym.st_name);
			if (std::string(nm) == sym_name) {
				edit(sym);
				std::memcpy(b.data() + at, &sym, sizeof(sym));
				done = true;
			}
		}
		REQUIRE(done);
	}
};

const char *kObjects[] = {"globals", "maps", "memcg_ops", "memcg_core"};

// Loads the image with a registry so extern resolution runs too. Returns
// whether it loaded; an error must carry a message.
bool try_load(const std::vector<u8> &img)
{
	static KfuncRegistry *reg = [] {
		auto *r = new KfuncRegistry;
		testing::add_memcg_kfuncs(*r);
		return r;
	}();
	// CO-RE targets, so the .BTF.ext relocations are resolved too.
	static ProgTypeRegistry *types = [] {
		auto *t = new ProgTypeRegistry;
		(void)t->add_struct({"task_struct", 64, {bpf_ctx_field::scalar("pid", 0, 4),
							 bpf_ctx_field::scalar("tgid", 4, 4),
							 bpf_ctx_field::scalar("comm", 8, 16)}});
		(void)t->add_struct({"mem_cgroup", 8, {}});
		(void)t->add_struct({"bpf_memcg_ctx", 56,
				     {bpf_ctx_field::ptr("memcg", 0, "mem_cgroup", PTR_TRUSTED),
				      bpf_ctx_field::ptr("task", 16, "task_struct", PTR_TRUSTED),
				      bpf_ctx_field::scalar("cgroup_id", 24, 8),
				      bpf_ctx_field::scalar("nr_pages_over_high", 40, 8)}});
		return t;
	}();
	LoadOptions o;
	o.kfuncs = reg;
	o.core_types = types;
	absl::StatusOr<BpfObject> obj = load_object(img, o);
	if (!obj.ok()) {
		CHECK_FALSE(obj.status().message().empty());
		return false;
	}
	return true;
}

std::string load_error(const std::vector<u8> &img)
{
	absl::StatusOr<BpfObject> obj = load_object(img);
	std::string e = obj.ok() ? std::string("<loaded>") : std::string(obj.status().message());
	UNSCOPED_INFO("load_error: " << e);
	return e;
}

TEST_CASE("the unmodified objects load", "[bpfvm][loader][malformed]")
{
	for (const char *n : kObjects) {
		INFO(n);
		CHECK(try_load(prog_bytes(n)));
	}
}

TEST_CASE("truncated objects are rejected at every length", "[bpfvm][loader][malformed]")
{
	for (const char *n : kObjects) {
		std::vector<u8> full = prog_bytes(n);
		REQUIRE(full.size() > 1000);
		for (size_t len = 0; len < full.size(); len += (len < 128 ? 1 : 7)) {
			INFO(n << " truncated to " << len);
			std::vector<u8> img(full.begin(), full.begin() + static_cast<long>(len));
			// The section table is at the end: every cut loses it.
			CHECK_FALSE(try_load(img));
		}
	}
}

TEST_CASE("bit flips in the ELF header and section table never crash", "[bpfvm][loader][malformed]")
{
	for (const char *n : kObjects) {
		RawElf base{prog_bytes(n)};
		size_t table = base.ehdr().e_shoff, table_len = base.ehdr().e_shnum * sizeof(Elf64_Shdr);
		int loaded = 0, rejected = 0;
		auto mutate = [&](size_t off) {
			for (u8 x : {u8{0xff}, u8{0x01}, u8{0x80}}) {
				std::vector<u8> img = base.b;
				img[off] ^= x;
				(try_load(img) ? loaded : rejected)++;
			}
		};
		for (size_t off = 0; off < sizeof(Elf64_Ehdr); off++)
			mutate(off);
		for (size_t off = table; off < table + table_len; off++)
			mutate(off);
		INFO(n << ": " << loaded << " loaded, " << rejected << " rejected");
		CHECK(rejected > 0);
		CHECK(loaded > 0);  // e.g. flags of debug sections do not matter
	}
}

TEST_CASE("byte flips across .BTF never crash", "[bpfvm][loader][malformed]")
{
	for (const char *n : kObjects) {
		RawElf base{prog_bytes(n)};
		Elf64_Shdr btf = base.shdr(base.find(".BTF"));
		int rejected = 0;
		for (size_t off = btf.sh_offset; off < btf.sh_offset + btf.sh_size; off++) {
			std::vector<u8> img = base.b;
			img[off] ^= 0xff;
			rejected += !try_load(img);
		}
		INFO(n);
		CHECK(rejected > 0);
	}
}

TEST_CASE("random multi-byte corruption never crashes", "[bpfvm][loader][malformed]")
{
	std::mt19937_64 rng(0x5eed);
	for (const char *n : kObjects) {
		std::vector<u8> base = prog_bytes(n);
		for (int iter = 0; iter < 1500; iter++) {
			std::vector<u8> img = base;
			int flips = 1 + static_cast<int>(rng() % 8);
			for (int f = 0; f < flips; f++)
				img[rng() % img.size()] = static_cast<u8>(rng());
			try_load(img);
		}
	}
	SUCCEED("no crash");
}

TEST_CASE("relocation entries with bad indices or offsets are rejected", "[bpfvm][loader][malformed]")
{
	for (const char *n : kObjects) {
		RawElf base{prog_bytes(n)};
		for (size_t s = 1; s < base.ehdr().e_shnum; s++) {
			Elf64_Shdr sh = base.shdr(s);
			std::string sec = base.name(s);
			if (sh.sh_type != SHT_REL || sec.find("debug") != std::string::npos ||
			    sec.find("BTF") != std::string::npos)
				continue;
			Elf64_Shdr target = base.shdr(sh.sh_info);
			for (size_t i = 0; i < sh.sh_size / sizeof(Elf64_Rel); i++) {
				Elf64_Rel r = base.rel(s, i);
				INFO(n << " " << sec << " entry " << i);
				struct Mut {
					const char *what;
					Elf64_Rel rel;
					const char *msg;
				} muts[] = {
					{"symbol index", {r.r_offset, ELF64_R_INFO(0xffffff, ELF64_R_TYPE(r.r_info))},
					 "out of range"},
					{"offset past the end", {target.sh_size + 8, r.r_info}, "outside"},
					{"huge offset", {~0ull - 3, r.r_info}, ""},
					{"misaligned offset", {r.r_offset + 3, r.r_info}, ""},
					{"type", {r.r_offset, ELF64_R_INFO(ELF64_R_SYM(r.r_info), 7)}, "type 7"},
				};
				for (const Mut &m : muts) {
					INFO(m.what);
					RawElf img = base;
					img.set_rel(s, i, m.rel);
					std::string e = load_error(img.b);
					CHECK(e != "<loaded>");
					CHECK(e.find(m.msg) != std::string::npos);
				}
			}
		}
	}
}

TEST_CASE("targeted corruptions give their specific errors", "[bpfvm][loader][malformed]")
{
	SECTION("not an ELF file") {
		CHECK(load_error({'n', 'o', 'p', 'e'}) == "ELF: not an ELF file (bad magic)");
		CHECK(load_error({}) == "ELF: not an ELF file (bad magic)");
	}
	SECTION("wrong machine") {
		RawElf img{prog_bytes("globals")};
		img.b[offsetof(Elf64_Ehdr, e_machine)] = EM_X86_64;
		img.b[offsetof(Elf64_Ehdr, e_machine) + 1] = 0;
		CHECK(load_error(img.b) == "ELF: machine 62 is not EM_BPF (247)");
	}
	SECTION("big-endian") {
		RawElf img{prog_bytes("globals")};
		img.b[EI_DATA] = ELFDATA2MSB;
		CHECK(load_error(img.b).find("only little-endian") != std::string::npos);
	}
	SECTION("program section size not a multiple of 8") {
		RawElf img{prog_bytes("globals")};
		size_t s = img.find("syscall");
		Elf64_Shdr sh = img.shdr(s);
		sh.sh_size -= 3;
		img.set_shdr(s, sh);
		CHECK(load_error(img.b).find("is not a multiple of 8") != std::string::npos);
	}
	SECTION("section data outside the file") {
		RawElf img{prog_bytes("globals")};
		size_t s = img.find(".data");
		Elf64_Shdr sh = img.shdr(s);
		sh.sh_offset = img.b.size() - 4;
		img.set_shdr(s, sh);
		CHECK(load_error(img.b).find("outside the") != std::string::npos);
	}
	SECTION("relocation section targeting a missing section") {
		RawElf img{prog_bytes("globals")};
		size_t s = img.find(".relsyscall");
		Elf64_Shdr sh = img.shdr(s);
		sh.sh_info = 999;
		img.set_shdr(s, sh);
		CHECK(load_error(img.b).find("targets section 999, out of range") != std::string::npos);
	}
	SECTION("a loop in a BTF type chain") {
		RawElf img{prog_bytes("maps")};
		Elf64_Shdr bs = img.shdr(img.find(".BTF"));
		std::vector<u8> raw(img.b.begin() + static_cast<long>(bs.sh_offset),
				    img.b.begin() + static_cast<long>(bs.sh_offset + bs.sh_size));
		struct btf *btf = btf__new(raw.data(), static_cast<u32>(raw.size()));
		REQUIRE(btf);
		s32 id = btf__find_by_name_kind(btf, "__u64", BTF_KIND_TYPEDEF);
		REQUIRE(id > 0);
		u32 raw_size = 0;
		const btf_header *hdr = static_cast<const btf_header *>(btf__raw_data(btf, &raw_size));
		size_t off = hdr->hdr_len + hdr->type_off +
			     static_cast<size_t>(reinterpret_cast<const char *>(btf__type_by_id(btf, id)) -
						 reinterpret_cast<const char *>(btf__type_by_id(btf, 1)));
		btf__free(btf);
		// typedef __u64 -> itself.
		u32 self = static_cast<u32>(id);
		std::memcpy(img.b.data() + bs.sh_offset + off + offsetof(btf_type, type), &self, 4);
		std::string e = load_error(img.b);
		CHECK(e != "<loaded>");
		// pcpu_arr is the first map whose key or value is a __u64.
		CHECK(e == "map 'pcpu_arr': field 'value': cannot size its type");
	}
	SECTION("a BTF variable placed outside its section") {
		RawElf img{prog_bytes("globals")};
		// Grow the symbol value of `hits` (.bss) past the section's end.
		img.edit_symbol("hits", [](Elf64_Sym &sym) { sym.st_value = 0x1000; });
		CHECK(load_error(img.b).find("variable 'hits' (offset 4096, size 8) outside section '.bss'") !=
		      std::string::npos);
	}
	SECTION("struct_ops pointing at a program that is not struct_ops") {
		RawElf img{prog_bytes("memcg_ops")};
		img.replace_in(".strtab", "struct_ops/charged", "xtruct_ops/charged");
		CHECK(load_error(img.b).find("program 'charged' (SEC(\"xtruct_ops/charged\")) is not a struct_ops program")
		      != std::string::npos);
	}
	SECTION("an extern missing from .ksyms") {
		RawElf img{prog_bytes("memcg_ops")};
		// The whole NUL-delimited name, not a line-info source string.
		using namespace std::string_literals;
		img.replace_in(".BTF", "\0bpf_put_mem_cgroup\0"s, "\0bpf_put_mem_cgroux\0"s);
		CHECK(load_error(img.b) ==
		      "extern 'bpf_put_mem_cgroup' is not described in the .ksyms BTF DATASEC");
	}
	SECTION("a renamed .ksyms DATASEC is an unknown data section") {
		RawElf img{prog_bytes("memcg_ops")};
		using namespace std::string_literals;
		img.replace_in(".BTF", "\0.ksyms\0"s, "\0.ksymz\0"s);
		CHECK(load_error(img.b) == "BTF: DATASEC '.ksymz' has no ELF section");
	}
	SECTION("an object without .BTF loads without types") {
		using namespace std::string_literals;
		RawElf img{prog_bytes("globals")};
		img.replace_in(".strtab", ".BTF\0"s, ".BTX\0"s);
		absl::StatusOr<BpfObject> obj = load_object(img.b);
		REQUIRE(obj.ok());
		CHECK(obj->btf == nullptr);
		CHECK(obj->progs.size() == 2);
		CHECK(obj->find_map(".data")->btf_value_type_id == 0);
		RawElf maps{prog_bytes("maps")};
		maps.replace_in(".strtab", ".BTF\0"s, ".BTX\0"s);
		CHECK(load_error(maps.b) == "'.maps' section without .BTF");
	}
	SECTION("a static program") {
		RawElf img{prog_bytes("globals")};
		img.edit_symbol("prog_b",
				[](Elf64_Sym &sym) { sym.st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC); });
		CHECK(load_error(img.b) ==
		      "section 'syscall': program 'prog_b' is static, programs must be global");
	}
	SECTION("a DATASEC without its ELF section") {
		RawElf img{prog_bytes("globals")};
		img.replace_in(".strtab", ".data.custom", ".data.kustom");
		CHECK(load_error(img.b) == "BTF: DATASEC '.data.custom' has no ELF section");
	}
}

}  // namespace
TEST_CASE("byte flips across .BTF.ext never crash", "[bpfvm][loader][malformed]")
{
	RawElf base{prog_bytes("memcg_core")};
	Elf64_Shdr ext = base.shdr(base.find(".BTF.ext"));
	int rejected = 0;
	for (size_t off = ext.sh_offset; off < ext.sh_offset + ext.sh_size; off++) {
		std::vector<u8> img = base.b;
		img[off] ^= 0xff;
		rejected += !try_load(img);
	}
	CHECK(rejected > 0);
}

}  // namespace umemcg::emu
