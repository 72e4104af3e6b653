// SPDX-License-Identifier: GPL-2.0-only
// Tests of the charge entry points and uncharge (sections 2.1, 2.8), kmem/obj stock (2.9) and
// swap (2.10), in both stock designs.
#include "test/support/memcg_env.h"

#include "mm/memcontrol_folio.h"
#include "mm/memcontrol_internal.h"
#include "mm/mm_types.h"
#include "mm/obj_cgroup.h"
#include "shim/errno.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {
long usage(mem_cgroup *m) { return static_cast<long>(page_counter_read(&m->memory)); }
}  // namespace

TEST_CASE("folio charge: mm's memcg, active memcg, root; uncharge goes to the counters directly",
          "[mm][memcg][uncharge]") {
  for (bool pc : {false, true}) {
    WarnCheck wc;
    MemcgEnv env(v2_params(pc));
    mem_cgroup *a = env.mkdir(nullptr, "a");
    mem_cgroup *b = env.mkdir(nullptr, "b");
    mm_struct mm;
    folio f1, f2, f3, thp;
    thp.order = 9;
    env.run([&] {
      emu::mm_attach(&mm, a);
      CHECK(cgroup_rmdir(a->css.cgroup) == -EBUSY);  // populated
      REQUIRE(__mem_cgroup_charge(&f1, &mm, GFP_KERNEL) == 0);
      CHECK(folio_memcg(&f1) == a);
      // No mm: the active memcg wins, else current's mm, else the root.
      mem_cgroup *old = set_active_memcg(b);
      REQUIRE(__mem_cgroup_charge(&f2, nullptr, GFP_KERNEL) == 0);
      set_active_memcg(old);
      CHECK(folio_memcg(&f2) == b);
      REQUIRE(__mem_cgroup_charge(&f3, nullptr, GFP_KERNEL) == 0);  // kthread: root
      CHECK(folio_memcg(&f3) == root_mem_cgroup);
      REQUIRE(__mem_cgroup_charge(&thp, &mm, GFP_KERNEL) == 0);  // 512 > batch: exact
    });
    env.ledger.user_pages[a] += 1 + 512;
    env.ledger.user_pages[b] += 1;
    env.ledger.css_refs[a] += 3;  // mm, f1, thp
    env.ledger.css_refs[b] += 1;
    CHECK(usage(a) == 64 + 512);
    CHECK(usage(root_mem_cgroup) == 64 + 512 + 64);  // the root folio charged nothing
    env.check();
    env.run([&] {
      folio *batch[] = {&f1, &thp, &f2, &f3};
      __mem_cgroup_uncharge_folios(batch, 4);
      emu::mm_attach(&mm, nullptr);
    });
    env.ledger.user_pages[a] -= 513;
    env.ledger.user_pages[b] -= 1;
    env.ledger.css_refs[a] -= 3;
    env.ledger.css_refs[b] -= 1;
    CHECK(f1.memcg_data == 0);
    // Uncharged directly: the stock is untouched (63 still stocked for each).
    CHECK(usage(a) == 63);
    CHECK(usage(b) == 63);
    env.check();
    env.finish();
  }
}

TEST_CASE("replace and migrate folios", "[mm][memcg][uncharge]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  folio f, g2, h2;
  env.run([&] {
    REQUIRE(charge_memcg(&f, a, GFP_KERNEL) == 0);
    page_counter_set_max(&a->memory, 64);
    mem_cgroup_replace_folio(&f, &g2);  // forced even at the limit
    CHECK(usage(a) == 65);
    mem_cgroup_migrate(&g2, &h2);
    CHECK(usage(a) == 65);
    CHECK(folio_memcg(&h2) == a);
    CHECK(g2.memcg_data == 0);
    __mem_cgroup_uncharge(&f);
    __mem_cgroup_uncharge(&h2);
    drain_all_stock(a);
  });
  CHECK(usage(a) == 0);
  env.finish();
}

TEST_CASE("socket uncharge lands in the per-CPU stock", "[mm][memcg][uncharge]") {
  for (bool pc : {false, true}) {
    WarnCheck wc;
    MemcgEnv env(v2_params(pc));
    mem_cgroup *a = env.mkdir(nullptr, "a");
    env.run([&] {
      REQUIRE(mem_cgroup_sk_charge(a, 10, GFP_NOWAIT));
      CHECK(emu::memcg_page_state_local_sum(a, MEMCG_SOCK) == 10);
      CHECK(usage(a) == 64);
      mem_cgroup_sk_uncharge(a, 10);  // refill_stock: usage unchanged, stock 64
      CHECK(usage(a) == 64);
      CHECK(emu::memcg_page_state_local_sum(a, MEMCG_SOCK) == 0);
    });
    env.check();
    env.run([&] { drain_all_stock(a); });
    CHECK(usage(a) == 0);
    env.finish();
  }
}

TEST_CASE("kmem: byte-granular obj stock, leftover parked in the objcg, reparenting",
          "[mm][memcg][kmem]") {
  for (bool pc : {false, true}) {
    WarnCheck wc;
    MemcgEnv env(v2_params(pc));
    mem_cgroup *p = env.mkdir(nullptr, "p");
    mem_cgroup *a = env.mkdir(p, "a");
    obj_cgroup *objcg = a->objcg;
    REQUIRE(objcg);
    env.run([&] {
      REQUIRE(obj_cgroup_charge(objcg, GFP_KERNEL, 100) == 0);  // one page, 3996 stocked bytes
      env.ledger.obj_bytes[objcg] += 100;
      CHECK(emu::memcg_page_state_local_sum(a, MEMCG_KMEM) == 1);
      CHECK(emu::obj_stock_snapshot(0).nr_bytes == PAGE_SIZE - 100);
      REQUIRE(obj_cgroup_charge(objcg, GFP_KERNEL, 3000) == 0);  // served by the obj stock
      env.ledger.obj_bytes[objcg] += 3000;
      CHECK(emu::memcg_page_state_local_sum(a, MEMCG_KMEM) == 1);
    });
    env.check();
    // Freed on another CPU: that CPU's obj stock adopts the objcg and the bytes.
    env.run([&] {
      obj_cgroup_uncharge(objcg, 3000);
      env.ledger.obj_bytes[objcg] -= 3000;
      CHECK(emu::obj_stock_snapshot(1).nr_bytes == 3000);
    }, 1);
    env.check();
    // Draining parks the sub-page bytes of both CPUs in the objcg: 996 + 3000.
    env.run([&] { drain_all_stock(p); flush_workqueue(memcg_wq); });
    CHECK(atomic_read(&objcg->nr_charged_bytes) == 3996);
    env.check();
    // Remove a: its objcg is reparented; the live 100 bytes now belong to p.
    CHECK(env.rmdir(a) == 0);
    CHECK(objcg->memcg == p);
    env.run([&] {
      obj_cgroup_uncharge(objcg, 100);  // adopts the parked bytes: exactly one page, kept
      env.ledger.obj_bytes[objcg] -= 100;
      CHECK(emu::obj_stock_snapshot(0).nr_bytes == PAGE_SIZE);  // uncharged only when > a page
    });
    CHECK(emu::memcg_page_state_local_sum(p, MEMCG_KMEM) == 0);
    env.check();
    env.run([&] { drain_all_stock(root_mem_cgroup); flush_workqueue(memcg_wq); });
    // The page is uncharged from the parent now, while a keeps its charge.
    CHECK(emu::memcg_page_state_local_sum(p, MEMCG_KMEM) == -1);
    CHECK(emu::memcg_page_state_local_sum(a, MEMCG_KMEM) == 1);
    CHECK(usage(a) == 1);  // the dying a keeps its page in its counter
    CHECK(usage(p) == 0);  // while p got it back: p = a (1) + p own (-1)
    env.check();
    env.finish();
  }
}

TEST_CASE("kmem: reparenting moves a memcg's objcg and those reparented to it earlier, and "
          "only those, to the parent (memcg_reparent_objcgs)", "[mm][memcg][kmem]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *a = env.mkdir(p, "a");
  mem_cgroup *b = env.mkdir(a, "b");
  mem_cgroup *c = env.mkdir(p, "c");
  obj_cgroup *oa = a->objcg, *ob = b->objcg, *oc = c->objcg;
  REQUIRE(oa);
  REQUIRE(ob);
  REQUIRE(oc);
  // Live objects keep the objcgs after their memcgs go: each holds a reference, as a slab
  // object's obj_exts entry does.
  env.run([&] {
    for (obj_cgroup *o : {ob, oa, oc}) {
      obj_cgroup_get(o);
      env.ledger.objcg_refs[o]++;
    }
    REQUIRE(obj_cgroup_charge(ob, GFP_KERNEL, 64) == 0);
    env.ledger.obj_bytes[ob] += 64;
    REQUIRE(obj_cgroup_charge(oa, GFP_KERNEL, 32) == 0);
    env.ledger.obj_bytes[oa] += 32;
    REQUIRE(obj_cgroup_charge(oc, GFP_KERNEL, 16) == 0);
    env.ledger.obj_bytes[oc] += 16;
  });
  env.check();
  CHECK(env.rmdir(b) == 0);
  CHECK(ob->memcg == a);
  CHECK(oa->memcg == a);
  // a goes: its own objcg and b's, reparented to it, both point at p; c's stays.
  CHECK(env.rmdir(a) == 0);
  CHECK(oa->memcg == p);
  CHECK(ob->memcg == p);
  CHECK(oc->memcg == c);
  CHECK(c->objcg == oc);
  env.check();
  // p goes: all three now charge the root.
  CHECK(env.rmdir(c) == 0);
  CHECK(env.rmdir(p) == 0);
  CHECK(oa->memcg == root_mem_cgroup);
  CHECK(ob->memcg == root_mem_cgroup);
  CHECK(oc->memcg == root_mem_cgroup);
  env.run([&] {
    obj_cgroup_uncharge(ob, 64);
    env.ledger.obj_bytes[ob] -= 64;
    obj_cgroup_uncharge(oa, 32);
    env.ledger.obj_bytes[oa] -= 32;
    obj_cgroup_uncharge(oc, 16);
    env.ledger.obj_bytes[oc] -= 16;
    for (obj_cgroup *o : {ob, oa, oc}) {
      env.ledger.objcg_refs[o]--;
      obj_cgroup_put(o);
    }
  });
  env.check();
  env.finish();
}

TEST_CASE("kmem pages charge current's objcg and go back through refill_stock",
          "[mm][memcg][kmem]") {
  WarnCheck wc;
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mm_struct mm;
  folio page;
  env.run([&] {
    current->mm = &mm;
    emu::mm_attach(&mm, a);
    REQUIRE(__memcg_kmem_charge_page(&page, GFP_KERNEL, 2) == 0);
    CHECK(folio_memcg_kmem(&page));
    CHECK(emu::memcg_page_state_local_sum(a, MEMCG_KMEM) == 4);
    CHECK(usage(a) == 64);
    __memcg_kmem_uncharge_page(&page, 2);
    CHECK(usage(a) == 64);  // the 4 pages went into the stock (64 now)
    emu::mm_attach(&mm, nullptr);
    current->mm = nullptr;
    drain_all_stock(a);
  });
  CHECK(usage(a) == 0);
  env.finish();
}

TEST_CASE("swap: charge, events on failure, uncharge by the recorded id, offline parent",
          "[mm][memcg][swap]") {
  WarnCheck wc;
  memcg_boot_params params = v2_params();
  params.swap_pages = 1000;  // a device: its free slots cap mem_cgroup_get_nr_swap_pages
  MemcgEnv env(params);
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *a = env.mkdir(p, "a");
  folio f;
  env.run([&] {
    REQUIRE(charge_memcg(&f, a, GFP_KERNEL) == 0);
    CHECK(__mem_cgroup_try_charge_swap(&f, swp_entry_t{0}) == 0);  // no slot: SWAP_FAIL only
    CHECK(memory_events_local_read(a, MEMCG_SWAP_FAIL) == 1);
    page_counter_set_max(&a->swap, 0);
    CHECK(__mem_cgroup_try_charge_swap(&f, swp_entry_t{100}) == -ENOMEM);
    CHECK(memory_events_local_read(a, MEMCG_SWAP_MAX) == 1);
    CHECK(memory_events_local_read(a, MEMCG_SWAP_FAIL) == 2);
    page_counter_set_max(&a->swap, PAGE_COUNTER_MAX);
    CHECK(mem_cgroup_get_nr_swap_pages(a) == 1000);
    REQUIRE(__mem_cgroup_try_charge_swap(&f, swp_entry_t{100}) == 0);
    CHECK(page_counter_read(&a->swap) == 1);
    CHECK(page_counter_read(&p->swap) == 1);
    CHECK(lookup_swap_cgroup_id(swp_entry_t{100}) == mem_cgroup_id(a));
    CHECK(emu::memcg_page_state_local_sum(a, MEMCG_SWAP) == 1);
    __mem_cgroup_uncharge(&f);
  });
  env.check();
  // The swap record keeps a's id (and so its css) alive after rmdir.
  CHECK(env.rmdir(a) == 0);
  env.run([&] { emu::cgroup_flush_releases(); });
  CHECK(mem_cgroup_from_id(mem_cgroup_id(a)) == a);
  env.check();
  env.run([&] {
    __mem_cgroup_uncharge_swap(swp_entry_t{100}, 1);
    emu::cgroup_flush_releases();
  });
  CHECK(page_counter_read(&p->swap) == 0);
  // A folio of a removed cgroup swaps to the nearest online ancestor.
  mem_cgroup *b = env.mkdir(p, "b");
  folio g2;
  env.run([&] { REQUIRE(charge_memcg(&g2, b, GFP_KERNEL) == 0); });
  CHECK(env.rmdir(b) == 0);
  env.run([&] {
    REQUIRE(__mem_cgroup_try_charge_swap(&g2, swp_entry_t{200}) == 0);
    CHECK(lookup_swap_cgroup_id(swp_entry_t{200}) == mem_cgroup_id(p));
    __mem_cgroup_uncharge(&g2);
    __mem_cgroup_uncharge_swap(swp_entry_t{200}, 1);
    drain_all_stock(root_mem_cgroup);
  });
  env.finish();
}
