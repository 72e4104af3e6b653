// SPDX-License-Identifier: GPL-2.0-only
// test/mm/memcg_v1_events_test.cc: cgroup v1 memory notifications (mm/memcontrol_v1_events.h):
// cgroup.event_control's parsing and errnos, usage thresholds crossed up and down at the
// 128-page-event ratelimit and up the hierarchy, OOM notification of a subtree, and the
// teardown of a registration by closing its eventfd or removing its cgroup.
#include "test/mm/memcg_files_fixture.h"

#include <string>

#include "kernel/cgroupfs.h"
#include "kernel/eventfd.h"
#include "kernel/fdtable.h"
#include "kernel/kernfs/kernfs.h"
#include "mm/memcontrol_folio.h"
#include "mm/memcontrol_v1_events.h"
#include "shim/errno.h"
#include "shim/workqueue.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

constexpr unsigned long P = PAGE_SIZE;

// User space's side: descriptors in the kernel's table, as the shell's machine opens them.
int open_fd(const std::string &path) {
  kernfs_file *f = nullptr;
  int err = cgroupfs_open(path, 0, &f);
  REQUIRE(err == 0);
  return fd_install(fd_entry{f, nullptr});
}
int new_eventfd(eventfd_ctx **ctx) {
  *ctx = eventfd_ctx_create();
  REQUIRE(*ctx);
  return fd_install(fd_entry{nullptr, *ctx});
}
// close(2); an eventfd stays readable by the test through its own reference.
void close_user_fd(int fd) {
  fd_entry e;
  REQUIRE(close_fd(fd, &e) == 0);
  if (e.kf) cgroupfs_close(e.kf);
  if (e.efd) eventfd_release(e.efd);
}
long event_control(const std::string &cgroup, const std::string &text) {
  return cgroupfs_write_file(cgroup + "/cgroup.event_control", text);
}
// "<efd> <cfd> <args>" for a fresh descriptor of @file, closed again after the write.
long reg(const std::string &cgroup, int efd, const std::string &file, const std::string &args) {
  int cfd = open_fd(cgroup + "/" + file);
  long r = event_control(cgroup, std::to_string(efd) + " " + std::to_string(cfd) +
                                     (args.empty() ? "" : " " + args));
  close_user_fd(cfd);
  return r;
}
u64 take(eventfd_ctx *ctx) {
  u64 c = 0;
  return eventfd_read_timeout(ctx, 0, &c) == 1 ? c : 0;
}

}  // namespace

TEST_CASE("cgroup.event_control: the file, parsing and errnos", "[mm][memcg][files][v1][events]") {
  WarnCheck wc;
  MemcgEnv env(files_params(true));
  env.run([&] {
    REQUIRE(cgroupfs_mkdir("a") == 0);
    REQUIRE(cgroupfs_mkdir("b") == 0);
    const cftype *cft = find_cftype(mem_cgroup_legacy_files, "cgroup.event_control");
    REQUIRE(cft);
    CHECK(cft->flags == (CFTYPE_NO_PREFIX | CFTYPE_WORLD_WRITABLE));
    bool is_dir = true;
    CHECK(cgroupfs_stat("a/cgroup.event_control", &is_dir) == 0);
    CHECK(cgroupfs_stat("cgroup.event_control", &is_dir) == 0);  // the root has it too
    std::string text;
    CHECK(cgroupfs_read_file("a/cgroup.event_control", &text) == -EINVAL);  // write-only

    eventfd_ctx *ctx;
    int efd = new_eventfd(&ctx);
    int usage = open_fd("a/memory.usage_in_bytes");
    const std::string e = std::to_string(efd), u = std::to_string(usage);
    CHECK(event_control("a", "x") == -EINVAL);
    CHECK(event_control("a", e) == -EINVAL);              // no control fd
    CHECK(event_control("a", e + " " + u + "x") == -EINVAL);
    CHECK(event_control("a", "-1 " + u + " 1M") == -EINVAL);  // no sign
    CHECK(event_control("a", "99 " + u + " 1M") == -EBADF);   // not open
    CHECK(event_control("a", u + " " + u + " 1M") == -EINVAL);  // not an eventfd
    CHECK(event_control("a", e + " 98 1M") == -EBADF);
    CHECK(event_control("a", e + " " + e + " 1M") == -EINVAL);  // not a cgroup file
    CHECK(event_control("a", e + " " + u + " 1.5M") == -EINVAL);  // the threshold's memparse
    CHECK(event_control("b", e + " " + u + " 1M") == -EINVAL);  // a file of another cgroup
    CHECK(reg("a", efd, "memory.stat", "") == -EINVAL);        // not a notifying file
    CHECK(reg("a", efd, "memory.limit_in_bytes", "1M") == -EINVAL);
    CHECK(reg("a", efd, "memory.pressure_level", "bogus") == -EINVAL);  // mm/vmpressure.h
    // Surrounding blanks are stripped; the args are the rest of the line.
    const std::string line = " " + e + " " + u + " 1M\n";
    CHECK(event_control("a", line) == static_cast<long>(line.size()));
    CHECK(take(ctx) == 0);  // usage 0 is below 1M
    close_user_fd(usage);
    eventfd_ctx_get(ctx);
    close_user_fd(efd);  // the registration goes: one last signal from its teardown
    flush_workqueue(system_wq);
    CHECK(take(ctx) == 1);
    eventfd_ctx_put(ctx);
    CHECK(cgroupfs_rmdir("a") == 0);
    CHECK(cgroupfs_rmdir("b") == 0);
  });
  env.finish();
}

TEST_CASE("memory.usage_in_bytes thresholds: crossed up and down, checked every 128 page "
          "events per CPU, up the hierarchy", "[mm][memcg][files][v1][events]") {
  WarnCheck wc;
  MemcgEnv env(files_params(true));
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *c = env.mkdir(p, "c");
  folio big, small, small2;
  big.order = 7;  // 128 pages: one charge is a full ratelimit period
  eventfd_ctx *e_c, *e_p, *e_sw, *e_2;
  env.run([&] {
    int fc = new_eventfd(&e_c), fp = new_eventfd(&e_p), fsw = new_eventfd(&e_sw);
    for (eventfd_ctx *x : {e_c, e_p, e_sw}) eventfd_ctx_get(x);
    CHECK(reg("p/c", fc, "memory.usage_in_bytes", std::to_string(100 * P)) > 0);
    CHECK(reg("p", fp, "memory.usage_in_bytes", "400K") > 0);  // 100 pages too
    CHECK(reg("p", fsw, "memory.memsw.usage_in_bytes", "-1") > 0);  // the maximum: never
    // 128 page events on this CPU: the first check; c and p are at 128 >= 100.
    REQUIRE(charge_memcg(&big, c, GFP_KERNEL) == 0);
    CHECK(page_counter_read(&c->memory) == 128);
    CHECK(take(e_c) == 1);
    CHECK(take(e_p) == 1);
    // Uncharged: 256 events, not past the next target (256): no check, no signal.
    __mem_cgroup_uncharge(&big);
    CHECK(take(e_c) == 0);
    // One more page event: checked; usage (the page and the stock's batch: 64) fell below.
    REQUIRE(charge_memcg(&small, c, GFP_KERNEL) == 0);
    CHECK(page_counter_read(&c->memory) == 64);
    CHECK(take(e_c) == 1);
    CHECK(take(e_p) == 1);
    // Up and back down between two checks (events 385, then 513): the crossing is not seen.
    REQUIRE(charge_memcg(&big, c, GFP_KERNEL) == 0);
    CHECK(page_counter_read(&c->memory) == 192);
    CHECK(take(e_c) == 0);
    __mem_cgroup_uncharge(&big);
    CHECK(take(e_c) == 0);
    __mem_cgroup_uncharge(&small);  // 514 events
    // A registration below the usage counts as crossed from the start: no signal for it then.
    REQUIRE(charge_memcg(&big, c, GFP_KERNEL) == 0);  // 642 events: checked at 191 pages
    CHECK(take(e_c) == 1);
    CHECK(take(e_p) == 1);
    int f2 = new_eventfd(&e_2);
    eventfd_ctx_get(e_2);
    CHECK(reg("p/c", f2, "memory.usage_in_bytes", "4096") > 0);  // one page
    CHECK(take(e_2) == 0);
    __mem_cgroup_uncharge(&big);  // 770 events: no check
    REQUIRE(charge_memcg(&small2, c, GFP_KERNEL) == 0);  // from the stock; 771: checked
    CHECK(page_counter_read(&c->memory) == 63);
    // Down below 100 pages, still above one page.
    CHECK(take(e_c) == 1);
    CHECK(take(e_p) == 1);
    CHECK(take(e_2) == 0);
    __mem_cgroup_uncharge(&small2);
    CHECK(take(e_sw) == 0);
    // Teardown by close: each registration signals once more and drops its css reference.
    for (int fd : {fc, fp, fsw, f2}) close_user_fd(fd);
    flush_workqueue(system_wq);
    for (eventfd_ctx *x : {e_c, e_p, e_sw, e_2}) {
      CHECK(take(x) == 1);
      eventfd_ctx_put(x);
    }
  });
  env.release_all();
  env.finish();
}

TEST_CASE("memory.oom_control notification: every OOM of the memcg or an ancestor; under_oom; "
          "removal signals once", "[mm][memcg][files][v1][events]") {
  WarnCheck wc;
  MemcgEnv env(files_params(true));
  g_files = FilesScript{};
  g_files.env = &env;
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mem_cgroup *c = env.mkdir(a, "c");
  eventfd_ctx *e_a, *e_c;
  env.run([&] {
    int fa = new_eventfd(&e_a), fc = new_eventfd(&e_c);
    eventfd_ctx_get(e_a);
    eventfd_ctx_get(e_c);
    CHECK(reg("a", fa, "memory.oom_control", "") > 0);
    CHECK(reg("a/c", fc, "memory.oom_control", "ignored args") > 0);
    CHECK(read_file(a, "oom_control") == "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
    REQUIRE(page_counter_set_max(&a->memsw, 4) == 0);
    REQUIRE(page_counter_set_max(&a->memory, 4) == 0);
    // An OOM in a (8 pages: order 3, not above PAGE_ALLOC_COSTLY_ORDER; the scripted killer
    // finds nothing): a and its subtree are notified.
    CHECK(env.charge(a, 8) == -ENOMEM);
    CHECK(g_files.oom_calls == 1);
    CHECK(take(e_a) == 1);
    CHECK(take(e_c) == 1);
    // An OOM in c notifies c's subtree only.
    REQUIRE(page_counter_set_max(&a->memsw, PAGE_COUNTER_MAX) == 0);
    REQUIRE(page_counter_set_max(&a->memory, PAGE_COUNTER_MAX) == 0);
    REQUIRE(page_counter_set_max(&c->memsw, 4) == 0);
    REQUIRE(page_counter_set_max(&c->memory, 4) == 0);
    CHECK(env.charge(c, 8) == -ENOMEM);
    CHECK(g_files.oom_calls == 2);
    CHECK(take(e_a) == 0);
    CHECK(take(e_c) == 1);
    CHECK(read_file(c, "oom_control") == "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
    // A charge above PAGE_ALLOC_COSTLY_ORDER fails without an OOM: no notification.
    CHECK(env.charge(c, 20) == -ENOMEM);
    CHECK(g_files.oom_calls == 2);
    CHECK(take(e_c) == 0);
    // rmdir of c: its registration is torn down, signalling once.
    CHECK(cgroupfs_rmdir("a/c") == 0);
    flush_workqueue(system_wq);
    CHECK(take(e_c) == 1);
    close_user_fd(fc);  // nothing left to tear down
    eventfd_ctx_put(e_c);
    close_user_fd(fa);
    flush_workqueue(system_wq);
    CHECK(take(e_a) == 1);
    eventfd_ctx_put(e_a);
  });
  env.release_all();
  env.finish();
}
