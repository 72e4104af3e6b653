// SPDX-License-Identifier: GPL-2.0-only
// mm/swap.h: folios on the per-memcg LRU: adding them through the per-CPU lru_add batches,
// marking accesses, moving them between lists, and freeing them.
//
// A new folio enters the LRU through this CPU's lru_add batch (31 slots): while it sits there it
// is charged but on no list, invisible to reclaim and to the LRU sizes. The batch is moved to
// the lists when it fills up, by lru_add_drain() on this CPU and by lru_add_drain_all() on
// every CPU. Lists, sizes and costs are changed under the lruvec's lru_lock.
//
// Mirrors: mm/swap.c (folio_add_lru, folio_add_lru_vma, lru_add, folio_batch_move_lru,
//   lru_add_drain, lru_add_drain_all, folio_mark_accessed, folio_activate, lru_note_cost,
//   folios_put_refs, __folio_put), include/linux/mm_inline.h (lruvec_add_folio,
//   lruvec_add_folio_tail, lruvec_del_folio, update_lru_size), mm/mlock.c (mlock_new_folio),
//   mm/memcontrol.c (folio_lruvec_lock_irq, mem_cgroup_lruvec) (Linux 6.19)
// Emulation: activation by folio_mark_accessed moves the folio at once under lru_lock; the
//   kernel queues it in a per-CPU lru_activate batch drained at the same points as lru_add.
// Emulation: mlock_new_folio marks the folio mlocked and unevictable and sends it through the
//   lru_add batch (the kernel uses a separate per-CPU mlock batch with the same effect once
//   drained).
#pragma once

#include "mm/memcontrol.h"
#include "mm/mm_types.h"
#include "mm/page_flags.h"

namespace umemcg {

inline constexpr unsigned int PAGEVEC_SIZE = 31;  // folio_batch slots

inline lruvec *mem_cgroup_lruvec(mem_cgroup *memcg) {
  return &(memcg ? memcg : root_mem_cgroup)->nodeinfo.lruvec;
}
// The lruvec of a charged folio (stable while the folio holds its charge).
inline lruvec *folio_lruvec(const folio *f) { return mem_cgroup_lruvec(folio_memcg(f)); }
inline mem_cgroup *lruvec_memcg(const lruvec *lv) { return lv->memcg; }

// List bookkeeping; caller holds lv->lru_lock.
void lruvec_add_folio(lruvec *lv, folio *f) REQUIRES(lv->lru_lock);
void lruvec_add_folio_tail(lruvec *lv, folio *f) REQUIRES(lv->lru_lock);
void lruvec_del_folio(lruvec *lv, folio *f) REQUIRES(lv->lru_lock);
// Adds @nr pages to the size of @lru and to its statistic (NR_INACTIVE_ANON + lru).
void update_lru_size(lruvec *lv, lru_list lru, long nr) REQUIRES(lv->lru_lock);
// Exact size of one list in pages.
unsigned long lruvec_lru_size(lruvec *lv, lru_list lru);

// folio_alloc(), free_unref_folios(): mm/page_alloc.h (the machine's RAM).
/**
 * folio_add_lru - queue a new folio for the LRU on this CPU
 * @f: folio, charged; PG_active/PG_mlocked chosen by the caller
 *
 * Takes a reference for the batch. The folio reaches its list when the batch is drained.
 * Context: task context with a CPU (kernel entry).
 */
void folio_add_lru(folio *f);
// The same for a folio faulted into @vma: VM_LOCKED mappings mlock it.
void folio_add_lru_vma(folio *f, vm_area_struct *vma);
// Moves this CPU's lru_add batch to the lists.
void lru_add_drain();
// Moves every CPU's batch to the lists and waits for it (may sleep).
void lru_add_drain_all();
// folio_mark_accessed: the two-touch rule for unmapped accesses.
void folio_mark_accessed(folio *f);
/**
 * folio_put - drop a reference; the last one frees the folio
 * @f: folio
 *
 * Freeing takes the folio off its LRU, uncharges it (__mem_cgroup_uncharge) and deletes it.
 * Context: no lru_lock held.
 */
void folio_put(folio *f);
// Drops one reference of each of @nr folios; the freed ones are uncharged in one batch.
void folios_put(folio **folios, unsigned int nr);
// lru_note_cost: records reclaim cost on @lv and its ancestors (halving when it outgrows them).
void lru_note_cost(lruvec *lv, bool file, unsigned int nr_io, unsigned int nr_rotated);

// Folios still sitting in per-CPU lru_add batches (every CPU; quiescent machine only).
unsigned long lru_add_batched_pages(mem_cgroup *memcg);

// Boot and shutdown of the per-CPU batches (called by memcg boot and its shutdown hook).
void lru_boot();
void lru_shutdown();

}  // namespace umemcg
