// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/object.h: a BPF object file as loaded from ELF+BTF, before any map
// exists. Programs with their .text subprograms appended and bpf-to-bpf calls
// linked, map specifications (BTF-defined .maps, global data sections,
// struct_ops), .ksyms externs, the license, and the object's BTF.
// Mirrors: tools/lib/bpf/libbpf.c (struct bpf_object, bpf_program, bpf_map,
//          extern_desc, reloc_desc) (Linux 6.19)
// Emulation:
//  - the model is independent of any runtime: there are no file descriptors.
//    Where libbpf writes a map fd into ld_imm64 we write the map's index in
//    BpfObject::maps, and where it writes a kernel BTF id into a kfunc call we
//    write the extern's index in BpfObject::externs (see Reloc).
//  - global data maps are named after their ELF section (".data", ".rodata",
//    ".data.custom"), not "<object prefix>.data".
#pragma once

#include <linux/bpf.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shim/types.h"

struct btf;

namespace umemcg::emu {

struct KfuncDesc;

// Not in the uapi headers this project builds against (added after 6.1).
inline constexpr u32 kBpfMapTypeCgrpStorage = 32;  // BPF_MAP_TYPE_CGRP_STORAGE
inline constexpr u32 kBpfFLink = 1u << 13;          // BPF_F_LINK (map_flags)

// What a program's SEC() name says about it (libbpf's section_defs).
enum class ProgKind {
	kUnknown,
	kStructOps,
	kSyscall,
	kIter,
	kFentry,
	kFexit,
	kFmodRet,
	kTpBtf,
	kRawTp,
	kTracepoint,
	kKprobe,
	kKretprobe,
	kLsm,
	kPerfEvent,
	kSocketFilter,
	kXdp,
	kTc,
};

// A relocation the runtime must still apply to a program's instructions.
// insn_idx indexes BpfProgram::insns (for ld_imm64: its first slot).
enum class RelocKind {
	// ld_imm64 of a map pointer: src_reg = BPF_PSEUDO_MAP_FD, imm = map_idx.
	kMapFd,
	// ld_imm64 of an address in a global data map: src_reg =
	// BPF_PSEUDO_MAP_VALUE, insn[0].imm = map_idx, insn[1].imm = offset.
	kMapValue,
	// call of a kfunc extern: src_reg = BPF_PSEUDO_KFUNC_CALL, imm = extern_idx.
	kKfuncCall,
	// ld_imm64 of a ksym's address (`if (bpf_kfunc)` tests): src_reg =
	// BPF_PSEUDO_BTF_ID, insn[0].imm = extern_idx; an unresolved weak extern
	// is left as a plain ld_imm64 of 0 (src_reg 0), as libbpf does.
	kKsymAddr,
	// ld_imm64 of a callback: src_reg = BPF_PSEUDO_FUNC, imm already holds
	// the relative offset (target - insn_idx - 1) as the kernel expects.
	kSubprogAddr,
};

struct Reloc {
	RelocKind kind;
	u32 insn_idx = 0;
	u32 map_idx = 0;      // kMapFd, kMapValue
	u32 offset = 0;       // kMapValue: byte offset in the map value
	u32 extern_idx = 0;   // kKfuncCall, kKsymAddr
	u32 target_insn = 0;  // kSubprogAddr: absolute index in insns
};

// An instruction a CO-RE relocation could not be resolved for (libbpf poisons it: a call to
// helper kCorePoisonHelper), with the relocation as libbpf's log names it ("<byte_off> [12]
// struct s.f (0:1 @ offset 4)"): a rejection at that call is reported as libbpf reports it
// (bpf_fixup_verifier_log(), verifier_obj.h).
struct CorePoison {
	u32 insn_idx = 0;
	std::string spec;
};

// A .text function appended to a program.
struct Subprog {
	std::string name;
	u32 start = 0;  // first instruction in BpfProgram::insns
	u32 len = 0;
};

struct BpfProgram {
	std::string name;     // the FUNC symbol
	std::string section;  // the ELF section, i.e. the SEC() string
	ProgKind kind = ProgKind::kUnknown;
	bpf_prog_type prog_type = BPF_PROG_TYPE_UNSPEC;
	// For struct_ops programs libbpf sets this to the member index once a
	// struct_ops map points at the program.
	u32 expected_attach_type = 0;
	std::string attach_target;  // "cgroup" in iter/cgroup, the member in struct_ops/x
	bool sleepable = false;
	// libbpf's autoload: false for a section written "?sec" (the '?' is not part of section).
	bool autoload = true;
	u32 btf_func_id = 0;        // BTF FUNC of the program, 0 if absent
	u32 sec_insn_off = 0;       // first instruction within its section
	u32 main_len = 0;           // insns of the program itself; subprogs follow
	std::vector<bpf_insn> insns;
	std::vector<Subprog> subprogs;
	std::vector<Reloc> relocs;  // sorted by insn_idx
	// .BTF.ext line info of insns (insn_off in instructions, as bpf_attr line_info): the
	// records of the program's own range, then those of each appended subprogram, shifted to
	// where it was appended (libbpf's adjust_prog_btf_ext_info). Strings are in btf.
	std::vector<bpf_line_info> line_info;
	// Its func info (bpf_attr func_info, insn_off in instructions): the program's FUNC at 0,
	// then each appended subprogram's FUNC at its start; empty without BTF.
	std::vector<bpf_func_info> func_info;
	// The poisoned CO-RE relocations of insns, in program order (insn_idx in instructions).
	std::vector<CorePoison> core_poison;
	// struct_ops: the type name and member this program implements.
	std::string st_ops_type;
	std::string st_ops_member;
};

enum class MapOrigin {
	kBtfMaps,      // a variable in SEC(".maps")
	kData,         // .data, .data.*
	kRodata,       // .rodata, .rodata.* (frozen after initialisation)
	kBss,          // .bss
	kStructOps,    // a variable in SEC(".struct_ops")
	kStructOpsLink // a variable in SEC(".struct_ops.link") (BPF_F_LINK)
};

struct StructOpsMember {
	std::string name;
	u32 index = 0;        // member index (a program's expected_attach_type)
	u32 offset = 0;       // byte offset in the value
	u32 size = 0;         // bytes (0 for a bitfield that is not byte sized)
	u32 btf_type_id = 0;  // the member's type in the object's BTF
	bool is_func_ptr = false;
	u32 func_proto_id = 0;  // for function pointers
	int prog_idx = -1;      // index in BpfObject::progs, -1 if NULL
};

struct StructOpsSpec {
	std::string type_name;  // "bpf_memcg_ops"
	u32 type_id = 0;        // STRUCT in the object's BTF
	u32 var_id = 0;         // the VAR
	std::vector<StructOpsMember> members;
};

struct MapSpec {
	std::string name;
	MapOrigin origin = MapOrigin::kBtfMaps;
	std::string section;
	u64 sec_offset = 0;  // where the map's variable sits in its section
	u32 type = 0;        // enum bpf_map_type
	u32 key_size = 0;
	u32 value_size = 0;
	u32 max_entries = 0;
	u32 map_flags = 0;
	u32 numa_node = 0;
	u64 map_extra = 0;
	u32 pinning = 0;          // LIBBPF_PIN_NONE / LIBBPF_PIN_BY_NAME
	u32 btf_var_id = 0;       // the VAR (BTF-defined maps, struct_ops)
	u32 btf_key_type_id = 0;
	u32 btf_value_type_id = 0;  // DATASEC for global data, STRUCT for struct_ops
	bool frozen = false;        // .rodata: the program may only read it
	std::vector<u8> initial_data;  // global data and struct_ops
	std::shared_ptr<const MapSpec> inner;  // map-in-map template
	// The initial slots of a prog array or map-in-map (`.values = { [i] = &prog_or_map }`):
	// slot index and the program's or map's name, as libbpf's map->init_slots.
	std::vector<std::pair<u32, std::string>> init_slots;
	std::optional<StructOpsSpec> st_ops;
};

enum class ExternKind { kKfunc, kKsymVar };

struct Extern {
	std::string name;
	ExternKind kind = ExternKind::kKfunc;
	bool weak = false;
	u32 btf_id = 0;       // the FUNC or VAR in the object's BTF
	u32 btf_type_id = 0;  // its FUNC_PROTO, or the VAR's type
	// Set by extern resolution: the registered kfunc, or nullptr for an
	// unresolved weak extern (whose address reads as 0).
	const KfuncDesc *kfunc = nullptr;
	bool resolved = false;
};

struct BtfDeleter {
	void operator()(struct btf *b) const;
};

struct BpfObject {
	std::string name;  // file name without directory and ".o"/".bpf.o"
	std::string license;
	u32 kern_version = 0;
	std::vector<BpfProgram> progs;
	std::vector<MapSpec> maps;
	std::vector<Extern> externs;
	// The object's BTF with DATASEC sizes and offsets fixed up. Shared so
	// that verification and the runtime can keep it past the object.
	std::shared_ptr<struct btf> btf;

	const BpfProgram *find_program(const std::string &name) const;
	const MapSpec *find_map(const std::string &name) const;
	int map_index(const std::string &name) const;
	int program_index(const std::string &name) const;
	int extern_index(const std::string &name) const;
};

// The kernel's license_is_gpl_compatible(): the licenses that may call
// GPL-only helpers.
bool license_is_gpl_compatible(const std::string &license);

const char *prog_kind_name(ProgKind kind);
const char *map_origin_name(MapOrigin origin);
const char *reloc_kind_name(RelocKind kind);

}  // namespace umemcg::emu
