// SPDX-License-Identifier: GPL-2.0-only
// mm/rmap.h: the reverse map: from a folio to the page table entry mapping it.
//
// Mirrors: mm/rmap.c (folio_referenced, folio_referenced_one, try_to_unmap, try_to_unmap_one
//   for an anon folio in the swap cache) (Linux 6.19)
// Emulation: private anonymous folios are mapped by exactly one entry (no fork, no sharing):
//   folio::mapping is the mm and folio::index the virtual page number. Page-cache folios are
//   never mapped (files are only read), so they have no entries to walk.
// Emulation: an mm_struct is freed only after an RCU grace period once its entries are zapped,
//   so a walker that read folio::mapping under rcu_read_lock() can lock its page tables.
#pragma once

#include "mm/memcontrol.h"
#include "mm/memcontrol_folio.h"
#include "mm/page_flags.h"

namespace umemcg {

/**
 * folio_referenced - test and clear the accessed bits of the entries mapping @f
 * @f: folio
 * @is_locked: the caller holds the folio lock (otherwise it is taken, or the walk gives up)
 * @memcg: count only mappings of mms in this memcg's subtree (nullptr: all)
 * @vm_flags: gets VM_LOCKED when a mapping is mlocked (the walk stops there)
 *
 * Returns the number of accessed entries found (their bits now clear), or -1 when the folio
 * lock could not be taken.
 */
int folio_referenced(folio *f, bool is_locked, mem_cgroup *memcg, unsigned long *vm_flags);

/**
 * try_to_unmap - replace the entry mapping anon folio @f by the swap entry @entry
 * @f: locked, isolated anon folio with a swap slot
 * @entry: its slot
 *
 * The mm's MM_ANONPAGES moves to MM_SWAPENTS, NR_ANON_MAPPED drops and the page table's
 * reference on @f is dropped (the caller's isolation reference remains). Returns false when @f
 * was not mapped any more (zapped meanwhile: the zap owns the page table's reference).
 */
bool try_to_unmap(folio *f, swp_entry_t entry);

}  // namespace umemcg
