// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/map_test_util.h: creating maps in the map tests (array, hash): one that must be
// created, and the errno of one that must not.
#pragma once

#include <catch2/catch.hpp>

#include <memory>

#include "bpfvm/map.h"

namespace umemcg::test {

// A map of @type that bpf_map_create() accepts (the test fails otherwise); @lock is the
// bpf_spin_lock field's offset in the value, -1 for none.
inline std::unique_ptr<bpf_map> make_map(u32 type, u32 key, u32 value, u32 max, u32 flags = 0,
                                         s32 lock = -1) {
  BpfMapAttr a{type, key, value, max, flags, "t", lock};
  auto m = bpf_map_create(a);
  REQUIRE(m.ok());
  return std::move(*m);
}

// The errno bpf_map_create() refuses such a map with (0 when it creates it).
inline int map_create_errno(u32 type, u32 key, u32 value, u32 max, u32 flags = 0) {
  BpfMapAttr a{type, key, value, max, flags, "t", -1};
  return bpf_status_errno(bpf_map_create(a).status());
}

}  // namespace umemcg::test
