// SPDX-License-Identifier: GPL-2.0-only
// mm/workingset.cc: shadow entries and refault detection (see workingset.h).
//
// Mirrors: mm/workingset.c (Linux 6.19)
// Emulation: see workingset.h.
#include "mm/workingset.h"

#include "mm/memcontrol_iter.h"
#include "mm/swap.h"
#include "mm/vmscan.h"
#include "shim/rcupdate.h"

namespace umemcg {

unsigned long lruvec_subtree_lru_pages(mem_cgroup *memcg, lru_list lru) {
  unsigned long sum = 0;
  for (mem_cgroup *m = mem_cgroup_iter(memcg, nullptr, nullptr); m;
       m = mem_cgroup_iter(memcg, m, nullptr))
    sum += lruvec_lru_size(mem_cgroup_lruvec(m), lru);
  return sum;
}

void workingset_age_nonresident(lruvec *lv, unsigned long nr_pages) {
  for (mem_cgroup *m = lruvec_memcg(lv); m; m = parent_mem_cgroup(m))
    atomic_long_add(static_cast<long>(nr_pages), &mem_cgroup_lruvec(m)->nonresident_age);
}

shadow_entry workingset_eviction(folio *f, mem_cgroup *target_memcg) {
  lruvec *lv = mem_cgroup_lruvec(target_memcg);
  shadow_entry s;
  s.memcgid = mem_cgroup_id(lruvec_memcg(lv));
  s.eviction = static_cast<unsigned long>(atomic_long_read(&lv->nonresident_age));
  s.workingset = folio_test_workingset(f);
  workingset_age_nonresident(lv, folio_nr_pages(f));
  return s;
}

bool workingset_test_recent(const shadow_entry &shadow, bool file, bool *workingset) {
  *workingset = shadow.workingset;
  rcu_read_lock();
  mem_cgroup *eviction_memcg = mem_cgroup_from_id(shadow.memcgid);
  // The memcg that evicted it is gone: its workingset cannot be measured.
  if (!eviction_memcg || !css_tryget(&eviction_memcg->css)) {
    rcu_read_unlock();
    return false;
  }
  rcu_read_unlock();
  lruvec *lv = mem_cgroup_lruvec(eviction_memcg);
  unsigned long refault = static_cast<unsigned long>(atomic_long_read(&lv->nonresident_age));
  unsigned long distance = refault - shadow.eviction;

  // The workingset this memcg could hold: what would have had to be deactivated and evicted
  // for the refault to have stayed resident.
  unsigned long workingset_size = lruvec_subtree_lru_pages(eviction_memcg, LRU_ACTIVE_FILE);
  if (!file) workingset_size += lruvec_subtree_lru_pages(eviction_memcg, LRU_INACTIVE_FILE);
  if (mem_cgroup_get_nr_swap_pages(eviction_memcg) > 0 && total_swap_pages() > 0) {
    workingset_size += lruvec_subtree_lru_pages(eviction_memcg, LRU_ACTIVE_ANON);
    if (file) workingset_size += lruvec_subtree_lru_pages(eviction_memcg, LRU_INACTIVE_ANON);
  }
  css_put(&eviction_memcg->css);
  return distance <= workingset_size;
}

void workingset_refault(folio *f, const shadow_entry &shadow) {
  bool file = folio_is_file_lru(f);
  int nr = static_cast<int>(folio_nr_pages(f));
  bool workingset;
  mem_cgroup *memcg = folio_memcg(f);

  mod_memcg_lruvec_state(memcg, static_cast<node_stat_item>(WORKINGSET_REFAULT_BASE + file), nr);
  if (!workingset_test_recent(shadow, file, &workingset)) return;
  folio_set_active(f);
  workingset_age_nonresident(folio_lruvec(f), static_cast<unsigned long>(nr));
  mod_memcg_lruvec_state(memcg, static_cast<node_stat_item>(WORKINGSET_ACTIVATE_BASE + file), nr);
  if (workingset) {
    folio_set_workingset(f);
    mod_memcg_lruvec_state(memcg, static_cast<node_stat_item>(WORKINGSET_RESTORE_BASE + file),
                           nr);
    // lru_note_cost_refault(): a workingset folio refaulting costs like an I/O of its type.
    lru_note_cost(folio_lruvec(f), file, static_cast<unsigned int>(nr), 0);
  }
}

void workingset_activation(folio *f) {
  if (!folio_memcg(f)) return;
  workingset_age_nonresident(folio_lruvec(f), folio_nr_pages(f));
}

}  // namespace umemcg
