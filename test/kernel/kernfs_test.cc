// SPDX-License-Identifier: GPL-2.0-only
// Tests of kernfs (kernel/kernfs/), inotify on it (kernel/notify/) and cgroup_file_notify's rate
// limit: tree and errnos, lock modes (the rwsems' statistics), removal draining in-flight
// operations and open files, writes, notification delivery to several watchers with the locks
// held, coalescing, the no-rwsem boot option, IN_DELETE_SELF / IN_IGNORED. The charge of each
// event to the listener's memcg: test/mm/kernfs_memcg_test.cc.
#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <vector>

#undef WARN
#include "kernel/cgroup.h"
#include "kernel/kernfs/kernfs.h"
#include "kernel/notify/inotify.h"
#include "shim/errno.h"
#include "shim/hooks.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/slab.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;
using umemcg::test::WarnCheck;

namespace {

struct test_file {
  std::string content = "hello world\n";
  std::string last_write;
  size_t last_len = 0;
  int releases = 0;
  int opens = 0;
  unsigned show_sleep_ms = 0;
  std::atomic<bool> in_show{false};  // polled by another task (native mode)
};

test_file *tf_of(kernfs_open_file *of) { return static_cast<test_file *>(of->kn->priv); }

int t_open(kernfs_open_file *of) {
  tf_of(of)->opens++;
  return 0;
}
void t_release(kernfs_open_file *of) { tf_of(of)->releases++; }
int t_show(seq_file *sf, void *) {
  test_file *tf = tf_of(sf->of);
  tf->in_show = true;
  if (tf->show_sleep_ms) msleep(tf->show_sleep_ms);
  seq_puts(sf, tf->content.c_str());
  tf->in_show = false;
  return 0;
}
ssize_t t_write(kernfs_open_file *of, char *buf, size_t n, off_t) {
  test_file *tf = tf_of(of);
  tf->last_write = buf;  // stops at the NUL kernfs appends
  tf->last_len = n;
  return static_cast<ssize_t>(n);
}

const kernfs_ops rw_ops = {t_open, t_release, t_show, t_write, 0};
const kernfs_ops small_ops = {nullptr, nullptr, t_show, t_write, 8};
const kernfs_ops ro_ops = {nullptr, nullptr, t_show, nullptr, 0};

struct rw_counts {
  std::uint64_t r, w;
};

// Counts down_read/down_write calls on the kernfs rwsems through the rwsems' fentry hook points
// (what a BPF lock tracker attaches to). Attach and detach from task context.
struct lock_counter {
  rw_semaphore *sems[2] = {};
  std::atomic<std::uint64_t> r[2] = {}, w[2] = {};
  int ids[2] = {-1, -1};
  static void on_read(void *data, const std::uint64_t *args, unsigned, std::uint64_t) {
    auto *lc = static_cast<lock_counter *>(data);
    for (int i = 0; i < 2; i++)
      if (args[0] == reinterpret_cast<std::uint64_t>(lc->sems[i])) lc->r[i]++;
  }
  static void on_write(void *data, const std::uint64_t *args, unsigned, std::uint64_t) {
    auto *lc = static_cast<lock_counter *>(data);
    for (int i = 0; i < 2; i++)
      if (args[0] == reinterpret_cast<std::uint64_t>(lc->sems[i])) lc->w[i]++;
  }
  explicit lock_counter(kernfs_root *root) {
    sems[0] = &root->kernfs_rwsem;
    sems[1] = &root->kernfs_supers_rwsem;
    ids[0] = emu::HookPoint::find("down_read")->attach(false, on_read, this);
    ids[1] = emu::HookPoint::find("down_write")->attach(false, on_write, this);
  }
  ~lock_counter() {
    emu::HookPoint::find("down_read")->detach(ids[0]);
    emu::HookPoint::find("down_write")->detach(ids[1]);
  }
  rw_counts rwsem() { return {r[0].load(), w[0].load()}; }
  rw_counts supers() { return {r[1].load(), w[1].load()}; }
  void reset() {
    for (int i = 0; i < 2; i++) r[i] = w[i] = 0;
  }
};

template <typename F>
void on_machine(F body, emu::Mode mode = emu::Mode::simulated, unsigned cpus = 2) {
  emu::Machine m(config(mode, cpus));
  m.exec([&] { body(m); });
}

}  // namespace

TEST_CASE("kernfs: tree, lookup, readdir, errnos and removal", "[kernel][kernfs]") {
  WarnCheck wc;
  long nodes0 = emu::kernfs_live_nodes();
  on_machine([](emu::Machine &) {
    kernfs_root *root = kernfs_create_root(nullptr, 0, nullptr);
    test_file tf;
    kernfs_node *a = kernfs_create_dir(root->kn, "a", 0755, nullptr);
    REQUIRE(!IS_ERR(a));
    kernfs_node *b = kernfs_create_dir(a, "b", 0755, nullptr);
    REQUIRE(!IS_ERR(b));
    REQUIRE(!IS_ERR(kernfs_create_file(b, "f", 0644, 0, &rw_ops, &tf)));
    REQUIRE(!IS_ERR(kernfs_create_file(a, "g", 0444, 0, &ro_ops, &tf)));
    CHECK(PTR_ERR(kernfs_create_dir(root->kn, "a", 0755, nullptr)) == -EEXIST);
    CHECK(PTR_ERR(kernfs_create_dir(root->kn, "x/y", 0755, nullptr)) == -EINVAL);
    CHECK(PTR_ERR(kernfs_create_dir(root->kn, "..", 0755, nullptr)) == -EINVAL);

    kernfs_node *f = kernfs_walk_and_get(root->kn, "a/b/f");
    REQUIRE(f);
    CHECK(kernfs_type(f) == KERNFS_FILE);
    CHECK(kernfs_path(f) == "/a/b/f");
    CHECK(kernfs_walk_and_get(root->kn, "a/b/nope") == nullptr);
    CHECK(kernfs_walk_and_get(root->kn, "a/g/x") == nullptr);  // through a file
    kernfs_node *same = kernfs_walk_and_get(root->kn, "a/./b/../b/f");
    CHECK(same == f);
    kernfs_put(same);

    std::vector<std::string> names;
    CHECK(kernfs_readdir(a, &names) == 0);
    CHECK(names == std::vector<std::string>{"b", "g"});
    CHECK(kernfs_readdir(f, &names) == -ENOTDIR);

    // Removing a subtree: lookups fail, the held node stays valid but inactive, adding under
    // a removed directory fails.
    kernfs_remove(b);
    CHECK(kernfs_walk_and_get(root->kn, "a/b") == nullptr);
    CHECK(!kernfs_active(f));
    CHECK(PTR_ERR(kernfs_create_file(b, "h", 0644, 0, &rw_ops, &tf)) == -ENOENT);
    kernfs_put(f);
    names.clear();
    CHECK(kernfs_readdir(a, &names) == 0);
    CHECK(names == std::vector<std::string>{"g"});
    CHECK(kernfs_remove_by_name(a, "g") == 0);
    CHECK(kernfs_remove_by_name(a, "g") == -ENOENT);

    // Rename.
    kernfs_node *c = kernfs_create_dir(root->kn, "c", 0755, nullptr);
    CHECK(kernfs_rename(a, c, "a2") == 0);
    CHECK(kernfs_path(a) == "/c/a2");
    CHECK(kernfs_rename(c, a, "loop") == -EINVAL);
    kernfs_destroy_root(root);
  });
  CHECK(emu::kernfs_live_nodes() == nodes0);
}

TEST_CASE("kernfs: kernfs_rwsem is taken for read by lookups and readdir, for write by "
          "creation and removal, and not at all by file operations", "[kernel][kernfs]") {
  WarnCheck wc;
  on_machine([](emu::Machine &) {
    kernfs_root *root = kernfs_create_root(nullptr, 0, nullptr);
    lock_counter lc(root);
    test_file tf;
    kernfs_node *d = kernfs_create_dir(root->kn, "d", 0755, nullptr);
    rw_counts c = lc.rwsem();
    CHECK(c.r == 0);
    CHECK(c.w == 2);  // kernfs_add_one, then kernfs_activate
    kernfs_create_file(d, "f", 0644, 0, &rw_ops, &tf);
    lc.reset();
    kernfs_node *f = kernfs_walk_and_get(root->kn, "d/f");
    kernfs_node *f2 = kernfs_find_and_get(d, "f");
    std::vector<std::string> names;
    kernfs_readdir(d, &names);
    c = lc.rwsem();
    CHECK(c.r == 3);
    CHECK(c.w == 0);
    lc.reset();
    kernfs_file *file = kernfs_fop_open(f, KF_O_RDWR);
    REQUIRE(!IS_ERR(file));
    std::string out;
    CHECK(kernfs_fop_read(file, &out, 0, 4096) == 12);
    CHECK(kernfs_fop_write(file, "x", 1, 0) == 1);
    kernfs_fop_release(file);
    c = lc.rwsem();
    CHECK(c.r == 0);
    CHECK(c.w == 0);
    kernfs_remove(d);
    CHECK(lc.rwsem().w >= 1);
    CHECK(lc.rwsem().r == 0);
    kernfs_put(f);
    kernfs_put(f2);
    kernfs_destroy_root(root);
  });
}

TEST_CASE("kernfs: removal drops kernfs_rwsem only to drain a node with active references or "
          "an open file to release (kernfs_drain skips drained nodes)", "[kernel][kernfs]") {
  WarnCheck wc;
  on_machine([](emu::Machine &) {
    kernfs_root *root = kernfs_create_root(nullptr, 0, nullptr);
    test_file tf;
    kernfs_node *d = kernfs_create_dir(root->kn, "d", 0755, nullptr);
    kernfs_node *f = kernfs_create_file(d, "f", 0644, 0, &rw_ops, &tf);  // open at removal
    REQUIRE(!IS_ERR(kernfs_create_file(d, "g", 0444, 0, &ro_ops, &tf)));  // never opened
    kernfs_node *h = kernfs_create_file(d, "h", 0644, 0, &rw_ops, &tf);  // opened, closed
    kernfs_file *ff = kernfs_fop_open(f, KF_O_RDWR);
    REQUIRE(!IS_ERR(ff));
    kernfs_file *hf = kernfs_fop_open(h, KF_O_RDWR);
    REQUIRE(!IS_ERR(hf));
    kernfs_fop_release(hf);
    CHECK(tf.releases == 1);
    lock_counter lc(root);
    kernfs_remove(d);
    // The removal's own write hold, and one more after f's drain released its open file; d, g
    // and h have no active reference and nothing to release, so the lock is kept over them.
    CHECK(lc.rwsem().w == 2);
    CHECK(tf.releases == 2);
    std::string out;
    CHECK(kernfs_fop_read(ff, &out, 0, 16) == -ENODEV);
    kernfs_fop_release(ff);
    CHECK(tf.releases == 2);  // released once, by the removal
    kernfs_destroy_root(root);
  });
}

TEST_CASE("kernfs: reads from an offset, NUL-terminated writes, -E2BIG, -EACCES at open",
          "[kernel][kernfs]") {
  WarnCheck wc;
  on_machine([](emu::Machine &) {
    kernfs_root *root = kernfs_create_root(nullptr, 0, nullptr);
    test_file tf;
    kernfs_node *f = kernfs_create_file(root->kn, "f", 0644, 0, &rw_ops, &tf);
    kernfs_node *s = kernfs_create_file(root->kn, "s", 0644, 0, &small_ops, &tf);
    kernfs_node *r = kernfs_create_file(root->kn, "r", 0444, 0, &ro_ops, &tf);

    kernfs_file *file = kernfs_fop_open(f, KF_O_RDWR);
    REQUIRE(!IS_ERR(file));
    CHECK(tf.opens == 1);
    std::string out;
    CHECK(kernfs_fop_read(file, &out, 6, 4096) == 6);
    CHECK(out == "world\n");
    out.clear();
    CHECK(kernfs_fop_read(file, &out, 100, 4096) == 0);
    CHECK(kernfs_fop_read(file, &out, 0, 5) == 5);
    CHECK(out == "hello");
    // The handler sees exactly len bytes and a NUL after them.
    CHECK(kernfs_fop_write(file, "12\0zz", 5, 0) == 5);
    CHECK(tf.last_write == "12");
    CHECK(tf.last_len == 5);
    // Without atomic_write_len a write is cut to one page.
    std::string big(PAGE_SIZE + 10, 'a');
    CHECK(kernfs_fop_write(file, big.data(), big.size(), 0) == static_cast<ssize_t>(PAGE_SIZE));
    kernfs_fop_release(file);
    CHECK(tf.releases == 1);

    kernfs_file *sf = kernfs_fop_open(s, KF_O_WRONLY);
    REQUIRE(!IS_ERR(sf));
    CHECK(kernfs_fop_write(sf, "123456789", 9, 0) == -E2BIG);
    CHECK(kernfs_fop_write(sf, "12345678", 8, 0) == 8);
    CHECK(kernfs_fop_read(sf, &out, 0, 10) == -EBADF);
    kernfs_fop_release(sf);

    CHECK(PTR_ERR(kernfs_fop_open(r, KF_O_WRONLY)) == -EACCES);
    CHECK(PTR_ERR(kernfs_fop_open(root->kn, 0)) == -EISDIR);
    kernfs_destroy_root(root);
  });
}

TEST_CASE("kernfs: removal waits for an in-flight read, releases open files once, and their "
          "later operations fail with -ENODEV", "[kernel][kernfs]") {
  for (emu::Mode mode : test::kBothModes) {
    SECTION(test::mode_name(mode)) {
      WarnCheck wc;
      emu::Machine m(config(mode, 2));
      kernfs_root *root = nullptr;
      kernfs_node *f = nullptr;
      test_file tf;
      tf.show_sleep_ms = 50;
      m.exec([&] {
        root = kernfs_create_root(nullptr, 0, nullptr);
        f = kernfs_create_file(root->kn, "f", 0644, 0, &rw_ops, &tf);
      });
      kernfs_file *reader_file = nullptr;
      std::atomic<bool> opened{false};
      std::uint64_t read_end = 0, remove_end = 0;
      m.spawn("reader", [&] {
        reader_file = kernfs_fop_open(f, KF_O_RDWR);
        opened = true;
        std::string out;
        CHECK(kernfs_fop_read(reader_file, &out, 0, 4096) == 12);
        read_end = ktime_get_ns();
      });
      m.spawn("remover", [&] {
        while (!opened || !tf.in_show) msleep(1);
        kernfs_remove(f);
        remove_end = ktime_get_ns();
      });
      m.run();
      CHECK(remove_end >= read_end);
      CHECK(tf.releases == 1);  // at drain
      m.exec([&] {
        std::string out;
        tf.show_sleep_ms = 0;
        CHECK(kernfs_fop_read(reader_file, &out, 0, 4096) == -ENODEV);
        CHECK(kernfs_fop_write(reader_file, "1", 1, 0) == -ENODEV);
        CHECK(PTR_ERR(kernfs_fop_open(f, KF_O_RDWR)) == -ENODEV);
        kernfs_fop_release(reader_file);
        CHECK(tf.releases == 1);  // not twice
        kernfs_destroy_root(root);
      });
    }
  }
}

TEST_CASE("kernfs_notify: every watcher of the file and of its directory gets IN_MODIFY from "
          "the notify work, which holds kernfs_supers_rwsem and kernfs_rwsem for read",
          "[kernel][kernfs][notify]") {
  for (emu::Mode mode : test::kBothModes) {
    SECTION(test::mode_name(mode)) {
      WarnCheck wc;
      on_machine([](emu::Machine &) {
        kernfs_root *root = kernfs_create_root(nullptr, 0, nullptr);
        kernfs_super_info *sb = kernfs_mount(root);
        test_file tf;
        kernfs_node *d = kernfs_create_dir(root->kn, "d", 0755, nullptr);
        kernfs_node *f = kernfs_create_file(d, "f", 0644, 0, &rw_ops, &tf);
        fsnotify_group *g1 = inotify_init();
        fsnotify_group *g2 = inotify_init();
        int wd1 = inotify_add_watch(g1, sb, f, IN_MODIFY);
        int wd2 = inotify_add_watch(g2, sb, f, IN_MODIFY | IN_DELETE_SELF);
        int wd3 = inotify_add_watch(g2, sb, d, IN_MODIFY);
        CHECK(wd1 == 1);
        CHECK(wd2 == 1);
        CHECK(wd3 == 2);
        CHECK(inotify_add_watch(g2, sb, f, IN_MODIFY) == wd2);  // same inode: same wd
        {
          lock_counter lc(root);
          kernfs_notify(f);
          emu::kernfs_flush_notify();
          CHECK(lc.supers().r == 1);
          CHECK(lc.rwsem().r == 1);
          CHECK(lc.rwsem().w == 0);
        }
        inotify_event ev;
        REQUIRE(inotify_read_event(g1, 0, &ev) == 1);
        CHECK(ev.wd == wd1);
        CHECK(ev.mask == IN_MODIFY);
        CHECK(inotify_read_event(g1, 0, &ev) == 0);
        REQUIRE(inotify_read_event(g2, 0, &ev) == 1);
        CHECK(ev.wd == wd2);
        CHECK(ev.name.empty());
        REQUIRE(inotify_read_event(g2, 0, &ev) == 1);
        CHECK(ev.wd == wd3);
        CHECK(ev.mask == IN_MODIFY);
        CHECK(ev.name == "f");
        CHECK(inotify_read_event(g2, 0, &ev) == 0);
        inotify_release(g1);
        inotify_release(g2);
        kernfs_kill_sb(sb);
        kernfs_destroy_root(root);
      }, mode);
    }
  }
}

TEST_CASE("kernfs_notify: a node queued and not yet delivered is queued once",
          "[kernel][kernfs][notify]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 2));
  kernfs_root *root = nullptr;
  kernfs_super_info *sb = nullptr;
  kernfs_node *x = nullptr, *y = nullptr;
  test_file tf;
  m.exec([&] {
    root = kernfs_create_root(nullptr, 0, nullptr);
    sb = kernfs_mount(root);
    x = kernfs_create_file(root->kn, "x", 0644, 0, &rw_ops, &tf);
    y = kernfs_create_file(root->kn, "y", 0644, 0, &rw_ops, &tf);
  });
  m.exec([&] {
    lock_counter lc(root);
    // The work pops x and blocks on kernfs_supers_rwsem; y is notified three times meanwhile.
    down_write(&root->kernfs_supers_rwsem);
    kernfs_notify(x);
    msleep(5);
    kernfs_notify(y);
    kernfs_notify(y);
    kernfs_notify(y);
    up_write(&root->kernfs_supers_rwsem);
    emu::kernfs_flush_notify();
    // One delivery for x, one for y.
    CHECK(lc.supers().r == 2);
    kernfs_kill_sb(sb);
    kernfs_destroy_root(root);
  });
}

TEST_CASE("kernfs_notify: delivery waits behind a kernfs_rwsem writer, unless the root has "
          "KERNFS_ROOT_NOTIFY_NO_RWSEM", "[kernel][kernfs][notify]") {
  for (bool no_rwsem : {false, true}) {
    SECTION(no_rwsem ? "no rwsem" : "kernel 6.19") {
      WarnCheck wc;
      emu::Machine m(config(emu::Mode::simulated, 2));
      kernfs_root *root = nullptr;
      kernfs_super_info *sb = nullptr;
      kernfs_node *f = nullptr;
      fsnotify_group *g = nullptr;
      lock_counter *lc = nullptr;
      test_file tf;
      m.exec([&] {
        root = kernfs_create_root(nullptr, no_rwsem ? KERNFS_ROOT_NOTIFY_NO_RWSEM : 0, nullptr);
        sb = kernfs_mount(root);
        f = kernfs_create_file(root->kn, "f", 0644, 0, &rw_ops, &tf);
        g = inotify_init();
        REQUIRE(inotify_add_watch(g, sb, f, IN_MODIFY) == 1);
        lc = new lock_counter(root);
      });
      int got = -1;
      std::uint64_t got_at = 0, t0 = 0;
      m.spawn("writer", [&] {
        down_write(&root->kernfs_rwsem);
        t0 = ktime_get_ns();
        kernfs_notify(f);
        msleep(100);
        up_write(&root->kernfs_rwsem);
      });
      m.spawn("watcher", [&] {
        inotify_event ev;
        got = inotify_read_event(g, msecs_to_jiffies(1000), &ev);
        got_at = ktime_get_ns();
      });
      m.run();
      CHECK(got == 1);
      if (no_rwsem) {
        CHECK(got_at - t0 < 100 * NSEC_PER_MSEC);
        CHECK(lc->rwsem().r == 0);
      } else {
        CHECK(got_at - t0 >= 100 * NSEC_PER_MSEC);
        CHECK(lc->rwsem().r == 1);
      }
      CHECK(lc->supers().r == 1);
      m.exec([&] {
        delete lc;
        inotify_release(g);
        kernfs_kill_sb(sb);
        kernfs_destroy_root(root);
      });
    }
  }
}

TEST_CASE("inotify: IN_DELETE_SELF and IN_IGNORED on removal, IN_IGNORED on rm_watch and "
          "unmount, merging, timeouts on the machine clock", "[kernel][kernfs][notify]") {
  WarnCheck wc;
  on_machine([](emu::Machine &) {
    kernfs_root *root = kernfs_create_root(nullptr, 0, nullptr);
    kernfs_super_info *sb = kernfs_mount(root);
    test_file tf;
    kernfs_node *d = kernfs_create_dir(root->kn, "d", 0755, nullptr);
    kernfs_node *f = kernfs_create_file(d, "f", 0644, 0, &rw_ops, &tf);
    kernfs_node *e = kernfs_create_file(root->kn, "e", 0644, 0, &rw_ops, &tf);
    fsnotify_group *g = inotify_init();
    CHECK(inotify_add_watch(g, sb, f, 0) == -EINVAL);
    int wf = inotify_add_watch(g, sb, f, IN_MODIFY | IN_DELETE_SELF);
    int wd = inotify_add_watch(g, sb, d, IN_MODIFY | IN_DELETE_SELF);
    int we = inotify_add_watch(g, sb, e, IN_MODIFY);
    inotify_event ev;
    // Nothing queued: the read waits the whole timeout, in virtual time.
    std::uint64_t t0 = ktime_get_ns();
    CHECK(inotify_read_event(g, 2 * HZ, &ev) == 0);
    CHECK(ktime_get_ns() - t0 >= 2 * NSEC_PER_SEC);
    CHECK(ktime_get_ns() - t0 < 2 * NSEC_PER_SEC + 2 * NSEC_PER_MSEC);

    // The test keeps f past its removal (the -ENOENT check below): a reference, as an open
    // inode would hold, keeps the node from being freed after the grace period.
    kernfs_get(f);
    kernfs_remove(d);
    // Leaves first: f's events, then d's.
    std::vector<std::pair<int, u32>> got;
    while (inotify_read_event(g, 0, &ev) == 1) got.push_back({ev.wd, ev.mask});
    CHECK(got == std::vector<std::pair<int, u32>>{{wf, IN_DELETE_SELF},
                                                  {wf, IN_IGNORED},
                                                  {wd, IN_DELETE_SELF},
                                                  {wd, IN_IGNORED}});
    CHECK(inotify_add_watch(g, sb, f, IN_MODIFY) == -ENOENT);
    kernfs_put(f);
    CHECK(inotify_rm_watch(g, wf) == -EINVAL);

    // Identical consecutive events merge.
    kernfs_notify(e);
    emu::kernfs_flush_notify();
    kernfs_notify(e);
    emu::kernfs_flush_notify();
    CHECK(inotify_queued(g) == 1);
    CHECK(inotify_read_event(g, 0, &ev) == 1);

    CHECK(inotify_rm_watch(g, we) == 0);
    REQUIRE(inotify_read_event(g, 0, &ev) == 1);
    CHECK(ev.wd == we);
    CHECK(ev.mask == IN_IGNORED);
    // Descriptors are not reused at once (idr_alloc_cyclic).
    int we2 = inotify_add_watch(g, sb, e, IN_MODIFY);
    CHECK(we2 == we + 1);
    kernfs_kill_sb(sb);
    REQUIRE(inotify_read_event(g, 0, &ev) == 1);
    CHECK(ev.wd == we2);
    CHECK(ev.mask == IN_IGNORED);
    inotify_release(g);
    kernfs_destroy_root(root);
  });
}

TEST_CASE("cgroup_file_notify: one notification per 10 ms, a burst gives one immediate and one "
          "deferred notification (11 ms later)", "[kernel][kernfs][notify]") {
  WarnCheck wc;
  on_machine([](emu::Machine &) {
    kernfs_root *root = kernfs_create_root(nullptr, 0, nullptr);
    kernfs_super_info *sb = kernfs_mount(root);
    test_file tf;
    kernfs_node *f = kernfs_create_file(root->kn, "f", 0644, 0, &rw_ops, &tf);
    cgroup_file cfile;
    // Without a node the call is only counted.
    cgroup_file_notify(&cfile);
    cgroup_file_set_kn(&cfile, f);
    fsnotify_group *g = inotify_init();
    inotify_add_watch(g, sb, f, IN_MODIFY);
    inotify_event ev;

    std::uint64_t t0 = ktime_get_ns();
    cgroup_file_notify(&cfile);
    CHECK(inotify_read_event(g, 1, &ev) == 1);  // at once
    CHECK(ktime_get_ns() - t0 < NSEC_PER_MSEC);
    for (int i = 0; i < 5; i++) cgroup_file_notify(&cfile);
    CHECK(inotify_read_event(g, msecs_to_jiffies(5), &ev) == 0);
    CHECK(inotify_read_event(g, msecs_to_jiffies(100), &ev) == 1);
    std::uint64_t dt = ktime_get_ns() - t0;
    // The timer armed for the end of the interval finds itself still inside it (jiffies ==
    // next) and fires again one tick later.
    CHECK(dt >= 11 * NSEC_PER_MSEC);
    CHECK(dt <= 12 * NSEC_PER_MSEC);
    CHECK(inotify_read_event(g, msecs_to_jiffies(100), &ev) == 0);  // only one deferred
    CHECK(atomic_long_read(&cfile.notified) == 7);
    // Past the interval: immediate again.
    std::uint64_t t1 = ktime_get_ns();
    cgroup_file_notify(&cfile);
    CHECK(inotify_read_event(g, 1, &ev) == 1);
    CHECK(ktime_get_ns() - t1 < NSEC_PER_MSEC);

    cgroup_file_notify(&cfile);  // deferred, then the file goes: nothing arrives
    cgroup_file_set_kn(&cfile, nullptr);
    CHECK(inotify_read_event(g, msecs_to_jiffies(50), &ev) == 0);
    inotify_release(g);
    kernfs_kill_sb(sb);
    kernfs_destroy_root(root);
  });
}
