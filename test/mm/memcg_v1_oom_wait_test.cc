// SPDX-License-Identifier: GPL-2.0-only
// test/mm/memcg_v1_oom_wait_test.cc: the cgroup v1 OOM wait (memory.oom_control's
// oom_kill_disable): a faulting process at its memcg's limit sleeps with under_oom 1 and the OOM
// listeners notified, and wakes (memcg1_oom_recover) on an uncharge, a raised limit, or
// oom_kill_disable 0 (then the killer runs), or dies of SIGKILL; a fault that is not a user
// fault (MAP_POPULATE) fails instead of waiting; only related memcgs' waiters wake; the file's
// errnos. Simulated mode over several seeds, and native mode.
#include "test/mm/mm_test_util.h"

#include <string>

#include "kernel/cgroupfs.h"
#include "kernel/eventfd.h"
#include "kernel/fdtable.h"
#include "kernel/kernfs/kernfs.h"
#include "mm/memcontrol_v1_events.h"
#include "shim/errno.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

constexpr unsigned long P = PAGE_SIZE;

std::string read_oom_control(const std::string &cg) {
  std::string s;
  CHECK(cgroupfs_read_file(cg + "/memory.oom_control", &s) == 0);
  return s;
}
long wr(const std::string &path, const std::string &text) {
  return cgroupfs_write_file(path, text);
}
std::string oc(int disable, int under, int kills) {
  return "oom_kill_disable " + std::to_string(disable) + "\nunder_oom " + std::to_string(under) +
         "\noom_kill " + std::to_string(kills) + "\n";
}
// Sleeps (machine time) until @memcg is under OOM, i.e. a task waits out its OOM.
void wait_under_oom(mem_cgroup *memcg, bool under = true) {
  for (int i = 0; i < 100000 && memcg1_under_oom(memcg) != under; i++)
    schedule_timeout_uninterruptible(1);
  REQUIRE(memcg1_under_oom(memcg) == under);
}
long rss(emu::Process *p) { return get_mm_counter(emu::process_mm(p), MM_ANONPAGES); }
// Sleeps until @p's faults have brought its rss above @nr pages.
void wait_rss_above(emu::Process *p, long nr) {
  for (int i = 0; i < 100000 && rss(p) <= nr; i++) schedule_timeout_uninterruptible(1);
  REQUIRE(rss(p) > nr);
}
// Starts a start_anon_holder() process faulting @nr pages in @memcg (@ready: its completion,
// initialised here, signalled on its way out too) and sleeps until @oom_memcg (@memcg when null)
// is under OOM: the process waits in its fault.
emu::Process *start_oom_waiter(mem_cgroup *memcg, unsigned long nr, completion *ready,
                               mem_cgroup *oom_memcg = nullptr) {
  init_completion(ready);
  emu::Process *p = start_anon_holder(memcg, nr, ready);
  wait_under_oom(oom_memcg ? oom_memcg : memcg);
  return p;
}
// A v1 memcg "cg" limited to @pages of memory (memsw unlimited), its OOM killer disabled.
mem_cgroup *limited(MemcgEnv &env, const char *name, unsigned long pages) {
  mem_cgroup *m = env.mkdir(nullptr, name);
  env.run([&] {
    REQUIRE(wr(std::string(name) + "/memory.limit_in_bytes", std::to_string(pages * P)) > 0);
    REQUIRE(wr(std::string(name) + "/memory.oom_control", "1") > 0);
  });
  return m;
}

}  // namespace

TEST_CASE("v1 OOM wait: a faulting process sleeps under_oom, notified; a raised limit wakes it",
          "[mm][memcg][v1][oom_wait]") {
  for (std::uint64_t seed : {1, 2, 3}) {
    WarnCheck wc;
    MemcgEnv env(v1_params(), emu::Mode::simulated, 4, seed);
    mem_cgroup *a = limited(env, "a", 100);
    int status = -1;
    env.run([&] {
      eventfd_ctx *ctx = eventfd_ctx_create();
      REQUIRE(ctx);
      int efd = fd_install(fd_entry{nullptr, ctx});
      kernfs_file *f = nullptr;
      REQUIRE(cgroupfs_open("a/memory.oom_control", 0, &f) == 0);
      int cfd = fd_install(fd_entry{f, nullptr});
      REQUIRE(wr("a/cgroup.event_control", std::to_string(efd) + " " + std::to_string(cfd)) > 0);
      CHECK(read_oom_control("a") == oc(1, 0, 0));

      completion ready;
      emu::Process *p = start_oom_waiter(a, 150, &ready);
      // Asleep in its fault: 100 pages mapped, nothing killed, the listener told once.
      CHECK(read_oom_control("a") == oc(1, 1, 0));
      CHECK_FALSE(emu::process_exited(p, nullptr));
      CHECK(rss(p) <= 100);
      CHECK(usage(a) == 100);
      u64 c = 0;
      CHECK(eventfd_read_timeout(ctx, 0, &c) == 1);
      CHECK(c == 1);
      CHECK(memory_events_read(a, MEMCG_OOM) >= 1);
      // Still asleep a while later: nothing changed, nobody woke it.
      long ooms = memory_events_read(a, MEMCG_OOM);
      schedule_timeout_uninterruptible(100);
      CHECK(memory_events_read(a, MEMCG_OOM) == ooms);
      CHECK(memcg1_under_oom(a));
      // A listener registering now is signalled at once.
      eventfd_ctx *late = eventfd_ctx_create();
      int lfd = fd_install(fd_entry{nullptr, late});
      REQUIRE(wr("a/cgroup.event_control", std::to_string(lfd) + " " + std::to_string(cfd)) > 0);
      CHECK(eventfd_read_timeout(late, 0, &c) == 1);

      // The limit raised: the fault is retried and the rest faults in.
      CHECK(wr("a/memory.limit_in_bytes", std::to_string(200 * P)) > 0);
      wait_for_completion(&ready);
      CHECK(get_mm_counter(emu::process_mm(p), MM_ANONPAGES) == 150);
      CHECK(read_oom_control("a") == oc(1, 0, 0));
      status = kill_and_wait(p);
      for (int fd : {efd, lfd, cfd}) {
        fd_entry e;
        REQUIRE(close_fd(fd, &e) == 0);
        if (e.kf) cgroupfs_close(e.kf);
        if (e.efd) eventfd_release(e.efd);
      }
      flush_workqueue(system_wq);
    });
    CHECK(status == 137);
    CHECK(memory_events_read(a, MEMCG_OOM_KILL) == 0);
    env.finish();
  }
}

TEST_CASE("v1 OOM wait: an uncharge in the memcg wakes the waiter, which waits again at the "
          "limit", "[mm][memcg][v1][oom_wait]") {
  for (std::uint64_t seed : {1, 7}) {
    WarnCheck wc;
    MemcgEnv env(v1_params(), emu::Mode::simulated, 4, seed);
    mem_cgroup *a = limited(env, "a", 100);
    int s_holder = -1, s_waiter = -1;
    env.run([&] {
      completion r;
      emu::Process *holder = anon_holder_started(a, 40);
      emu::Process *waiter = start_oom_waiter(a, 150, &r);
      // At the limit (pages still in a per-CPU stock count too).
      CHECK(usage(a) == 100);
      long before = rss(waiter);
      CHECK(before <= 60);
      // The holder's exit uncharges 40 pages: the waiter takes them and waits again.
      s_holder = kill_and_wait(holder);
      // Its folios still in per-CPU lru_add batches are freed (and uncharged) at the drain.
      lru_add_drain_all();
      wait_rss_above(waiter, before);
      wait_under_oom(a);
      CHECK(usage(a) == 100);
      CHECK(rss(waiter) > before);
      CHECK(read_oom_control("a") == oc(1, 1, 0));
      // SIGKILL ends the killable wait.
      s_waiter = kill_and_wait(waiter);
      CHECK(read_oom_control("a") == oc(1, 0, 0));
    });
    CHECK(s_holder == 137);
    CHECK(s_waiter == 137);
    CHECK(memory_events_read(a, MEMCG_OOM_KILL) == 0);
    env.finish();
  }
}

TEST_CASE("v1 OOM wait: oom_kill_disable 0 wakes the waiter and the killer runs",
          "[mm][memcg][v1][oom_wait]") {
  WarnCheck wc;
  MemcgEnv env(v1_params(), emu::Mode::simulated, 4, 5);
  mem_cgroup *a = limited(env, "a", 100);
  int status = -1;
  env.run([&] {
    completion r;
    emu::Process *p = start_oom_waiter(a, 150, &r);
    CHECK(wr("a/memory.oom_control", "0") > 0);
    status = emu::process_wait(p);
    CHECK(read_oom_control("a") == oc(0, 0, 1));
  });
  CHECK(status == 137);
  CHECK(memory_events_read(a, MEMCG_OOM_KILL) == 1);
  env.finish();
}

TEST_CASE("v1 OOM wait: a charge outside a user fault (MAP_POPULATE) fails instead of waiting",
          "[mm][memcg][v1][oom_wait]") {
  WarnCheck wc;
  MemcgEnv env(v1_params());
  mem_cgroup *a = limited(env, "a", 100);
  int status = -1;
  env.run([&] {
    // Population stopped at the limit: no wait, no kill.
    emu::Process *p = anon_holder_started(a, 150, 0, MAP_POPULATE);
    CHECK(rss(p) <= 100);
    CHECK(usage(a) == 100);
    CHECK_FALSE(memcg1_under_oom(a));
    CHECK(memory_events_read(a, MEMCG_OOM) >= 1);
    status = kill_and_wait(p);
  });
  CHECK(status == 137);
  CHECK(memory_events_read(a, MEMCG_OOM_KILL) == 0);
  env.finish();
}

TEST_CASE("v1 OOM wait: a recovery wakes only the waiters of related memcgs",
          "[mm][memcg][v1][oom_wait]") {
  WarnCheck wc;
  MemcgEnv env(v1_params(), emu::Mode::simulated, 4, 11);
  mem_cgroup *b = limited(env, "b", 60);
  mem_cgroup *c = limited(env, "c", 60);
  int s[3] = {-1, -1, -1};
  env.run([&] {
    completion r[3];
    for (auto &x : r) init_completion(&x);
    emu::Process *hb = anon_holder_started(b, 20);
    emu::Process *wb = start_anon_holder(b, 100, &r[1]);
    emu::Process *wc2 = start_anon_holder(c, 100, &r[2]);
    wait_under_oom(b);
    wait_under_oom(c);
    CHECK(usage(b) == 60);
    CHECK(usage(c) == 60);
    long rss_b = rss(wb), rss_c = rss(wc2);
    long ooms_c = memory_events_read(c, MEMCG_OOM);
    // b's uncharge wakes b's waiter (it faults more and waits again), not c's.
    s[0] = kill_and_wait(hb);
    lru_add_drain_all();  // its folios still in lru_add batches are freed
    wait_rss_above(wb, rss_b);
    wait_under_oom(b);
    schedule_timeout_uninterruptible(50);
    CHECK(memory_events_read(c, MEMCG_OOM) == ooms_c);
    CHECK(rss(wc2) == rss_c);
    emu::process_kill(wb);
    emu::process_kill(wc2);
    s[1] = emu::process_wait(wb);
    s[2] = emu::process_wait(wc2);
  });
  CHECK(s[0] == 137);
  CHECK(s[1] == 137);
  CHECK(s[2] == 137);
  env.finish();
}

TEST_CASE("v1 OOM wait: a child's waiter wakes on the parent's raised limit (hierarchy)",
          "[mm][memcg][v1][oom_wait]") {
  WarnCheck wc;
  MemcgEnv env(v1_params(), emu::Mode::simulated, 4, 3);
  mem_cgroup *p = limited(env, "p", 80);
  mem_cgroup *ch = env.mkdir(p, "ch");
  int status = -1;
  env.run([&] {
    // The child inherited oom_kill_disable at creation.
    CHECK(read_oom_control("p/ch") == oc(1, 0, 0));
    completion r;
    emu::Process *w = start_oom_waiter(ch, 100, &r, p);
    CHECK(memcg1_under_oom(ch));  // the whole subtree of the OOM memcg is under OOM
    CHECK(read_oom_control("p") == oc(1, 1, 0));
    CHECK(wr("p/memory.limit_in_bytes", std::to_string(200 * P)) > 0);
    wait_for_completion(&r);
    CHECK(get_mm_counter(emu::process_mm(w), MM_ANONPAGES) == 100);
    status = kill_and_wait(w);
  });
  CHECK(status == 137);
  env.finish();
}

TEST_CASE("memory.oom_control writes: 0 or 1, never on the root; absent on v2",
          "[mm][memcg][v1][oom_wait][files]") {
  {
    WarnCheck wc;
    MemcgEnv env(v1_params());
    env.mkdir(nullptr, "a");
    env.run([&] {
      CHECK(wr("memory.oom_control", "1") == -EINVAL);
      CHECK(wr("memory.oom_control", "0") == -EINVAL);
      CHECK(wr("a/memory.oom_control", "2") == -EINVAL);
      CHECK(wr("a/memory.oom_control", "-1") == -EINVAL);
      CHECK(wr("a/memory.oom_control", "x") == -EINVAL);
      CHECK(read_oom_control("a") == oc(0, 0, 0));
      CHECK(wr("a/memory.oom_control", " 1") == -EINVAL);  // kstrtoull: no leading blank
      CHECK(wr("a/memory.oom_control", "1\n") == 2);
      CHECK(read_oom_control("a") == oc(1, 0, 0));
      CHECK(wr("a/memory.oom_control", "0") == 1);
      CHECK(read_oom_control("a") == oc(0, 0, 0));
    });
    env.finish();
  }
  {
    WarnCheck wc;
    MemcgEnv env(v2_params());
    env.mkdir(nullptr, "a");
    env.run([&] {
      bool is_dir = false;
      CHECK(cgroupfs_stat("a/memory.oom_control", &is_dir) == -ENOENT);
      CHECK(wr("a/memory.oom_control", "1") == -ENOENT);
    });
    env.finish();
  }
}

TEST_CASE("v1 OOM wait, native mode: the waiter wakes on a raised limit",
          "[mm][memcg][v1][oom_wait][native]") {
  WarnCheck wc;
  // One vCPU: the stock a failing charge drains is the local one, drained at once.
  MemcgEnv env(v1_params(), emu::Mode::native, 1);
  mem_cgroup *a = limited(env, "a", 100);
  int status = -1;
  env.run([&] {
    completion r;
    emu::Process *p = start_oom_waiter(a, 150, &r);
    CHECK(read_oom_control("a") == oc(1, 1, 0));
    CHECK(usage(a) == 100);
    CHECK(wr("a/memory.limit_in_bytes", std::to_string(200 * P)) > 0);
    wait_for_completion(&r);
    CHECK(get_mm_counter(emu::process_mm(p), MM_ANONPAGES) == 150);
    status = kill_and_wait(p);
    CHECK(read_oom_control("a") == oc(1, 0, 0));
  });
  CHECK(status == 137);
  CHECK(memory_events_read(a, MEMCG_OOM_KILL) == 0);
  env.finish();
}
