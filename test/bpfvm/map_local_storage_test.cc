// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/map_local_storage_test.cc: task and cgroup local storage: creation checks, get with
// and without BPF_LOCAL_STORAGE_GET_F_CREATE, per-task values, update flags, delete, map free.
#include "shim/bug.h"
#undef WARN
#include <catch2/catch.hpp>

#include <cstring>

#include "bpfvm/map_local_storage.h"
#include "shim/errno.h"
#include "shim/machine.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;

namespace {

std::unique_ptr<bpf_map> make(u32 type, u32 value = 8, s32 lock = -1) {
  BpfMapAttr a{type, 4, value, 0, BPF_F_NO_PREALLOC, "ls", lock};
  auto m = bpf_map_create(a);
  REQUIRE(m.ok());
  return std::move(*m);
}

int create_errno(u32 key, u32 value, u32 max, u32 flags) {
  BpfMapAttr a{BPF_MAP_TYPE_TASK_STORAGE, key, value, max, flags, "ls", -1};
  return bpf_status_errno(bpf_map_create(a).status());
}

}  // namespace

TEST_CASE("local storage: creation checks", "[bpfvm][map][storage]") {
  CHECK(create_errno(4, 8, 0, BPF_F_NO_PREALLOC) == 0);
  CHECK(create_errno(4, 8, 0, 0) == -EINVAL);   // must be BPF_F_NO_PREALLOC
  CHECK(create_errno(4, 8, 1, BPF_F_NO_PREALLOC) == -EINVAL);  // no max_entries
  CHECK(create_errno(8, 8, 0, BPF_F_NO_PREALLOC) == -EINVAL);  // key is an int (fd)
  CHECK(create_errno(4, 0, 0, BPF_F_NO_PREALLOC) == -EINVAL);
  CHECK(create_errno(4, 70000, 0, BPF_F_NO_PREALLOC) == -E2BIG);
}

TEST_CASE("task storage: one value per task, created on demand", "[bpfvm][map][storage]") {
  emu::Machine mach(config(emu::Mode::simulated, 2));
  auto m = make(BPF_MAP_TYPE_TASK_STORAGE);
  auto other = make(BPF_MAP_TYPE_TASK_STORAGE);
  task_struct *t1 = nullptr;
  mach.exec([&] {
    t1 = current;
    CHECK(bpf_task_storage_get(m.get(), current, nullptr, 0) == nullptr);
    CHECK(bpf_task_storage_get(m.get(), current, nullptr, 2) == nullptr);  // unknown flag
    CHECK(bpf_task_storage_get(m.get(), nullptr, nullptr, BPF_LOCAL_STORAGE_GET_F_CREATE) == nullptr);
    auto *v = static_cast<u64 *>(bpf_task_storage_get(m.get(), current, nullptr,
                                                      BPF_LOCAL_STORAGE_GET_F_CREATE));
    REQUIRE(v);
    CHECK(*v == 0);
    *v = 5;
    CHECK(bpf_task_storage_get(m.get(), current, nullptr, 0) == v);
    CHECK(bpf_task_storage_get(other.get(), current, nullptr, 0) == nullptr);  // per map
    const u64 init = 77;
    auto *o = static_cast<u64 *>(bpf_task_storage_get(other.get(), current, &init,
                                                      BPF_LOCAL_STORAGE_GET_F_CREATE));
    REQUIRE(o);
    CHECK(*o == 77);
    CHECK(bpf_local_storage_count(m.get()) == 1);
  });
  mach.exec([&] {
    CHECK(current != t1);
    CHECK(bpf_task_storage_get(m.get(), current, nullptr, 0) == nullptr);  // per task
    u64 out = 0;
    CHECK(sys_task_storage_lookup(m.get(), t1, &out) == 0);
    CHECK(out == 5);
    u64 v = 9;
    CHECK(sys_task_storage_update(m.get(), current, &v, BPF_EXIST) == -ENOENT);
    CHECK(sys_task_storage_update(m.get(), current, &v, BPF_NOEXIST) == 0);
    CHECK(sys_task_storage_update(m.get(), current, &v, BPF_NOEXIST) == -EEXIST);
    CHECK(sys_task_storage_update(m.get(), current, &v, BPF_F_LOCK) == -EINVAL);
    CHECK(sys_task_storage_update(m.get(), current, &v, 7) == -EINVAL);
    CHECK(bpf_local_storage_count(m.get()) == 2);
    CHECK(bpf_task_storage_delete(m.get(), t1) == 0);
    CHECK(bpf_task_storage_delete(m.get(), t1) == -ENOENT);
    CHECK(bpf_task_storage_delete(m.get(), nullptr) == -EINVAL);
    CHECK(sys_task_storage_lookup(m.get(), t1, &out) == -ENOENT);
    CHECK(bpf_local_storage_count(m.get()) == 1);
    // The key-based commands take a pidfd in the kernel: not modelled.
    u32 key = 1;
    CHECK(sys_map_lookup_elem(m.get(), &key, &out) == -EOPNOTSUPP);
    CHECK(sys_map_get_next_key(m.get(), nullptr, &key) == -ENOTSUPP);
  });
  other.reset();  // freeing a map drops its values from every task
  mach.exec([&] { CHECK(bpf_local_storage_count(m.get()) == 1); });
}

TEST_CASE("cgroup storage: keyed by an opaque cgroup id", "[bpfvm][map][storage]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto m = make(BPF_MAP_TYPE_CGRP_STORAGE_, 16, 0);  // value starts with a bpf_spin_lock
    CHECK(bpf_cgrp_storage_get(m.get(), 0, nullptr, BPF_LOCAL_STORAGE_GET_F_CREATE) == nullptr);
    auto *v = static_cast<u8 *>(bpf_cgrp_storage_get(m.get(), 0x1000, nullptr,
                                                     BPF_LOCAL_STORAGE_GET_F_CREATE));
    REQUIRE(v);
    CHECK(bpf_cgrp_storage_get(m.get(), 0x2000, nullptr, 0) == nullptr);
    u8 in[16];
    std::memset(in, 0x5a, sizeof(in));
    CHECK(sys_cgrp_storage_update(m.get(), 0x1000, in, BPF_EXIST | BPF_F_LOCK) == 0);
    CHECK(v[0] == 0);  // the lock word is left alone
    CHECK(v[8] == 0x5a);
    u8 out[16];
    CHECK(sys_cgrp_storage_lookup(m.get(), 0x1000, out, BPF_F_LOCK) == 0);
    CHECK(out[4] == 0x5a);
    CHECK(out[0] == 0);
    bpf_cgrp_storage_free(0x1000);  // the cgroup goes away
    CHECK(sys_cgrp_storage_lookup(m.get(), 0x1000, out) == -ENOENT);
    CHECK(bpf_cgrp_storage_delete(m.get(), 0x1000) == -ENOENT);
    CHECK(bpf_local_storage_count(m.get()) == 0);
  });
}
