// SPDX-License-Identifier: GPL-2.0-only
// test/mm/vmpressure_test.cc: vmpressure (mm/vmpressure.h) and memory.pressure_level listeners
// under cgroup v1: the registration's LEVEL[,MODE] parsing and errnos, the 512-page window, the
// levels at their 60/95 boundaries, the default/hierarchy/local modes up the hierarchy, the
// critical report of a low reclaim priority, and real reclaim reporting (clean page cache:
// low; anon without swap at the limit: critical; proactive reclaim: nothing).
#include "test/mm/mm_test_util.h"

#include <string>

#include "kernel/cgroupfs.h"
#include "kernel/eventfd.h"
#include "kernel/fdtable.h"
#include "kernel/kernfs/kernfs.h"
#include "mm/vmpressure.h"
#include "shim/errno.h"
#include "shim/workqueue.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

constexpr unsigned long P = PAGE_SIZE;

// A registered listener: the eventfd (the test's own reference) and its descriptor.
struct Listener {
  eventfd_ctx *ctx = nullptr;
  int efd = -1;
};

// "<efd> <cfd> <args>" on @cg's cgroup.event_control for memory.pressure_level.
long reg(const std::string &cg, int efd, const std::string &args) {
  kernfs_file *f = nullptr;
  REQUIRE(cgroupfs_open(cg + "/memory.pressure_level", 0, &f) == 0);
  int cfd = fd_install(fd_entry{f, nullptr});
  long r = cgroupfs_write_file(cg + "/cgroup.event_control",
                               std::to_string(efd) + " " + std::to_string(cfd) + " " + args);
  fd_entry e;
  REQUIRE(close_fd(cfd, &e) == 0);
  cgroupfs_close(e.kf);
  return r;
}
Listener listen(const std::string &cg, const std::string &args) {
  Listener l;
  l.ctx = eventfd_ctx_create();
  REQUIRE(l.ctx);
  l.efd = fd_install(fd_entry{nullptr, l.ctx});
  eventfd_ctx_get(l.ctx);
  long r = reg(cg, l.efd, args);
  CHECK(r > 0);
  return l;
}
void unlisten(Listener &l) {
  fd_entry e;
  REQUIRE(close_fd(l.efd, &e) == 0);
  eventfd_release(e.efd);
  flush_workqueue(system_wq);
  eventfd_ctx_put(l.ctx);
}
u64 take(eventfd_ctx *ctx) {
  u64 c = 0;
  return eventfd_read_timeout(ctx, 0, &c) == 1 ? c : 0;
}
// One report of the subtree window, delivered.
void report(mem_cgroup *memcg, unsigned long scanned, unsigned long reclaimed,
            gfp_t gfp = GFP_KERNEL) {
  vmpressure(gfp, memcg, true, scanned, reclaimed);
  flush_workqueue(system_wq);
}

}  // namespace

TEST_CASE("memory.pressure_level registration: LEVEL[,MODE], errnos, the 19-character cut",
          "[mm][memcg][v1][vmpressure]") {
  WarnCheck wc;
  MemcgEnv env(v1_params());
  env.mkdir(nullptr, "a");
  env.run([&] {
    eventfd_ctx *ctx = eventfd_ctx_create();
    int efd = fd_install(fd_entry{nullptr, ctx});
    for (const char *ok : {"low", "medium", "critical", "low,default", "medium,hierarchy",
                           "critical,local", "medium,hierarchy,extra", "critical,hierarchy,x"})
      CHECK(reg("a", efd, ok) > 0);
    // Levels and modes are exact, lower-case words; the first 19 characters are read.
    for (const char *bad : {"", "bogus", "Low", "low ,local", "low,", "low,bogus", ",low",
                            "critical,hierarchyX", "medium,local2"})
      CHECK(reg("a", efd, bad) == -EINVAL);
    // No arguments at all: the level is missing.
    kernfs_file *f = nullptr;
    REQUIRE(cgroupfs_open("a/memory.pressure_level", 0, &f) == 0);
    int cfd = fd_install(fd_entry{f, nullptr});
    CHECK(cgroupfs_write_file("a/cgroup.event_control",
                              std::to_string(efd) + " " + std::to_string(cfd)) == -EINVAL);
    fd_entry e;
    REQUIRE(close_fd(cfd, &e) == 0);
    cgroupfs_close(e.kf);
    // The root has the file too.
    eventfd_ctx_get(ctx);
    CHECK(reg(".", efd, "low") > 0);
    REQUIRE(close_fd(efd, &e) == 0);
    eventfd_release(e.efd);  // every registration goes, each signalling once
    flush_workqueue(system_wq);
    CHECK(take(ctx) == 9);
    eventfd_ctx_put(ctx);
  });
  env.finish();
}

TEST_CASE("vmpressure: the 512-page window and the levels at their boundaries",
          "[mm][memcg][v1][vmpressure]") {
  WarnCheck wc;
  MemcgEnv env(v1_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    Listener low = listen("a", "low"), med = listen("a", "medium"),
             crit = listen("a", "critical");
    auto levels = [&] {
      return std::to_string(take(low.ctx)) + std::to_string(take(med.ctx)) +
             std::to_string(take(crit.ctx));
    };
    // Below the window: nothing; the window's last page completes it.
    report(a, vmpressure_win - 1, 0);
    CHECK(levels() == "000");
    report(a, 1, 0);
    CHECK(levels() == "111");  // nothing reclaimed: critical, and every lower level
    // pressure = 100 * (s + r - r * (s + r) / s) / (s + r), truncated at each step.
    report(a, 512, 512);
    CHECK(levels() == "100");  // 0
    report(a, 512, 600);
    CHECK(levels() == "100");  // more reclaimed than scanned: 0
    report(a, 512, 100);
    CHECK(levels() == "110");  // 80
    report(a, 512, 26);
    CHECK(levels() == "110");  // 94
    report(a, 512, 25);
    CHECK(levels() == "111");  // 95
    // A reclaim without I/O, FS or user-page placement says nothing.
    report(a, 1024, 0, __GFP_RECLAIM);
    CHECK(levels() == "000");
    // Scanning nothing says nothing either.
    report(a, 0, 0);
    CHECK(levels() == "000");
    // The per-memcg (!tree) report is not kept (see the header).
    vmpressure(GFP_KERNEL, a, false, 1024, 0);
    flush_workqueue(system_wq);
    CHECK(levels() == "000");
    for (Listener *l : {&low, &med, &crit}) unlisten(*l);
  });
  env.finish();
}

TEST_CASE("vmpressure: default, hierarchy and local listeners up the hierarchy",
          "[mm][memcg][v1][vmpressure]") {
  WarnCheck wc;
  MemcgEnv env(v1_params());
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *c = env.mkdir(p, "c");
  mem_cgroup *g = env.mkdir(c, "g");
  env.run([&] {
    Listener p_def = listen("p", "low"), p_hier = listen("p", "low,hierarchy"),
             p_loc = listen("p", "low,local"), p_crit = listen("p", "critical,hierarchy"),
             c_def = listen("p/c", "medium,default"), r_def = listen(".", "low");
    auto got = [&] {
      std::string s;
      for (Listener *l : {&p_def, &p_hier, &p_loc, &p_crit, &c_def, &r_def})
        s += std::to_string(take(l->ctx));
      return s;
    };
    // c's window at medium: c's default listener takes it; p's default one does not (a lower
    // listener was signalled), its hierarchy one does, its local one never sees a descendant's
    // window, its critical one is above the level; the root's default one does not either.
    report(c, 512, 100);
    CHECK(got() == "010010");
    // At low, c's medium listener is not signalled: p's default one is, and then the root's
    // is not.
    report(c, 512, 512);
    CHECK(got() == "110000");
    // The grandchild's window (it has no listeners) walks up the same way.
    report(g, 512, 100);
    CHECK(got() == "010010");
    // p's own window: local listeners too.
    report(p, 512, 0);
    CHECK(got() == "111100");
    // The root's window: only the root's.
    report(root_mem_cgroup, 512, 0);
    CHECK(got() == "000001");
    for (Listener *l : {&p_def, &p_hier, &p_loc, &p_crit, &c_def, &r_def}) unlisten(*l);
  });
  env.finish();
}

TEST_CASE("vmpressure_prio: a reclaim pass at priority 3 or below reports critical",
          "[mm][memcg][v1][vmpressure]") {
  WarnCheck wc;
  MemcgEnv env(v1_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    Listener crit = listen("a", "critical");
    vmpressure_prio(GFP_KERNEL, a, 4);
    flush_workqueue(system_wq);
    CHECK(take(crit.ctx) == 0);
    vmpressure_prio(GFP_KERNEL, a, 3);
    flush_workqueue(system_wq);
    CHECK(take(crit.ctx) == 1);
    vmpressure_prio(GFP_KERNEL, a, 0);
    flush_workqueue(system_wq);
    CHECK(take(crit.ctx) == 1);
    unlisten(crit);
  });
  env.finish();
}

TEST_CASE("vmpressure from reclaim: clean page cache is low, anon without swap at the limit "
          "critical, proactive reclaim nothing", "[mm][memcg][v1][vmpressure]") {
  WarnCheck wc;
  MemcgEnv env(v1_params(), emu::Mode::simulated, 4, 3);
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mem_cgroup *b = env.mkdir(nullptr, "b");
  inode *ino = emu::file_create();
  int status = -1;
  env.run([&] {
    // Big enough that reclaim at priority 9 already scans its 32 pages (size >> priority): a
    // small memcg's reclaim goes down to the critical priorities (vmpressure_prio) first.
    REQUIRE(cgroupfs_write_file("a/memory.limit_in_bytes", std::to_string(16384 * P)) > 0);
    REQUIRE(cgroupfs_write_file("b/memory.limit_in_bytes", std::to_string(100 * P)) > 0);
    Listener low = listen("a", "low"), med = listen("a", "medium");
    // Page cache read once: every page scanned is reclaimed.
    REQUIRE(read_into(a, ino, 0, 20000) == 0);
    flush_workqueue(system_wq);
    CHECK(take(low.ctx) >= 1);
    CHECK(take(med.ctx) == 0);
    // Proactive reclaim reports nothing.
    REQUIRE(read_into(a, ino, 40000, 256) == 0);
    flush_workqueue(system_wq);
    take(low.ctx);
    CHECK(try_to_free_mem_cgroup_pages(a, 100, GFP_KERNEL,
                                       MEMCG_RECLAIM_MAY_SWAP | MEMCG_RECLAIM_PROACTIVE,
                                       nullptr) >= 100);
    flush_workqueue(system_wq);
    CHECK(take(low.ctx) == 0);
    // Nor does a reclaim that scans nothing: anon without swap is not scanned. Reclaim then
    // goes down to priority 0: critical, before the OOM kill.
    Listener crit = listen("b", "critical");
    completion r;
    init_completion(&r);
    emu::Process *p = start_anon_holder(b, 150, &r);
    status = emu::process_wait(p);
    flush_workqueue(system_wq);
    CHECK(take(crit.ctx) >= 1);
    for (Listener *l : {&low, &med, &crit}) unlisten(*l);
    emu::iput(ino);
  });
  CHECK(status == 137);
  env.finish();
}
