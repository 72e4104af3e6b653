// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/map_hash_test.cc: hash, per-CPU hash and LRU hash maps: creation checks, update
// flags, max_entries, get_next_key, element lifetime under RCU and sleepable runs, LRU eviction,
// and concurrent use on real threads.
#include "shim/bug.h"
#undef WARN
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <set>
#include <thread>

#include "bpfvm/map.h"
#include "shim/errno.h"
#include "shim/machine.h"
#include "shim/rcupdate.h"
#include "test/bpfvm/map_test_util.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;
using umemcg::test::make_map;
using umemcg::test::map_create_errno;

namespace {

u64 get(bpf_map *m, u32 k) {
  u64 v = 0;
  REQUIRE(sys_map_lookup_elem(m, &k, &v) == 0);
  return v;
}

}  // namespace

TEST_CASE("hash: creation checks", "[bpfvm][map][hash]") {
  CHECK(map_create_errno(BPF_MAP_TYPE_HASH, 4, 8, 16) == 0);
  CHECK(map_create_errno(BPF_MAP_TYPE_HASH, 0, 8, 16) == -EINVAL);
  CHECK(map_create_errno(BPF_MAP_TYPE_HASH, 4, 0, 16) == -EINVAL);
  CHECK(map_create_errno(BPF_MAP_TYPE_HASH, 4, 8, 0) == -EINVAL);
  CHECK(map_create_errno(BPF_MAP_TYPE_HASH, 513, 8, 16) == -E2BIG);
  CHECK(map_create_errno(BPF_MAP_TYPE_HASH, 4, 8, 16, BPF_F_MMAPABLE) == -EINVAL);
  CHECK(map_create_errno(BPF_MAP_TYPE_HASH, 4, 8, 16, BPF_F_NO_COMMON_LRU) == -EINVAL);
  CHECK(map_create_errno(BPF_MAP_TYPE_LRU_HASH, 4, 8, 16, BPF_F_NO_PREALLOC) == -ENOTSUPP);
  CHECK(map_create_errno(BPF_MAP_TYPE_LRU_HASH, 4, 8, 16, BPF_F_NO_COMMON_LRU) == 0);
}

TEST_CASE("hash: BPF_ANY / BPF_NOEXIST / BPF_EXIST, delete, max_entries", "[bpfvm][map][hash]") {
  emu::Machine mach(config(emu::Mode::simulated, 2));
  mach.exec([] {
    auto m = make_map(BPF_MAP_TYPE_HASH, 4, 8, 3);
    u32 k = 1;
    u64 v = 10;
    CHECK(sys_map_update_elem(m.get(), &k, &v, BPF_EXIST) == -ENOENT);
    CHECK(sys_map_update_elem(m.get(), &k, &v, BPF_NOEXIST) == 0);
    CHECK(sys_map_update_elem(m.get(), &k, &v, BPF_NOEXIST) == -EEXIST);
    v = 11;
    CHECK(sys_map_update_elem(m.get(), &k, &v, BPF_EXIST) == 0);
    CHECK(get(m.get(), 1) == 11);
    CHECK(sys_map_update_elem(m.get(), &k, &v, 3) == -EINVAL);
    CHECK(sys_map_update_elem(m.get(), &k, &v, BPF_F_LOCK) == -EINVAL);  // no spin lock
    for (u32 i = 2; i <= 3; i++) CHECK(sys_map_update_elem(m.get(), &i, &v) == 0);
    u32 k4 = 4;
    CHECK(sys_map_update_elem(m.get(), &k4, &v) == -E2BIG);  // full
    v = 12;
    CHECK(sys_map_update_elem(m.get(), &k, &v) == 0);  // replacing in a full map works
    CHECK(get(m.get(), 1) == 12);
    CHECK(sys_map_delete_elem(m.get(), &k4) == -ENOENT);
    CHECK(sys_map_delete_elem(m.get(), &k) == 0);
    CHECK(sys_map_lookup_elem(m.get(), &k, &v) == -ENOENT);
    CHECK(sys_map_update_elem(m.get(), &k4, &v) == 0);  // room again
  });
}

TEST_CASE("hash: get_next_key visits every key once", "[bpfvm][map][hash]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto m = make_map(BPF_MAP_TYPE_HASH, 8, 8, 100);
    for (u64 k = 0; k < 100; k++) REQUIRE(sys_map_update_elem(m.get(), &k, &k) == 0);
    std::set<u64> seen;
    u64 key = 0, next = 0;
    int err = sys_map_get_next_key(m.get(), nullptr, &next);
    while (err == 0) {
      CHECK(seen.insert(next).second);
      key = next;
      err = sys_map_get_next_key(m.get(), &key, &next);
    }
    CHECK(err == -ENOENT);
    CHECK(seen.size() == 100);
    // A key that is not in the map restarts from the first key.
    u64 missing = 1000, first = 0;
    REQUIRE(sys_map_get_next_key(m.get(), nullptr, &first) == 0);
    CHECK(sys_map_get_next_key(m.get(), &missing, &next) == 0);
    CHECK(next == first);
  });
}

TEST_CASE("hash: a deleted or replaced element stays readable until the grace period",
          "[bpfvm][map][hash][rcu]") {
  for (emu::Mode mode : test::kBothModes) {
    emu::Machine mach(config(mode, 2));
    mach.exec([] {
      auto m = make_map(BPF_MAP_TYPE_HASH, 4, 8, 4);
      u32 k = 1;
      u64 v = 111;
      REQUIRE(sys_map_update_elem(m.get(), &k, &v) == 0);
      rcu_read_lock();
      auto *p = static_cast<u64 *>(m->map_lookup_elem(&k));
      REQUIRE(p);
      v = 222;
      CHECK(m->map_update_elem(&k, &v, BPF_ANY) == 0);  // replaced: new element
      CHECK(*static_cast<u64 *>(m->map_lookup_elem(&k)) == 222);
      CHECK(*p == 111);  // the reader keeps the old element
      CHECK(m->map_delete_elem(&k) == 0);
      CHECK(*p == 111);
      rcu_read_unlock();

      // Sleepable programs: the element outlives a whole RCU grace period.
      v = 333;
      REQUIRE(sys_map_update_elem(m.get(), &k, &v) == 0);
      bpf_rcu_tasks_trace_read_lock();
      rcu_read_lock();
      p = static_cast<u64 *>(m->map_lookup_elem(&k));
      rcu_read_unlock();
      REQUIRE(p);
      CHECK(sys_map_delete_elem(m.get(), &k) == 0);
      synchronize_rcu();
      rcu_barrier();
      CHECK(*p == 333);  // parked, not freed (ASan builds would report a use after free)
      bpf_rcu_tasks_trace_read_unlock();
    });
  }
}

TEST_CASE("percpu_hash: program side writes this vCPU's copy", "[bpfvm][map][hash]") {
  emu::Machine mach(config(emu::Mode::simulated, 2));
  auto m = make_map(BPF_MAP_TYPE_PERCPU_HASH, 4, 4, 4);
  u32 k = 5;
  mach.exec([&] {
    u32 v = 7;
    rcu_read_guard g;
    CHECK(m->map_update_elem(&k, &v, BPF_NOEXIST) == 0);  // new: cpu 1 gets 7, cpu 0 zero
  }, 1);
  mach.exec([&] {
    u64 all[2];
    CHECK(sys_map_lookup_elem(m.get(), &k, all) == 0);
    CHECK(all[0] == 0);
    CHECK(all[1] == 7);
    u32 v = 9;
    {
      rcu_read_guard g;
      CHECK(m->map_update_elem(&k, &v, BPF_EXIST) == 0);  // in place, cpu 0 only
      CHECK(*static_cast<u32 *>(m->map_lookup_elem(&k)) == 9);
    }
    CHECK(sys_map_lookup_elem(m.get(), &k, all) == 0);
    CHECK(all[0] == 9);
    CHECK(all[1] == 7);
    const u64 in[2] = {1, 2};
    CHECK(sys_map_update_elem(m.get(), &k, in, BPF_F_LOCK) == -EINVAL);
    CHECK(sys_map_update_elem(m.get(), &k, in) == 0);
    CHECK(sys_map_lookup_elem(m.get(), &k, all) == 0);
    CHECK(all[0] == 1);
    CHECK(all[1] == 2);
  }, 0);
}

TEST_CASE("lru_hash: the least recently used element is evicted when full", "[bpfvm][map][lru]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto m = make_map(BPF_MAP_TYPE_LRU_HASH, 4, 8, 4);
    for (u32 k = 0; k < 4; k++) {
      u64 v = k;
      REQUIRE(sys_map_update_elem(m.get(), &k, &v) == 0);
    }
    {
      rcu_read_guard g;
      u32 k0 = 0;
      CHECK(m->map_lookup_elem(&k0));  // a program lookup marks key 0 referenced
    }
    u32 k = 4;
    u64 v = 4;
    CHECK(sys_map_update_elem(m.get(), &k, &v) == 0);  // full: evicts, never -E2BIG
    u64 out;
    u32 k0 = 0, k1 = 1;
    CHECK(sys_map_lookup_elem(m.get(), &k0, &out) == 0);        // referenced: kept
    CHECK(sys_map_lookup_elem(m.get(), &k1, &out) == -ENOENT);  // coldest: evicted
    CHECK(sys_map_update_elem(m.get(), &k, &v, BPF_F_LOCK) == -EINVAL);
    // As in the kernel, an LRU update takes its element (evicting when full) before it looks at
    // the key: this failed update still evicted the coldest element, key 2.
    CHECK(sys_map_update_elem(m.get(), &k, &v, BPF_NOEXIST) == -EEXIST);
    u32 k2 = 2, k3 = 3;
    CHECK(sys_map_lookup_elem(m.get(), &k2, &out) == -ENOENT);
    // A user-space lookup does not count as a use: key 3 is the next victim.
    CHECK(sys_map_lookup_elem(m.get(), &k3, &out) == 0);
    u32 k5 = 5, k6 = 6;
    CHECK(sys_map_update_elem(m.get(), &k5, &v) == 0);  // room left by the eviction
    CHECK(sys_map_lookup_elem(m.get(), &k3, &out) == 0);
    CHECK(sys_map_update_elem(m.get(), &k6, &v) == 0);
    CHECK(sys_map_lookup_elem(m.get(), &k3, &out) == -ENOENT);
    int n = 0;
    u32 key, next;
    for (int err = sys_map_get_next_key(m.get(), nullptr, &next); !err;
         key = next, err = sys_map_get_next_key(m.get(), &key, &next))
      n++;
    CHECK(n == 4);
  });
}

TEST_CASE("hash: concurrent writers and readers on real threads", "[bpfvm][map][hash][native]") {
  emu::Machine mach(config(emu::Mode::native, 4));
  auto m = make_map(BPF_MAP_TYPE_HASH, 4, 8, 64);
  std::atomic<bool> bad{false};
  std::atomic<int> done{0};
  for (int t = 0; t < 4; t++) {
    mach.spawn("writer" + std::to_string(t), [&, t] {
      emu::KernelEntry ke;
      for (int it = 0; it < 3000; it++) {
        u32 k = (u32)(t * 16 + it % 16);
        u64 v = (u64)k * 1000000 + it;
        if (sys_map_update_elem(m.get(), &k, &v) != 0) bad = true;
        // Everybody also reads a shared key that writer 0 keeps replacing.
        rcu_read_lock();
        u32 shared = 0;
        if (auto *p = static_cast<u64 *>(m->map_lookup_elem(&shared)))
          if (*p / 1000000 != 0) bad = true;
        rcu_read_unlock();
        if (it % 7 == 0 && t != 0) sys_map_delete_elem(m.get(), &k);
      }
      done++;
    });
  }
  mach.run();
  CHECK(done == 4);
  CHECK_FALSE(bad);
  // Writer 0's keys all hold their last value; the map never exceeded max_entries.
  mach.exec([&] {
    for (u32 k = 0; k < 16; k++) {
      u64 v;
      REQUIRE(sys_map_lookup_elem(m.get(), &k, &v) == 0);
      CHECK(v / 1000000 == k);
    }
  });
}

TEST_CASE("percpu_hash: concurrent per-vCPU counters on real threads", "[bpfvm][map][hash][native]") {
  emu::Machine mach(config(emu::Mode::native, 4));
  auto m = make_map(BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 4);
  u32 k = 1;
  const u64 zero[4] = {};
  mach.exec([&] { REQUIRE(sys_map_update_elem(m.get(), &k, zero) == 0); });
  for (int cpu = 0; cpu < 4; cpu++) {
    emu::TaskOptions o;
    o.cpu = cpu;
    mach.spawn("inc" + std::to_string(cpu), [&] {
      emu::KernelEntry ke;
      for (int i = 0; i < 5000; i++) {
        rcu_read_guard g;
        // Only this vCPU touches its copy: a plain increment is race-free.
        (*static_cast<u64 *>(m->map_lookup_elem(&k)))++;
      }
    }, o);
  }
  mach.run();
  mach.exec([&] {
    u64 all[4];
    REQUIRE(sys_map_lookup_elem(m.get(), &k, all) == 0);
    for (int cpu = 0; cpu < 4; cpu++) CHECK(all[cpu] == 5000);
  });
}
