// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_swap.cc: swap charging (v2), the memsw move at swap-out (v1), the swap-in
// charge, and the swap_cgroup records.
//
// Mirrors: mm/memcontrol.c (Linux 6.19): __mem_cgroup_try_charge_swap,
//   __mem_cgroup_uncharge_swap, mem_cgroup_get_nr_swap_pages, mem_cgroup_swapin_charge_folio,
//   mem_cgroup_swapin_uncharge_swap; mm/memcontrol-v1.c (memcg1_swapout); mm/swap_cgroup.c
// Emulation: swap_cgroup is a hash map (entry -> memcg id) under a spinlock.
// Emulation: memcg1_swapout runs with the folio isolated and locked by reclaim (the kernel runs
//   it under the swap cache's xarray lock with interrupts off); nothing else can reach the folio.
#include <unordered_map>

#include "mm/memcontrol_folio.h"
#include "mm/memcontrol_internal.h"
#include "mm/memcontrol_v1_events.h"
#include "mm/swapfile.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/rcupdate.h"
#include "shim/spinlock.h"

namespace umemcg {

namespace {
DEFINE_SPINLOCK(swap_cgroup_lock);
std::unordered_map<unsigned long, unsigned short> g_swap_cgroup
    GUARDED_BY(swap_cgroup_lock);

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
  long nr_swap_pages = get_nr_swap_pages();
  if (do_memsw_account()) return nr_swap_pages;
  for (; !mem_cgroup_is_root(memcg); memcg = parent_mem_cgroup(memcg)) {
    long room = static_cast<long>(READ_ONCE(memcg->swap.max)) -
                static_cast<long>(page_counter_read(&memcg->swap));
    nr_swap_pages = std::min(nr_swap_pages, room);
  }
  return nr_swap_pages;
}

void memcg1_swapout(folio *f, swp_entry_t entry) {
  if (!do_memsw_account()) return;
  mem_cgroup *memcg = folio_memcg(f);
  if (!memcg) return;
  // The record goes to the nearest online ancestor, with one id reference per page.
  mem_cgroup *swap_memcg = mem_cgroup_id_get_online_for_swap(memcg);
  unsigned int nr_entries = folio_nr_pages(f);
  if (nr_entries > 1) mem_cgroup_id_get_many_for_swap(swap_memcg, nr_entries - 1);
  mod_memcg_state(swap_memcg, MEMCG_SWAP, nr_entries);
  swap_cgroup_record(mem_cgroup_id(swap_memcg), entry, nr_entries);

  f->memcg_data = 0;
  // The memory charge goes; the memsw charge stays for the slot (moved to swap_memcg).
  if (!mem_cgroup_is_root(memcg)) page_counter_uncharge(&memcg->memory, nr_entries);
  if (memcg != swap_memcg) {
    if (!mem_cgroup_is_root(swap_memcg)) page_counter_charge(&swap_memcg->memsw, nr_entries);
    page_counter_uncharge(&memcg->memsw, nr_entries);
  }
  memcg1_check_events(memcg, nr_entries);  // memcg1_charge_statistics' page events
  css_put(&memcg->css);  // the folio's reference
}

int mem_cgroup_swapin_charge_folio(folio *f, mm_struct *mm, gfp_t gfp, swp_entry_t entry) {
  unsigned short id = lookup_swap_cgroup_id(entry);
  rcu_read_lock();
  mem_cgroup *memcg = mem_cgroup_from_id(id);
  // The recorded memcg if it is still online, else the faulting mm's.
  if (!memcg || !css_tryget_online(&memcg->css)) memcg = nullptr;
  rcu_read_unlock();
  if (!memcg) memcg = get_mem_cgroup_from_mm(mm);
  int ret = charge_memcg(f, memcg, gfp);
  css_put(&memcg->css);
  return ret;
}

void mem_cgroup_swapin_uncharge_swap(swp_entry_t entry, unsigned int nr_pages) {
  // v1: the new folio's memsw charge replaces the slot's, which goes now (the slot may live on).
  // v2: the swap charge lives as long as the slot.
  if (do_memsw_account()) __mem_cgroup_uncharge_swap(entry, nr_pages);
}

}  // namespace umemcg
