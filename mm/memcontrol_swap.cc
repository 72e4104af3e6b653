// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_swap.cc: swap charging on cgroup v2 and the swap_cgroup records.
//
// Mirrors: mm/memcontrol.c (Linux 6.19): __mem_cgroup_try_charge_swap,
//   __mem_cgroup_uncharge_swap, mem_cgroup_get_nr_swap_pages; mm/swap_cgroup.c
// Emulation: swap_cgroup is a hash map (entry -> memcg id) under a spinlock; there is no swap
//   device, so the global free-swap cap of mem_cgroup_get_nr_swap_pages() is not applied.
// Emulation: v1's mem_cgroup_swapout (moving the memsw charge on swap-out) is not modelled yet.
#include <unordered_map>

#include "mm/memcontrol_folio.h"
#include "mm/memcontrol_internal.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/rcupdate.h"
#include "shim/spinlock.h"

namespace umemcg {

namespace {
DEFINE_SPINLOCK(swap_cgroup_lock);
std::unordered_map<unsigned long, unsigned short> g_swap_cgroup;  // under swap_cgroup_lock

void swap_cgroup_record(unsigned short id, swp_entry_t entry, unsigned int nr) {
  spin_guard g(&swap_cgroup_lock);
  for (unsigned int i = 0; i < nr; i++) g_swap_cgroup[entry.val + i] = id;
}

unsigned short swap_cgroup_clear(swp_entry_t entry, unsigned int nr) {
  spin_guard g(&swap_cgroup_lock);
  unsigned short id = 0;
  for (unsigned int i = 0; i < nr; i++) {
    auto it = g_swap_cgroup.find(entry.val + i);
    if (it == g_swap_cgroup.end()) continue;
    id = it->second;
    g_swap_cgroup.erase(it);
  }
  return id;
}
}  // namespace

unsigned short lookup_swap_cgroup_id(swp_entry_t entry) {
  spin_guard g(&swap_cgroup_lock);
  auto it = g_swap_cgroup.find(entry.val);
  return it == g_swap_cgroup.end() ? 0 : it->second;
}

// Declared in memcontrol.cc (static there in the kernel).
mem_cgroup *mem_cgroup_id_get_online_for_swap(mem_cgroup *memcg);
void mem_cgroup_id_put_many_for_swap(mem_cgroup *memcg, unsigned int n);
void mem_cgroup_id_get_many_for_swap(mem_cgroup *memcg, unsigned int n);

/**
 * __mem_cgroup_try_charge_swap - charge a swap slot for @f to its memcg (v2)
 * The memcg charged is the nearest online ancestor of the folio's memcg. A failure raises
 * SWAP_MAX and SWAP_FAIL and returns -ENOMEM; no slot at all (entry 0) raises SWAP_FAIL only.
 */
int __mem_cgroup_try_charge_swap(folio *f, swp_entry_t entry) {
  unsigned int nr_pages = folio_nr_pages(f);
  page_counter *counter;

  if (do_memsw_account()) return 0;
  mem_cgroup *memcg = folio_memcg(f);
  if (WARN_ON_ONCE(!memcg)) return 0;

  if (!entry.val) {
    memcg_memory_event(memcg, MEMCG_SWAP_FAIL);
    return 0;
  }
  memcg = mem_cgroup_id_get_online_for_swap(memcg);
  if (!mem_cgroup_is_root(memcg) && !page_counter_try_charge(&memcg->swap, nr_pages, &counter)) {
    memcg_memory_event(memcg, MEMCG_SWAP_MAX);
    memcg_memory_event(memcg, MEMCG_SWAP_FAIL);
    mem_cgroup_id_put_many_for_swap(memcg, 1);
    return -ENOMEM;
  }
  // One id reference per swapped page.
  if (nr_pages > 1) mem_cgroup_id_get_many_for_swap(memcg, nr_pages - 1);
  mod_memcg_state(memcg, MEMCG_SWAP, nr_pages);
  swap_cgroup_record(mem_cgroup_id(memcg), entry, nr_pages);
  return 0;
}

void __mem_cgroup_uncharge_swap(swp_entry_t entry, unsigned int nr_pages) {
  unsigned short id = swap_cgroup_clear(entry, nr_pages);
  rcu_read_lock();
  mem_cgroup *memcg = mem_cgroup_from_id(id);
  if (memcg) {
    if (!mem_cgroup_is_root(memcg)) {
      if (do_memsw_account())
        page_counter_uncharge(&memcg->memsw, nr_pages);
      else
        page_counter_uncharge(&memcg->swap, nr_pages);
    }
    mod_memcg_state(memcg, MEMCG_SWAP, -static_cast<long>(nr_pages));
    mem_cgroup_id_put_many_for_swap(memcg, nr_pages);
  }
  rcu_read_unlock();
}

long mem_cgroup_get_nr_swap_pages(mem_cgroup *memcg) {
  long nr_swap_pages = PAGE_COUNTER_MAX;
  if (do_memsw_account()) return nr_swap_pages;
  for (; !mem_cgroup_is_root(memcg); memcg = parent_mem_cgroup(memcg)) {
    long room = static_cast<long>(READ_ONCE(memcg->swap.max)) -
                static_cast<long>(page_counter_read(&memcg->swap));
    nr_swap_pages = std::min(nr_swap_pages, room);
  }
  return nr_swap_pages;
}

}  // namespace umemcg
