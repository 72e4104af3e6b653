// SPDX-License-Identifier: GPL-2.0-only
// test/mm/cgroupfs_memcg_test.cc: memcg on the cgroup filesystem (kernel/cgroup_fs.cc with the
// memory controller): memcg's attach moving the mm to the effective memcg as memory is enabled
// and disabled (charges stay), and seed 000's stall: the kernfs notify work charging the
// listener's memcg, reclaiming with kernfs_rwsem held, and a mkdir waiting behind it, unless
// notifications skip kernfs_rwsem.
#include <catch2/catch.hpp>

#include <atomic>
#include <string>

#undef WARN
#include "kernel/cgroup.h"
#include "kernel/cgroupfs.h"
#include "kernel/kernfs/kernfs.h"
#include "kernel/notify/inotify.h"
#include "mm/mm_types.h"
#include "shim/errno.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "test/support/machine_fixture.h"
#include "test/support/memcg_env.h"

using namespace umemcg;
using umemcg::test::config;
using umemcg::test::WarnCheck;

namespace {
long wr(const std::string &path, const std::string &data) {
  return cgroupfs_write_file(path, data);
}

// A v2 machine and a user task (pid 4242) with its mm, not yet forked into a cgroup.
struct TaskWithMm {
  WarnCheck wc;
  test::MemcgEnv env{test::v2_params()};
  task_struct t;
  mm_struct mm;
  TaskWithMm() {
    t.pid = t.tgid = 4242;
    t.mm = &mm;
  }
};
}  // namespace

TEST_CASE_METHOD(TaskWithMm,
                 "cgroupfs: memcg's attach moves the mm to the effective memcg; enabling and "
                 "disabling memory re-points it; charges stay", "[kernel][cgroupfs][memcg]") {
  mem_cgroup *a = nullptr;
  env.run([&] {
    REQUIRE(cgroupfs_mkdir("a") == 0);
    {
      mutex_guard g(&cgroup_mutex);
      a = mem_cgroup_from_cgroup(cgroup_find_child(&cgroup_current_root()->cgrp, "a"));
    }
    cgroup_post_fork(&t, nullptr);
    CHECK(mm.memcg == nullptr);  // the root
    CHECK(wr("a/cgroup.procs", "4242") == 4);
    CHECK(mm.memcg == nullptr);  // memory not enabled at the root: a uses the root's css
    CHECK(wr("cgroup.subtree_control", "+memory") == 7);
    CHECK(mm.memcg == a);
    REQUIRE(env.charge(a, 4) == 0);
    // The pages' reference on a, as a charged folio's memcg_data holds one: a removed memcg
    // stays until its pages go.
    css_get(&a->css);
    env.ledger.css_refs[a]++;
    CHECK(wr("cgroup.subtree_control", "-memory") == 7);
    CHECK(mm.memcg == nullptr);
    CHECK(page_counter_read(&a->memory) >= 4);  // the charge stayed
    CHECK(wr("cgroup.procs", "4242") == 4);
    cgroup_exit(&t);
    CHECK(cgroupfs_rmdir("a") == 0);
  });
  env.release_all();
  env.run([&] {
    env.ledger.css_refs[a]--;
    css_put(&a->css);
  });
  env.finish();
}

TEST_CASE_METHOD(TaskWithMm,
                 "cgroupfs: memory is a domain controller: no memory files in a threaded cgroup, "
                 "its tasks charge the threaded domain's memcg",
                 "[kernel][cgroupfs][memcg][threaded]") {
  env.run([&] {
    bool is_dir = false;
    for (const char *d : {"a", "a/t", "b", "b/t", "z"}) REQUIRE(cgroupfs_mkdir(d) == 0);
    mem_cgroup *a;
    {
      mutex_guard g(&cgroup_mutex);
      a = mem_cgroup_from_cgroup(cgroup_find_child(&cgroup_current_root()->cgrp, "a"));
    }
    CHECK(wr("cgroup.subtree_control", "+memory") == 7);
    // b enables memory for its children: b cannot be a thread root.
    CHECK(wr("b/cgroup.subtree_control", "+memory") == 7);
    CHECK(wr("b/t/cgroup.type", "threaded") == -EOPNOTSUPP);
    CHECK(cgroupfs_stat("b/t/memory.current", &is_dir) == 0);
    // a does not: a/t joins a's threaded domain and has no memory files.
    CHECK(cgroupfs_stat("a/t/memory.current", &is_dir) == -ENOENT);  // a does not enable it
    CHECK(wr("a/t/cgroup.type", "threaded") == 8);
    std::string text;
    CHECK(cgroupfs_read_file("a/cgroup.type", &text) == 0);
    CHECK(text == "domain threaded\n");
    CHECK(wr("a/t/cgroup.subtree_control", "+memory") == -ENOENT);
    CHECK(wr("a/cgroup.subtree_control", "+memory") == -EOPNOTSUPP);
    // A threaded child of the root loses the memory css it had.
    CHECK(cgroupfs_stat("z/memory.current", &is_dir) == 0);
    CHECK(wr("z/cgroup.type", "threaded") == 8);
    CHECK(cgroupfs_stat("z/memory.current", &is_dir) == -ENOENT);
    // Tasks in a threaded cgroup are charged to the domain's memcg.
    cgroup_post_fork(&t, nullptr);
    CHECK(wr("a/t/cgroup.procs", "4242") == 4);
    CHECK(mm.memcg == a);
    CHECK(wr("z/cgroup.procs", "4242") == 4);
    CHECK(mm.memcg == nullptr);  // the root's threaded domain: the root memcg
    CHECK(wr("cgroup.procs", "4242") == 4);
    cgroup_exit(&t);
    for (const char *d : {"a/t", "a", "b/t", "b", "z"}) CHECK(cgroupfs_rmdir(d) == 0);
  });
  env.finish();
}

namespace {
std::atomic<int> g_reclaims{0};
unsigned long slow_reclaim(mem_cgroup *, unsigned long, gfp_t, unsigned int, int *) {
  g_reclaims++;
  msleep(50);  // a reclaim that makes no progress and takes its time
  return 0;
}
bool no_oom(mem_cgroup *, gfp_t, int) { return false; }
const memcg_reclaim_ops slow_ops = {slow_reclaim, no_oom};
}  // namespace

TEST_CASE("cgroupfs: seed 000: the notify work reclaims for the listener's memcg holding "
          "kernfs_rwsem, and a mkdir waits behind it, unless notifications skip kernfs_rwsem",
          "[kernel][cgroupfs][memcg][notify]") {
  for (bool no_rwsem : {false, true}) {
    SECTION(no_rwsem ? "no kernfs_rwsem in the notify work" : "Linux 6.19") {
      WarnCheck wc;
      memcg_boot_params p = test::v2_params();
      p.kernfs_notify_no_rwsem = no_rwsem;
      p.ops = &slow_ops;
      test::MemcgEnv env(p, emu::Mode::simulated, 2);
      mem_cgroup *a = env.mkdir(nullptr, "a");
      mm_struct mm;
      fsnotify_group *g = nullptr;
      kernfs_root *kf = cgroup_current_root()->kf_root;
      env.run([&] {
        emu::mm_attach(&mm, a);
        current->mm = &mm;  // the listener runs in a
        g = cgroupfs_inotify_init();
        REQUIRE(cgroupfs_inotify_add_watch(g, "a/cgroup.events", IN_MODIFY) == 1);
        current->mm = nullptr;
        // a is full, with nothing left in any stock: the next page it is charged needs reclaim.
        drain_all_stock(root_mem_cgroup);
        flush_workqueue(memcg_wq);
        REQUIRE(page_counter_set_max(&a->memory, page_counter_read(&a->memory)) == 0);
        rwsem_reset_stats(&kf->kernfs_rwsem);
        rwsem_reset_stats(&kf->kernfs_supers_rwsem);
      });
      env.ledger.css_refs[a] += 2;  // mm and the group's memcg
      std::uint64_t mkdir_ns = 0;
      g_reclaims = 0;
      // The notification comes from CPU 1, where a has no obj stock: the event's charge needs a
      // page, reclaim runs (slowly) inside the notify work.
      env.machine().spawn("notifier", [&] {
        cgroup_file_notify(&a->css.cgroup->events_file);
      }, {1});
      env.machine().spawn("churn", [&] {
        while (!g_reclaims) msleep(1);  // the notify work is reclaiming
        std::uint64_t t0 = ktime_get_ns();
        CHECK(cgroupfs_mkdir("b") == 0);
        mkdir_ns = ktime_get_ns() - t0;
      }, {0});
      REQUIRE_FALSE(env.machine().run().deadlock);
      env.run([&] { emu::kernfs_flush_notify(); });
      rwsem_stats rs = rwsem_get_stats(&kf->kernfs_rwsem);
      rwsem_stats ss = rwsem_get_stats(&kf->kernfs_supers_rwsem);
      CHECK(ss.max_read_hold_ns >= 500 * NSEC_PER_MSEC);  // held across the reclaim either way
      if (no_rwsem) {
        CHECK(mkdir_ns < 10 * NSEC_PER_MSEC);
        CHECK(rs.max_read_hold_ns < 10 * NSEC_PER_MSEC);
      } else {
        CHECK(rs.max_read_hold_ns >= 500 * NSEC_PER_MSEC);
        CHECK(mkdir_ns >= 400 * NSEC_PER_MSEC);
        CHECK(rs.max_write_wait_ns >= 400 * NSEC_PER_MSEC);
      }
      env.run([&] {
        inotify_event ev;
        CHECK(inotify_read_event(g, 0, &ev) == 1);  // the event, or the overflow marker
        inotify_release(g);
        CHECK(cgroupfs_rmdir("b") == 0);
        emu::mm_attach(&mm, nullptr);
      });
      env.ledger.css_refs[a] -= 2;
      env.release_all();
      env.finish();
    }
  }
}
