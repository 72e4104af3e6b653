// SPDX-License-Identifier: GPL-2.0-only
// test/mm/bpf_tcp_ops_test.cc: the second cgroup struct_ops type, bpf_tcp_ops
// (CGROUP_TCP_SOCK_OPS), end to end with the clang-compiled test/progs/tcp_ops.bpf.c:
// skmem_charged runs for a socket charge of the cgroup and its descendants (effective array),
// beside a bpf_memcg_ops attached to the same cgroup; query per attach type reports only that
// type's maps (the posted series' patch 1); link update replaces the map in place; detach;
// sleepable members refused; socket charges racing link updates, detaches and attaches, seeded
// in simulated mode and on real threads.
#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <vector>

#undef WARN
#include "kernel/cgroup.h"
#include "mm/bpf_memcg_ops.h"
#include "mm/bpf_tcp_ops.h"
#include "mm/memcontrol_internal.h"
#include "test/mm/bpf_test_util.h"
#include "shim/sched.h"
#include "test/support/machine_fixture.h"
#include "test/support/memcg_env.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

// tcp_ops.bpf.c's .bss.
struct tcp_stats {
  u64 calls, pages, failed, last_cgroup_id, calls2;
};

tcp_stats read_stats(emu::BpfLoadedObject &lo) { return bpf_map_struct<tcp_stats>(lo, ".bss"); }

std::vector<std::string> query(mem_cgroup *m, cgroup_bpf_attach_type atype, u32 qflags,
                               u32 *attach_flags = nullptr) {
  auto r = BpfCgroupStructOpsLink::query(m, atype, qflags, attach_flags);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return *r;
}

using names = std::vector<std::string>;

// A socket charge and its uncharge (the memcg's counters are back where they were).
bool sk_charge(mem_cgroup *m, unsigned int nr, gfp_t gfp = GFP_KERNEL) {
  const bool ok = mem_cgroup_sk_charge(m, nr, gfp);
  if (ok) mem_cgroup_sk_uncharge(m, nr);
  return ok;
}

}  // namespace

TEST_CASE("bpf_tcp_ops: skmem_charged runs per cgroup beside bpf_memcg_ops; query per type",
          "[mm][bpf][struct_ops]") {
  MemcgEnv env(v2_params());
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *c = env.mkdir(p, "c");
  auto lo = open_bpf_object("tcp_ops.bpf.o");
  env.run([&] {
    auto lp = bpf_tcp_ops_attach(*lo, "tcp_count", p, CGROUP_BPF_F_ALLOW_MULTI);
    INFO(lp.status().message());
    REQUIRE(lp.ok());
    auto lc = bpf_tcp_ops_attach(*lo, "tcp_count2", c, CGROUP_BPF_F_ALLOW_MULTI);
    REQUIRE(lc.ok());
    auto lm = BpfMemcgOpsLink::attach(*lo, "memcg_quiet", c, CGROUP_BPF_F_ALLOW_OVERRIDE);
    INFO(lm.status().message());
    REQUIRE(lm.ok());

    // A charge in c runs c's and p's skmem_charged; one in p only p's; the root's none.
    REQUIRE(sk_charge(c, 4));
    tcp_stats s = read_stats(*lo);
    CHECK(s.calls == 1);
    CHECK(s.calls2 == 1);
    CHECK(s.pages == 4);
    CHECK(s.last_cgroup_id == c->css.cgroup->id);
    REQUIRE(sk_charge(p, 2));
    s = read_stats(*lo);
    CHECK(s.calls == 2);
    CHECK(s.calls2 == 1);
    CHECK(s.pages == 6);
    CHECK(s.last_cgroup_id == p->css.cgroup->id);
    REQUIRE(sk_charge(root_mem_cgroup, 2));
    CHECK(read_stats(*lo).calls == 2);
    // A failed charge runs the member too, with charged == 0 (c's usage is its stocked batch,
    // below the new max).
    REQUIRE(page_counter_set_max(&c->memory, 100) == 0);
    CHECK_FALSE(sk_charge(c, 1000, GFP_NOWAIT));
    s = read_stats(*lo);
    CHECK(s.calls == 3);
    CHECK(s.calls2 == 2);  // c's own skmem_charged ran too
    CHECK(s.failed == 1);
    CHECK(s.pages == 6);
    REQUIRE(page_counter_set_max(&c->memory, PAGE_COUNTER_MAX) == 0);

    // Query per attach type: each reports its own maps, counts and flags.
    u32 flags = 99;
    CHECK(query(c, CGROUP_TCP_SOCK_OPS, 0, &flags) == names{"tcp_count2"});
    CHECK(flags == CGROUP_BPF_F_ALLOW_MULTI);
    CHECK(query(c, CGROUP_TCP_SOCK_OPS, CGROUP_BPF_F_QUERY_EFFECTIVE) ==
          names{"tcp_count2", "tcp_count"});
    CHECK(query(c, CGROUP_MEMCG_OPS, 0, &flags) == names{"memcg_quiet"});
    CHECK(flags == CGROUP_BPF_F_ALLOW_OVERRIDE);
    CHECK(query(c, CGROUP_MEMCG_OPS, CGROUP_BPF_F_QUERY_EFFECTIVE) == names{"memcg_quiet"});
    CHECK(query(p, CGROUP_MEMCG_OPS, 0, &flags).empty());
    CHECK(flags == 0);
    CHECK(query(p, CGROUP_TCP_SOCK_OPS, 0) == names{"tcp_count"});
    // The memcg dispatcher sees only its own type.
    CHECK(bpf_memcg_high_policy(c, c, GFP_KERNEL) == BPF_MEMCG_HIGH_NO_OPINION);
    CHECK(BpfCgroupStructOpsLink::query(c, CGROUP_TCP_SOCK_OPS, 1u << 4, nullptr).status().code() ==
          absl::StatusCode::kFailedPrecondition);

    // Detaching c's bpf_tcp_ops leaves its bpf_memcg_ops and p's bpf_tcp_ops.
    (*lc)->detach();
    CHECK(query(c, CGROUP_TCP_SOCK_OPS, 0).empty());
    CHECK(query(c, CGROUP_TCP_SOCK_OPS, CGROUP_BPF_F_QUERY_EFFECTIVE) == names{"tcp_count"});
    CHECK(query(c, CGROUP_MEMCG_OPS, 0) == names{"memcg_quiet"});
    REQUIRE(sk_charge(c, 1));
    s = read_stats(*lo);
    CHECK(s.calls == 4);
    CHECK(s.calls2 == 2);  // c's own was detached
    (*lp)->detach();
    REQUIRE(sk_charge(c, 1));
    CHECK(read_stats(*lo).calls == 4);
    CHECK_FALSE(cgroup_bpf_enabled(CGROUP_TCP_SOCK_OPS));
    CHECK(cgroup_bpf_enabled(CGROUP_MEMCG_OPS));
  });
  env.release_all();
  env.finish();
}

TEST_CASE("bpf_tcp_ops: link update replaces the map in place; errors", "[mm][bpf][struct_ops]") {
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  auto lo = open_bpf_object("tcp_ops.bpf.o");
  env.run([&] {
    auto l = bpf_tcp_ops_attach(*lo, "tcp_count", a, 0);
    REQUIRE(l.ok());
    BpfCgroupStructOpsLink &link = **l;
    REQUIRE(sk_charge(a, 1));
    CHECK(read_stats(*lo).calls == 1);
    absl::Status st = link.update(*lo, "tcp_count2");
    INFO(st.message());
    REQUIRE(st.ok());
    CHECK(link.attached());
    CHECK(link.ops().map_name == "tcp_count2");
    CHECK(query(a, CGROUP_TCP_SOCK_OPS, 0) == names{"tcp_count2"});
    REQUIRE(sk_charge(a, 1));
    tcp_stats s = read_stats(*lo);
    CHECK(s.calls == 1);
    CHECK(s.calls2 == 1);
    // A map of another struct_ops type, or none: refused, the attached map stays.
    st = link.update(*lo, "memcg_quiet");
    CHECK(st.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(st.message()), Catch::Contains("-EINVAL"));
    CHECK(link.update(*lo, "nope").code() == absl::StatusCode::kNotFound);
    CHECK(query(a, CGROUP_TCP_SOCK_OPS, 0) == names{"tcp_count2"});
    // A sleepable member program is refused (check_member), on attach and on update.
    auto sleepy = bpf_tcp_ops_attach(*lo, "tcp_sleepy", a, 0);
    CHECK(sleepy.status().code() == absl::StatusCode::kPermissionDenied);
    CHECK(link.update(*lo, "tcp_sleepy").code() == absl::StatusCode::kPermissionDenied);
    // A type that is not a cgroup struct_ops type has no attach type.
    auto notcg = BpfCgroupStructOpsLink::attach(*lo, "tcp_count", "tcp_congestion_ops", a, 0);
    CHECK_THAT(std::string(notcg.status().message()),
               Catch::Contains("not a cgroup struct_ops type"));
    // A bpf_memcg_ops map does not attach as bpf_tcp_ops.
    auto wrong = bpf_tcp_ops_attach(*lo, "memcg_quiet", a, 0);
    CHECK_THAT(std::string(wrong.status().message()), Catch::Contains("is not a bpf_tcp_ops"));
    // Detached: no program runs, and an update has no link to replace.
    link.detach();
    REQUIRE(sk_charge(a, 1));
    CHECK(read_stats(*lo).calls2 == 1);
    st = link.update(*lo, "tcp_count");
    CHECK_THAT(std::string(st.message()), Catch::Contains(std::to_string(-ENOLINK)));
  });
  // A link whose cgroup went offline is defunct: update fails with -ENOLINK.
  std::unique_ptr<BpfCgroupStructOpsLink> keep;
  env.run([&] {
    auto l = bpf_tcp_ops_attach(*lo, "tcp_count", a, 0);
    REQUIRE(l.ok());
    keep = std::move(*l);
  });
  CHECK(env.rmdir(a) == 0);
  env.run([&] {
    CHECK_FALSE(keep->attached());
    CHECK_THAT(std::string(keep->update(*lo, "tcp_count2").message()),
               Catch::Contains(std::to_string(-ENOLINK)));
    keep.reset();
  });
  env.release_all();
  env.finish();
}

TEST_CASE("bpf_tcp_ops: socket charges race link update, detach and attach",
          "[mm][bpf][struct_ops][race]") {
  for (emu::Mode mode : kBothModes) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      if (mode == emu::Mode::native && seed > 1) continue;
      DYNAMIC_SECTION(mode_name(mode) << " seed " << seed) {
        MemcgEnv env(v2_params(), mode, 4, seed);
        mem_cgroup *c = env.mkdir(nullptr, "c");
        auto lo = open_bpf_object("tcp_ops.bpf.o");
        std::atomic<int> bad{0}, charges{0};
        // The charger: one-page socket charges, each given back.
        env.machine().spawn("charger", [&] {
          for (int i = 0; i < 100; i++) {
            emu::KernelEntry k;
            if (sk_charge(c, 1)) charges++;
            cond_resched();
          }
        }, {.cpu = 0});
        // The linker: one non-MULTI link on c, updated back and forth, detached, re-attached.
        env.machine().spawn("linker", [&] {
          for (int round = 0; round < 10; round++) {
            emu::KernelEntry k;
            auto l = bpf_tcp_ops_attach(*lo, "tcp_count", c, 0);
            if (!l.ok()) {
              bad++;
              continue;
            }
            cond_resched();
            if (!(*l)->update(*lo, "tcp_count2").ok()) bad++;
            cond_resched();
            if (!(*l)->update(*lo, "tcp_count").ok()) bad++;
            cond_resched();
            (*l)->detach();
            cond_resched();
          }
        }, {.cpu = 1});
        REQUIRE_FALSE(env.machine().run().deadlock);
        CHECK(bad == 0);
        CHECK(charges == 100);
        // At most one skmem_charged per charge (c's effective array holds one map at a time),
        // every run a successful charge.
        const tcp_stats s = read_stats(*lo);
        CHECK(s.calls + s.calls2 <= 100);
        CHECK(s.pages == s.calls);
        CHECK(s.failed == 0);
        env.run([&] {
          CHECK_FALSE(cgroup_bpf_enabled(CGROUP_TCP_SOCK_OPS));
          CHECK(query(c, CGROUP_TCP_SOCK_OPS, 0).empty());
        });
        env.release_all();
        env.finish();
      }
    }
  }
}
