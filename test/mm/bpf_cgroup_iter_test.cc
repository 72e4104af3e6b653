// SPDX-License-Identifier: GPL-2.0-only
// test/mm/bpf_cgroup_iter_test.cc: the cgroup iterator walk (mm/bpf_cgroup_iter.h) with the
// clang-compiled test/progs/cgroup_iter.bpf.c (CO-RE) over a memcg tree: every order, the
// early stop and the epilogue NULL call, removed cgroups, argument errors; and memcg_policy's
// sleepable iterator summing usage through the memcg kfuncs.
#include <catch2/catch.hpp>

#include <cstring>

#undef WARN
#include "bpfvm/kernel_env.h"
#include "bpfvm/map.h"
#include "bpfvm/runtime.h"
#include "kernel/cgroup.h"
#include "mm/bpf_cgroup_iter.h"
#include "mm/bpf_memcontrol.h"
#include "test/mm/bpf_test_util.h"
#include "test/support/memcg_env.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

std::unique_ptr<emu::BpfLoadedObject> open_prog(const char *name) { return open_bpf_object(name); }
std::vector<u8> map_value(emu::BpfLoadedObject &lo, const char *map, u32 key) {
  return bpf_map_value(lo, map, key);
}

struct Walk {
  std::vector<int> ids;
  u64 final_calls = 0;
};

// Runs `record` and returns the ids it saw (and resets its state).
Walk walk(emu::BpfLoadedObject &lo, cgroup *start, u32 order, int stop_at = -1) {
  bpf_map *data = lo.find_map(".data");
  REQUIRE(data);
  u32 zero = 0;
  std::vector<u8> d(data->value_size);
  std::memcpy(d.data(), &stop_at, sizeof(stop_at));
  REQUIRE(sys_map_update_elem(data, &zero, d.data(), 0) == 0);
  bpf_map *bss = lo.find_map(".bss");
  std::vector<u8> clear(bss->value_size, 0);
  REQUIRE(sys_map_update_elem(bss, &zero, clear.data(), 0) == 0);

  auto r = bpf_cgroup_iter_run(*lo.find_program("record"), start, order);
  INFO(r.status().message());
  REQUIRE(r.ok());
  const std::vector<u8> b = map_value(lo, ".bss", 0);
  u64 count, final_calls;
  std::memcpy(&count, b.data(), 8);
  std::memcpy(&final_calls, b.data() + 8, 8);
  CHECK(count == r->visited);
  Walk w;
  w.final_calls = final_calls;
  for (u32 i = 0; i < count; i++) {
    s64 id;
    std::memcpy(&id, map_value(lo, "visits", i).data(), 8);
    w.ids.push_back((int)id);
  }
  return w;
}

}  // namespace

TEST_CASE("cgroup iterator: orders, early stop, final call, removed cgroups", "[mm][bpf][iter]") {
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mem_cgroup *b = env.mkdir(a, "b");
  mem_cgroup *c = env.mkdir(a, "c");
  mem_cgroup *d = env.mkdir(b, "d");
  auto lo = open_prog("cgroup_iter.bpf.o");
  REQUIRE(lo->find_program("record")->fast());
  const int R = root_mem_cgroup->css.id, A = a->css.id, B = b->css.id, C = c->css.id,
            D = d->css.id;
  cgroup *ca = a->css.cgroup, *cb = b->css.cgroup, *cd = d->css.cgroup;
  env.run([&] {
    using V = std::vector<int>;
    Walk w = walk(*lo, nullptr, CGROUP_ITER_DESCENDANTS_PRE);
    CHECK(w.ids == V{R, A, B, D, C});
    CHECK(w.final_calls == 1);
    CHECK(walk(*lo, nullptr, CGROUP_ITER_DESCENDANTS_POST).ids == V{D, B, C, A, R});
    CHECK(walk(*lo, cd, CGROUP_ITER_ANCESTORS_UP).ids == V{D, B, A, R});
    CHECK(walk(*lo, ca, CGROUP_ITER_CHILDREN).ids == V{B, C});
    CHECK(walk(*lo, cb, CGROUP_ITER_SELF_ONLY).ids == V{B});
    // A non-zero return ends the walk after that cgroup; the NULL call still comes.
    w = walk(*lo, nullptr, CGROUP_ITER_DESCENDANTS_PRE, B);
    CHECK(w.ids == V{R, A, B});
    CHECK(w.final_calls == 1);
    // Errors.
    auto unspec = bpf_cgroup_iter_run(*lo->find_program("record"), nullptr, CGROUP_ITER_ORDER_UNSPEC);
    CHECK(unspec.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_FALSE(bpf_cgroup_iter_run(*lo->find_program("record"), nullptr, 6).ok());
  });
  CHECK(env.rmdir(c) == 0);
  env.run([&] {
    CHECK(walk(*lo, nullptr, CGROUP_ITER_DESCENDANTS_PRE).ids == std::vector<int>{R, A, B, D});
  });
  env.finish();
}

TEST_CASE("cgroup iterator: memcg usage through the kfuncs from iter.s/cgroup", "[mm][bpf][iter]") {
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mem_cgroup *b = env.mkdir(a, "b");
  auto lo = open_prog("memcg_policy.bpf.o");
  env.run([&] {
    REQUIRE(env.charge(b, 100) == 0);
    memcg_memory_event(b, MEMCG_HIGH);
    // A non-iterator program is refused.
    CHECK_FALSE(bpf_cgroup_iter_run(*lo->find_program("high_policy"), nullptr,
                                    CGROUP_ITER_DESCENDANTS_PRE)
                    .ok());
    auto r = bpf_cgroup_iter_run(*lo->find_program("cgroup_usage"), a->css.cgroup,
                                 CGROUP_ITER_DESCENDANTS_PRE);
    INFO(r.status().message());
    REQUIRE(r.ok());
    CHECK(r->visited == 2);
    u64 sum;
    std::memcpy(&sum, map_value(*lo, "usage_by_level", 0).data(), 8);
    // a's usage includes b's (hierarchical page counters).
    CHECK(sum == (page_counter_read(&a->memory) + page_counter_read(&b->memory)) * PAGE_SIZE);
    u64 stats[4];
    std::memcpy(stats, map_value(*lo, ".bss", 0).data(), sizeof(stats));
    CHECK(stats[2] == 2);  // MEMCG_HIGH counted at b and (hierarchically) at a
    env.uncharge(b, 100);
  });
  env.finish();
}
