// SPDX-License-Identifier: GPL-2.0-only
// test/mm/bpf_test_util.h: helpers of the memcg BPF tests: loading the clang-compiled test
// objects against the process's BPF kernel environment (memcg registered), reading a map
// value (global data sections included) as a struct, and attaching their tracing programs.
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bpfvm/attach_tracing.h"
#include "bpfvm/kernel_env.h"
#include "bpfvm/map.h"
#include "bpfvm/runtime.h"
#include "mm/bpf_memcontrol.h"

namespace umemcg::test {

inline std::string bpf_prog_path(const char *name) {
  return std::string(UMEMCG_BPF_PROGS_DIR) + "/" + name;
}

// Loads and links test/progs/<name> with memcg's kfuncs and layouts (CO-RE).
inline std::unique_ptr<emu::BpfLoadedObject> open_bpf_object(const char *name) {
  bpf_memcontrol_init();
  auto lo = emu::BpfLoadedObject::open(bpf_prog_path(name), emu::bpf_kernel_load_options());
  INFO(name << ": " << lo.status().message());
  REQUIRE(lo.ok());
  return std::move(*lo);
}

// The value of key `key` of map `map` (".bss", ".data", or a BTF-defined array).
inline std::vector<u8> bpf_map_value(emu::BpfLoadedObject &lo, const char *map, u32 key = 0) {
  bpf_map *m = lo.find_map(map);
  REQUIRE(m);
  std::vector<u8> v(m->value_size);
  REQUIRE(sys_map_lookup_elem(m, &key, v.data()) == 0);
  return v;
}

// The start of a map value as T (the test objects keep one struct at offset 0 of .bss).
template <typename T>
T bpf_map_struct(emu::BpfLoadedObject &lo, const char *map, u32 key = 0) {
  const std::vector<u8> v = bpf_map_value(lo, map, key);
  REQUIRE(v.size() >= sizeof(T));
  T t;
  std::memcpy(&t, v.data(), sizeof(T));
  return t;
}

// Attaches every fentry and fexit program of @lo; the links detach when destroyed.
inline std::vector<std::unique_ptr<emu::BpfTracingLink>> attach_tracing(emu::BpfLoadedObject &lo) {
  std::vector<std::unique_ptr<emu::BpfTracingLink>> links;
  for (emu::BpfLoadedProg &p : lo.programs()) {
    const emu::ProgKind k = p.spec().kind;
    if (k != emu::ProgKind::kFentry && k != emu::ProgKind::kFexit) continue;
    auto l = emu::BpfTracingLink::attach(p);
    INFO(p.name() << ": " << l.status().message());
    REQUIRE(l.ok());
    links.push_back(std::move(*l));
  }
  return links;
}

// memcg_policy.bpf.c's .bss.
struct policy_stats {
  u64 violations, deferred, high_events;
  s64 reclaimed;
};

}  // namespace umemcg::test
