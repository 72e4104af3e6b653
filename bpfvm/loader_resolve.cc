// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/loader_resolve.cc: resolving .ksyms externs against the kfunc
// registry, with a check of the object's BTF prototype against the
// registered signature.
// Mirrors: tools/lib/bpf/libbpf.c (bpf_object__resolve_ksyms_btf_id,
//          bpf_object__resolve_ksym_func_btf_id, bpf_core_types_are_compat)
//          (Linux 6.19)
// Emulation:
//  - libbpf checks type compatibility against vmlinux BTF; here the kernel
//    side is the KfuncDesc: argument count, scalar sizes, and the names of
//    pointed-to structs must match. Signedness is not compared (libbpf's
//    compatibility check ignores it too).
//  - ksym variables (`extern const struct rq runqueues __ksym`) have no
//    emulated counterpart: non-weak ones are errors.
#include "absl/strings/str_format.h"
#include "bpfvm/btf_util.h"
#include "bpfvm/loader.h"

namespace umemcg::emu {

namespace {

// A short C-like rendering of a BTF type for messages.
std::string describe(const struct btf *btf, u32 id)
{
	const struct btf_type *t;
	absl::StatusOr<u32> r = btf_skip_mods(btf, id, &t);
	if (!r.ok())
		return "<bad type>";
	if (!t)
		return "void";
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		return absl::StrFormat("%u-byte scalar", t->size);
	case BTF_KIND_PTR: {
		const struct btf_type *pt;
		absl::StatusOr<u32> p = btf_skip_mods(btf, t->type, &pt);
		if (!p.ok())
			return "<bad pointer>";
		if (!pt)
			return "void *";
		if (btf_is_composite(pt) || btf_is_fwd(pt))
			return absl::StrFormat("pointer to struct %s", btf_str(btf, pt->name_off));
		if (btf_is_func_proto(pt))
			return "function pointer";
		return "pointer";
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return absl::StrFormat("struct %s by value", btf_str(btf, t->name_off));
	default:
		return absl::StrFormat("BTF kind %u", btf_kind(t));
	}
}

std::string expected(const KfuncArg &a)
{
	switch (a.kind) {
	case KfuncArgKind::kVoid: return "void";
	case KfuncArgKind::kScalar:
	case KfuncArgKind::kMemSize: return absl::StrFormat("%u-byte scalar", a.size);
	case KfuncArgKind::kPtrToStruct: return absl::StrFormat("pointer to struct %s", a.struct_name);
	case KfuncArgKind::kPtrToWq: return "pointer to struct bpf_wq";
	case KfuncArgKind::kCallback: return "function pointer";
	default: return "pointer";
	}
}

// Whether BTF type id (the object's view) fits the registered kind.
bool compatible(const struct btf *btf, u32 id, const KfuncArg &a)
{
	const struct btf_type *t;
	absl::StatusOr<u32> r = btf_skip_mods(btf, id, &t);
	if (!r.ok())
		return false;
	if (a.kind == KfuncArgKind::kVoid)
		return t == nullptr;
	if (!t)
		return false;
	switch (a.kind) {
	case KfuncArgKind::kScalar:
	case KfuncArgKind::kMemSize:
		return (btf_is_int(t) || btf_is_enum(t) || btf_is_enum64(t)) && t->size == a.size;
	case KfuncArgKind::kPtrToStruct:
	case KfuncArgKind::kPtrToWq: {
		if (!btf_is_ptr(t))
			return false;
		absl::StatusOr<std::string> name = btf_ptr_target_struct(btf, *r);
		std::string want = a.kind == KfuncArgKind::kPtrToWq ? "bpf_wq" : a.struct_name;
		return name.ok() && *name == want;
	}
	case KfuncArgKind::kCallback: {
		if (!btf_is_ptr(t))
			return false;
		const struct btf_type *pt;
		absl::StatusOr<u32> p = btf_skip_mods(btf, t->type, &pt);
		return p.ok() && pt && btf_is_func_proto(pt);
	}
	case KfuncArgKind::kPtrToMem:
	case KfuncArgKind::kPtrToMap:
	case KfuncArgKind::kPtrToMapValue:
	case KfuncArgKind::kIgnored:
		return btf_is_ptr(t);
	case KfuncArgKind::kVoid:
		break;
	}
	return false;
}

absl::Status check_proto(const struct btf *btf, const Extern &e, const KfuncDesc &d)
{
	const struct btf_type *proto = btf_type_at(btf, e.btf_type_id);
	if (!proto || !btf_is_func_proto(proto))
		return absl::InvalidArgumentError(absl::StrFormat("kfunc '%s': no BTF prototype", e.name));
	u16 n = btf_vlen(proto);
	const struct btf_param *params = btf_params(proto);
	if (n > 0 && params[n - 1].type == 0)
		return absl::InvalidArgumentError(absl::StrFormat(
			"kfunc '%s': variadic declarations cannot call kfuncs", e.name));
	if (n != d.args.size())
		return absl::InvalidArgumentError(absl::StrFormat(
			"kfunc '%s': the object declares %u argument(s), the kernel's %s has %u",
			e.name, n, kfunc_signature(d), d.args.size()));
	if (!compatible(btf, proto->type, d.ret))
		return absl::InvalidArgumentError(absl::StrFormat(
			"kfunc '%s': the object declares a %s return value, the kernel returns a %s",
			e.name, describe(btf, proto->type), expected(d.ret)));
	for (u16 i = 0; i < n; i++)
		if (!compatible(btf, params[i].type, d.args[i]))
			return absl::InvalidArgumentError(absl::StrFormat(
				"kfunc '%s': argument %u: the object declares a %s, the kernel takes a %s",
				e.name, i + 1, describe(btf, params[i].type), expected(d.args[i])));
	return absl::OkStatus();
}

}  // namespace

absl::Status resolve_externs(BpfObject &obj, const KfuncRegistry &reg)
{
	const struct btf *btf = obj.btf.get();
	for (Extern &e : obj.externs) {
		e.kfunc = nullptr;
		e.resolved = false;
		if (e.kind == ExternKind::kKsymVar) {
			if (e.weak)
				continue;
			return absl::UnimplementedError(absl::StrFormat(
				"ksym variable '%s': only kfunc externs are supported", e.name));
		}
		const KfuncDesc *d = reg.find(e.name);
		if (!d) {
			if (e.weak)
				continue;
			return absl::NotFoundError(absl::StrFormat(
				"extern kfunc '%s' is not a known kfunc (declare it __weak to make it optional)",
				e.name));
		}
		if (!btf)
			return absl::InvalidArgumentError("externs without BTF");
		if (absl::Status st = check_proto(btf, e, *d); !st.ok())
			return st;
		e.kfunc = d;
		e.resolved = true;
	}
	// An unresolved weak extern's address is 0 (libbpf writes imm 0).
	for (BpfProgram &p : obj.progs) {
		std::vector<Reloc> kept;
		for (const Reloc &r : p.relocs) {
			if (r.kind == RelocKind::kKsymAddr && !obj.externs[r.extern_idx].resolved) {
				p.insns[r.insn_idx].src_reg = 0;
				p.insns[r.insn_idx].imm = 0;
				p.insns[r.insn_idx + 1].imm = 0;
				continue;
			}
			kept.push_back(r);
		}
		p.relocs = std::move(kept);
	}
	return absl::OkStatus();
}

}  // namespace umemcg::emu
