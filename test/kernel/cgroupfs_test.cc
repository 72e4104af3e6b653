// SPDX-License-Identifier: GPL-2.0-only
// Tests of the cgroup filesystem (kernel/cgroup_fs.cc, cgroup_tasks.cc, cgroupfs.cc): the files
// of root and child cgroups on v2 and v1, a controller's cftype rows (a test controller's own
// tables), formats and errnos of the core files, cgroup.subtree_control's rules, migration
// with can_attach/attach, populated and cgroup.events notification, cgroup.kill, rmdir racing a
// handler that takes cgroup_mutex. memcg on the cgroup filesystem: test/mm/cgroupfs_memcg_test.cc.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#undef WARN
#include "kernel/cgroup.h"
#include "kernel/cgroupfs.h"
#include "kernel/kernfs/kernfs.h"
#include "kernel/notify/inotify.h"
#include "shim/errno.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;
using umemcg::test::WarnCheck;

namespace {

struct t_css {
  cgroup_subsys_state css;
  u64 max = 0;
  cgroup_file events_file;
};

t_css *to_t(cgroup_subsys_state *css) { return container_of(css, t_css, css); }

std::vector<std::string> g_attach_log;
int g_can_attach_ret = 0;
int g_resets = 0;

cgroup_subsys_state *t_alloc(cgroup_subsys_state *) { return &(new t_css)->css; }
void t_free(cgroup_subsys_state *css) { delete to_t(css); }
u64 t_max_read(cgroup_subsys_state *css, const cftype *) { return to_t(css)->max; }
int t_max_write(cgroup_subsys_state *css, const cftype *, u64 v) {
  to_t(css)->max = v;
  return 0;
}
int t_stat_show(seq_file *sf, void *) {
  seq_printf(sf, "id %d\n", seq_css(sf)->id);
  return 0;
}
int t_events_show(seq_file *sf, void *) {
  seq_puts(sf, "ev 0\n");
  return 0;
}
ssize_t t_reclaim_write(kernfs_open_file *, char *, size_t n, off_t) {
  return static_cast<ssize_t>(n);
}
int t_can_attach(cgroup_taskset *) { return g_can_attach_ret; }
void t_attach(cgroup_taskset *tset) {
  for (task_struct *t : tset->tasks)
    g_attach_log.push_back(std::to_string(t->pid) + "->" + tset->dst_css->cgroup->name);
}
void t_reset(cgroup_subsys_state *css) {
  to_t(css)->max = 0;
  g_resets++;
}

cftype make(const char *name, unsigned flags) {
  cftype c;
  std::strncpy(c.name, name, MAX_CFTYPE_NAME - 1);
  c.flags = flags;
  return c;
}

struct tables {
  cftype dfl[5];
  cftype legacy[2];
  tables() {
    dfl[0] = make("max", CFTYPE_NOT_ON_ROOT);
    dfl[0].read_u64 = t_max_read;
    dfl[0].write_u64 = t_max_write;
    dfl[1] = make("stat", 0);
    dfl[1].seq_show = t_stat_show;
    dfl[2] = make("events", CFTYPE_NOT_ON_ROOT);
    dfl[2].seq_show = t_events_show;
    dfl[2].file_offset = offsetof(t_css, events_file);
    dfl[3] = make("reclaim", 0);
    dfl[3].write = t_reclaim_write;
    dfl[3].max_write_len = 16;
    legacy[0] = make("limit_in_bytes", 0);
    legacy[0].read_u64 = t_max_read;
    legacy[0].write_u64 = t_max_write;
  }
};
tables g_tables;

cgroup_subsys make_ss() {
  cgroup_subsys ss = {"test", t_alloc, nullptr, nullptr, nullptr, t_free, nullptr,
                      g_tables.dfl, g_tables.legacy};
  ss.can_attach = t_can_attach;
  ss.attach = t_attach;
  ss.css_reset = t_reset;
  return ss;
}
cgroup_subsys test_ss = make_ss();

std::string rd(const std::string &path) {
  std::string out;
  int ret = cgroupfs_read_file(path, &out);
  return ret ? "ERR " + std::to_string(ret) : out;
}
long wr(const std::string &path, const std::string &data) {
  return cgroupfs_write_file(path, data);
}
std::vector<std::string> ls(const std::string &path) {
  std::vector<std::string> names;
  REQUIRE(cgroupfs_readdir(path, &names) == 0);
  return names;
}
bool has(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

template <typename F>
void with_fs(bool dfl, F body, emu::Mode mode = emu::Mode::simulated) {
  g_attach_log.clear();
  g_can_attach_ret = 0;
  g_resets = 0;
  emu::Machine m(config(mode, 2));
  m.exec([&] {
    int err = 1;
    cgroup_root *root = cgroup_setup_root(dfl, 0, &test_ss, &err);
    REQUIRE(root);
    body(m, root);
    cgroup_destroy_root(root);
  });
  CHECK(emu::cgroup_live_css() == 0);
}

struct fake_task {
  task_struct t;
  explicit fake_task(int pid, int tgid = 0) {
    t.pid = pid;
    t.tgid = tgid ? tgid : pid;
  }
};

}  // namespace

TEST_CASE("cgroupfs: v2 files of the root and of a child; controller files follow "
          "subtree_control", "[kernel][cgroupfs]") {
  WarnCheck wc;
  with_fs(true, [](emu::Machine &, cgroup_root *) {
    auto root = ls("/sys/fs/cgroup");
    for (const char *f : {"cgroup.procs", "cgroup.threads", "cgroup.controllers",
                          "cgroup.subtree_control", "cgroup.max.descendants",
                          "cgroup.max.depth", "cgroup.stat", "test.stat", "test.reclaim"})
      CHECK(has(root, f));
    for (const char *f : {"cgroup.type", "cgroup.events", "cgroup.freeze", "cgroup.kill",
                          "test.max", "test.events"})
      CHECK_FALSE(has(root, f));
    CHECK(rd("/sys/fs/cgroup/cgroup.controllers") == "test\n");
    CHECK(rd("/sys/fs/cgroup/cgroup.subtree_control") == "\n");

    REQUIRE(cgroupfs_mkdir("/sys/fs/cgroup/a") == 0);
    auto a = ls("/sys/fs/cgroup/a");
    CHECK(a == std::vector<std::string>{"cgroup.controllers", "cgroup.events",
                                        "cgroup.freeze", "cgroup.kill",
                                        "cgroup.max.depth", "cgroup.max.descendants",
                                        "cgroup.procs", "cgroup.stat", "cgroup.subtree_control",
                                        "cgroup.threads", "cgroup.type"});
    CHECK(rd("a/cgroup.controllers") == "\n");
    CHECK(wr("cgroup.subtree_control", "+test") == 5);
    CHECK(rd("cgroup.subtree_control") == "test\n");
    CHECK(rd("a/cgroup.controllers") == "test\n");
    a = ls("a");
    for (const char *f : {"test.max", "test.stat", "test.events", "test.reclaim"}) CHECK(has(a, f));
    REQUIRE(cgroupfs_mkdir("a/b") == 0);
    CHECK_FALSE(has(ls("a/b"), "test.max"));  // a does not enable it
    // Disabling hides the files again and resets the css.
    CHECK(wr("a/test.max", "7\n") == 2);
    CHECK(wr("cgroup.subtree_control", "-test") == 5);
    CHECK_FALSE(has(ls("a"), "test.max"));
    CHECK(g_resets == 1);
    CHECK(wr("cgroup.subtree_control", "+test") == 5);
    CHECK(rd("a/test.max") == "0\n");
    CHECK(cgroupfs_rmdir("a/b") == 0);
    CHECK(cgroupfs_rmdir("a") == 0);
  });
}

TEST_CASE("cgroupfs: v1 files", "[kernel][cgroupfs]") {
  WarnCheck wc;
  with_fs(false, [](emu::Machine &, cgroup_root *) {
    auto root = ls("/sys/fs/cgroup");
    for (const char *f : {"cgroup.procs", "tasks", "cgroup.clone_children", "notify_on_release",
                          "release_agent", "cgroup.sane_behavior", "test.limit_in_bytes"})
      CHECK(has(root, f));
    CHECK_FALSE(has(root, "cgroup.subtree_control"));
    REQUIRE(cgroupfs_mkdir("a") == 0);
    auto a = ls("a");
    CHECK(a == std::vector<std::string>{"cgroup.clone_children", "cgroup.procs",
                                        "notify_on_release", "tasks", "test.limit_in_bytes"});
    CHECK(rd("a/notify_on_release") == "0\n");
    CHECK(wr("a/notify_on_release", "1") == 1);
    CHECK(rd("a/notify_on_release") == "1\n");
    CHECK(wr("release_agent", "/bin/true\n") == 10);
    CHECK(rd("release_agent") == "/bin/true\n");
    CHECK(rd("cgroup.sane_behavior") == "0\n");
    CHECK(cgroupfs_rmdir("a") == 0);
  });
}

TEST_CASE("cgroupfs: path errnos, file routing, formats and limits", "[kernel][cgroupfs]") {
  WarnCheck wc;
  with_fs(true, [](emu::Machine &, cgroup_root *) {
    CHECK(cgroupfs_mkdir("/sys/fs/cgroup") == -EEXIST);
    CHECK(cgroupfs_mkdir("/tmp/x") == -ENOENT);
    CHECK(cgroupfs_mkdir("nope/x") == -ENOENT);
    CHECK(cgroupfs_mkdir("cgroup.procs/x") == -ENOTDIR);
    CHECK(cgroupfs_mkdir("cgroup.procs") == -EEXIST);
    REQUIRE(cgroupfs_mkdir("a") == 0);
    CHECK(cgroupfs_mkdir("a") == -EEXIST);
    CHECK(cgroupfs_rmdir("/sys/fs/cgroup") == -EBUSY);
    CHECK(cgroupfs_rmdir("a/cgroup.procs") == -ENOTDIR);
    CHECK(cgroupfs_rmdir("zz") == -ENOENT);
    CHECK(cgroupfs_rmdir("a/.") == -EINVAL);
    kernfs_file *f = nullptr;
    CHECK(cgroupfs_open("a", KF_O_WRONLY, &f) == -EISDIR);
    CHECK(cgroupfs_open("a/cgroup.type/", 0, &f) == -ENOTDIR);
    CHECK(rd("/sys/fs/cgroup/a/../a/./cgroup.type") == "domain\n");

    // A cgroup by its directory's path (what the shell's bpf attach resolves).
    cgroup *cg = nullptr;
    REQUIRE(cgroupfs_lookup_cgroup("/sys/fs/cgroup/a", &cg) == 0);
    CHECK(cg->name == "a");
    cgroup *rootcg = nullptr;
    REQUIRE(cgroupfs_lookup_cgroup("/sys/fs/cgroup", &rootcg) == 0);
    CHECK(cg->parent == rootcg);
    CHECK(cgroupfs_lookup_cgroup("a/./", &cg) == 0);
    CHECK(cg->name == "a");
    CHECK(cgroupfs_lookup_cgroup("a/cgroup.type", &cg) == -ENOTDIR);
    CHECK(cgroupfs_lookup_cgroup("zz", &cg) == -ENOENT);
    CHECK(cgroupfs_lookup_cgroup("/tmp", &cg) == -ENOENT);

    CHECK(rd("a/cgroup.events") == "populated 0\nfrozen 0\n");
    CHECK(wr("a/cgroup.type", "domain") == -EINVAL);
    CHECK(wr("a/cgroup.type", "threaded x") == -EINVAL);
    // Writes to read-only files reach cgroup_file_write, which has no handler: -EINVAL (as
    // root); reads of write-only files: -EINVAL.
    CHECK(wr("a/cgroup.events", "1") == -EINVAL);
    CHECK(rd("a/cgroup.kill") == "ERR " + std::to_string(-EINVAL));
    CHECK(wr("a/cgroup.kill", "2") == -ERANGE);
    CHECK(wr("a/cgroup.kill", "x") == -EINVAL);
    CHECK(wr(std::string("a/cgroup.kill"), std::string(PAGE_SIZE + 1, '1')) == -E2BIG);

    // read_u64/write_u64 rows: kstrtoull base 0, one trailing newline, nothing else.
    CHECK(wr("cgroup.subtree_control", "+test") == 5);
    CHECK(wr("a/test.max", "0x10\n") == 5);
    CHECK(rd("a/test.max") == "16\n");
    CHECK(wr("a/test.max", " 5") == -EINVAL);
    CHECK(wr("a/test.max", "5 ") == -EINVAL);
    CHECK(wr("a/test.max", "99999999999999999999") == -ERANGE);
    CHECK(wr("a/test.max", "") == 0);  // zero bytes: no handler call
    CHECK(rd("a/test.max") == "16\n");
    CHECK(wr("a/test.reclaim", "0123456789abcdef") == 16);
    CHECK(wr("a/test.reclaim", "0123456789abcdefg") == -E2BIG);  // max_write_len
    CHECK(rd("a/test.reclaim") == "ERR " + std::to_string(-EINVAL));
    CHECK(rd("a/test.stat").rfind("id ", 0) == 0);

    // Limits.
    CHECK(rd("a/cgroup.max.depth") == "max\n");
    CHECK(wr("a/cgroup.max.depth", "1") == 1);
    CHECK(rd("a/cgroup.max.depth") == "1\n");
    CHECK(wr("a/cgroup.max.depth", "-1") == -ERANGE);
    CHECK(wr("a/cgroup.max.depth", "x") == -EINVAL);
    REQUIRE(cgroupfs_mkdir("a/b") == 0);
    CHECK(cgroupfs_mkdir("a/b/c") == -EAGAIN);
    CHECK(wr("a/cgroup.max.depth", "max") == 3);
    CHECK(wr("a/cgroup.max.descendants", "1") == 1);
    CHECK(cgroupfs_mkdir("a/b2") == -EAGAIN);
    CHECK(wr("a/cgroup.max.descendants", "max\n") == 4);
    REQUIRE(cgroupfs_mkdir("a/b/c") == 0);
    CHECK(rd("cgroup.stat") ==
          "nr_descendants 3\nnr_subsys_test 2\nnr_dying_descendants 0\nnr_dying_subsys_test 0\n");
    CHECK(rd("a/cgroup.stat") ==
          "nr_descendants 2\nnr_subsys_test 1\nnr_dying_descendants 0\nnr_dying_subsys_test 0\n");
    CHECK(cgroupfs_rmdir("a") == -EBUSY);
    CHECK(cgroupfs_rmdir("a/b/c") == 0);
    CHECK(cgroupfs_rmdir("a/b") == 0);
    emu::cgroup_flush_releases();
    CHECK(rd("cgroup.stat") ==
          "nr_descendants 1\nnr_subsys_test 2\nnr_dying_descendants 0\nnr_dying_subsys_test 0\n");
    CHECK(cgroupfs_rmdir("a") == 0);
  });
}

// nr_subsys_<ss> in cgroup.stat is kept up to date as controller css are shown and hidden
// (mkdir, rmdir, +/- in subtree_control); after every step of a random sequence each cgroup's
// figure equals a recount of its shown descendants.
TEST_CASE("cgroupfs: cgroup.stat's nr_subsys stays equal to a recount under random mkdir, "
          "rmdir and subtree_control changes", "[kernel][cgroupfs]") {
  WarnCheck wc;
  with_fs(true, [](emu::Machine &, cgroup_root *) {
    std::vector<std::string> dirs = {""};  // "" is the root
    std::uint64_t x = 0x9e3779b97f4a7c15ull;
    auto rnd = [&x](size_t n) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      return static_cast<size_t>(x % n);
    };
    auto path = [](const std::string &d, const char *f) { return d.empty() ? f : d + "/" + f; };
    struct recount {
      static int shown_below(cgroup *c) REQUIRES(cgroup_mutex) {
        int n = 0;
        for (cgroup *child : c->children)
          n += shown_below(child) + ((child->subsys_css->flags & CSS_VISIBLE) ? 1 : 0);
        return n;
      }
    };
    for (int step = 0; step < 400; step++) {
      const std::string &d = dirs[rnd(dirs.size())];
      switch (rnd(4)) {
        case 0:
        case 1: {
          std::string c = d.empty() ? "c" + std::to_string(step) : d + "/c" + std::to_string(step);
          if (cgroupfs_mkdir(c) == 0) dirs.push_back(c);
          break;
        }
        case 2:
          (void)wr(path(d, "cgroup.subtree_control"), rnd(2) ? "+test" : "-test");
          break;
        default:
          if (!d.empty() && cgroupfs_rmdir(d) == 0)
            dirs.erase(std::find(dirs.begin(), dirs.end(), d));
          break;
      }
      emu::cgroup_flush_releases();
      for (const std::string &e : dirs) {
        cgroup *c = nullptr;
        REQUIRE(cgroupfs_lookup_cgroup(e.empty() ? "/sys/fs/cgroup" : e, &c) == 0);
        bool shown = c->subsys_css->flags & CSS_VISIBLE;
        std::string want;
        {
          mutex_guard g(&cgroup_mutex);
          want = "nr_subsys_test " + std::to_string(shown ? recount::shown_below(c) + 1 : 0) + "\n";
        }
        INFO("step " << step << " cgroup '" << e << "'");
        REQUIRE(rd(path(e, "cgroup.stat")).find(want) != std::string::npos);
      }
    }
    // Leaves first.
    std::sort(dirs.begin(), dirs.end(), [](const std::string &a, const std::string &b) {
      return a.size() > b.size();
    });
    for (const std::string &e : dirs)
      if (!e.empty()) CHECK(cgroupfs_rmdir(e) == 0);
  });
}

TEST_CASE("cgroupfs: cgroup.subtree_control rules and errnos", "[kernel][cgroupfs]") {
  WarnCheck wc;
  with_fs(true, [](emu::Machine &, cgroup_root *) {
    REQUIRE(cgroupfs_mkdir("a") == 0);
    REQUIRE(cgroupfs_mkdir("a/b") == 0);
    CHECK(wr("a/cgroup.subtree_control", "+test") == -ENOENT);  // not in a's controllers
    CHECK(wr("cgroup.subtree_control", "test") == -EINVAL);
    CHECK(wr("cgroup.subtree_control", "+foo") == -EINVAL);
    CHECK(wr("cgroup.subtree_control", "+test -test") == 11);  // the last one wins
    CHECK(rd("cgroup.subtree_control") == "\n");
    CHECK(wr("cgroup.subtree_control", "  +test  ") == 9);
    CHECK(wr("a/cgroup.subtree_control", "+test") == 5);
    CHECK(wr("cgroup.subtree_control", "-test") == -EBUSY);  // a child enables it
    CHECK(has(ls("a/b"), "test.max"));
    CHECK(wr("a/cgroup.subtree_control", "-test") == 5);
    CHECK(wr("a/cgroup.subtree_control", "-test") == 5);  // already off: no-op

    // No internal process: enabling in a cgroup with tasks, or placing tasks in a cgroup
    // that enables controllers, fails; the root is exempt.
    fake_task t(100);
    cgroup_post_fork(&t.t, nullptr);
    CHECK(wr("a/cgroup.procs", "100") == 3);
    CHECK(wr("a/cgroup.subtree_control", "+test") == -EBUSY);
    CHECK(wr("cgroup.procs", "100") == 3);
    CHECK(wr("a/cgroup.subtree_control", "+test") == 5);
    CHECK(wr("a/cgroup.procs", "100") == -EBUSY);
    CHECK(wr("a/b/cgroup.procs", "100") == 3);
    cgroup_exit(&t.t);
    CHECK(cgroupfs_rmdir("a/b") == 0);
    CHECK(cgroupfs_rmdir("a") == 0);
  });
}

TEST_CASE("cgroupfs: migration, populated, cgroup.events notification, cgroup.kill",
          "[kernel][cgroupfs]") {
  WarnCheck wc;
  with_fs(true, [](emu::Machine &, cgroup_root *) {
    REQUIRE(cgroupfs_mkdir("a") == 0);
    REQUIRE(cgroupfs_mkdir("a/b") == 0);
    REQUIRE(wr("cgroup.subtree_control", "+test") == 5);
    fake_task p(100), thr(101, 100), q(200);
    cgroup_post_fork(&p.t, nullptr);
    cgroup_post_fork(&thr.t, &p.t);
    cgroup_post_fork(&q.t, nullptr);
    CHECK(rd("cgroup.procs") == "100\n200\n");
    fsnotify_group *g = cgroupfs_inotify_init();
    int wa = cgroupfs_inotify_add_watch(g, "a/cgroup.events", IN_MODIFY);
    int wb = cgroupfs_inotify_add_watch(g, "a/b/cgroup.events", IN_MODIFY);
    REQUIRE(wa > 0);
    REQUIRE(wb > 0);

    CHECK(wr("a/b/cgroup.procs", "x") == -EINVAL);
    CHECK(wr("a/b/cgroup.procs", "-1") == -EINVAL);
    CHECK(wr("a/b/cgroup.procs", "999") == -ESRCH);
    g_can_attach_ret = -ENOMEM;
    CHECK(wr("a/b/cgroup.procs", "100") == -ENOMEM);
    CHECK(rd("cgroup.procs") == "100\n200\n");
    g_can_attach_ret = 0;
    // Writing a thread's pid moves its whole thread group.
    CHECK(wr("a/b/cgroup.procs", "101\n") == 4);
    CHECK(rd("a/b/cgroup.procs") == "100\n");
    CHECK(rd("cgroup.procs") == "200\n");
    // b's css is not visible (a does not enable the controller): the tasks use a's.
    CHECK(g_attach_log == std::vector<std::string>{"100->a", "101->a"});
    CHECK(rd("a/b/cgroup.events") == "populated 1\nfrozen 0\n");
    CHECK(rd("a/cgroup.events") == "populated 1\nfrozen 0\n");
    emu::kernfs_flush_notify();
    inotify_event ev;
    std::vector<int> wds;
    while (inotify_read_event(g, 0, &ev) == 1) wds.push_back(ev.wd);
    std::sort(wds.begin(), wds.end());
    CHECK(wds == std::vector<int>{wa, wb});
    CHECK(cgroupfs_rmdir("a/b") == -EBUSY);

    // cgroup.kill on a kills the subtree's tasks (not q in the root).
    msleep(20);
    CHECK(wr("a/cgroup.kill", "1") == 1);
    CHECK(fatal_signal_pending(&p.t));
    CHECK(fatal_signal_pending(&thr.t));
    CHECK_FALSE(fatal_signal_pending(&q.t));
    // They exit: populated drops, both files notified.
    cgroup_exit(&thr.t);
    CHECK(rd("a/b/cgroup.events") == "populated 1\nfrozen 0\n");
    cgroup_exit(&p.t);
    CHECK(rd("a/b/cgroup.events") == "populated 0\nfrozen 0\n");
    CHECK(rd("a/cgroup.events") == "populated 0\nfrozen 0\n");
    emu::kernfs_flush_notify();
    wds.clear();
    while (inotify_read_event(g, 0, &ev) == 1) wds.push_back(ev.wd);
    std::sort(wds.begin(), wds.end());
    CHECK(wds == std::vector<int>{wa, wb});
    // Removal: the watch on b's file gets IN_DELETE_SELF? no, it asked IN_MODIFY only:
    // IN_IGNORED alone.
    CHECK(cgroupfs_rmdir("a/b") == 0);
    REQUIRE(inotify_read_event(g, 0, &ev) == 1);
    CHECK(ev.wd == wb);
    CHECK(ev.mask == IN_IGNORED);
    inotify_release(g);
    cgroup_exit(&q.t);
    CHECK(cgroupfs_rmdir("a") == 0);
  });
}

TEST_CASE("cgroupfs: threaded mode: cgroup.type, domain threaded and domain invalid, "
          "cgroup.threads, a domain controller outside threaded subtrees",
          "[kernel][cgroupfs][threaded]") {
  WarnCheck wc;
  with_fs(true, [](emu::Machine &, cgroup_root *) {
    for (const char *d : {"d", "d/t", "d/t/x", "d/u", "e", "e/c", "r"})
      REQUIRE(cgroupfs_mkdir(d) == 0);
    CHECK(rd("d/cgroup.type") == "domain\n");
    CHECK(wr("d/cgroup.type", "domain") == -EINVAL);  // only "threaded" can be written
    CHECK(wr("d/cgroup.type", "threaded\n") == 9);
    // Under the root (mixable, a thread root for d): d is threaded, the root stays a domain
    // for the others.
    CHECK(rd("d/cgroup.type") == "threaded\n");
    CHECK(wr("d/cgroup.type", "threaded") == 8);  // already threaded: nothing to do
    // d's children are domains inside a threaded subtree: invalid until made threaded.
    CHECK(rd("d/t/cgroup.type") == "domain invalid\n");
    CHECK(wr("d/t/cgroup.type", "threaded") == 8);
    CHECK(rd("d/t/cgroup.type") == "threaded\n");
    CHECK(rd("d/t/x/cgroup.type") == "domain invalid\n");

    // e becomes a thread root through its threaded child c ("domain threaded").
    CHECK(wr("e/c/cgroup.type", "threaded") == 8);
    CHECK(rd("e/cgroup.type") == "domain threaded\n");
    CHECK(rd("e/c/cgroup.type") == "threaded\n");
    REQUIRE(cgroupfs_mkdir("e/dd") == 0);
    CHECK(rd("e/dd/cgroup.type") == "domain invalid\n");
    // A domain controller: not in a thread root (-EOPNOTSUPP), not offered to a threaded
    // cgroup (-ENOENT), nor to a domain invalid one.
    CHECK(wr("cgroup.subtree_control", "+test") == 5);
    CHECK(wr("e/cgroup.subtree_control", "+test") == -EOPNOTSUPP);
    CHECK(rd("e/c/cgroup.controllers") == "\n");
    CHECK(wr("e/c/cgroup.subtree_control", "+test") == -ENOENT);
    CHECK(wr("e/dd/cgroup.subtree_control", "+test") == -ENOENT);
    // The root enables it: domain children get its files, threaded ones do not.
    CHECK(has(ls("e"), "test.max"));
    CHECK(has(ls("r"), "test.max"));
    CHECK_FALSE(has(ls("d"), "test.max"));
    CHECK(rd("d/cgroup.controllers") == "\n");
    // A cgroup whose children have the controller cannot join a threaded domain; nor can a
    // child of a cgroup that enables it (the parent cannot be a thread root).
    CHECK(wr("r/cgroup.subtree_control", "+test") == 5);
    REQUIRE(cgroupfs_mkdir("r/k") == 0);
    CHECK(wr("r/cgroup.type", "threaded") == -EOPNOTSUPP);
    CHECK(wr("r/k/cgroup.type", "threaded") == -EOPNOTSUPP);
    CHECK(rd("r/k/cgroup.type") == "domain\n");
    // A threaded child of the root hides the css it had: shown under +test, gone once threaded.
    REQUIRE(cgroupfs_mkdir("z") == 0);
    CHECK(has(ls("z"), "test.max"));
    CHECK(wr("z/test.max", "5") == 1);
    int resets = g_resets;
    CHECK(wr("z/cgroup.type", "threaded") == 8);
    CHECK_FALSE(has(ls("z"), "test.max"));
    CHECK(g_resets == resets + 1);
    CHECK(rd("cgroup.stat").find("nr_subsys_test 4\n") != std::string::npos);  // root, e, r, r/k
    CHECK(cgroupfs_rmdir("z") == 0);
    CHECK(wr("r/cgroup.subtree_control", "-test") == 5);

    // Tasks: a populated cgroup cannot become threaded; a domain invalid one takes none.
    fake_task p(100), thr(101, 100), q(200);
    cgroup_post_fork(&p.t, nullptr);
    cgroup_post_fork(&thr.t, &p.t);
    cgroup_post_fork(&q.t, nullptr);
    CHECK(wr("r/k/cgroup.procs", "200") == 3);
    CHECK(wr("r/k/cgroup.type", "threaded") == -EOPNOTSUPP);
    CHECK(wr("e/dd/cgroup.procs", "200") == -EOPNOTSUPP);
    CHECK(wr("d/t/x/cgroup.procs", "200") == -EOPNOTSUPP);
    // A process in the thread root e; one of its threads moves to the threaded child c.
    CHECK(wr("e/cgroup.procs", "100") == 3);
    g_attach_log.clear();
    CHECK(wr("e/c/cgroup.threads", "101") == 3);
    CHECK(rd("e/cgroup.threads") == "100\n");
    CHECK(rd("e/c/cgroup.threads") == "101\n");
    // c's tasks use e's css (a threaded cgroup has no domain controller): no css change.
    CHECK(g_attach_log.empty());
    // A threaded cgroup's cgroup.procs cannot be read; the domain's lists the whole subtree.
    CHECK(rd("e/c/cgroup.procs") == "ERR " + std::to_string(-EOPNOTSUPP));
    CHECK(rd("e/cgroup.procs") == "100\n");
    CHECK(rd("e/c/cgroup.events") == "populated 1\nfrozen 0\n");
    CHECK(rd("e/cgroup.events") == "populated 1\nfrozen 0\n");
    // Threads move only inside their threaded domain.
    CHECK(wr("r/cgroup.threads", "101") == -EOPNOTSUPP);
    CHECK(wr("d/cgroup.threads", "101") == -EOPNOTSUPP);
    CHECK(wr("e/c/cgroup.threads", "999") == -ESRCH);
    // cgroup.kill takes whole processes: not in a threaded cgroup.
    CHECK(wr("e/c/cgroup.kill", "1") == -EOPNOTSUPP);
    // e has populated threaded children only: the leader moves into c with cgroup.procs,
    // e's cgroup.procs still lists it.
    CHECK(wr("e/c/cgroup.procs", "100") == 3);
    CHECK(rd("e/cgroup.procs") == "100\n");
    CHECK(rd("e/cgroup.threads") == "");
    CHECK(rd("e/c/cgroup.threads") == "101\n100\n");
    CHECK(rd("e/cgroup.events") == "populated 1\nfrozen 0\n");
    // Back to domains: a thread cannot leave for another domain; the process can.
    CHECK(wr("cgroup.threads", "100") == -EOPNOTSUPP);
    CHECK(wr("cgroup.procs", "100") == 3);
    CHECK(rd("e/c/cgroup.events") == "populated 0\nfrozen 0\n");
    CHECK(rd("e/cgroup.events") == "populated 0\nfrozen 0\n");
    // Threads of a root process stay in the root's domain: cgroup.threads within it works.
    CHECK(wr("d/cgroup.threads", "101") == 3);
    CHECK(rd("d/cgroup.threads") == "101\n");
    CHECK(rd("cgroup.procs") == "100\n");
    CHECK(rd("d/cgroup.procs") == "ERR " + std::to_string(-EOPNOTSUPP));
    CHECK(wr("cgroup.threads", "101") == 3);
    cgroup_exit(&thr.t);
    cgroup_exit(&p.t);
    cgroup_exit(&q.t);

    // Removing the threaded child makes e a plain domain again, which may then enable it.
    CHECK(cgroupfs_rmdir("e/c") == 0);
    CHECK(rd("e/cgroup.type") == "domain\n");
    CHECK(rd("e/dd/cgroup.type") == "domain\n");
    CHECK(wr("e/cgroup.subtree_control", "+test") == 5);
    CHECK(has(ls("e/dd"), "test.max"));
    for (const char *d : {"e/dd", "e", "d/t/x", "d/t", "d/u", "d", "r/k", "r"})
      CHECK(cgroupfs_rmdir(d) == 0);
  });
}

TEST_CASE("cgroupfs: threaded mode does not exist on v1", "[kernel][cgroupfs][threaded]") {
  WarnCheck wc;
  with_fs(false, [](emu::Machine &, cgroup_root *) {
    REQUIRE(cgroupfs_mkdir("a") == 0);
    auto a = ls("a");
    CHECK_FALSE(has(a, "cgroup.type"));
    CHECK_FALSE(has(a, "cgroup.threads"));
    // v1's tasks file moves single threads anywhere.
    fake_task p(100), thr(101, 100);
    cgroup_post_fork(&p.t, nullptr);
    cgroup_post_fork(&thr.t, &p.t);
    CHECK(wr("a/tasks", "101") == 3);
    CHECK(rd("a/tasks") == "101\n");
    CHECK(rd("tasks") == "100\n");
    cgroup_exit(&thr.t);
    cgroup_exit(&p.t);
    CHECK(cgroupfs_rmdir("a") == 0);
  });
}

TEST_CASE("cgroupfs: rmdir holding cgroup_mutex does not deadlock with a handler waiting for "
          "it (active protection broken)", "[kernel][cgroupfs]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 2));
  cgroup_root *root = nullptr;
  m.exec([&] {
    int err = 0;
    root = cgroup_setup_root(true, 0, &test_ss, &err);
    REQUIRE(cgroupfs_mkdir("a") == 0);
  });
  long write_ret = 1;
  int rmdir_ret = 1;
  m.spawn("holder", [&] {
    mutex_lock(&cgroup_mutex);
    emu::Machine::get()->spawn("rmdir", [&] { rmdir_ret = cgroupfs_rmdir("a"); });
    msleep(1);
    emu::Machine::get()->spawn("writer", [&] { write_ret = wr("a/cgroup.max.depth", "3"); });
    msleep(1);
    mutex_unlock(&cgroup_mutex);
  });
  emu::RunResult r = m.run();
  CHECK_FALSE(r.deadlock);
  CHECK(rmdir_ret == 0);
  CHECK(write_ret == -ENOENT);  // the cgroup went while the handler waited
  m.exec([&] { cgroup_destroy_root(root); });
}
