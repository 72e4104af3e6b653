// SPDX-License-Identifier: GPL-2.0-only
// Tests of kernel memory in the machine's RAM (mm/obj_cgroup.h, mm/page_alloc.h): the whole
// pages charged for slab objects through the obj stock take pages of RAM as they are charged and
// give them back as they are uncharged; under global pressure such a charge reclaims, and a
// non-blocking one that finds no page fails whole.
#include "test/mm/mm_test_util.h"

#include "mm/obj_cgroup.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

long ev(mem_cgroup *m, int item) { return static_cast<long>(emu::memcg_events_local_sum(m, item)); }

}  // namespace

TEST_CASE("kernel memory takes pages of the machine's RAM as it is charged",
          "[mm][global][kmem]") {
  WarnCheck wc;
  MemcgEnv env(with_ram(v2_params(), 1000));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  obj_cgroup *objcg = a->objcg;
  REQUIRE(objcg);
  env.run([&] {
    // One page charged (the rest of it stocked): one page of RAM.
    REQUIRE(obj_cgroup_charge(objcg, GFP_KERNEL, 100) == 0);
    env.ledger.obj_bytes[objcg] += 100;
    CHECK(nr_free_pages() == 999);
    CHECK(emu::slab_ram_pages() == 1);
    // Served by the obj stock: no new page.
    REQUIRE(obj_cgroup_charge(objcg, GFP_KERNEL, 3000) == 0);
    env.ledger.obj_bytes[objcg] += 3000;
    CHECK(nr_free_pages() == 999);
    // Three pages and a bit: four more pages.
    REQUIRE(obj_cgroup_charge(objcg, GFP_KERNEL, 3 * PAGE_SIZE + 10) == 0);
    env.ledger.obj_bytes[objcg] += 3 * PAGE_SIZE + 10;
    CHECK(nr_free_pages() == 995);
    CHECK(emu::memcg_page_state_local_sum(a, MEMCG_KMEM) == 5);
    CHECK(ram_used() == folio_pages_held());
    obj_cgroup_uncharge(objcg, 100);
    obj_cgroup_uncharge(objcg, 3000);
    obj_cgroup_uncharge(objcg, 3 * PAGE_SIZE + 10);
    env.ledger.obj_bytes[objcg] = 0;
    drain_charges();
    CHECK(emu::memcg_page_state_local_sum(a, MEMCG_KMEM) == 0);
    CHECK(emu::slab_ram_pages() == 0);
    CHECK(nr_free_pages() == 1000);
  });
  env.check();

  // Under global pressure a kmem charge reclaims others' memory, as any allocation does; a
  // non-blocking one that finds no page fails and leaves nothing charged.
  mem_cgroup *b = env.mkdir(nullptr, "b");
  env.run([&] {
    inode *f = cached_file(b, 900);
    lru_add_drain_all();
    const size_t big = 200 * PAGE_SIZE;
    REQUIRE(obj_cgroup_charge(objcg, GFP_KERNEL, big) == 0);
    env.ledger.obj_bytes[objcg] += big;
    CHECK(emu::memcg_page_state_local_sum(a, MEMCG_KMEM) == 200);
    CHECK(lru_total(b) <= 900 - 200 + 93);
    CHECK(ev(b, PGSTEAL_DIRECT) + ev(b, PGSTEAL_KSWAPD) > 0);
    CHECK(ram_used() == folio_pages_held());
    emu::iput(f);
    drain_charges();
    // Nothing reclaimable left and no reserves: the charge fails whole.
    AnonHolder h(b, 1000 - 200 - 80);
    unsigned long free = nr_free_pages();
    CHECK(obj_cgroup_charge(objcg, GFP_NOWAIT, 40 * PAGE_SIZE) == -ENOMEM);
    CHECK(nr_free_pages() == free);
    CHECK(emu::memcg_page_state_local_sum(a, MEMCG_KMEM) == 200);
    CHECK(h.kill() == 137);
    obj_cgroup_uncharge(objcg, big);
    env.ledger.obj_bytes[objcg] -= big;
    drain_charges();
    CHECK(nr_free_pages() == 1000);
  });
  env.finish();
}
