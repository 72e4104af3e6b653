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
      emu::Process *small = anon_holder_started(a, 20);
      emu::Process *big = anon_holder_started(a, 1000);  // signalled on its way out too
      s_big = emu::process_wait(big);
      CHECK_FALSE(emu::process_exited(small, nullptr));
      s_small = kill_and_wait(small);
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
    emu::Process *immune = anon_holder_started(a, 120, OOM_SCORE_ADJ_MIN);
    emu::Process *faulter = anon_holder_started(a, 100);
    s_faulter = emu::process_wait(faulter);
    CHECK_FALSE(emu::process_exited(immune, nullptr));
    s_immune = kill_and_wait(immune);
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
    emu::Process *p = anon_holder_started(a, 100, 500);
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
    emu::Process *p1 = anon_holder_started(w1, 50);
    emu::Process *immune = anon_holder_started(w2, 50, OOM_SCORE_ADJ_MIN);
    emu::Process *big = anon_holder_started(w2, 1000);
    s[2] = emu::process_wait(big);
    s[0] = emu::process_wait(p1);
    CHECK_FALSE(emu::process_exited(immune, nullptr));
    s[1] = kill_and_wait(immune);
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
