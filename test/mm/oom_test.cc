// SPDX-License-Identifier: GPL-2.0-only
// Tests of the memcg OOM killer over emulated processes (mm/oom_kill.h): the faulting process
// over memory.max is killed, oom_score_adj -1000 is never chosen, memory.oom.group kills the
// group, and the oom/oom_kill/oom_group_kill events.
#include "test/mm/mm_test_util.h"

using namespace umemcg;
using namespace umemcg::test;

TEST_CASE("anon faults over memory.max end in an OOM kill of the biggest process",
          "[mm][oom]") {
  for (const auto &p : {v2_params(false), v2_params(true), v1_params(false)}) {
    WarnCheck wc;
    MemcgEnv env(p);
    mem_cgroup *a = env.mkdir(nullptr, "a");
    int s_big = -1, s_small = -1;
    env.run([&] {
      page_counter_set_max(&a->memory, 200);
      if (do_memsw_account()) page_counter_set_max(&a->memsw, 200);
      completion r1, r2;
      init_completion(&r1);
      init_completion(&r2);
      emu::Process *small = start_anon_holder(a, 20, &r1);
      wait_for_completion(&r1);
      emu::Process *big = start_anon_holder(a, 1000, &r2);
      wait_for_completion(&r2);  // signalled on its way out too
      s_big = emu::process_wait(big);
      CHECK_FALSE(emu::process_exited(small, nullptr));
      emu::process_kill(small);
      s_small = emu::process_wait(small);
    });
    CHECK(s_big == 137);
    CHECK(s_small == 137);
    CHECK(memory_events_read(a, MEMCG_OOM) >= 1);
    CHECK(memory_events_read(a, MEMCG_OOM_KILL) == 1);
    CHECK(memory_events_read(a, MEMCG_MAX) >= 1);
    CHECK(lru_total(a) == 0);
    env.finish();
  }
}

TEST_CASE("oom_score_adj -1000 is never chosen, even when it is the biggest", "[mm][oom]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  int s_immune = -1, s_faulter = -1;
  env.run([&] {
    page_counter_set_max(&a->memory, 150);
    completion r1, r2;
    init_completion(&r1);
    init_completion(&r2);
    emu::Process *immune = start_anon_holder(a, 120, &r1, OOM_SCORE_ADJ_MIN);
    wait_for_completion(&r1);
    emu::Process *faulter = start_anon_holder(a, 100, &r2);
    wait_for_completion(&r2);
    s_faulter = emu::process_wait(faulter);
    CHECK_FALSE(emu::process_exited(immune, nullptr));
    emu::process_kill(immune);
    s_immune = emu::process_wait(immune);
  });
  CHECK(s_faulter == 137);
  CHECK(s_immune == 137);  // killed by the test, not by the OOM killer
  CHECK(memory_events_read(a, MEMCG_OOM_KILL) == 1);
  env.finish();
}

TEST_CASE("badness: rss plus oom_score_adj in thousandths of memory.max", "[mm][oom]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    page_counter_set_max(&a->memory, 10000);
    completion r1;
    init_completion(&r1);
    emu::Process *p = start_anon_holder(a, 100, &r1, 500);
    wait_for_completion(&r1);
    CHECK(oom_badness(p, 10000) == 100 + 500 * 10);
    CHECK(oom_badness(p, 999) == 100);  // 999 / 1000 == 0
    emu::process_kill(p);
    emu::process_wait(p);
  });
  env.finish();
}

TEST_CASE("memory.oom.group kills every process of the group", "[mm][oom][group]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *g = env.mkdir(nullptr, "g");
  mem_cgroup *w1 = env.mkdir(g, "w1");
  mem_cgroup *w2 = env.mkdir(g, "w2");
  int s[3] = {-1, -1, -1};
  env.run([&] {
    g->oom_group = true;
    page_counter_set_max(&g->memory, 300);
    completion r[3];
    for (auto &c : r) init_completion(&c);
    emu::Process *p1 = start_anon_holder(w1, 50, &r[0]);
    wait_for_completion(&r[0]);
    emu::Process *immune = start_anon_holder(w2, 50, &r[1], OOM_SCORE_ADJ_MIN);
    wait_for_completion(&r[1]);
    emu::Process *big = start_anon_holder(w2, 1000, &r[2]);
    wait_for_completion(&r[2]);
    s[2] = emu::process_wait(big);
    s[0] = emu::process_wait(p1);
    CHECK_FALSE(emu::process_exited(immune, nullptr));
    emu::process_kill(immune);
    s[1] = emu::process_wait(immune);
  });
  CHECK(s[0] == 137);
  CHECK(s[2] == 137);
  CHECK(memory_events_read(g, MEMCG_OOM_GROUP_KILL) == 1);
  // The victim is counted once directly and once by the group sweep, p1 once.
  CHECK(memory_events_read(w2, MEMCG_OOM_KILL) == 2);
  CHECK(memory_events_read(w1, MEMCG_OOM_KILL) == 1);
  CHECK(memory_events_read(g, MEMCG_OOM_KILL) == 3);
  env.finish();
}
