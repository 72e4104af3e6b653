// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/loader_struct_ops_test.cc: struct_ops maps, their layout and the
// member -> program mapping.
#include <catch2/catch.hpp>

#include <cstring>

#include "loader_test_util.h"

namespace umemcg::emu {
namespace {

using testing::prog_path;

TEST_CASE("struct_ops maps: layout, initial data and member programs", "[bpfvm][loader]")
{
	absl::StatusOr<BpfObject> r = load_object_file(prog_path("memcg_ops"));
	REQUIRE(r.ok());
	const BpfObject &obj = *r;

	const MapSpec *m = obj.find_map("memcg_policy");
	REQUIRE(m);
	CHECK(m->origin == MapOrigin::kStructOps);
	CHECK(m->type == BPF_MAP_TYPE_STRUCT_OPS);
	CHECK(m->key_size == 4);
	CHECK(m->value_size == 40);
	CHECK(m->max_entries == 1);
	CHECK(m->map_flags == 0);
	REQUIRE(m->st_ops);
	const StructOpsSpec &s = *m->st_ops;
	CHECK(s.type_name == "bpf_memcg_ops");
	CHECK(m->btf_value_type_id == s.type_id);
	REQUIRE(s.members.size() == 4);

	CHECK(s.members[0].name == "high_policy");
	CHECK(s.members[0].offset == 0);
	CHECK(s.members[0].size == 8);
	CHECK(s.members[0].is_func_ptr);
	CHECK(s.members[0].func_proto_id != 0);
	CHECK(s.members[0].prog_idx == obj.program_index("high_policy"));
	CHECK(s.members[1].name == "charged");
	CHECK(s.members[1].offset == 8);
	CHECK(s.members[1].prog_idx == obj.program_index("charged"));
	CHECK(s.members[2].name == "flags");
	CHECK(s.members[2].offset == 16);
	CHECK(s.members[2].size == 4);
	CHECK_FALSE(s.members[2].is_func_ptr);
	CHECK(s.members[2].prog_idx == -1);
	CHECK(s.members[3].name == "name");
	CHECK(s.members[3].offset == 20);
	CHECK(s.members[3].size == 16);

	REQUIRE(m->initial_data.size() == 40);
	u32 flags;
	std::memcpy(&flags, m->initial_data.data() + 16, 4);
	CHECK(flags == 3);
	CHECK(std::string(reinterpret_cast<const char *>(m->initial_data.data()) + 20) == "lockholder");
	for (int i = 0; i < 16; i++)  // function pointer slots stay zero
		CHECK(m->initial_data[static_cast<size_t>(i)] == 0);

	// The program side: member index as expected_attach_type (libbpf).
	const BpfProgram *hp = obj.find_program("high_policy");
	CHECK(hp->st_ops_type == "bpf_memcg_ops");
	CHECK(hp->st_ops_member == "high_policy");
	CHECK(hp->expected_attach_type == 0);
	const BpfProgram *ch = obj.find_program("charged");
	CHECK(ch->st_ops_member == "charged");
	CHECK(ch->expected_attach_type == 1);
}

TEST_CASE("a .struct_ops.link map has BPF_F_LINK and its own programs", "[bpfvm][loader]")
{
	absl::StatusOr<BpfObject> r = load_object_file(prog_path("memcg_ops"));
	REQUIRE(r.ok());
	const MapSpec *m = r->find_map("memcg_policy_link");
	REQUIRE(m);
	CHECK(m->origin == MapOrigin::kStructOpsLink);
	CHECK(m->section == ".struct_ops.link");
	CHECK(m->map_flags == kBpfFLink);
	REQUIRE(m->st_ops);
	CHECK(m->st_ops->type_name == "bpf_memcg_ops");
	CHECK(m->st_ops->members[0].prog_idx == r->program_index("high_policy_linked"));
	CHECK(m->st_ops->members[1].prog_idx == -1);  // charged left NULL
	CHECK(r->find_program("high_policy_linked")->st_ops_member == "high_policy");
}

}  // namespace
}  // namespace umemcg::emu
