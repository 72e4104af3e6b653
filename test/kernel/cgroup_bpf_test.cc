// SPDX-License-Identifier: GPL-2.0-only
// Tests of cgroup-bpf (kernel/cgroup_bpf.*): NONE / ALLOW_OVERRIDE / ALLOW_MULTI attach rules,
// effective-array order (own attachments first, then ancestors', attach order within a level),
// recomputation for the subtree and for new cgroups, detach, offline (defunct items, tryget_live
// fails), the static key, link replacement, per-type query (a query for one struct_ops type
// never reports another's attachments), and readers walking effective arrays on real threads while
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
std::string effective(cgroup *cgrp, cgroup_bpf_attach_type atype = T) {
  rcu_read_guard g;
  std::string out;
  if (const bpf_cgroup_array *a = cgroup_bpf_effective(cgrp->bpf, atype))
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
  CHECK_FALSE(cgroup_bpf_enabled(CGROUP_TCP_SOCK_OPS));
}

// The names of a query's items, and its count and flags, as "names/count/flags".
std::string query(cgroup *cgrp, cgroup_bpf_attach_type atype, u32 qflags, u32 max = 64,
                  int *ret = nullptr) {
  std::vector<const bpf_cgroup_item *> items;
  u32 flags = 99, count = 99;
  const int err = cgroup_bpf_query(cgrp, atype, qflags, &flags, &items, max, &count);
  if (ret) *ret = err;
  std::string out;
  for (const bpf_cgroup_item *it : items) out += *static_cast<std::string *>(it->data);
  return out + "/" + std::to_string(count) + "/" + std::to_string(flags);
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
    CHECK(cgroup_bpf_item_cgroup(&ia) == nullptr);
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
    CHECK(cgroup_bpf_item_cgroup(&ia) == nullptr);
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
    CHECK(cgroup_bpf_item_cgroup(&ib) == nullptr);
    CHECK_FALSE(cgroup_bpf_tryget_live(q->bpf));
    CHECK(cgroup_bpf_attach(q, T, &ib, CGROUP_BPF_F_ALLOW_MULTI) == -ENOENT);
    CHECK(cgroup_bpf_detach(T, &ib) == 0);
    CHECK(cgroup_bpf_enabled(T));  // p's is still attached
    // Teardown offlines p and the root too.
  });
  // with_tree checked: nothing attached anywhere afterwards.
  CHECK(cgroup_bpf_item_cgroup(&ia) == nullptr);
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

TEST_CASE("cgroup_bpf: a query reports only the attach type asked for", "[kernel][cgroup_bpf]") {
  // The posted series' patch 1: with two struct_ops attach types, a query for one must not
  // count or list the other's attachments (nor look at index 0 for every type).
  with_tree([](cgroup *root) {
    std::string na = "a", nb = "b", nt = "t", nu = "u";
    bpf_cgroup_item ia{&na}, ib{&nb}, it{&nt}, iu{&nu};
    cgroup *p = mk(root, "p");
    cgroup *q = mk(p, "q");
    REQUIRE(cgroup_bpf_attach(p, CGROUP_MEMCG_OPS, &ia, CGROUP_BPF_F_ALLOW_MULTI) == 0);
    REQUIRE(cgroup_bpf_attach(q, CGROUP_MEMCG_OPS, &ib, CGROUP_BPF_F_ALLOW_MULTI) == 0);
    REQUIRE(cgroup_bpf_attach(q, CGROUP_TCP_SOCK_OPS, &it, CGROUP_BPF_F_ALLOW_OVERRIDE) == 0);
    CHECK(query(q, CGROUP_MEMCG_OPS, 0) == "b/1/2");
    CHECK(query(q, CGROUP_TCP_SOCK_OPS, 0) == "t/1/1");
    CHECK(query(q, CGROUP_MEMCG_OPS, CGROUP_BPF_F_QUERY_EFFECTIVE) == "ba/2/2");
    CHECK(query(q, CGROUP_TCP_SOCK_OPS, CGROUP_BPF_F_QUERY_EFFECTIVE) == "t/1/1");
    CHECK(query(p, CGROUP_TCP_SOCK_OPS, 0) == "/0/0");
    CHECK(query(p, CGROUP_TCP_SOCK_OPS, CGROUP_BPF_F_QUERY_EFFECTIVE) == "/0/0");
    CHECK(query(p, CGROUP_MEMCG_OPS, 0) == "a/1/2");
    // The effective arrays and static keys are per type too.
    CHECK(effective(q, CGROUP_TCP_SOCK_OPS) == "t");
    CHECK(effective(p, CGROUP_TCP_SOCK_OPS) == "");
    CHECK(cgroup_bpf_enabled(CGROUP_TCP_SOCK_OPS));
    // A short buffer: the first items, the full count, -ENOSPC.
    int err = 0;
    CHECK(query(q, CGROUP_MEMCG_OPS, CGROUP_BPF_F_QUERY_EFFECTIVE, 1, &err) == "b/2/2");
    CHECK(err == -ENOSPC);
    // A count-only query, and bad arguments.
    u32 count = 0;
    CHECK(cgroup_bpf_query(q, CGROUP_MEMCG_OPS, 0, nullptr, nullptr, 0, &count) == 0);
    CHECK(count == 1);
    CHECK(query(q, CGROUP_MEMCG_OPS, 1u << 3, 64, &err) == "/99/99");
    CHECK(err == -EINVAL);
    CHECK(cgroup_bpf_query(q, MAX_CGROUP_BPF_ATTACH_TYPE, 0, nullptr, nullptr, 0, &count) ==
          -EINVAL);
    // Detaching one type leaves the other's attachments and key alone.
    REQUIRE(cgroup_bpf_detach(CGROUP_TCP_SOCK_OPS, &it) == 0);
    CHECK_FALSE(cgroup_bpf_enabled(CGROUP_TCP_SOCK_OPS));
    CHECK(cgroup_bpf_enabled(CGROUP_MEMCG_OPS));
    CHECK(query(q, CGROUP_MEMCG_OPS, CGROUP_BPF_F_QUERY_EFFECTIVE) == "ba/2/2");
    // An item attached under one type is not found under the other.
    CHECK(cgroup_bpf_replace(CGROUP_TCP_SOCK_OPS, &ib, &iu) == -ENOLINK);
    CHECK(cgroup_bpf_item_cgroup(&iu) == nullptr);
    REQUIRE(cgroup_bpf_detach(CGROUP_MEMCG_OPS, &ib) == 0);
    REQUIRE(cgroup_bpf_detach(CGROUP_MEMCG_OPS, &ia) == 0);
  });
}

TEST_CASE("cgroup_bpf: replace keeps the position, flags and subtree", "[kernel][cgroup_bpf]") {
  with_tree([](cgroup *root) {
    std::string na = "a", nb = "b", nc = "c", nx = "x";
    bpf_cgroup_item ia{&na}, ib{&nb}, ic{&nc}, ix{&nx};
    cgroup *p = mk(root, "p");
    cgroup *q = mk(p, "q");
    REQUIRE(cgroup_bpf_attach(p, T, &ia, CGROUP_BPF_F_ALLOW_MULTI) == 0);
    REQUIRE(cgroup_bpf_attach(p, T, &ib, CGROUP_BPF_F_ALLOW_MULTI) == 0);
    REQUIRE(cgroup_bpf_attach(q, T, &ic, CGROUP_BPF_F_ALLOW_MULTI) == 0);
    CHECK(effective(q) == "cab");
    REQUIRE(cgroup_bpf_replace(T, &ia, &ix) == 0);
    CHECK(effective(q) == "cxb");
    CHECK(effective(p) == "xb");
    CHECK(cgroup_bpf_item_cgroup(&ix) == p);
    CHECK(cgroup_bpf_item_cgroup(&ia) == nullptr);
    CHECK(query(p, T, 0) == "xb/2/2");
    // The old item is no longer attached; the new one cannot replace twice into place.
    CHECK(cgroup_bpf_replace(T, &ia, &ix) == -ENOLINK);
    CHECK(cgroup_bpf_replace(T, &ib, &ic) == -EEXIST);
    CHECK(cgroup_bpf_replace(T, &ib, nullptr) == -EINVAL);
    // The enabled count is unchanged: detaching everything turns the key off.
    REQUIRE(cgroup_bpf_detach(T, &ix) == 0);
    REQUIRE(cgroup_bpf_detach(T, &ib) == 0);
    REQUIRE(cgroup_bpf_detach(T, &ic) == 0);
    CHECK_FALSE(cgroup_bpf_enabled(T));
    // A defunct item (its cgroup went offline) cannot be replaced.
    REQUIRE(cgroup_bpf_attach(q, T, &ia, 0) == 0);
    REQUIRE(cgroup_rmdir(q) == 0);
    CHECK(cgroup_bpf_replace(T, &ia, &ix) == -ENOLINK);
  });
}

TEST_CASE("cgroup_bpf: readers see the old or the new item across replaces (native)",
          "[kernel][cgroup_bpf]") {
  emu::Machine m(config(emu::Mode::native, 2));
  cgroup_root *root = nullptr;
  cgroup *q = nullptr;
  std::string na = "a", nb = "b", nt = "t";
  bpf_cgroup_item ia{&na}, ib{&nb}, it{&nt};
  m.exec([&] {
    int err = 1;
    root = cgroup_setup_root(true, 0, &plain_ss, &err);
    REQUIRE(root);
    q = mk(&root->cgrp, "q");
    REQUIRE(cgroup_bpf_attach(q, T, &ia, 0) == 0);
    REQUIRE(cgroup_bpf_attach(q, CGROUP_TCP_SOCK_OPS, &it, 0) == 0);
  });
  std::atomic<bool> stop{false};
  std::atomic<long> seen{0}, bad{0};
  emu::TaskOptions ro;
  ro.cpu = 1;
  m.spawn("reader", [&] {
    do {  // at least once, however late the reader starts
      rcu_read_guard g;
      const bpf_cgroup_array *a = cgroup_bpf_effective(q->bpf, T);
      const bpf_cgroup_array *t = cgroup_bpf_effective(q->bpf, CGROUP_TCP_SOCK_OPS);
      // Exactly one memcg item, a or b; the other type's array is untouched.
      const bool ok = a && a->items.size() == 1 && t && t->items.size() == 1 &&
                      t->items[0] == &it && (a->items[0] == &ia || a->items[0] == &ib);
      (ok ? seen : bad).fetch_add(1);
    } while (!stop.load());
  }, ro);
  emu::TaskOptions wo;
  wo.cpu = 0;
  m.spawn("writer", [&] {
    for (int round = 0; round < 100; round++) {
      CHECK(cgroup_bpf_replace(T, &ia, &ib) == 0);
      CHECK(cgroup_bpf_replace(T, &ib, &ia) == 0);
    }
    stop = true;
  }, wo);
  CHECK_FALSE(m.run().deadlock);
  CHECK(bad.load() == 0);
  CHECK(seen.load() > 0);
  m.exec([&] {
    CHECK(effective(q) == "a");
    CHECK(cgroup_bpf_detach(T, &ia) == 0);
    CHECK(cgroup_bpf_detach(CGROUP_TCP_SOCK_OPS, &it) == 0);
    cgroup_destroy_root(root);
  });
  CHECK_FALSE(cgroup_bpf_enabled(T));
  CHECK_FALSE(cgroup_bpf_enabled(CGROUP_TCP_SOCK_OPS));
}
