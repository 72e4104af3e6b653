// SPDX-License-Identifier: GPL-2.0-only
// test/mm/kernfs_memcg_test.cc: kernfs notification with memcg: the inotify event a delivery
// allocates is charged (GFP_KERNEL_ACCOUNT, through shim/slab.h's hook) to the listener's memcg,
// not to the notifying task's.
#include <catch2/catch.hpp>

#include <string>

#undef WARN
#include "kernel/cgroup.h"
#include "kernel/kernfs/kernfs.h"
#include "kernel/notify/inotify.h"
#include "mm/memcontrol_stat.h"
#include "mm/mm_types.h"
#include "shim/errno.h"
#include "shim/machine.h"
#include "shim/slab.h"
#include "test/support/machine_fixture.h"
#include "test/support/memcg_env.h"

using namespace umemcg;
using umemcg::test::WarnCheck;

namespace {
struct test_file {
  std::string content = "x\n";
};
int t_show(seq_file *sf, void *) {
  seq_puts(sf, static_cast<test_file *>(sf->of->kn->priv)->content.c_str());
  return 0;
}
const kernfs_ops rw_ops = {nullptr, nullptr, t_show, nullptr, 0};
}  // namespace

TEST_CASE("inotify: the event of a delivery is charged to the listener's memcg, not to the "
          "notifying task's", "[kernel][kernfs][notify][memcg]") {
  WarnCheck wc;
  test::MemcgEnv env(test::v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mem_cgroup *b = env.mkdir(nullptr, "b");
  mm_struct mm_a, mm_b;
  kernfs_root *root = nullptr;
  kernfs_super_info *sb = nullptr;
  kernfs_node *f = nullptr;
  fsnotify_group *g = nullptr;
  test_file tf;
  long bytes0 = emu::kmalloc_charged_bytes();
  env.run([&] {
    emu::mm_attach(&mm_a, a);
    emu::mm_attach(&mm_b, b);
    root = kernfs_create_root(nullptr, 0, nullptr);
    sb = kernfs_mount(root);
    f = kernfs_create_file(root->kn, "f", 0644, 0, &rw_ops, &tf);
    current->mm = &mm_a;  // the listener runs in a
    g = inotify_init();
    REQUIRE(!IS_ERR(g));
    REQUIRE(inotify_add_watch(g, sb, f, IN_MODIFY) == 1);
    current->mm = nullptr;
  });
  long setup_bytes = emu::kmalloc_charged_bytes() - bytes0;
  CHECK(setup_bytes > 0);  // group and mark, charged to a
  CHECK(emu::memcg_page_state_local_sum(a, MEMCG_KMEM) >= 1);
  CHECK(emu::memcg_page_state_local_sum(b, MEMCG_KMEM) == 0);
  env.run([&] {
    current->mm = &mm_b;  // the notifier runs in b
    kernfs_notify(f);
    current->mm = nullptr;
    emu::kernfs_flush_notify();
  });
  long event_bytes = emu::kmalloc_charged_bytes() - bytes0 - setup_bytes;
  CHECK(event_bytes == static_cast<long>(sizeof(inotify_event_info)));
  CHECK(emu::memcg_page_state_local_sum(b, MEMCG_KMEM) == 0);
  env.ledger.css_refs[a] += 2;  // mm_a and the group's memcg
  env.ledger.css_refs[b] += 1;  // mm_b
  env.run([&] {
    inotify_event ev;
    CHECK(inotify_read_event(g, 0, &ev) == 1);
    inotify_release(g);
    kernfs_kill_sb(sb);
    kernfs_destroy_root(root);
  });
  env.ledger.css_refs[a] -= 1;
  CHECK(emu::kmalloc_charged_bytes() == bytes0);
  env.run([&] {
    emu::mm_attach(&mm_a, nullptr);
    emu::mm_attach(&mm_b, nullptr);
  });
  env.ledger.css_refs[a] -= 1;
  env.ledger.css_refs[b] -= 1;
  env.release_all();
  env.finish();
}
