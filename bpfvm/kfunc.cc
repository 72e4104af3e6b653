// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/kfunc.cc: kfunc descriptors and the registry.
// Mirrors: kernel/bpf/btf.c (register_btf_kfunc_id_set) (Linux 6.19)
// Emulation:
//  - registration checks the descriptor's consistency (the kernel trusts
//    resolve_btfids and the C prototypes).
#include "bpfvm/kfunc.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace umemcg::emu {

KfuncArg KfuncArg::void_()
{
	KfuncArg a;
	a.kind = KfuncArgKind::kVoid;
	a.size = 0;
	return a;
}

KfuncArg KfuncArg::scalar(u32 size, bool is_signed)
{
	KfuncArg a;
	a.kind = KfuncArgKind::kScalar;
	a.size = size;
	a.is_signed = is_signed;
	return a;
}

KfuncArg KfuncArg::ptr_to(std::string struct_name, bool nullable)
{
	KfuncArg a;
	a.kind = KfuncArgKind::kPtrToStruct;
	a.struct_name = std::move(struct_name);
	a.nullable = nullable;
	return a;
}

KfuncArg KfuncArg::mem(int size_arg)
{
	KfuncArg a;
	a.kind = KfuncArgKind::kPtrToMem;
	a.size_arg = size_arg;
	return a;
}

KfuncArg KfuncArg::mem_size(u32 size)
{
	KfuncArg a = scalar(size);
	a.kind = KfuncArgKind::kMemSize;
	return a;
}

namespace {
KfuncArg ptr_kind(KfuncArgKind k)
{
	KfuncArg a;
	a.kind = k;
	return a;
}

bool is_ptr(KfuncArgKind k)
{
	return k == KfuncArgKind::kPtrToStruct || k == KfuncArgKind::kPtrToMem ||
	       k == KfuncArgKind::kPtrToWq || k == KfuncArgKind::kPtrToMap ||
	       k == KfuncArgKind::kPtrToMapValue;
}

std::string arg_string(const KfuncArg &a)
{
	switch (a.kind) {
	case KfuncArgKind::kVoid: return "void";
	case KfuncArgKind::kScalar:
		return absl::StrFormat("%c%u", a.is_signed ? 's' : 'u', a.size * 8);
	case KfuncArgKind::kPtrToStruct:
		return absl::StrFormat("struct %s *%s", a.struct_name, a.nullable ? "__nullable" : "");
	case KfuncArgKind::kPtrToMem: return absl::StrFormat("void *mem (size: arg %d)", a.size_arg);
	case KfuncArgKind::kMemSize: return absl::StrFormat("u%u __sz", a.size * 8);
	case KfuncArgKind::kPtrToWq: return "struct bpf_wq *";
	case KfuncArgKind::kPtrToMap: return "void *map";
	case KfuncArgKind::kPtrToMapValue: return "void *map_value";
	case KfuncArgKind::kCallback: return "callback";
	case KfuncArgKind::kIgnored: return "void *__ign";
	}
	return "?";
}
}  // namespace

KfuncArg KfuncArg::wq() { return ptr_kind(KfuncArgKind::kPtrToWq); }
KfuncArg KfuncArg::map() { return ptr_kind(KfuncArgKind::kPtrToMap); }
KfuncArg KfuncArg::map_value() { return ptr_kind(KfuncArgKind::kPtrToMapValue); }
KfuncArg KfuncArg::callback() { return ptr_kind(KfuncArgKind::kCallback); }
KfuncArg KfuncArg::ignored() { return ptr_kind(KfuncArgKind::kIgnored); }


bool KfuncDesc::allowed_for(bpf_prog_type type) const
{
	return std::any_of(prog_types.begin(), prog_types.end(), [type](bpf_prog_type t) {
		return t == BPF_PROG_TYPE_UNSPEC || t == type;
	});
}

absl::Status KfuncRegistry::add(KfuncDesc d)
{
	auto bad = [&d](const std::string &why) {
		return absl::InvalidArgumentError(absl::StrFormat("kfunc '%s': %s", d.name, why));
	};
	if (d.name.empty())
		return absl::InvalidArgumentError("kfunc without a name");
	if (by_name_.contains(d.name))
		return absl::AlreadyExistsError(absl::StrFormat("kfunc '%s' registered twice", d.name));
	if (d.args.size() > 5)
		return bad("more than 5 arguments");
	if (d.ret.kind == KfuncArgKind::kMemSize || d.ret.kind == KfuncArgKind::kCallback)
		return bad("invalid return kind");
	for (size_t i = 0; i < d.args.size(); i++) {
		const KfuncArg &a = d.args[i];
		if (a.kind == KfuncArgKind::kVoid)
			return bad(absl::StrFormat("argument %u is void", i));
		if ((a.kind == KfuncArgKind::kScalar || a.kind == KfuncArgKind::kMemSize) &&
		    a.size != 1 && a.size != 2 && a.size != 4 && a.size != 8)
			return bad(absl::StrFormat("argument %u: scalar size %u", i, a.size));
		if (a.kind == KfuncArgKind::kPtrToStruct && a.struct_name.empty())
			return bad(absl::StrFormat("argument %u: pointer to an unnamed struct", i));
		if (a.kind == KfuncArgKind::kPtrToMem &&
		    (a.size_arg < 0 || static_cast<size_t>(a.size_arg) >= d.args.size() ||
		     d.args[static_cast<size_t>(a.size_arg)].kind != KfuncArgKind::kMemSize))
			return bad(absl::StrFormat("argument %u: memory without a size argument", i));
	}
	if (d.has(KF_RELEASE) && (d.args.empty() || !is_ptr(d.args[0].kind)))
		return bad("KF_RELEASE needs a pointer argument 0");
	if ((d.flags & (KF_ACQUIRE | KF_RET_NULL)) && !is_ptr(d.ret.kind))
		return bad("KF_ACQUIRE/KF_RET_NULL need a pointer result");
	if (d.prog_types.empty())
		return bad("no program type may call it");
	descs_.push_back(std::move(d));
	const KfuncDesc *p = &descs_.back();
	by_name_.emplace(p->name, p);
	return absl::OkStatus();
}

const KfuncDesc *KfuncRegistry::find(const std::string &name) const
{
	auto it = by_name_.find(name);
	return it == by_name_.end() ? nullptr : it->second;
}

std::string kfunc_signature(const KfuncDesc &d)
{
	std::vector<std::string> args;
	for (const KfuncArg &a : d.args)
		args.push_back(arg_string(a));
	return absl::StrFormat("%s %s(%s)", arg_string(d.ret), d.name, absl::StrJoin(args, ", "));
}

std::string kfunc_flags_string(u32 flags)
{
	static constexpr struct {
		u32 bit;
		const char *name;
	} kNames[] = {
		{KF_ACQUIRE, "KF_ACQUIRE"}, {KF_RELEASE, "KF_RELEASE"},
		{KF_RET_NULL, "KF_RET_NULL"}, {KF_TRUSTED_ARGS, "KF_TRUSTED_ARGS"},
		{KF_SLEEPABLE, "KF_SLEEPABLE"}, {KF_DESTRUCTIVE, "KF_DESTRUCTIVE"},
		{KF_RCU, "KF_RCU"}, {KF_ITER_NEW, "KF_ITER_NEW"}, {KF_ITER_NEXT, "KF_ITER_NEXT"},
		{KF_ITER_DESTROY, "KF_ITER_DESTROY"}, {KF_RCU_PROTECTED, "KF_RCU_PROTECTED"},
		{KF_FASTCALL, "KF_FASTCALL"}, {KF_ARENA_RET, "KF_ARENA_RET"},
		{KF_ARENA_ARG1, "KF_ARENA_ARG1"}, {KF_ARENA_ARG2, "KF_ARENA_ARG2"},
	};
	std::vector<std::string> out;
	for (const auto &n : kNames)
		if (flags & n.bit) {
			out.push_back(n.name);
			flags &= ~n.bit;
		}
	if (flags)
		out.push_back(absl::StrFormat("0x%x", flags));
	return out.empty() ? "0" : absl::StrJoin(out, "|");
}

}  // namespace umemcg::emu
