// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/loader_maps_test.cc: BTF-defined maps, global data maps and the
// DATASEC fix-up.
#include <catch2/catch.hpp>

#include <bpf/btf.h>
#include <algorithm>
#include <cstring>
#include <map>

#include "bpfvm/btf_util.h"
#include "bpfvm/runtime_verify.h"
#include "loader_test_util.h"

namespace umemcg::emu {
namespace {

using testing::prog_path;

BpfObject load(const std::string &name)
{
	absl::StatusOr<BpfObject> obj = load_object_file(prog_path(name));
	INFO(obj.status().ToString());
	REQUIRE(obj.ok());
	return std::move(*obj);
}

std::string type_name(const BpfObject &obj, u32 id)
{
	const struct btf_type *t = btf__type_by_id(obj.btf.get(), id);
	REQUIRE(t);
	return btf__name_by_offset(obj.btf.get(), t->name_off);
}

TEST_CASE("BTF-defined maps of each type carry their attributes", "[bpfvm][loader]")
{
	BpfObject obj = load("maps");
	struct Want {
		const char *name;
		u32 type, key, value, max_entries, flags, pinning;
	} want[] = {
		{"arr", BPF_MAP_TYPE_ARRAY, 4, 16, 16, 0, 0},
		{"pcpu_arr", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4, 0, 0},
		{"hash", BPF_MAP_TYPE_HASH, 8, 16, 1024, BPF_F_NO_PREALLOC, 0},
		{"pcpu_hash", BPF_MAP_TYPE_PERCPU_HASH, 4, 4, 128, 0, 0},
		{"lru", BPF_MAP_TYPE_LRU_HASH, 4, 8, 256, 0, 1},
		{"rb", BPF_MAP_TYPE_RINGBUF, 0, 0, 16384, 0, 0},
		{"task_depth", BPF_MAP_TYPE_TASK_STORAGE, 4, 8, 0, BPF_F_NO_PREALLOC, 0},
		{"cgrp_val", kBpfMapTypeCgrpStorage, 4, 4, 0, BPF_F_NO_PREALLOC, 0},
		{"outer", BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 3, 0, 0},
	};
	for (const Want &w : want) {
		INFO(w.name);
		const MapSpec *m = obj.find_map(w.name);
		REQUIRE(m);
		CHECK(m->origin == MapOrigin::kBtfMaps);
		CHECK(m->section == ".maps");
		CHECK(m->type == w.type);
		CHECK(m->key_size == w.key);
		CHECK(m->value_size == w.value);
		CHECK(m->max_entries == w.max_entries);
		CHECK(m->map_flags == w.flags);
		CHECK(m->pinning == w.pinning);
		CHECK(m->btf_var_id != 0);
		CHECK(type_name(obj, m->btf_var_id) == w.name);
	}
	CHECK(type_name(obj, obj.find_map("arr")->btf_value_type_id) == "val");
	CHECK(type_name(obj, obj.find_map("hash")->btf_key_type_id) == "__u64");
	CHECK(obj.find_map("rb")->btf_key_type_id == 0);
	// Variables of .maps in section order: their offsets are symbol values.
	CHECK(obj.find_map("arr")->sec_offset == 0);
	CHECK(obj.find_map("pcpu_arr")->sec_offset == 0x20);
	CHECK(obj.find_map("outer")->sec_offset == 0x100);

	const MapSpec *outer = obj.find_map("outer");
	REQUIRE(outer->inner);
	CHECK(outer->inner->type == BPF_MAP_TYPE_ARRAY);
	CHECK(outer->inner->max_entries == 2);
	CHECK(outer->inner->key_size == 4);
	CHECK(outer->inner->value_size == 4);
}

TEST_CASE("initial slots of a prog array and a map-in-map come from the relocations of .maps",
	  "[bpfvm][loader]")
{
	BpfObject obj = load("map_slots");
	const MapSpec *jt = obj.find_map("jmp_table");
	REQUIRE(jt);
	CHECK(jt->type == BPF_MAP_TYPE_PROG_ARRAY);
	REQUIRE(jt->init_slots.size() == 1);
	CHECK(jt->init_slots[0] == std::make_pair(1u, std::string("tail_target")));
	const MapSpec *outer = obj.find_map("outer");
	REQUIRE(outer);
	REQUIRE(outer->init_slots.size() == 2);
	CHECK(outer->init_slots[0] == std::make_pair(0u, std::string("inner_b")));
	CHECK(outer->init_slots[1] == std::make_pair(2u, std::string("inner_a")));
	CHECK(obj.find_map("inner_a")->init_slots.empty());
	CHECK(obj.program_index("caller") >= 0);
}

TEST_CASE("global data sections become array maps with initial contents", "[bpfvm][loader]")
{
	BpfObject obj = load("globals");
	const MapSpec *data = obj.find_map(".data");
	const MapSpec *ro = obj.find_map(".rodata");
	const MapSpec *bss = obj.find_map(".bss");
	const MapSpec *custom = obj.find_map(".data.custom");
	REQUIRE(data);
	REQUIRE(ro);
	REQUIRE(bss);
	REQUIRE(custom);
	for (const MapSpec *m : {data, ro, bss, custom}) {
		CHECK(m->type == BPF_MAP_TYPE_ARRAY);
		CHECK(m->key_size == 4);
		CHECK(m->max_entries == 1);
		CHECK((m->map_flags & BPF_F_MMAPABLE));
		CHECK(m->initial_data.size() == m->value_size);
		CHECK(m->btf_value_type_id != 0);
		CHECK(type_name(obj, m->btf_value_type_id) == m->name);
	}
	CHECK(data->origin == MapOrigin::kData);
	CHECK(custom->origin == MapOrigin::kData);
	CHECK(ro->origin == MapOrigin::kRodata);
	CHECK(bss->origin == MapOrigin::kBss);
	CHECK(ro->frozen);
	CHECK((ro->map_flags & BPF_F_RDONLY_PROG));
	CHECK_FALSE(data->frozen);

	CHECK(data->value_size == 40);  // int counter; pad; u64 big_table[4]
	s32 counter;
	std::memcpy(&counter, data->initial_data.data(), 4);
	CHECK(counter == 5);
	u64 table[4];
	std::memcpy(table, data->initial_data.data() + 8, sizeof(table));
	CHECK(table[0] == 1);
	CHECK(table[3] == 4);
	u32 limit;
	std::memcpy(&limit, ro->initial_data.data(), 4);
	CHECK(limit == 100);
	CHECK(std::string(reinterpret_cast<const char *>(ro->initial_data.data()) + 4) == "hello");
	CHECK(bss->value_size == 40);
	CHECK(std::all_of(bss->initial_data.begin(), bss->initial_data.end(), [](u8 b) { return b == 0; }));
	u32 cv;
	std::memcpy(&cv, custom->initial_data.data(), 4);
	CHECK(cv == 0xabcd);
}

// Reads DATASEC name's (size, var name -> offset) from the object's BTF.
std::pair<u32, std::map<std::string, u32>> datasec(const BpfObject &obj, const std::string &name)
{
	const struct btf *btf = obj.btf.get();
	u32 id = btf_find_datasec(btf, name);
	REQUIRE(id);
	const struct btf_type *t = btf__type_by_id(btf, id);
	std::map<std::string, u32> vars;
	const struct btf_var_secinfo *v = btf_var_secinfos(t);
	u32 prev = 0;
	for (u16 i = 0; i < btf_vlen(t); i++) {
		CHECK(v[i].offset >= prev);  // sorted by offset
		prev = v[i].offset;
		vars[btf__name_by_offset(btf, btf__type_by_id(btf, v[i].type)->name_off)] = v[i].offset;
	}
	return {t->size, vars};
}

TEST_CASE("DATASEC sizes and variable offsets are fixed from the ELF symbols", "[bpfvm][loader]")
{
	BpfObject g = load("globals");
	auto [dsz, dvars] = datasec(g, ".data");
	CHECK(dsz == 40);
	CHECK(dvars["counter"] == 0);
	CHECK(dvars["big_table"] == 8);
	auto [bsz, bvars] = datasec(g, ".bss");
	CHECK(bsz == 40);
	CHECK(bvars["hits"] == 0);
	CHECK(bvars["scratch"] == 8);
	auto [rsz, rvars] = datasec(g, ".rodata");
	CHECK(rsz == 10);
	CHECK(rvars["limit"] == 0);
	CHECK(rvars["greeting"] == 4);
	CHECK(datasec(g, "license").first == 13);

	BpfObject m = load("maps");
	auto [msz, mvars] = datasec(m, ".maps");
	CHECK(msz == 0x118);
	CHECK(mvars["hash"] == 0x40);
	CHECK(mvars["outer"] == 0x100);

	BpfObject k = load("memcg_ops");
	auto [ssz, svars] = datasec(k, ".bss");
	CHECK(ssz == 20);
	CHECK(svars["last_usage"] == 0);
	CHECK(svars["violations"] == 8);
	CHECK(svars["depth"] == 16);
	// .ksyms has no ELF section: left as the compiler wrote it.
	CHECK(datasec(k, ".ksyms").first == 0);
}

TEST_CASE("raw map ld_imm64: one written as raw bytes, with no relocation, is a raw fd, refused",
	  "[bpfvm][loader][verifier]")
{
	BpfObject obj = load("raw_map_fd");
	const int raw = obj.program_index("raw_fd");
	const int rel = obj.program_index("relocated");
	REQUIRE(raw >= 0);
	REQUIRE(rel >= 0);
	// The same delete through the relocated reference to map 0 verifies.
	CHECK(bpf_runtime_verify(obj, obj.progs[(size_t)rel]).accepted);
	// The raw fd 0 would name map 0 as an index: the kernel resolves it as an fd instead.
	const BpfVerdict v = bpf_runtime_verify(obj, obj.progs[(size_t)raw]);
	CHECK_FALSE(v.accepted);
	CHECK(v.err == -EBADF);
	CHECK(v.error == "fd 0 is not pointing to valid bpf_map");
}

}  // namespace
}  // namespace umemcg::emu
