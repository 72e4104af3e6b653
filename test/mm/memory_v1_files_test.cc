// SPDX-License-Identifier: GPL-2.0-only
// test/mm/memory_v1_files_test.cc: the cgroup v1 memory control files (mem_cgroup_legacy_files[]).
#include "test/mm/memcg_files_fixture.h"

#include "shim/errno.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

constexpr unsigned long P = PAGE_SIZE;
const std::string kUnlimited = std::to_string(PAGE_COUNTER_MAX * P) + "\n";

}  // namespace

TEST_CASE("memory v1 files: the table", "[mm][memcg][files][v1]") {
  const char *names[] = {"usage_in_bytes",
                         "max_usage_in_bytes",
                         "limit_in_bytes",
                         "soft_limit_in_bytes",
                         "failcnt",
                         "stat",
                         "force_empty",
                         "use_hierarchy",
                         "cgroup.event_control",
                         "swappiness",
                         "move_charge_at_immigrate",
                         "oom_control",
                         "pressure_level",
                         "numa_stat",
                         "kmem.limit_in_bytes",
                         "kmem.usage_in_bytes",
                         "kmem.failcnt",
                         "kmem.max_usage_in_bytes",
                         "kmem.slabinfo",
                         "kmem.tcp.limit_in_bytes",
                         "kmem.tcp.usage_in_bytes",
                         "kmem.tcp.failcnt",
                         "kmem.tcp.max_usage_in_bytes",
                         "memsw.usage_in_bytes",
                         "memsw.max_usage_in_bytes",
                         "memsw.limit_in_bytes",
                         "memsw.failcnt"};
  int n = 0;
  for (const cftype *c = mem_cgroup_legacy_files; c->name[0]; c++) {
    CHECK(c->name[0] != '\0');
    // Every v1 file is also on the root; cgroup.event_control has no "memory." prefix.
    CHECK(c->flags == (std::string(c->name) == "cgroup.event_control"
                           ? (CFTYPE_NO_PREFIX | CFTYPE_WORLD_WRITABLE)
                           : 0u));
    n++;
  }
  CHECK(n == static_cast<int>(sizeof(names) / sizeof(names[0])));
  for (const char *name : names) {
    INFO(name);
    CHECK(find_cftype(mem_cgroup_legacy_files, name));
  }
}

TEST_CASE("memory.move_charge_at_immigrate: reads 0 and takes only 0",
          "[mm][memcg][files][v1]") {
  WarnCheck wc;
  MemcgEnv env(files_params(true));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    CHECK(read_file(a, "move_charge_at_immigrate") == "0\n");
    CHECK(write_file(a, "move_charge_at_immigrate", "0") == 1);
    CHECK(write_file(a, "move_charge_at_immigrate", "0x0\n") == 4);
    // MOVE_ANON, MOVE_FILE and both used to be accepted; 6.19 refuses every non-zero value.
    CHECK(write_file(a, "move_charge_at_immigrate", "1") == -EINVAL);
    CHECK(write_file(a, "move_charge_at_immigrate", "3") == -EINVAL);
    CHECK(write_file(a, "move_charge_at_immigrate", "4") == -EINVAL);
    CHECK(write_file(a, "move_charge_at_immigrate", "x") == -EINVAL);
    CHECK(write_file(a, "move_charge_at_immigrate", "-1") == -EINVAL);
    CHECK(write_file(root_mem_cgroup, "move_charge_at_immigrate", "0") == 1);
    CHECK(read_file(a, "move_charge_at_immigrate") == "0\n");
  });
  env.finish();
}

TEST_CASE_METHOD(FilesV1C, "memory.limit_in_bytes: parsing, the root, and the memory <= memsw rule",
                 "[mm][memcg][files][v1]") {
  env.run([&] {
    CHECK(read_file(c, "limit_in_bytes") == kUnlimited);
    CHECK(read_file(c, "memsw.limit_in_bytes") == kUnlimited);
    CHECK(write_file(c, "limit_in_bytes", "1M") == 2);
    CHECK(read_file(c, "limit_in_bytes") == bytes(256));
    CHECK(write_file(c, "limit_in_bytes", " 2M\n") == 4);
    CHECK(read_file(c, "limit_in_bytes") == bytes(512));
    CHECK(write_file(c, "limit_in_bytes", "max") == -EINVAL);  // v1's token is "-1"
    CHECK(write_file(c, "limit_in_bytes", "1.5M") == -EINVAL);
    CHECK(read_file(c, "limit_in_bytes") == bytes(512));
    CHECK(write_file(c, "limit_in_bytes", "-1") == 2);
    CHECK(read_file(c, "limit_in_bytes") == kUnlimited);
    CHECK(write_file(root_mem_cgroup, "limit_in_bytes", "1M") == -EINVAL);
    CHECK(write_file(root_mem_cgroup, "memsw.limit_in_bytes", "1M") == -EINVAL);
    CHECK(read_file(root_mem_cgroup, "limit_in_bytes") == kUnlimited);

    CHECK(write_file(c, "limit_in_bytes", "2M") == 2);
    CHECK(write_file(c, "memsw.limit_in_bytes", "1M") == -EINVAL);  // below memory's limit
    CHECK(write_file(c, "memsw.limit_in_bytes", "4M") == 2);
    CHECK(write_file(c, "limit_in_bytes", "8M") == -EINVAL);  // above memsw's limit
    CHECK(write_file(c, "limit_in_bytes", "4M") == 2);        // equal is fine
    CHECK(read_file(c, "memsw.limit_in_bytes") == bytes(1024));
    CHECK(g_files.reclaim_calls == 0);
  });
  env.finish();
}

TEST_CASE_METHOD(FilesV1C,
                 "memory.limit_in_bytes: below usage: drain, reclaim one page at a time, -EBUSY "
                 "without progress, -EINTR on a signal", "[mm][memcg][files][v1]") {
  env.run([&] {
    REQUIRE(env.charge(c, 200) == 0);
    CHECK(read_file(c, "usage_in_bytes") == bytes(200));
    CHECK(read_file(c, "memsw.usage_in_bytes") == bytes(200));

    reset_script(&env, FilesScript::kZero);
    CHECK(write_file(c, "limit_in_bytes", "409600") == -EBUSY);
    CHECK(read_file(c, "limit_in_bytes") == kUnlimited);  // unchanged
    REQUIRE(g_files.reclaim_calls == 1);
    CHECK(g_files.nr[0] == 1);
    CHECK(g_files.opts[0] == MEMCG_RECLAIM_MAY_SWAP);

    reset_script(&env, FilesScript::kZero);
    send_sig_other(current);
    CHECK(write_file(c, "limit_in_bytes", "409600") == -EINTR);
    clear_sig_other(current);
    CHECK(g_files.reclaim_calls == 0);

    reset_script(&env, FilesScript::kFree);  // one page per call
    CHECK(write_file(c, "limit_in_bytes", "409600") == 6);
    CHECK(read_file(c, "limit_in_bytes") == bytes(100));
    CHECK(g_files.reclaim_calls == 100);
    CHECK(page_counter_read(&c->memory) == 100);
    CHECK(page_counter_read(&c->memsw) == 100);

    // memsw above its new limit (50 pages stand for swapped-out ones): reclaim without swap.
    page_counter_charge(&c->memsw, 50);
    reset_script(&env, FilesScript::kZero);
    CHECK(write_file(c, "memsw.limit_in_bytes", "409600") == -EBUSY);
    REQUIRE(g_files.reclaim_calls == 1);
    CHECK(g_files.opts[0] == 0u);  // memsw: swapping would not help
    CHECK(read_file(c, "memsw.limit_in_bytes") == kUnlimited);
    page_counter_uncharge(&c->memsw, 50);
    CHECK(write_file(c, "memsw.limit_in_bytes", "409600") == 6);
    CHECK(read_file(c, "memsw.limit_in_bytes") == bytes(100));
  });
  env.release_all();
  env.finish();
}

TEST_CASE_METHOD(FilesV1C, "memory v1: max_usage_in_bytes and failcnt reset on any write",
                 "[mm][memcg][files][v1]") {
  env.run([&] {
    REQUIRE(env.charge(c, 100) == 0);
    env.uncharge(c, 60);
    CHECK(read_file(c, "max_usage_in_bytes") == bytes(100));
    CHECK(read_file(c, "memsw.max_usage_in_bytes") == bytes(100));
    CHECK(write_file(c, "max_usage_in_bytes", "0") == 1);
    CHECK(read_file(c, "max_usage_in_bytes") == bytes(40));
    CHECK(read_file(c, "memsw.max_usage_in_bytes") == bytes(100));  // its own counter
    CHECK(write_file(c, "memsw.max_usage_in_bytes", "whatever") == 8);
    CHECK(read_file(c, "memsw.max_usage_in_bytes") == bytes(40));

    CHECK(write_file(c, "limit_in_bytes", "409600") == 6);
    CHECK(env.charge(c, 100, GFP_NOWAIT) == -ENOMEM);
    CHECK(env.charge(c, 100, GFP_NOWAIT) == -ENOMEM);
    CHECK(read_file(c, "failcnt") == "2\n");
    CHECK(write_file(c, "failcnt", "") == 0);
    CHECK(read_file(c, "failcnt") == "0\n");
    CHECK(write_file(c, "memsw.failcnt", "1") == 1);
    CHECK(read_file(c, "memsw.failcnt") == "0\n");
    CHECK(g_files.reclaim_calls == 0);  // GFP_NOWAIT never reclaims
  });
  env.release_all();
  env.finish();
}

TEST_CASE_METHOD(FilesV1C, "memory v1: soft_limit_in_bytes, use_hierarchy, swappiness, oom_control",
                 "[mm][memcg][files][v1]") {
  env.run([&] {
    CHECK(read_file(c, "soft_limit_in_bytes") == kUnlimited);
    CHECK(write_file(c, "soft_limit_in_bytes", "1M\n") == 3);
    CHECK(read_file(c, "soft_limit_in_bytes") == bytes(256));
    CHECK(write_file(c, "soft_limit_in_bytes", "max") == -EINVAL);
    CHECK(write_file(c, "soft_limit_in_bytes", "-1") == 2);
    CHECK(read_file(c, "soft_limit_in_bytes") == kUnlimited);
    CHECK(write_file(root_mem_cgroup, "soft_limit_in_bytes", "4096") == 4);  // root allowed

    CHECK(read_file(c, "use_hierarchy") == "1\n");
    CHECK(write_file(c, "use_hierarchy", "1") == 1);
    CHECK(write_file(c, "use_hierarchy", "1\n") == 2);
    CHECK(write_file(c, "use_hierarchy", "0") == -EINVAL);
    CHECK(write_file(c, "use_hierarchy", " 1") == -EINVAL);  // kstrtoull: no blanks skipped
    CHECK(write_file(c, "use_hierarchy", "x") == -EINVAL);
    CHECK(write_file(c, "use_hierarchy", "99999999999999999999") == -ERANGE);

    CHECK(read_file(root_mem_cgroup, "swappiness") == "60\n");
    CHECK(write_file(root_mem_cgroup, "swappiness", "30") == 2);
    CHECK(vm_swappiness == 30);
    CHECK(read_file(c, "swappiness") == "60\n");  // its own, inherited at creation
    CHECK(write_file(c, "swappiness", "150") == 3);
    CHECK(read_file(c, "swappiness") == "150\n");
    CHECK(write_file(c, "swappiness", "201") == -EINVAL);
    CHECK(write_file(c, "swappiness", "-1") == -EINVAL);
    CHECK(read_file(c, "swappiness") == "150\n");

    CHECK(read_file(c, "oom_control") == "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
    CHECK(write_file(c, "oom_control", "1") == 1);
    CHECK(read_file(c, "oom_control") == "oom_kill_disable 1\nunder_oom 0\noom_kill 0\n");
    CHECK(write_file(c, "oom_control", "2") == -EINVAL);
    CHECK(write_file(root_mem_cgroup, "oom_control", "1") == -EINVAL);
    CHECK(write_file(root_mem_cgroup, "oom_control", "0") == -EINVAL);
    memcg_memory_event(c, MEMCG_OOM_KILL);
    CHECK(read_file(c, "oom_control") == "oom_kill_disable 1\nunder_oom 0\noom_kill 1\n");
  });
  // A child inherits swappiness and oom_kill_disable from its parent; a child of the root
  // takes the global swappiness.
  mem_cgroup *g = env.mkdir(c, "g");
  mem_cgroup *d = env.mkdir(nullptr, "d");
  env.run([&] {
    CHECK(read_file(g, "swappiness") == "150\n");
    CHECK(read_file(g, "oom_control") == "oom_kill_disable 1\nunder_oom 0\noom_kill 0\n");
    CHECK(read_file(d, "swappiness") == "30\n");
    CHECK(write_file(root_mem_cgroup, "swappiness", "60") == 2);
  });
  CHECK(vm_swappiness == 60);
  env.finish();
}

TEST_CASE_METHOD(FilesV1C,
                 "memory v1: force_empty reclaims until empty or 16 passes without progress",
                 "[mm][memcg][files][v1]") {
  env.run([&] {
    CHECK(write_file(root_mem_cgroup, "force_empty", "0") == -EINVAL);
    REQUIRE(env.charge(c, 100) == 0);
    reset_script(&env, FilesScript::kZero);
    CHECK(write_file(c, "force_empty", "0") == 1);
    CHECK(g_files.reclaim_calls == MAX_RECLAIM_RETRIES);
    CHECK(page_counter_read(&c->memory) == 100);

    reset_script(&env, FilesScript::kZero);
    send_sig_other(current);
    CHECK(write_file(c, "force_empty", "0") == -EINTR);
    clear_sig_other(current);

    reset_script(&env, FilesScript::kFree);
    CHECK(write_file(c, "force_empty", "1") == 1);
    CHECK(g_files.reclaim_calls == 100);
    CHECK(page_counter_read(&c->memory) == 0);
    CHECK(read_file(c, "force_empty") == "<err -22>");  // write-only
  });
  env.release_all();
  env.finish();
}

TEST_CASE_METHOD(FilesV1C,
                 "memory v1: kmem and tcp files, pressure_level", "[mm][memcg][files][v1]") {
  env.run([&] {
    CHECK(write_file(c, "kmem.limit_in_bytes", "1M") == 2);  // accepted and ignored
    CHECK(read_file(c, "kmem.limit_in_bytes") == kUnlimited);
    CHECK(write_file(c, "kmem.limit_in_bytes", "junk") == -EINVAL);  // still parsed
    CHECK(write_file(root_mem_cgroup, "kmem.limit_in_bytes", "1M") == -EINVAL);
    CHECK(read_file(c, "kmem.usage_in_bytes") == "0\n");
    CHECK(read_file(c, "kmem.failcnt") == "0\n");
    CHECK(read_file(c, "kmem.max_usage_in_bytes") == "0\n");
    CHECK(read_file(c, "kmem.slabinfo") == "");

    CHECK(write_file(c, "kmem.tcp.limit_in_bytes", "1M") == 2);
    CHECK(read_file(c, "kmem.tcp.limit_in_bytes") == bytes(256));
    CHECK(write_file(c, "kmem.tcp.limit_in_bytes", "-1") == 2);
    CHECK(read_file(c, "kmem.tcp.limit_in_bytes") == kUnlimited);
    CHECK(read_file(c, "kmem.tcp.usage_in_bytes") == "0\n");
    CHECK(write_file(c, "kmem.tcp.failcnt", "0") == 1);
    CHECK(write_file(c, "kmem.tcp.max_usage_in_bytes", "0") == 1);

    CHECK(read_file(c, "pressure_level") == "<err -22>");
  });
  env.finish();
}

TEST_CASE_METHOD(FilesV1C,
                 "memory v1: css_reset forgets the v1 limits too", "[mm][memcg][files][v1]") {
  env.run([&] {
    CHECK(write_file(c, "limit_in_bytes", "1M") == 2);
    CHECK(write_file(c, "memsw.limit_in_bytes", "2M") == 2);
    CHECK(write_file(c, "kmem.tcp.limit_in_bytes", "1M") == 2);
    CHECK(write_file(c, "soft_limit_in_bytes", "1M") == 2);
    memory_cgrp_subsys.css_reset(&c->css);
    for (const char *f : {"limit_in_bytes", "memsw.limit_in_bytes", "kmem.tcp.limit_in_bytes",
                          "soft_limit_in_bytes"})
      CHECK(read_file(c, f) == kUnlimited);
  });
  env.finish();
}
