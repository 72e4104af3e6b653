// SPDX-License-Identifier: GPL-2.0-only
// test/mm/bpf_memcontrol_report_test.cc: the record of a task's memcg kfunc calls
// (mm/bpf_memcontrol_report.h): each NULL or error gets the reason the kfunc's own conditions
// give, for the cases a test-run from the command line does not reach (a removed cgroup still
// referenced, a NULL css, a refused swappiness); recording only while armed.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "mm/bpf_memcontrol.h"
#include "mm/bpf_memcontrol_report.h"
#include "test/support/memcg_env.h"

using namespace umemcg;
using umemcg::test::MemcgEnv;
using umemcg::test::v2_params;

TEST_CASE("bpf_memcontrol_report: reasons from the kfuncs' conditions", "[mm][bpf]") {
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  const u64 id = a->css.cgroup->id;
  env.run([&] { css_get(&a->css); });  // keeps memcg a allocated across the rmdir
  REQUIRE(env.rmdir(a) == 0);
  env.run([&] {
    CHECK_FALSE(bpf_memcg_report_armed());
    bpf_memcg_report_start();
    CHECK(bpf_memcg_report_armed());
    // Offline: its id left memcg's id table (mem_cgroup_id_remove), so no cgroup has it.
    cgroup *gone = bpf_cgroup_from_id(id);
    CHECK(gone == nullptr);
    bpf_memcg_report_cgroup_from_id(id, gone);
    bpf_memcg_report_cgroup_from_id(4242, bpf_cgroup_from_id(4242));
    bpf_memcg_report_get(nullptr, bpf_get_mem_cgroup(nullptr));
    const long r = bpf_proactive_reclaim(root_mem_cgroup, PAGE_SIZE, 300);
    CHECK(r == -EINVAL);
    bpf_memcg_report_reclaim(root_mem_cgroup, PAGE_SIZE, 300, r);
    bpf_memcg_report_root(bpf_get_root_mem_cgroup());
    const std::vector<bpf_memcg_kfunc_record> recs = bpf_memcg_report_stop();
    CHECK_FALSE(bpf_memcg_report_armed());
    REQUIRE(recs.size() == 5);
    CHECK(recs[0].kind == bpf_memcg_report_kind::lacks);
    CHECK(recs[0].call == "bpf_cgroup_from_id(" + std::to_string(id) + ")");
    CHECK(recs[0].result == "NULL");
    CHECK(recs[0].note == "no cgroup has id " + std::to_string(id));
    CHECK(recs[1].kind == bpf_memcg_report_kind::lacks);
    CHECK(recs[1].note == "no cgroup has id 4242");
    CHECK(recs[2].kind == bpf_memcg_report_kind::bad_arg);
    CHECK(recs[2].note == "the css argument is NULL");
    CHECK(recs[3].kind == bpf_memcg_report_kind::bad_arg);
    CHECK(recs[3].result == "-EINVAL");
    CHECK(recs[3].note == "swappiness 300 is not -1, 0..200 or 201");
    CHECK(recs[4].kind == bpf_memcg_report_kind::ok);
    CHECK(recs[4].note.empty());
    css_put(&a->css);
  });
  env.finish();
}
