// SPDX-License-Identifier: GPL-2.0-only
// Tests of cgroup-bpf (kernel/cgroup_bpf.*): NONE / ALLOW_OVERRIDE / ALLOW_MULTI attach rules,
// effective-array order (own attachments first, then ancestors', attach order within a level),
// recomputation for the subtree and for new cgroups, detach, offline (defunct items, tryget_live
// fails), the static key, and readers walking effective arrays on real threads while
// attachments change.
#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#undef WARN
#include "kernel/cgroup.h"
#include "kernel/cgroup_bpf.h"
#include "shim/errno.h"
#include "shim/machine.h"
#include "shim/rcupdate.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;

namespace {

struct plain_css {
  cgroup_subsys_state css;
};
cgroup_subsys_state *p_alloc(cgroup_subsys_state *) { return &(new plain_css)->css; }
void p_free(cgroup_subsys_state *css) { delete container_of(css, plain_css, css); }
cgroup_subsys plain_ss = {"plain", p_alloc, nullptr, nullptr, nullptr, p_free, nullptr, nullptr, nullptr};

constexpr auto T = CGROUP_MEMCG_OPS;

// Names of the effective items of cgrp (item data points at a std::string).
std::string effective(cgroup *cgrp) {
  rcu_read_guard g;
  std::string out;
  if (const bpf_cgroup_array *a = cgroup_bpf_effective(cgrp->bpf, T))
    for (const bpf_cgroup_item *it : a->items) out += *static_cast<std::string *>(it->data);
  return out;
}

template <typename F>
void with_tree(F body, emu::Mode mode = emu::Mode::simulated) {
  emu::Machine m(config(mode, 2));
  m.exec([&] {
    int err = 1;
    cgroup_root *root = cgroup_setup_root(true, 0, &plain_ss, &err);
    REQUIRE(root);
    body(&root->cgrp);
    cgroup_destroy_root(root);
  });
  CHECK(emu::cgroup_live_css() == 0);
  CHECK_FALSE(cgroup_bpf_enabled(T));
}

cgroup *mk(cgroup *parent, const char *name) {
  int err = 0;
  cgroup *c = cgroup_mkdir(parent, name, &err);
  REQUIRE(c);
  return c;
}

}  // namespace

TEST_CASE("cgroup_bpf: MULTI: own attachments first, then the ancestors'", "[kernel][cgroup_bpf]") {
  with_tree([](cgroup *root) {
    std::string na = "a", nb = "b", nc = "c", nd = "d";
    bpf_cgroup_item ia{&na}, ib{&nb}, ic{&nc}, id{&nd};
    cgroup *p = mk(root, "p");
    cgroup *q = mk(p, "q");
    CHECK_FALSE(cgroup_bpf_enabled(T));
    REQUIRE(cgroup_bpf_attach(p, T, &ia, CGROUP_BPF_F_ALLOW_MULTI) == 0);
    CHECK(cgroup_bpf_enabled(T));
    REQUIRE(cgroup_bpf_attach(p, T, &ib, CGROUP_BPF_F_ALLOW_MULTI) == 0);
    REQUIRE(cgroup_bpf_attach(q, T, &ic, CGROUP_BPF_F_ALLOW_MULTI) == 0);
    CHECK(effective(root) == "");
    CHECK(effective(p) == "ab");
    CHECK(effective(q) == "cab");
    // A new cgroup inherits; one created below q sees q's and p's.
    cgroup *r = mk(q, "r");
    CHECK(effective(r) == "cab");
    CHECK(cgroup_bpf_attach(q, T, &ic, CGROUP_BPF_F_ALLOW_MULTI) == -EEXIST);
    // Flags must match within a cgroup.
    CHECK(cgroup_bpf_attach(q, T, &id, 0) == -EPERM);
    CHECK(cgroup_bpf_attach(q, T, &id, CGROUP_BPF_F_ALLOW_OVERRIDE | CGROUP_BPF_F_ALLOW_MULTI) ==
          -EINVAL);
    CHECK(cgroup_bpf_attach(q, T, &id, 1u << 5) == -EINVAL);
    // Detach recomputes the subtree.
    REQUIRE(cgroup_bpf_detach(T, &ia) == 0);
    CHECK(effective(r) == "cb");
    CHECK(ia.cgroup == nullptr);
    CHECK(cgroup_bpf_detach(T, &ia) == 0);  // no longer attached: nothing to undo
    REQUIRE(cgroup_bpf_detach(T, &ib) == 0);
    REQUIRE(cgroup_bpf_detach(T, &ic) == 0);
    CHECK(effective(r) == "");
    CHECK_FALSE(cgroup_bpf_enabled(T));
  });
}

TEST_CASE("cgroup_bpf: NONE forbids attachments below; OVERRIDE lets a descendant replace",
          "[kernel][cgroup_bpf]") {
  with_tree([](cgroup *root) {
    std::string na = "a", nb = "b", nc = "c";
    bpf_cgroup_item ia{&na}, ib{&nb}, ic{&nc};
    cgroup *p = mk(root, "p");
    cgroup *q = mk(p, "q");
    REQUIRE(cgroup_bpf_attach(p, T, &ia, 0) == 0);
    CHECK(effective(q) == "a");
    CHECK(cgroup_bpf_attach(q, T, &ib, 0) == -EPERM);
    CHECK(cgroup_bpf_attach(q, T, &ib, CGROUP_BPF_F_ALLOW_MULTI) == -EPERM);
    // A second non-MULTI attach on p replaces the first, which becomes defunct.
    REQUIRE(cgroup_bpf_attach(p, T, &ic, 0) == 0);
    CHECK(effective(q) == "c");
    CHECK(ia.cgroup == nullptr);
    CHECK(cgroup_bpf_detach(T, &ia) == 0);
    REQUIRE(cgroup_bpf_detach(T, &ic) == 0);

    REQUIRE(cgroup_bpf_attach(p, T, &ia, CGROUP_BPF_F_ALLOW_OVERRIDE) == 0);
    REQUIRE(cgroup_bpf_attach(q, T, &ib, CGROUP_BPF_F_ALLOW_OVERRIDE) == 0);
    cgroup *r = mk(q, "r");
    CHECK(effective(p) == "a");
    CHECK(effective(q) == "b");  // q's replaces p's for q's subtree
    CHECK(effective(r) == "b");
    // Below a non-MULTI level, a MULTI level still collects only itself and MULTI ancestors.
    REQUIRE(cgroup_bpf_detach(T, &ib) == 0);
    CHECK(effective(r) == "a");
    REQUIRE(cgroup_bpf_attach(r, T, &ib, CGROUP_BPF_F_ALLOW_MULTI) == 0);
    CHECK(effective(r) == "b");
    REQUIRE(cgroup_bpf_detach(T, &ib) == 0);
    REQUIRE(cgroup_bpf_detach(T, &ia) == 0);
  });
}

TEST_CASE("cgroup_bpf: offline makes attachments defunct and the cgroup not live",
          "[kernel][cgroup_bpf]") {
  // The items outlive the tree: the teardown offlines p with ia still attached.
  std::string na = "a", nb = "b";
  bpf_cgroup_item ia{&na}, ib{&nb};
  with_tree([&](cgroup *root) {
    cgroup *p = mk(root, "p");
    cgroup *q = mk(p, "q");
    REQUIRE(cgroup_bpf_attach(p, T, &ia, CGROUP_BPF_F_ALLOW_MULTI) == 0);
    REQUIRE(cgroup_bpf_attach(q, T, &ib, CGROUP_BPF_F_ALLOW_MULTI) == 0);
    CHECK(cgroup_bpf_tryget_live(q->bpf));
    REQUIRE(cgroup_rmdir(q) == 0);
    CHECK(ib.cgroup == nullptr);
    CHECK_FALSE(cgroup_bpf_tryget_live(q->bpf));
    CHECK(cgroup_bpf_attach(q, T, &ib, CGROUP_BPF_F_ALLOW_MULTI) == -ENOENT);
    CHECK(cgroup_bpf_detach(T, &ib) == 0);
    CHECK(cgroup_bpf_enabled(T));  // p's is still attached
    // Teardown offlines p and the root too.
  });
  // with_tree checked: nothing attached anywhere afterwards.
  CHECK(ia.cgroup == nullptr);
}

TEST_CASE("cgroup_bpf: readers walk effective arrays while attachments change (native)",
          "[kernel][cgroup_bpf]") {
  emu::Machine m(config(emu::Mode::native, 2));
  cgroup_root *root = nullptr;
  cgroup *p = nullptr, *q = nullptr;
  m.exec([&] {
    int err = 1;
    root = cgroup_setup_root(true, 0, &plain_ss, &err);
    REQUIRE(root);
    p = mk(&root->cgrp, "p");
    q = mk(p, "q");
  });
  std::vector<std::string> names(8);
  std::vector<bpf_cgroup_item> items(8);
  for (int i = 0; i < 8; i++) {
    names[i] = std::string(1, char('a' + i));
    items[i].data = &names[i];
  }
  std::atomic<bool> stop{false};
  std::atomic<long> seen{0}, bad{0};
  // A reader on one vCPU: every item it sees holds one of the names (ASan/TSan would flag a
  // freed array).
  emu::TaskOptions ro;
  ro.cpu = 1;
  m.spawn("reader", [&] {
    while (!stop.load()) {
      rcu_read_guard g;
      if (const bpf_cgroup_array *a = cgroup_bpf_effective(q->bpf, T))
        for (const bpf_cgroup_item *it : a->items) {
          const std::string &s = *static_cast<std::string *>(it->data);
          (s.size() == 1 ? seen : bad).fetch_add(1);
        }
    }
  }, ro);
  emu::TaskOptions wo;
  wo.cpu = 0;
  m.spawn("writer", [&] {
    for (int round = 0; round < 200; round++) {
      bpf_cgroup_item &it = items[round % 8];
      cgroup *where = round % 3 ? q : p;
      if (cgroup_bpf_attach(where, T, &it, CGROUP_BPF_F_ALLOW_MULTI) == 0 && round % 2)
        CHECK(cgroup_bpf_detach(T, &it) == 0);
    }
    for (bpf_cgroup_item &it : items) CHECK(cgroup_bpf_detach(T, &it) == 0);
    stop = true;
  }, wo);
  CHECK_FALSE(m.run().deadlock);
  CHECK(bad.load() == 0);
  m.exec([&] {
    CHECK(effective(q) == "");
    cgroup_destroy_root(root);
  });
  CHECK_FALSE(cgroup_bpf_enabled(T));
}
