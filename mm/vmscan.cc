// SPDX-License-Identifier: GPL-2.0-only
// mm/vmscan.cc: memcg reclaim over the per-memcg LRU (see vmscan.h).
//
// try_to_free_mem_cgroup_pages() scans the target's subtree at priorities 12 down to 0; at
// each priority every memcg of the walk (a shared round-robin walk that stops once the goal is
// met) gets its effective protection computed, is skipped when below memory.min (or below
// memory.low outside the low-override pass), and has its LRU lists scanned in proportion to
// size >> priority, reduced by its protection. Active lists are aged into the inactive ones;
// inactive folios that were not referenced since the last scan are reclaimed: clean page-cache
// folios leave the cache with a shadow entry and are freed and uncharged; anon folios get a swap
// slot (with its swap charge: a refusal activates them), their page table entry becomes a swap
// entry, they are written out and freed, leaving a shadow entry in the slot (v1: their memsw
// charge moves to the slot). Without swap space the memcg may use, anon lists are not scanned.
//
// Mirrors: mm/vmscan.c (Linux 6.19)
// Each pass reports its efficiency to vmpressure (mm/vmpressure.h), unless proactive.
// kswapd (balance_pgdat, its thread in vmscan_kswapd.cc) reclaims through the same shrink_node()
// and memcg walk as direct reclaim, with the root as the target: a full walk every pass,
// memory.min and memory.low skipped (kswapd has no low-override pass), anon aged in the
// background (kswapd_age_node), the high watermark in pages asked for per pass and the priority
// raised only when a pass scanned less than that. Its pages scanned and stolen count as
// PGSCAN_KSWAPD/PGSTEAL_KSWAPD of the lists' memcgs; direct reclaim's as PGSCAN_DIRECT/
// PGSTEAL_DIRECT, memory.reclaim's as PGSCAN_PROACTIVE/PGSTEAL_PROACTIVE. Any reclaim that
// frees a page resets kswapd_failures.
// Emulation: single node and zone; no writeback, dirty throttling, shrinkers (slab reclaim),
//   demotion or MGLRU; too_many_isolated() never stalls (isolation is bounded by
//   SWAP_CLUSTER_MAX per reclaimer) and direct reclaimers are never throttled on
//   pfmemalloc_wait (throttle_direct_reclaim).
// The node's vm events (mm/vmstat.h) are counted as the kernel counts them: PGSCAN_*/
// PGSTEAL_* of the reclaimer and PGREFILL for global reclaim only (not cgroup_reclaim()),
// PGSCAN_ANON/FILE, PGSTEAL_ANON/FILE, PGACTIVATE, PGDEACTIVATE, PSWPOUT and PGPGOUT for every
// reclaim, ALLOCSTALL_NORMAL per do_try_to_free_pages() round of global direct reclaim,
// PAGEOUTRUN per balance_pgdat(). /proc/sys/vm/swappiness is vm_swappiness
// (vmscan_sysctl_table).
// Emulation: global reclaim (try_to_free_pages, balance_pgdat) has no file_is_tiny balance, no
//   v1 soft-limit reclaim pass, no watermark boost and no cache_trim_mode retry in
//   balance_pgdat.
// Emulation: inactive_is_low reads the exact list sizes of the subtree (the kernel reads the
//   rstat aggregates, as fresh as their last flush); the refault snapshot reads the statistics.
// Emulation: each scanned page costs reclaim_scan, each memcg visited reclaim_visit and each
//   page written to swap swap_out of machine time (mm/cost_model.h, docs/memory-model.md); the
//   walk's visit cost keeps a reclaimer that finds nothing from stopping the virtual clock, so
//   that others (an exiting OOM victim) progress.
// Emulation: swap writeback completes synchronously, so a swapped-out folio is freed in the pass
//   that wrote it (the kernel's stays in the swap cache under writeback and a later pass frees
//   it); see mm/swapfile.h.
#include "mm/vmscan.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "kernel/sysctl.h"
#include "mm/cost_model.h"
#include "mm/filemap.h"
#include "mm/memcontrol_folio.h"
#include "mm/memcontrol_iter.h"
#include "mm/page_alloc.h"
#include "mm/page_counter.h"
#include "mm/rmap.h"
#include "mm/swap.h"
#include "mm/vmpressure.h"
#include "mm/vmstat.h"
#include "mm/workingset.h"
#include "shim/kthread.h"
#include "shim/machine.h"
#include "shim/sched.h"

namespace umemcg {

namespace {

struct scan_control {
  unsigned long nr_to_reclaim = 0;
  mem_cgroup *target_mem_cgroup = nullptr;
  unsigned long anon_cost = 0, file_cost = 0;
  int *proactive_swappiness = nullptr;
  bool may_deactivate_anon = false, may_deactivate_file = false;
  bool force_deactivate = false, skipped_deactivate = false;
  bool may_writepage = true, may_unmap = true, may_swap = false, proactive = false;
  bool memcg_low_reclaim = false, memcg_low_skipped = false, memcg_full_walk = false;
  bool cache_trim_mode = false;
  // cgroup_reclaim(): reclaim for a memcg's limit or memory.reclaim; false for the global
  // direct reclaim of an allocation (try_to_free_pages), whose target is the root.
  bool cgroup_reclaim = true;
  int priority = DEF_PRIORITY;
  gfp_t gfp_mask = 0;
  unsigned long nr_scanned = 0, nr_reclaimed = 0;
};

enum scan_balance { SCAN_EQUAL, SCAN_FRACT, SCAN_ANON, SCAN_FILE };
enum folio_references {
  FOLIOREF_RECLAIM,
  FOLIOREF_RECLAIM_CLEAN,
  FOLIOREF_KEEP,
  FOLIOREF_ACTIVATE
};

unsigned long int_sqrt(unsigned long x) {
  unsigned long r = 0;
  while ((r + 1) * (r + 1) <= x) r++;
  return r;
}

int sc_swappiness(const scan_control *sc, mem_cgroup *memcg) {
  return sc->proactive && sc->proactive_swappiness ? *sc->proactive_swappiness
                                                   : mem_cgroup_swappiness(memcg);
}

// can_reclaim_anon_pages(): swap space this memcg may still use (free swap, and v2 swap.max).
bool can_reclaim_anon_pages(mem_cgroup *memcg) { return mem_cgroup_get_nr_swap_pages(memcg) > 0; }
bool can_age_anon_pages() { return total_swap_pages() > 0; }

bool folio_evictable(const folio *f) { return !folio_test_mlocked(f); }

// isolate_lru_folios(): up to @nr_to_scan pages from the tail of @lru onto @dst.
unsigned long isolate_lru_folios(unsigned long nr_to_scan, lruvec *lv, list_head *dst,
                                 unsigned long *nr_scanned, const scan_control *sc, lru_list lru)
    REQUIRES(lv->lru_lock) {
  list_head *src = &lv->lists[lru];
  unsigned long scan = 0, nr_taken = 0;
  // Folios that cannot be taken go back to the head, as the kernel's list_move(src).
  list_head skipped;
  while (scan < nr_to_scan && !list_empty(src)) {
    folio *f = list_entry(src->prev, folio, lru);
    unsigned long nr = folio_nr_pages(f);
    scan += nr;
    if (!folio_test_lru(f) || (!sc->may_unmap && folio_mapped(f)) || !folio_try_get(f)) {
      list_move(&f->lru, &skipped);
      continue;
    }
    if (!folio_test_clear_lru(f)) {
      // Whoever cleared PG_lru holds a reference, so this cannot be the last one.
      WARN_ON_ONCE(folio_put_testzero(f));
      list_move(&f->lru, &skipped);
      continue;
    }
    nr_taken += nr;
    list_move(&f->lru, dst);
  }
  while (!list_empty(&skipped)) list_move(skipped.prev, src);
  update_lru_size(lv, lru, -static_cast<long>(nr_taken));
  *nr_scanned = scan;
  return nr_taken;
}

// move_folios_to_lru(): puts isolated folios back (the list each belongs on, at its head) and
// drops the isolation reference; folios whose last reference that was are freed after unlock.
unsigned long move_folios_to_lru(lruvec *lv, list_head *list) {
  unsigned long nr_moved = 0;
  folio *dead[PAGEVEC_SIZE];
  unsigned int ndead = 0;
  spin_lock_irq(&lv->lru_lock);
  while (!list_empty(list)) {
    folio *f = list_entry(list->prev, folio, lru);
    list_del_init(&f->lru);
    if (!folio_evictable(f)) {
      folio_clear_active(f);
      folio_set_unevictable(f);
    }
    folio_set_lru(f);
    lruvec_add_folio(lv, f);
    if (folio_put_testzero(f)) {
      // The isolation held the last reference (unmapped or truncated meanwhile).
      folio_clear_lru(f);
      lruvec_del_folio(lv, f);
      dead[ndead++] = f;
      if (ndead == PAGEVEC_SIZE) {
        spin_unlock_irq(&lv->lru_lock);
        __mem_cgroup_uncharge_folios(dead, ndead);
        free_unref_folios(dead, ndead);
        ndead = 0;
        spin_lock_irq(&lv->lru_lock);
      }
      continue;
    }
    nr_moved += folio_nr_pages(f);
  }
  spin_unlock_irq(&lv->lru_lock);
  if (ndead) {
    __mem_cgroup_uncharge_folios(dead, ndead);
    free_unref_folios(dead, ndead);
  }
  return nr_moved;
}

folio_references folio_check_references(folio *f, const scan_control *sc) {
  unsigned long vm_flags;
  int referenced_ptes = folio_referenced(f, true, sc->target_mem_cgroup, &vm_flags);
  // A folio found in a VM_LOCKED mapping is activated (and ends up unevictable).
  if (vm_flags & VM_LOCKED) return FOLIOREF_ACTIVATE;
  if (referenced_ptes == -1) return FOLIOREF_KEEP;
  bool referenced_folio = folio_test_clear_referenced(f);
  if (referenced_ptes) {
    // A mapped folio needs two rounds of use (or two mappings) to be activated.
    folio_set_referenced(f);
    if (referenced_folio || referenced_ptes > 1) return FOLIOREF_ACTIVATE;
    return FOLIOREF_KEEP;
  }
  if (referenced_folio && folio_is_file_lru(f)) return FOLIOREF_RECLAIM_CLEAN;
  return FOLIOREF_RECLAIM;
}

// shrink_folio_list(): decides each isolated folio's fate; the reclaimed ones are freed and
// uncharged in one batch, the others are left on @list for move_folios_to_lru. *@nr_pageout gets
// the pages written to swap.
unsigned long shrink_folio_list(list_head *list, scan_control *sc, unsigned long *nr_pageout) {
  unsigned long nr_reclaimed = 0;
  *nr_pageout = 0;
  list_head ret;
  std::vector<folio *> free_folios;

  while (!list_empty(list)) {
    folio *f = list_entry(list->prev, folio, lru);
    list_del_init(&f->lru);
    unsigned long nr = folio_nr_pages(f);

    if (!folio_trylock(f)) {
      list_add(&f->lru, &ret);
      continue;
    }
    sc->nr_scanned += nr;
    if (!folio_evictable(f)) goto activate_locked;
    if (!sc->may_unmap && folio_mapped(f)) goto keep_locked;

    switch (folio_check_references(f, sc)) {
      case FOLIOREF_ACTIVATE:
        goto activate_locked;
      case FOLIOREF_KEEP:
        goto keep_locked;
      case FOLIOREF_RECLAIM:
      case FOLIOREF_RECLAIM_CLEAN:
        break;  // every file folio is clean here
    }
    if (folio_test_anon(f)) {
      // Swap-out needs I/O.
      if (!(sc->gfp_mask & __GFP_IO)) goto keep_locked;
      // add_to_swap(): a slot and its swap charge; without them the folio is activated.
      swp_entry_t entry = folio_alloc_swap(f);
      if (!entry.val) goto activate_locked;
      if (!try_to_unmap(f, entry)) {
        // Zapped meanwhile: the putback drops the last reference and frees it; the slot's one
        // hold is the swap cache's.
        put_swap_folio(entry);
        goto keep_locked;
      }
      // pageout(): swap_writepage, complete at once (see the banner); its bio counts PGPGOUT
      // in sectors.
      count_vm_events(PGPGOUT, nr << (PAGE_SHIFT - 9));
      count_vm_events(PSWPOUT, nr);
      count_memcg_events(folio_memcg(f), PSWPOUT, nr);
      emu::consume_time(nr * emu::cost_model().swap_out);
      *nr_pageout += nr;
      // __remove_mapping() of the swap cache: unmapped and isolated, nobody else can hold a
      // reference, so the freeze of the isolation's one cannot fail.
      if (WARN_ON_ONCE(atomic_cmpxchg(&f->_refcount, 1, 0) != 1)) goto keep_locked;
      swap_set_shadow(entry, workingset_eviction(f, sc->target_mem_cgroup));
      memcg1_swapout(f, entry);
      // The swap cache's hold goes once the charge record is made; if the page table's went
      // meanwhile (an exit, a swap-in), the slot is freed here.
      put_swap_folio(entry);
      folio_unlock(f);
      nr_reclaimed += nr;
      free_folios.push_back(f);
      continue;
    }
    if (!__remove_mapping(f, sc->target_mem_cgroup)) goto keep_locked;
    folio_unlock(f);
    nr_reclaimed += nr;
    free_folios.push_back(f);
    continue;

  activate_locked:
    if (!folio_test_mlocked(f)) {
      folio_set_active(f);
      count_vm_events(PGACTIVATE, nr);
      count_memcg_events(folio_memcg(f), PGACTIVATE, nr);
    }
  keep_locked:
    folio_unlock(f);
    list_add(&f->lru, &ret);
  }
  if (!free_folios.empty()) {
    __mem_cgroup_uncharge_folios(free_folios.data(), static_cast<unsigned int>(free_folios.size()));
    free_unref_folios(free_folios.data(), static_cast<unsigned int>(free_folios.size()));
  }
  while (!list_empty(&ret)) list_move(ret.prev, list);
  return nr_reclaimed;
}

unsigned long shrink_inactive_list(unsigned long nr_to_scan, lruvec *lv, scan_control *sc,
                                   lru_list lru) {
  list_head folio_list;
  unsigned long nr_scanned;

  lru_add_drain();
  spin_lock_irq(&lv->lru_lock);
  unsigned long nr_taken = isolate_lru_folios(nr_to_scan, lv, &folio_list, &nr_scanned, sc, lru);
  spin_unlock_irq(&lv->lru_lock);
  // On the list's owner, not the target; memory.reclaim is PROACTIVE, every other memcg
  // reclaimer DIRECT.
  mem_cgroup *owner = lruvec_memcg(lv);
  // reclaimer_offset(): kswapd, then proactive (memory.reclaim), then direct reclaim.
  const bool kswapd = current_is_kswapd();
  const bool file = is_file_lru(lru);
  const vm_event_item scan_item =
      kswapd ? PGSCAN_KSWAPD : sc->proactive ? PGSCAN_PROACTIVE : PGSCAN_DIRECT;
  // The node's events: the reclaimer's for global reclaim only, the type's for every reclaim.
  if (!sc->cgroup_reclaim) count_vm_events(scan_item, nr_scanned);
  count_memcg_events(owner, scan_item, nr_scanned);
  count_vm_events(file ? PGSCAN_FILE : PGSCAN_ANON, nr_scanned);
  emu::consume_time(nr_scanned * emu::cost_model().reclaim_scan);
  if (nr_taken == 0) return 0;

  unsigned long nr_pageout;
  unsigned long nr_reclaimed = shrink_folio_list(&folio_list, sc, &nr_pageout);
  move_folios_to_lru(lv, &folio_list);
  const vm_event_item steal_item =
      kswapd ? PGSTEAL_KSWAPD : sc->proactive ? PGSTEAL_PROACTIVE : PGSTEAL_DIRECT;
  if (!sc->cgroup_reclaim) count_vm_events(steal_item, nr_reclaimed);
  count_memcg_events(owner, steal_item, nr_reclaimed);
  count_vm_events(file ? PGSTEAL_FILE : PGSTEAL_ANON, nr_reclaimed);
  lru_note_cost(lv, file, static_cast<unsigned int>(nr_pageout),
                static_cast<unsigned int>(nr_scanned - nr_reclaimed));
  return nr_reclaimed;
}

void shrink_active_list(unsigned long nr_to_scan, lruvec *lv, scan_control *sc, lru_list lru) {
  list_head l_hold, l_active, l_inactive;
  unsigned long nr_scanned;

  lru_add_drain();
  spin_lock_irq(&lv->lru_lock);
  isolate_lru_folios(nr_to_scan, lv, &l_hold, &nr_scanned, sc, lru);
  spin_unlock_irq(&lv->lru_lock);
  if (!sc->cgroup_reclaim) count_vm_events(PGREFILL, nr_scanned);
  count_memcg_events(lruvec_memcg(lv), PGREFILL, nr_scanned);
  emu::consume_time(nr_scanned * emu::cost_model().reclaim_scan);
  unsigned long nr_deactivate = 0;

  while (!list_empty(&l_hold)) {
    folio *f = list_entry(l_hold.prev, folio, lru);
    list_del_init(&f->lru);
    if (!folio_evictable(f)) {
      list_add(&f->lru, &l_active);  // putback: move_folios_to_lru sends it to UNEVICTABLE
      continue;
    }
    unsigned long vm_flags;
    // The accessed bits are harvested (and cleared) even though only executable file folios
    // could stay active: no such folios exist here, so every folio is deactivated.
    folio_referenced(f, false, sc->target_mem_cgroup, &vm_flags);
    folio_clear_active(f);
    folio_set_workingset(f);
    nr_deactivate += folio_nr_pages(f);
    list_add(&f->lru, &l_inactive);
  }
  move_folios_to_lru(lv, &l_active);
  move_folios_to_lru(lv, &l_inactive);
  count_vm_events(PGDEACTIVATE, nr_deactivate);
  count_memcg_events(lruvec_memcg(lv), PGDEACTIVATE, nr_deactivate);
}

unsigned long shrink_list(lru_list lru, unsigned long nr_to_scan, lruvec *lv, scan_control *sc) {
  if (is_active_lru(lru)) {
    bool may = is_file_lru(lru) ? sc->may_deactivate_file : sc->may_deactivate_anon;
    if (may)
      shrink_active_list(nr_to_scan, lv, sc, lru);
    else
      sc->skipped_deactivate = true;
    return 0;
  }
  return shrink_inactive_list(nr_to_scan, lv, sc, lru);
}

// mem_cgroup_protection(): (emin, elow) of @memcg under @root; none for the target itself.
void mem_cgroup_protection(mem_cgroup *root, mem_cgroup *memcg, unsigned long *min,
                           unsigned long *low) {
  *min = *low = 0;
  if (root == memcg) return;
  *min = READ_ONCE(memcg->memory.emin);
  *low = READ_ONCE(memcg->memory.elow);
}

bool mem_cgroup_unprotected(mem_cgroup *target, mem_cgroup *memcg) {
  return mem_cgroup_is_root(memcg) || memcg == target;
}
bool mem_cgroup_below_min(mem_cgroup *target, mem_cgroup *memcg) {
  if (mem_cgroup_unprotected(target, memcg)) return false;
  return READ_ONCE(memcg->memory.emin) >= page_counter_read(&memcg->memory);
}
bool mem_cgroup_below_low(mem_cgroup *target, mem_cgroup *memcg) {
  if (mem_cgroup_unprotected(target, memcg)) return false;
  return READ_ONCE(memcg->memory.elow) >= page_counter_read(&memcg->memory);
}
void mem_cgroup_calculate_protection(mem_cgroup *root, mem_cgroup *memcg) {
  bool recursive = cgroup_current_root() &&
                   (cgroup_current_root()->flags & CGRP_ROOT_MEMORY_RECURSIVE_PROT);
  page_counter_calculate_protection(&root->memory, &memcg->memory, recursive);
}

unsigned long apply_proportional_protection(mem_cgroup *memcg, scan_control *sc,
                                            unsigned long lruvec_size) {
  unsigned long min, low;
  mem_cgroup_protection(sc->target_mem_cgroup, memcg, &min, &low);
  if (!min && !low) return lruvec_size;
  unsigned long protection;
  if (!sc->memcg_low_reclaim && low > min) {
    protection = low;
    sc->memcg_low_skipped = true;
  } else {
    protection = min;
  }
  unsigned long cgroup_size = std::max(page_counter_read(&memcg->memory), protection);
  unsigned long scan = lruvec_size - lruvec_size * protection / (cgroup_size + 1);
  // The floor keeps a partly protected memcg from being skipped entirely at low priorities.
  return std::max(scan, SWAP_CLUSTER_MAX);
}

void get_scan_count(lruvec *lv, scan_control *sc, unsigned long *nr) {
  mem_cgroup *memcg = lruvec_memcg(lv);
  int swappiness = sc_swappiness(sc, memcg);
  u64 fraction[ANON_AND_FILE] = {};
  u64 denominator = 0;
  scan_balance balance;

  if (!sc->may_swap || !can_reclaim_anon_pages(memcg)) {
    balance = SCAN_FILE;
  } else if (sc->cgroup_reclaim && !swappiness) {
    // Global reclaim with swappiness 0 still scans anon in proportion (fraction 0 below).
    balance = SCAN_FILE;
  } else if (swappiness == SWAPPINESS_ANON_ONLY) {
    balance = SCAN_ANON;
  } else if (!sc->priority && swappiness) {
    balance = SCAN_EQUAL;
  } else if (sc->cache_trim_mode) {
    balance = SCAN_FILE;
  } else {
    balance = SCAN_FRACT;
    u64 total_cost = sc->anon_cost + sc->file_cost;
    u64 anon_cost = total_cost + sc->anon_cost;
    u64 file_cost = total_cost + sc->file_cost;
    total_cost = anon_cost + file_cost;
    u64 ap = static_cast<u64>(swappiness) * (total_cost + 1) / (anon_cost + 1);
    u64 fp = static_cast<u64>(MAX_SWAPPINESS - swappiness) * (total_cost + 1) / (file_cost + 1);
    fraction[WORKINGSET_ANON] = ap;
    fraction[WORKINGSET_FILE] = fp;
    denominator = ap + fp;
  }

  bool online = mem_cgroup_online(memcg);
  for (int l = 0; l < NR_EVICTABLE_LRU; l++) {
    lru_list lru = static_cast<lru_list>(l);
    bool file = is_file_lru(lru);
    unsigned long lruvec_size = lruvec_lru_size(lv, lru);
    unsigned long scan = apply_proportional_protection(memcg, sc, lruvec_size);
    scan >>= sc->priority;
    // A dying memcg's small lists would never be scanned at all otherwise.
    if (!scan && !online) scan = std::min(lruvec_size, SWAP_CLUSTER_MAX);
    switch (balance) {
      case SCAN_EQUAL:
        break;
      case SCAN_FRACT:
        if (online)
          scan = scan * fraction[file] / denominator;
        else
          scan = (scan * fraction[file] + denominator - 1) / denominator;
        break;
      case SCAN_FILE:
      case SCAN_ANON:
        if ((balance == SCAN_FILE) != file) scan = 0;
        break;
    }
    nr[lru] = scan;
  }
}

void shrink_lruvec(lruvec *lv, scan_control *sc) {
  unsigned long nr[NR_EVICTABLE_LRU], targets[NR_EVICTABLE_LRU];
  unsigned long nr_reclaimed = 0;
  unsigned long nr_to_reclaim = sc->nr_to_reclaim;
  // Global direct reclaim at the first priority scans its whole targets (the cut below
  // does not apply); memcg reclaim and kswapd never start proportional.
  bool proportional_reclaim =
      !sc->cgroup_reclaim && !current_is_kswapd() && sc->priority == DEF_PRIORITY;

  get_scan_count(lv, sc, nr);
  std::copy(nr, nr + NR_EVICTABLE_LRU, targets);

  while (nr[LRU_INACTIVE_ANON] || nr[LRU_ACTIVE_FILE] || nr[LRU_INACTIVE_FILE]) {
    for (int l = 0; l < NR_EVICTABLE_LRU; l++) {
      if (!nr[l]) continue;
      unsigned long nr_to_scan = std::min(nr[l], SWAP_CLUSTER_MAX);
      nr[l] -= nr_to_scan;
      nr_reclaimed += shrink_list(static_cast<lru_list>(l), nr_to_scan, lv, sc);
    }
    cond_resched();
    if (nr_reclaimed < nr_to_reclaim || proportional_reclaim) continue;

    // The goal is met: finish the smaller type's share proportionally and stop the other.
    unsigned long nr_file = nr[LRU_INACTIVE_FILE] + nr[LRU_ACTIVE_FILE];
    unsigned long nr_anon = nr[LRU_INACTIVE_ANON] + nr[LRU_ACTIVE_ANON];
    if (!nr_file || !nr_anon) break;
    int lru;
    unsigned long percentage;
    if (nr_file > nr_anon) {
      unsigned long scan_target = targets[LRU_INACTIVE_ANON] + targets[LRU_ACTIVE_ANON] + 1;
      lru = LRU_BASE;
      percentage = nr_anon * 100 / scan_target;
    } else {
      unsigned long scan_target = targets[LRU_INACTIVE_FILE] + targets[LRU_ACTIVE_FILE] + 1;
      lru = LRU_FILE;
      percentage = nr_file * 100 / scan_target;
    }
    nr[lru] = 0;
    nr[lru + LRU_ACTIVE] = 0;
    lru = (lru == LRU_FILE) ? LRU_BASE : LRU_FILE;
    for (int k = lru; k <= lru + LRU_ACTIVE; k++) {
      unsigned long nr_scanned = targets[k] - nr[k];
      nr[k] = targets[k] * (100 - percentage) / 100;
      nr[k] -= std::min(nr[k], nr_scanned);
    }
    proportional_reclaim = true;
  }
  sc->nr_reclaimed += nr_reclaimed;

  if (can_age_anon_pages() && inactive_is_low(lruvec_memcg(lv), LRU_INACTIVE_ANON))
    shrink_active_list(SWAP_CLUSTER_MAX, lv, sc, LRU_ACTIVE_ANON);
}

void shrink_node_memcgs(scan_control *sc) {
  mem_cgroup *target = sc->target_mem_cgroup;
  mem_cgroup_reclaim_cookie cookie;
  // kswapd walks every memcg each time (no shared position, no stop at the goal).
  mem_cgroup_reclaim_cookie *partial =
      current_is_kswapd() || sc->memcg_full_walk ? nullptr : &cookie;

  mem_cgroup *memcg = mem_cgroup_iter(target, nullptr, partial);
  while (memcg) {
    cond_resched();
    emu::consume_time(emu::cost_model().reclaim_visit);
    mem_cgroup_calculate_protection(target, memcg);
    bool skip = false;
    if (mem_cgroup_below_min(target, memcg)) {
      skip = true;  // hard protection: not even the low-override pass touches it
    } else if (mem_cgroup_below_low(target, memcg)) {
      if (!sc->memcg_low_reclaim) {
        sc->memcg_low_skipped = true;
        skip = true;
      } else {
        memcg_memory_event(memcg, MEMCG_LOW);
      }
    }
    if (!skip) {
      unsigned long reclaimed = sc->nr_reclaimed, scanned = sc->nr_scanned;
      shrink_lruvec(mem_cgroup_lruvec(memcg), sc);
      // Record the group's reclaim efficiency.
      if (!sc->proactive)
        vmpressure(sc->gfp_mask, memcg, false, sc->nr_scanned - scanned,
                   sc->nr_reclaimed - reclaimed);
      if (partial && sc->nr_reclaimed >= sc->nr_to_reclaim) {
        mem_cgroup_iter_break(target, memcg);
        break;
      }
    }
    memcg = mem_cgroup_iter(target, memcg, partial);
  }
}

void prepare_scan_control(scan_control *sc) {
  mem_cgroup *target = sc->target_mem_cgroup;
  lruvec *lv = mem_cgroup_lruvec(target);
  spin_lock_irq(&lv->lru_lock);
  sc->anon_cost = lv->anon_cost;
  sc->file_cost = lv->file_cost;
  spin_unlock_irq(&lv->lru_lock);
  mem_cgroup_flush_stats_ratelimited(target);
  if (sc->force_deactivate) {
    sc->may_deactivate_anon = sc->may_deactivate_file = true;
  } else {
    // Refault activations since the last reclaim of this target mean the workingset is
    // changing: age the active list even when the inactive one is not low.
    unsigned long refaults = lruvec_page_state(target, WORKINGSET_ACTIVATE_ANON);
    sc->may_deactivate_anon = refaults != READ_ONCE(lv->refaults[WORKINGSET_ANON]) ||
                              inactive_is_low(target, LRU_INACTIVE_ANON);
    refaults = lruvec_page_state(target, WORKINGSET_ACTIVATE_FILE);
    sc->may_deactivate_file = refaults != READ_ONCE(lv->refaults[WORKINGSET_FILE]) ||
                              inactive_is_low(target, LRU_INACTIVE_FILE);
  }
  unsigned long file = lruvec_subtree_lru_pages(target, LRU_INACTIVE_FILE);
  sc->cache_trim_mode = (file >> sc->priority) && !sc->may_deactivate_file;
}

// shrink_node(): one pass over the node's memcgs at sc->priority. Progress revives a hopeless
// kswapd (kswapd_failures).
void shrink_node(scan_control *sc) {
  unsigned long nr_reclaimed = sc->nr_reclaimed, nr_scanned = sc->nr_scanned;
  prepare_scan_control(sc);
  shrink_node_memcgs(sc);
  // Record the subtree's reclaim efficiency.
  if (!sc->proactive)
    vmpressure(sc->gfp_mask, sc->target_mem_cgroup, true, sc->nr_scanned - nr_scanned,
               sc->nr_reclaimed - nr_reclaimed);
  if (sc->nr_reclaimed - nr_reclaimed) WRITE_ONCE(node_data()->kswapd_failures, 0);
}

// snapshot_refaults(): the refault activations this reclaim of @target has seen.
void snapshot_refaults(mem_cgroup *target) {
  lruvec *target_lruvec = mem_cgroup_lruvec(target);
  // Concurrent reclaimers of one target store racing snapshots, as in the kernel.
  WRITE_ONCE(target_lruvec->refaults[WORKINGSET_ANON],
             lruvec_page_state(target, WORKINGSET_ACTIVATE_ANON));
  WRITE_ONCE(target_lruvec->refaults[WORKINGSET_FILE],
             lruvec_page_state(target, WORKINGSET_ACTIVATE_FILE));
}

unsigned long do_try_to_free_pages(scan_control *sc) {
  int initial_priority = sc->priority;
retry:
  // A direct reclaim stall of an allocation (ZONE_NORMAL, the only zone).
  if (!sc->cgroup_reclaim) count_vm_event(ALLOCSTALL_NORMAL);
  do {
    // Proactive reclaim (memory.reclaim) is not pressure: it reports nothing.
    if (!sc->proactive) vmpressure_prio(sc->gfp_mask, sc->target_mem_cgroup, sc->priority);
    sc->nr_scanned = 0;
    shrink_node(sc);
    if (sc->nr_reclaimed >= sc->nr_to_reclaim) break;
    if (sc->priority < DEF_PRIORITY - 2) sc->may_writepage = true;
  } while (--sc->priority >= 0);

  snapshot_refaults(sc->target_mem_cgroup);

  if (sc->nr_reclaimed) return sc->nr_reclaimed;
  // Nothing at all: walk the whole tree, then force deactivation, then dip into memory.low.
  if (!sc->memcg_full_walk) {
    sc->priority = initial_priority;
    sc->memcg_full_walk = true;
    goto retry;
  }
  if (sc->skipped_deactivate) {
    sc->priority = initial_priority;
    sc->force_deactivate = true;
    sc->skipped_deactivate = false;
    goto retry;
  }
  if (sc->memcg_low_skipped) {
    sc->priority = initial_priority;
    sc->force_deactivate = false;
    sc->memcg_low_reclaim = true;
    sc->memcg_low_skipped = false;
    goto retry;
  }
  return 0;
}

// kswapd_age_node(): background aging of the active anon lists, every memcg's, while the
// machine's inactive anon list is low.
void kswapd_age_node(scan_control *sc) {
  lru_add_drain();
  if (!can_age_anon_pages()) return;
  if (!inactive_is_low(root_mem_cgroup, LRU_INACTIVE_ANON)) return;
  for (mem_cgroup *memcg = mem_cgroup_iter(nullptr, nullptr, nullptr); memcg;
       memcg = mem_cgroup_iter(nullptr, memcg, nullptr))
    shrink_active_list(SWAP_CLUSTER_MAX, mem_cgroup_lruvec(memcg), sc, LRU_ACTIVE_ANON);
}

// kswapd_shrink_node(): one shrink_node() asking for the high watermark in pages. True when
// enough was scanned (or reclaimed) that the priority need not rise.
bool kswapd_shrink_node(scan_control *sc) {
  unsigned long nr_reclaimed = sc->nr_reclaimed;
  sc->nr_to_reclaim = std::max(high_wmark_pages(), SWAP_CLUSTER_MAX);
  shrink_node(sc);
  return std::max(sc->nr_scanned, sc->nr_reclaimed - nr_reclaimed) >= sc->nr_to_reclaim;
}

}  // namespace


namespace {
// vmscan_sysctl_table[].
const ctl_table vmscan_sysctl_table[] = {
    {.procname = "swappiness",
     .data = &vm_swappiness,
     .maxlen = sizeof(vm_swappiness),
     .mode = 0644,
     .proc_handler = proc_dointvec_minmax,
     .extra1 = SYSCTL_ZERO,
     .extra2 = SYSCTL_TWO_HUNDRED},
};
}  // namespace

void vmscan_sysctl_init() {
  WRITE_ONCE(vm_swappiness, 60);
  register_sysctl_init("vm", vmscan_sysctl_table, std::size(vmscan_sysctl_table));
}

bool inactive_is_low(mem_cgroup *memcg, lru_list inactive_lru) {
  unsigned long inactive = lruvec_subtree_lru_pages(memcg, inactive_lru);
  unsigned long active =
      lruvec_subtree_lru_pages(memcg, static_cast<lru_list>(inactive_lru + LRU_ACTIVE));
  unsigned long gb = (inactive + active) >> (30 - PAGE_SHIFT);
  unsigned long inactive_ratio = gb ? int_sqrt(10 * gb) : 1;
  return inactive * inactive_ratio < active;
}

bool pgdat_balanced(pglist_data *, int order) {
  return zone_watermark_ok_safe(static_cast<unsigned int>(order), high_wmark_pages());
}

int balance_pgdat(pglist_data *pgdat, int order) {
  scan_control sc;
  sc.gfp_mask = GFP_KERNEL;
  sc.target_mem_cgroup = root_mem_cgroup;
  sc.cgroup_reclaim = false;
  sc.may_unmap = true;
  count_vm_event(PAGEOUTRUN);

  sc.priority = DEF_PRIORITY;
  do {
    unsigned long nr_reclaimed = sc.nr_reclaimed;
    bool raise_priority = true;
    if (pgdat_balanced(pgdat, order)) goto out;
    sc.may_writepage = true;
    sc.may_swap = true;  // no watermark boost here, so reclaim may always swap
    kswapd_age_node(&sc);
    sc.nr_scanned = 0;
    // Enough scanned for the high watermark at full efficiency: no need to raise the priority.
    if (kswapd_shrink_node(&sc)) raise_priority = false;
    if (kthread_should_stop()) break;
    nr_reclaimed = sc.nr_reclaimed - nr_reclaimed;
    if (raise_priority || !nr_reclaimed) sc.priority--;
  } while (sc.priority >= 1);
  if (!sc.nr_reclaimed) WRITE_ONCE(pgdat->kswapd_failures, READ_ONCE(pgdat->kswapd_failures) + 1);
out:
  snapshot_refaults(root_mem_cgroup);
  return order;
}

unsigned long try_to_free_pages(gfp_t gfp_mask, int order) {
  scan_control sc;
  sc.nr_to_reclaim = SWAP_CLUSTER_MAX;
  sc.target_mem_cgroup = root_mem_cgroup;
  sc.cgroup_reclaim = false;
  sc.gfp_mask = gfp_mask;
  sc.may_swap = true;
  (void)order;  // every allocation here is order 0: no compaction

  unsigned int noreclaim = current->flags & PF_MEMALLOC;
  current->flags |= PF_MEMALLOC;
  unsigned long nr_reclaimed = do_try_to_free_pages(&sc);
  current->flags = (current->flags & ~PF_MEMALLOC) | noreclaim;
  return nr_reclaimed;
}

unsigned long vmscan_try_to_free_mem_cgroup_pages(mem_cgroup *memcg, unsigned long nr_pages,
                                                  gfp_t gfp_mask, unsigned int reclaim_options,
                                                  int *swappiness) {
  scan_control sc;
  sc.nr_to_reclaim = std::max(nr_pages, SWAP_CLUSTER_MAX);
  sc.target_mem_cgroup = memcg;
  // The reclaim flags of the caller; memcg reclaim may take any user page (GFP_HIGHUSER_MOVABLE's
  // placement bits), which vmpressure() reads.
  sc.gfp_mask = gfp_mask | __GFP_HIGHMEM | __GFP_MOVABLE;
  sc.may_swap = reclaim_options & MEMCG_RECLAIM_MAY_SWAP;
  sc.proactive = reclaim_options & MEMCG_RECLAIM_PROACTIVE;
  sc.proactive_swappiness = swappiness;

  // memalloc_noreclaim_save(): allocations made while reclaiming force their charges.
  unsigned int noreclaim = current->flags & PF_MEMALLOC;
  current->flags |= PF_MEMALLOC;
  unsigned long nr_reclaimed = do_try_to_free_pages(&sc);
  current->flags = (current->flags & ~PF_MEMALLOC) | noreclaim;
  return nr_reclaimed;
}

}  // namespace umemcg
