// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/loader_core.cc: CO-RE relocations (.BTF.ext core_relo records) resolved against the
// emulated kernel's object layouts, as libbpf resolves them against vmlinux BTF: a program
// compiled with a real vmlinux.h (preserve_access_index) reads the emulator's field offsets.
//
// Each record names an instruction of a section, a local type and an access string
// ("0:2:1": an index on the root pointer, then member or array indices). The local access
// path gives member names; the same names are looked up in the registered struct of the
// same name (a "___flavor" suffix stripped), through embedded structs. Kinds:
// FIELD_BYTE_OFFSET, FIELD_BYTE_SIZE, FIELD_EXISTS, FIELD_SIGNED, FIELD_LSHIFT_U64,
// FIELD_RSHIFT_U64, TYPE_ID_LOCAL, TYPE_EXISTS, TYPE_MATCHES, TYPE_SIZE, ENUMVAL_EXISTS.
// A field's local value is computed as libbpf's bpf_core_calc_field_relo() does; for a
// bitfield (BPF_CORE_READ_BITFIELD) that is the smallest naturally aligned integer holding its
// bits, with the shifts that extract it from a 64-bit load. The instruction must hold the
// local value (else the object is refused), except a bitfield's offset, size and left shift,
// where the compiler may have chosen another integer; it is patched in place (ALU imm,
// load/store offset, ld_imm64), and a load or store whose field changed size gets the new
// size. A relocation that cannot be resolved poisons its instruction as libbpf does: it
// becomes a call to helper 0xbad2310, which the verifier refuses only if reached (so
// bpf_core_field_exists() guards work); the program keeps the relocation as libbpf's log
// names it (BpfProgram::core_poison).
//
// Mirrors: tools/lib/bpf/relo_core.c (bpf_core_calc_relo_insn, bpf_core_calc_field_relo,
//          bpf_core_patch_insn, bpf_core_poison_insn, bpf_core_format_spec),
//          tools/lib/bpf/btf.c (.BTF.ext layout) (Linux 6.19)
// Emulation: targets are the registered kernel-object structs (bpfvm/prog_type.h), which
//   list only the fields a subsystem exposes: a field the emulator does not expose does not
//   exist for CO-RE. Target fields are whole bytes and carry no signedness, type ids or
//   enums: a bitfield whose struct a target has reads the whole target field, FIELD_SIGNED
//   answers from the local type, TYPE_ID_TARGET and ENUMVAL_VALUE poison, ENUMVAL_EXISTS is 0.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bpfvm/loader.h"
#include "bpfvm/loader_internal.h"

#include <bpf/btf.h>

namespace umemcg::emu::loader {

namespace {


enum CoreKind : u32 {
	FIELD_BYTE_OFFSET = 0,
	FIELD_BYTE_SIZE = 1,
	FIELD_EXISTS = 2,
	FIELD_SIGNED = 3,
	FIELD_LSHIFT_U64 = 4,
	FIELD_RSHIFT_U64 = 5,
	TYPE_ID_LOCAL = 6,
	TYPE_ID_TARGET = 7,
	TYPE_EXISTS = 8,
	TYPE_SIZE = 9,
	ENUMVAL_EXISTS = 10,
	ENUMVAL_VALUE = 11,
	TYPE_MATCHES = 12,
};

absl::Status err(const std::string &m) { return absl::InvalidArgumentError(".BTF.ext: " + m); }

u32 rd32(const std::vector<u8> &d, size_t off) { return btf_ext_rd32(d, off); }

const struct btf_type *skip_mods(const struct btf *btf, u32 id, u32 *out_id) {
	// typedefs and qualifiers, a bounded number of times (malformed BTF may loop)
	for (int i = 0; i < 32; i++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		if (!t)
			return nullptr;
		const u16 k = btf_kind(t);
		if (k != BTF_KIND_TYPEDEF && k != BTF_KIND_VOLATILE && k != BTF_KIND_CONST &&
		    k != BTF_KIND_RESTRICT && k != BTF_KIND_TYPE_TAG) {
			if (out_id)
				*out_id = id;
			return t;
		}
		id = t->type;
	}
	return nullptr;
}

std::string essential_name(const std::string &n) {
	const size_t p = n.find("___");
	return p == std::string::npos ? n : n.substr(0, p);
}

// The local side of a field relocation (libbpf's bpf_core_spec of the local type): the
// access path, its bit offset from the root, and what the last accessor reaches.
struct LocalSpec {
	u32 root_id = 0;                 // the relocation's type id, as libbpf prints it
	std::string root_kind;           // "struct", "union", ...
	std::string root_name;           // as written (a "___flavor" suffix kept)
	std::string root;                // the root struct's essential name
	std::vector<u32> raw;            // the access string's indices
	std::vector<std::string> names;  // member names along the path
	std::string path;                // ".a.b[2]": libbpf's accessor names and indices
	bool last_is_array_elem = false; // the path ends with an index into an array member
	u32 elem_index = 0, elem_size = 0;
	u64 bit_off = 0;  // bit offset of the accessed field from the root
	u32 size = 0;     // byte size of the accessed field (a bitfield's: its type's)
	u32 bit_sz = 0;   // a bitfield's width in bits, 0 for a whole field
	bool is_signed = false;
	const struct btf_type *field_type = nullptr;  // modifiers skipped
};

const char *kind_str(const struct btf_type *t) {
	switch (btf_kind(t)) {
	case BTF_KIND_INT: return "int";
	case BTF_KIND_PTR: return "ptr";
	case BTF_KIND_ARRAY: return "array";
	case BTF_KIND_STRUCT: return "struct";
	case BTF_KIND_UNION: return "union";
	case BTF_KIND_ENUM: return "enum";
	case BTF_KIND_FWD: return "fwd";
	case BTF_KIND_TYPEDEF: return "typedef";
	case BTF_KIND_VOLATILE: return "volatile";
	case BTF_KIND_CONST: return "const";
	case BTF_KIND_RESTRICT: return "restrict";
	case BTF_KIND_FUNC: return "func";
	case BTF_KIND_FUNC_PROTO: return "func_proto";
	case BTF_KIND_VAR: return "var";
	case BTF_KIND_DATASEC: return "datasec";
	case BTF_KIND_FLOAT: return "float";
	case BTF_KIND_DECL_TAG: return "decl_tag";
	case BTF_KIND_TYPE_TAG: return "type_tag";
	case BTF_KIND_ENUM64: return "enum64";
	default: return "unknown";
	}
}

absl::StatusOr<LocalSpec> local_spec(const struct btf *btf, u32 type_id, const std::string &acc) {
	LocalSpec s;
	std::vector<u32> &idx = s.raw;
	for (absl::string_view part : absl::StrSplit(acc, ':')) {
		u32 v = 0;
		if (part.empty() || part.size() > 9)
			return err("bad access string '" + acc + "'");
		for (char c : part) {
			if (c < '0' || c > '9')
				return err("bad access string '" + acc + "'");
			v = v * 10 + (u32)(c - '0');
		}
		idx.push_back(v);
	}
	if (idx.empty())
		return err("empty access string");
	s.root_id = type_id;
	const struct btf_type *rt = btf__type_by_id(btf, type_id);
	u32 cur_id = 0;
	const struct btf_type *t = skip_mods(btf, type_id, &cur_id);
	if (!t || !rt)
		return err(absl::StrFormat("type %u not found", type_id));
	const char *rn = btf__name_by_offset(btf, rt->name_off);
	s.root_kind = kind_str(rt);
	s.root_name = rn && *rn ? rn : "<anon>";
	s.root = essential_name(rn ? rn : "");
	const s64 root_sz = btf__resolve_size(btf, cur_id);
	if (root_sz < 0)
		return err(absl::StrFormat("type %u has no size", type_id));
	if (idx[0] > 0)
		s.path = absl::StrFormat("[%u]", idx[0]);
	u64 off = (u64)idx[0] * (u64)root_sz * 8;
	for (size_t i = 1; i < idx.size(); i++) {
		const u16 k = btf_kind(t);
		if (s.bit_sz)
			return err("access string goes through a bitfield");
		if (k == BTF_KIND_STRUCT || k == BTF_KIND_UNION) {
			if (idx[i] >= btf_vlen(t))
				return err(absl::StrFormat("member %u of a %u-member type", idx[i], btf_vlen(t)));
			const struct btf_member *m = btf_members(t) + idx[i];
			const char *mn = m->name_off ? btf__name_by_offset(btf, m->name_off) : "";
			if (!mn || (m->name_off && !*mn))
				return err("member without a name string");
			s.bit_sz = btf_member_bitfield_size(t, idx[i]);
			off += btf_member_bit_offset(t, idx[i]);
			// An anonymous struct or union adds its offset, not a name: the target is
			// searched by the names around it.
			if (*mn) {
				s.names.emplace_back(mn);
				s.path += std::string(".") + mn;
			}
			t = skip_mods(btf, m->type, &cur_id);
		} else if (k == BTF_KIND_ARRAY) {
			const struct btf_array *a = btf_array(t);
			const s64 esz = btf__resolve_size(btf, a->type);
			if (esz <= 0)
				return err("array element without a size");
			off += (u64)idx[i] * (u64)esz * 8;
			s.last_is_array_elem = true;
			s.elem_index = idx[i];
			s.elem_size = (u32)esz;
			s.path += absl::StrFormat("[%u]", idx[i]);
			t = skip_mods(btf, a->type, &cur_id);
		} else {
			return err("access string goes through a non-composite type");
		}
		if (!t)
			return err("member of an unknown type");
		if (k == BTF_KIND_STRUCT || k == BTF_KIND_UNION)
			s.last_is_array_elem = false;
	}
	if (off / 8 > UINT32_MAX)
		return err("field offset overflows");
	s.bit_off = off;
	s.field_type = t;
	const s64 sz = s.bit_sz ? (s64)t->size : btf__resolve_size(btf, cur_id);
	s.size = sz > 0 ? (u32)sz : 0;
	if (btf_kind(t) == BTF_KIND_INT)
		s.is_signed = btf_int_encoding(t) & BTF_INT_SIGNED;
	else if (btf_kind(t) == BTF_KIND_ENUM || btf_kind(t) == BTF_KIND_ENUM64)
		s.is_signed = btf_kflag(t);
	return s;
}

// libbpf's bpf_core_format_spec() of a field relocation: "<byte_off> [12] struct s.a.b (0:1:2
// @ offset 8.3)", the way libbpf names a relocation it could not resolve.
std::string format_field_spec(const LocalSpec &l, u32 kind) {
	static const char *const kKinds[] = {"byte_off", "byte_sz", "field_exists", "signed",
					     "lshift_u64", "rshift_u64"};
	std::string raw;
	for (size_t i = 0; i < l.raw.size(); i++)
		raw += absl::StrFormat("%s%d", i ? ":" : "", (s32)l.raw[i]);
	const std::string at = l.bit_off % 8 ? absl::StrFormat("%u.%u", (u32)(l.bit_off / 8), (u32)(l.bit_off % 8))
					     : absl::StrFormat("%u", (u32)(l.bit_off / 8));
	return absl::StrFormat("<%s> [%u] %s %s%s (%s @ offset %s)", kind <= 5 ? kKinds[kind] : "unknown",
			       l.root_id, l.root_kind, l.root_name, l.path, raw, at);
}

// A field relocation's value and whether the instruction must hold it
// (bpf_core_calc_field_relo): a bitfield is read as the smallest naturally aligned integer
// of at least its type's size that holds all of its bits; its offset, size and left shift
// depend on that choice, so only the signedness and the right shift are validated against
// what the compiler wrote.
struct FieldVal {
	u64 val = 0;
	bool validate = true;
};

absl::StatusOr<FieldVal> local_field_value(const LocalSpec &l, u32 kind) {
	FieldVal r;
	if (l.last_is_array_elem) {
		if (kind == FIELD_BYTE_OFFSET)
			r.val = l.bit_off / 8;
		else if (kind == FIELD_BYTE_SIZE)
			r.val = l.elem_size;
		else
			return err(absl::StrFormat("relocation kind %u can't be applied to array access", kind));
		return r;
	}
	const bool bitfield = l.bit_sz > 0;
	u64 byte_sz = l.size, byte_off = l.bit_off / 8, bit_sz = (u64)l.size * 8;
	if (bitfield) {
		bit_sz = l.bit_sz;
		if (!byte_sz)
			return err("bitfield of a type without a size");
		byte_off = l.bit_off / 8 / byte_sz * byte_sz;
		while (l.bit_off + bit_sz - byte_off * 8 > byte_sz * 8) {
			if (byte_sz >= 8)
				return err(absl::StrFormat("relocation kind %u can't be satisfied for bitfield", kind));
			byte_sz *= 2;
			byte_off = l.bit_off / 8 / byte_sz * byte_sz;
		}
	}
	r.validate = !bitfield;
	switch (kind) {
	case FIELD_BYTE_OFFSET: r.val = byte_off; break;
	case FIELD_BYTE_SIZE: r.val = byte_sz; break;
	case FIELD_SIGNED: r.val = l.is_signed; r.validate = true; break;
	case FIELD_LSHIFT_U64: r.val = 64 - (l.bit_off + bit_sz - byte_off * 8); break;
	case FIELD_RSHIFT_U64: r.val = 64 - bit_sz; r.validate = true; break;
	default: break;
	}
	return r;
}

// The same path in the registered layouts: offset and size, or not found.
struct TargetField {
	bool found = false;
	u32 off = 0, size = 0;
};

TargetField target_field(const ProgTypeRegistry &reg, const LocalSpec &l) {
	TargetField r;
	const bpf_btf_struct *s = reg.find_struct(l.root);
	if (!s || l.names.empty())
		return r;
	u64 off = 0;
	for (size_t i = 0; i < l.names.size(); i++) {
		const bpf_ctx_field *f = nullptr;
		for (const bpf_ctx_field &c : s->fields)
			if (c.name == l.names[i])
				f = &c;
		if (!f)
			return r;
		off += f->off;
		if (i + 1 < l.names.size()) {
			if (!f->embedded)
				return r;  // the local path goes into a struct the target has as a pointer
			s = reg.find_struct(f->btf_name);
			if (!s)
				return r;
			continue;
		}
		r.size = f->size;
	}
	if (l.last_is_array_elem) {
		// An element of an array member: same element type assumed.
		const u64 e = (u64)l.elem_index * l.elem_size;
		if (e + l.elem_size > r.size)
			return r;
		off += e;
		r.size = l.elem_size;
	}
	if (off > 0x7fff0000)
		return r;
	r.found = true;
	r.off = (u32)off;
	return r;
}

// bpf_core_format_spec() of a type or enum value relocation: "<type_size> [7] struct s".
std::string format_type_spec(const struct btf *btf, u32 type_id, u32 kind) {
	static const char *const kKinds[] = {"byte_off", "byte_sz", "field_exists", "signed",
					     "lshift_u64", "rshift_u64", "local_type_id",
					     "target_type_id", "type_exists", "type_size",
					     "enumval_exists", "enumval_value", "type_matches"};
	const struct btf_type *t = btf__type_by_id(btf, type_id);
	const char *n = t ? btf__name_by_offset(btf, t->name_off) : nullptr;
	return absl::StrFormat("<%s> [%u] %s %s", kind < 13 ? kKinds[kind] : "unknown", type_id,
			       t ? kind_str(t) : "unknown", n && *n ? n : "<anon>");
}

void poison(std::vector<bpf_insn> &insns, size_t i) {
	bpf_insn &in = insns[i];
	const bool ldimm = in.code == (BPF_LD | BPF_IMM | BPF_DW);
	in = bpf_insn{};
	in.code = BPF_JMP | BPF_CALL;
	in.imm = (s32)kCorePoisonHelper;
	// ld_imm64's second slot becomes a no-op (ja +0) so the program stays well formed.
	if (ldimm && i + 1 < insns.size()) {
		insns[i + 1] = bpf_insn{};
		insns[i + 1].code = BPF_JMP | BPF_JA;
	}
}

u8 size_code(u32 bytes) {
	switch (bytes) {
	case 1: return BPF_B;
	case 2: return BPF_H;
	case 4: return BPF_W;
	case 8: return BPF_DW;
	default: return 0xff;
	}
}

// Checks that insn holds the local value and writes the new one.
absl::Status patch(std::vector<bpf_insn> &insns, size_t i, u64 orig, u64 val, bool validate,
		   u32 kind, u32 orig_sz, u32 new_sz, const std::string &where) {
	bpf_insn &in = insns[i];
	const u8 cls = BPF_CLASS(in.code);
	if (cls == BPF_ALU || cls == BPF_ALU64) {
		if (BPF_SRC(in.code) != BPF_K)
			return err(where + ": ALU instruction without an immediate");
		if (validate && (u64)(u32)in.imm != (orig & 0xffffffffu))
			return err(absl::StrFormat("%s: unexpected insn value: got %u, exp %u", where,
						   (u32)in.imm, (u32)orig));
		if (val > UINT32_MAX)
			return err(where + ": value does not fit the immediate");
		in.imm = (s32)(u32)val;
		return absl::OkStatus();
	}
	if (cls == BPF_LDX || cls == BPF_ST || cls == BPF_STX) {
		if (kind != FIELD_BYTE_OFFSET)
			return err(where + ": memory instruction for a non-offset relocation");
		if (validate && (s64)in.off != (s64)orig)
			return err(absl::StrFormat("%s: unexpected insn offset: got %d, exp %u", where,
						   in.off, (u32)orig));
		if (val > INT16_MAX)
			return err(where + ": offset does not fit 16 bits");
		in.off = (s16)val;
		// libbpf adjusts the access size when the field's size changed and the instruction
		// accessed the whole field.
		if (new_sz != orig_sz && BPF_MODE(in.code) == BPF_MEM &&
		    size_code(orig_sz) == BPF_SIZE(in.code) && size_code(new_sz) != 0xff)
			in.code = (u8)((in.code & ~0x18) | size_code(new_sz));
		return absl::OkStatus();
	}
	if (in.code == (BPF_LD | BPF_IMM | BPF_DW) && i + 1 < insns.size()) {
		const u64 cur = (u64)(u32)in.imm | ((u64)(u32)insns[i + 1].imm << 32);
		if (validate && cur != orig)
			return err(absl::StrFormat("%s: unexpected ld_imm64 value", where));
		in.imm = (s32)(u32)val;
		insns[i + 1].imm = (s32)(u32)(val >> 32);
		return absl::OkStatus();
	}
	return err(where + ": instruction cannot carry a CO-RE relocation");
}

}  // namespace

absl::Status apply_core_relos(LoadCtx &ctx, const elf::Section &sec, std::vector<bpf_insn> &insns,
			      std::vector<CorePoison> *poisoned)
{
	if (!ctx.core_types)
		return absl::OkStatus();
	auto part = btf_ext_part(ctx, 24, "core_relo");  // core_relo_off, core_relo_len
	if (!part.ok())
		return part.status();
	if (!part->d)
		return absl::OkStatus();
	const std::vector<u8> &d = *part->d;
	const size_t base = part->base, end = part->end;
	const u32 rec_size = rd32(d, base);
	if (rec_size < sizeof(bpf_core_relo))
		return err(absl::StrFormat("core_relo record size %u", rec_size));
	size_t p = base + 4;
	while (p < end) {
		if (end - p < 8)
			return err("truncated core_relo section header");
		const u32 name_off = rd32(d, p), num = rd32(d, p + 4);
		p += 8;
		if ((u64)num * rec_size > end - p)
			return err("core_relo records out of bounds");
		const char *sn = btf__name_by_offset(ctx.btf, name_off);
		const bool ours = sn && sec.name == sn;
		for (u32 r = 0; ours && r < num; r++) {
			// Field by field: kind is an enum in the uapi struct, and a corrupt value
			// must not be loaded as one.
			const size_t at = p + (size_t)r * rec_size;
			struct {
				u32 insn_off, type_id, access_str_off, kind;
			} rel = {rd32(d, at), rd32(d, at + 4), rd32(d, at + 8), rd32(d, at + 12)};
			const std::string where = absl::StrFormat("section '%s' insn %u", sec.name,
								  rel.insn_off / 8);
			if (rel.insn_off % 8 || rel.insn_off / 8 >= insns.size())
				return err(where + ": instruction out of range");
			const size_t i = rel.insn_off / 8;
			const char *acc = btf__name_by_offset(ctx.btf, rel.access_str_off);
			if (!acc)
				return err(where + ": bad access string offset");
			const u32 kind = rel.kind;
			u64 orig = 0, val = 0;
			u32 orig_sz = 0, new_sz = 0;
			bool ok = true, validate = true;
			std::string spec;  // the relocation as libbpf's log names an unresolved one
			if (kind == TYPE_ID_LOCAL) {
				orig = val = rel.type_id;
			} else if (kind == TYPE_ID_TARGET || kind == ENUMVAL_VALUE) {
				ok = false;
			} else if (kind == TYPE_EXISTS || kind == TYPE_MATCHES || kind == TYPE_SIZE) {
				u32 id = 0;
				const struct btf_type *t = skip_mods(ctx.btf, rel.type_id, &id);
				if (!t)
					return err(where + ": unknown type");
				const char *tn = btf__name_by_offset(ctx.btf, t->name_off);
				const bpf_btf_struct *ts = ctx.core_types->find_struct(essential_name(tn ? tn : ""));
				const s64 lsz = btf__resolve_size(ctx.btf, id);
				orig = kind == TYPE_SIZE ? (u64)(lsz > 0 ? lsz : 0) : 1;
				if (kind == TYPE_SIZE) {
					ok = ts != nullptr;
					val = ts ? ts->size : 0;
				} else {
					val = ts != nullptr;
				}
			} else if (kind == ENUMVAL_EXISTS) {
				orig = 1;
				val = 0;
			} else if (kind <= FIELD_RSHIFT_U64) {
				absl::StatusOr<LocalSpec> l = local_spec(ctx.btf, rel.type_id, acc);
				if (!l.ok())
					return err(where + ": " + std::string(l.status().message()));
				const TargetField tf = target_field(*ctx.core_types, *l);
				spec = format_field_spec(*l, kind);
				if (kind == FIELD_EXISTS) {
					orig = 1;
					val = tf.found;
				} else {
					absl::StatusOr<FieldVal> lv = local_field_value(*l, kind);
					if (!lv.ok())
						return err(where + ": " + std::string(lv.status().message()));
					orig = lv->val;
					validate = lv->validate;
					if (!l->bit_sz && !l->last_is_array_elem)
						orig_sz = l->size;
					else if (l->last_is_array_elem)
						orig_sz = l->elem_size;
					// The target's fields are whole bytes (bpf_ctx_field has no bitfields).
					new_sz = tf.size;
					switch (kind) {
					case FIELD_BYTE_OFFSET: val = tf.off; break;
					case FIELD_BYTE_SIZE: val = tf.size; break;
					case FIELD_SIGNED: val = l->is_signed; break;
					case FIELD_LSHIFT_U64:
					case FIELD_RSHIFT_U64: val = 64 - (u64)tf.size * 8; break;
					}
					ok = tf.found && tf.size > 0 && tf.size <= 8 * 1024;
				}
			} else {
				return err(absl::StrFormat("%s: unknown relocation kind %u", where, kind));
			}
			if (!ok) {
				poison(insns, i);
				if (poisoned)
					poisoned->push_back({(u32)i, spec.empty() ? format_type_spec(ctx.btf, rel.type_id, kind) : spec});
				continue;
			}
			if (absl::Status st = patch(insns, i, orig, val, validate, kind, orig_sz, new_sz, where); !st.ok())
				return st;
		}
		p += (size_t)num * rec_size;
	}
	return absl::OkStatus();
}

}  // namespace umemcg::emu::loader
