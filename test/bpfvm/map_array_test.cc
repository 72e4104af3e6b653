// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/map_array_test.cc: array and per-CPU array maps: creation checks, update flags,
// bounds, get_next_key, per-vCPU copies, freeze, BPF_F_LOCK and the spin-lock field.
#include "shim/bug.h"
#undef WARN
#include <catch2/catch.hpp>

#include <cstring>

#include "bpfvm/map.h"
#include "shim/errno.h"
#include "shim/machine.h"
#include "test/bpfvm/map_test_util.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;
using umemcg::test::make_map;
using umemcg::test::map_create_errno;

TEST_CASE("array: creation checks", "[bpfvm][map][array]") {
  CHECK(map_create_errno(BPF_MAP_TYPE_ARRAY, 4, 8, 4) == 0);
  CHECK(map_create_errno(BPF_MAP_TYPE_ARRAY, 8, 8, 4) == -EINVAL);   // key must be u32
  CHECK(map_create_errno(BPF_MAP_TYPE_ARRAY, 4, 0, 4) == -EINVAL);   // no value
  CHECK(map_create_errno(BPF_MAP_TYPE_ARRAY, 4, 8, 0) == -EINVAL);   // no entries
  CHECK(map_create_errno(BPF_MAP_TYPE_ARRAY, 4, 8, 4, BPF_F_NO_PREALLOC) == -EINVAL);
  CHECK(map_create_errno(BPF_MAP_TYPE_ARRAY, 4, 8, 4, BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG) == -EINVAL);
  CHECK(map_create_errno(BPF_MAP_TYPE_ARRAY, 4, 8, 0x40000000) == -ENOMEM);  // 8 GiB
  CHECK(map_create_errno(9999, 4, 8, 4) == -ENOTSUPP);
  // Per-CPU maps need the machine's vCPUs.
  CHECK(map_create_errno(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4) == -EINVAL);
  emu::Machine m(config(emu::Mode::simulated, 2));
  CHECK(map_create_errno(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4) == 0);
  CHECK(map_create_errno(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 40000, 4) == -E2BIG);
  CHECK(map_create_errno(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 4, BPF_F_MMAPABLE) == -EINVAL);
}

TEST_CASE("array: elements always exist; flags and bounds", "[bpfvm][map][array]") {
  auto m = make_map(BPF_MAP_TYPE_ARRAY, 4, 12, 3);
  u32 k = 1;
  u8 v[12], out[12];
  std::memset(v, 0xab, sizeof(v));
  CHECK(sys_map_lookup_elem(m.get(), &k, out) == 0);
  CHECK(out[0] == 0);                                            // zero-filled
  CHECK(sys_map_update_elem(m.get(), &k, v, BPF_NOEXIST) == -EEXIST);
  CHECK(sys_map_update_elem(m.get(), &k, v, BPF_EXIST) == 0);
  CHECK(sys_map_update_elem(m.get(), &k, v, BPF_EXIST + 1) == -EINVAL);
  CHECK(sys_map_lookup_elem(m.get(), &k, out) == 0);
  CHECK(std::memcmp(out, v, 12) == 0);
  u32 big = 3;
  CHECK(sys_map_update_elem(m.get(), &big, v, BPF_ANY) == -E2BIG);
  CHECK(sys_map_lookup_elem(m.get(), &big, out) == -ENOENT);
  CHECK(sys_map_delete_elem(m.get(), &k) == -EINVAL);
  CHECK(sys_map_lookup_elem(m.get(), &k, out, 8) == -EINVAL);           // unknown flag
  CHECK(sys_map_lookup_elem(m.get(), &k, out, BPF_F_LOCK) == -EINVAL);  // no spin lock
  // The program side sees the value in place, 8-byte aligned.
  void *p = m->map_lookup_elem(&k);
  REQUIRE(p);
  CHECK((uintptr_t)p % 8 == 0);
  CHECK(std::memcmp(p, v, 12) == 0);
  CHECK(m->map_lookup_elem(&big) == nullptr);
}

TEST_CASE("array: get_next_key walks indices and restarts from a missing key", "[bpfvm][map][array]") {
  auto m = make_map(BPF_MAP_TYPE_ARRAY, 4, 4, 3);
  u32 next = 99;
  CHECK(sys_map_get_next_key(m.get(), nullptr, &next) == 0);
  CHECK(next == 0);
  u32 k = 0;
  CHECK(sys_map_get_next_key(m.get(), &k, &next) == 0);
  CHECK(next == 1);
  k = 2;
  CHECK(sys_map_get_next_key(m.get(), &k, &next) == -ENOENT);
  k = 77;
  CHECK(sys_map_get_next_key(m.get(), &k, &next) == 0);
  CHECK(next == 0);
}

TEST_CASE("array: freeze stops user writes; direct value address", "[bpfvm][map][array]") {
  auto m = make_map(BPF_MAP_TYPE_ARRAY, 4, 16, 1, BPF_F_RDONLY_PROG);
  u32 k = 0;
  u8 v[16] = {1, 2, 3};
  CHECK(sys_map_update_elem(m.get(), &k, v) == 0);
  CHECK(sys_map_freeze(m.get()) == 0);
  CHECK(sys_map_freeze(m.get()) == -EBUSY);
  CHECK(sys_map_update_elem(m.get(), &k, v) == -EPERM);
  CHECK(sys_map_delete_elem(m.get(), &k) == -EPERM);
  u8 out[16];
  CHECK(sys_map_lookup_elem(m.get(), &k, out) == 0);  // reads still work
  u64 addr = 0;
  CHECK(m->map_direct_value_addr(&addr, 2) == 0);
  CHECK(*reinterpret_cast<u8 *>(addr) == 3);
  CHECK(m->map_direct_value_addr(&addr, 16) == -EINVAL);
  std::vector<BpfMapRegion> r;
  m->static_regions(&r);
  REQUIRE(r.size() == 1);
  CHECK_FALSE(r[0].writable);  // BPF_F_RDONLY_PROG: programs may only read
  auto multi = make_map(BPF_MAP_TYPE_ARRAY, 4, 16, 2);
  CHECK(multi->map_direct_value_addr(&addr, 0) == -ENOTSUPP);
}

TEST_CASE("array: a spin lock field survives copies; BPF_F_LOCK", "[bpfvm][map][array]") {
  // value: { struct bpf_spin_lock lock; u32 pad; u64 x; }
  auto m = make_map(BPF_MAP_TYPE_ARRAY, 4, 16, 1, 0, 0);
  u32 k = 0;
  u8 v[16];
  std::memset(v, 0x11, sizeof(v));
  CHECK(sys_map_update_elem(m.get(), &k, v, BPF_F_LOCK) == 0);
  auto *val = static_cast<u8 *>(m->map_lookup_elem(&k));
  CHECK(val[0] == 0);  // the lock word is not overwritten by the copy
  CHECK(val[4] == 0x11);
  u8 out[16];
  std::memset(out, 0xff, sizeof(out));
  CHECK(sys_map_lookup_elem(m.get(), &k, out, BPF_F_LOCK) == 0);
  CHECK(out[0] == 0);  // the lock field reads back as zero
  CHECK(out[8] == 0x11);
  CHECK(sys_map_freeze(m.get()) == -ENOTSUPP);  // maps with a spin lock cannot be frozen
  BpfMapAttr bad{BPF_MAP_TYPE_ARRAY, 4, 16, 1, 0, "t", 14};
  CHECK(bpf_status_errno(bpf_map_create(bad).status()) == -EINVAL);
}

TEST_CASE("percpu_array: one copy per vCPU", "[bpfvm][map][array]") {
  emu::Machine m(config(emu::Mode::simulated, 3));
  auto map = make_map(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 4, 2);
  CHECK(map->sys_value_size() == 3 * 8);
  for (int cpu = 0; cpu < 3; cpu++) {
    m.exec([&] {
      u32 k = 1;
      u32 v = 100 + cpu;
      CHECK(map->map_update_elem(&k, &v, BPF_ANY) == 0);
      CHECK(*static_cast<u32 *>(map->map_lookup_elem(&k)) == (u32)(100 + cpu));
    }, cpu);
  }
  u32 k = 1;
  u64 all[3];
  CHECK(sys_map_lookup_elem(map.get(), &k, all) == 0);
  CHECK((u32)all[0] == 100);
  CHECK((u32)all[1] == 101);
  CHECK((u32)all[2] == 102);
  const u64 in[3] = {7, 8, 9};
  CHECK(sys_map_update_elem(map.get(), &k, in, BPF_NOEXIST) == -EEXIST);
  CHECK(sys_map_update_elem(map.get(), &k, in, BPF_F_LOCK) == -EINVAL);
  CHECK(sys_map_update_elem(map.get(), &k, in) == 0);
  m.exec([&] { CHECK(*static_cast<u32 *>(map->map_lookup_elem(&k)) == 9); }, 2);
}
