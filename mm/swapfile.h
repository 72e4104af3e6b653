// SPDX-License-Identifier: GPL-2.0-only
// mm/swapfile.h: the machine's swap device: its slots, their allocation and freeing, and the
// shadow entries swapped-out anon folios leave in them.
//
// A machine boots with one swap device of memcg_boot_params::swap_pages pages, or none (the
// default). A slot is allocated for an anon folio by reclaim (folio_alloc_swap, which also takes
// the v2 swap charge), holds the folio's contents while its page table entry is a swap entry,
// and is freed (swap_free: the swap charge, v2, or the memsw charge, v1, is dropped) when the
// page is swapped in again or its entry is zapped (munmap, MADV_DONTNEED, exit).
//
// Mirrors: mm/swapfile.c (total_swap_pages, nr_swap_pages, get_nr_swap_pages, folio_alloc_swap,
//   swap_free, free_swap_and_cache, vm_swap_full, si_swapinfo, swap_show), mm/swap_state.c
//   (the shadow entry kept at the slot's index by __delete_from_swap_cache,
//   get_shadow_from_swap_cache) (Linux 6.19)
// Emulation: one device (swap type 0), entry.val is the slot's offset; offset 0 is never handed
//   out (the kernel keeps the swap header there), so entry 0 still means "no slot"; the size
//   given is the usable slots (a kernel swap file of that size has one page less).
// Emulation: slots come from a LIFO stack of free offsets (lowest first on a fresh device) under
//   one spinlock (the kernel allocates by cluster, with per-CPU clusters).
// Emulation: no swap cache survives a swap-out or a swap-in (NR_SWAPCACHE stays 0): reclaim
//   writes the folio synchronously and frees it in the same pass, and a swap-in
//   frees its slot at once (the kernel keeps the folio in the swap cache under writeback until
//   a later pass, and frees the slot of a write fault once the folio is exclusive: the same end
//   state for the single-mapping private folios modelled here). While reclaim swaps a folio
//   out, its slot has the swap cache's hold (SWAP_HAS_CACHE) besides the page table's, as in
//   the kernel: a process that exits or faults the entry back in meanwhile drops only the page
//   table's, and the slot is freed when reclaim puts its own (put_swap_folio()). A swap-in in
//   that window reads into a new folio (the kernel's would find the folio in the swap cache).
// Emulation: the slots' contents are not stored (folios have no contents).
#pragma once

#include "mm/memcontrol_folio.h"
#include "mm/workingset.h"

namespace umemcg {

/**
 * swapon - give the machine a swap device of @nr_pages slots
 * Context: memcg boot (mem_cgroup_boot), before any task faults. Returns 0, -EBUSY (a device is
 * already on) or -EINVAL (@nr_pages is 0 or above 2^32).
 */
int swapon(unsigned long nr_pages);
// swapoff at machine shutdown: the device goes; a slot still in use is a bug (WARN) and is
// dropped with its charge records.
void swapoff_all();

// Slots of the device (0 without one): the kernel's total_swap_pages.
long total_swap_pages();
// Free slots: the kernel's nr_swap_pages (get_nr_swap_pages()).
long get_nr_swap_pages();
// vm_swap_full(): more than half of the swap space is in use.
bool vm_swap_full();

/**
 * folio_alloc_swap - allocate a swap slot for @f and charge it (v2)
 * @f: locked anon folio, charged
 *
 * The slot comes from the device, then __mem_cgroup_try_charge_swap() charges it (or, without
 * a free slot, raises MEMCG_SWAP_FAIL). Returns the entry, or entry 0 when there is no slot or
 * the swap charge was refused (the slot is freed again).
 */
swp_entry_t folio_alloc_swap(folio *f);
/**
 * swap_duplicate - a page-table entry takes a hold on @entry's slot (try_to_unmap_one's
 *   swap_duplicate when it installs the entry)
 * Context: under the page table's lock, the slot held by the folio being swapped out.
 */
void swap_duplicate(swp_entry_t entry);
/**
 * swap_free - a page-table entry's hold on @entry's slot goes (swap_free / free_swap_and_cache:
 *   a zap, or a swap-in that has installed its folio)
 * The last hold frees the slot: the swap (v2) or memsw (v1) charge recorded for it is
 * uncharged, its shadow entry dropped.
 */
void swap_free(swp_entry_t entry);
/**
 * put_swap_folio - the swap cache's hold on @entry's slot goes (SWAP_HAS_CACHE, taken by
 *   folio_alloc_swap(); reclaim drops it once the folio is written and its charge record made)
 * The last hold frees the slot as swap_free() does. Until then a zap or swap-in of the entry
 * cannot free the slot under reclaim, so memcg1_swapout()'s record is never made for a slot
 * already freed.
 */
void put_swap_folio(swp_entry_t entry);
// Stores the shadow entry a swapped-out folio leaves in its slot (__delete_from_swap_cache).
void swap_set_shadow(swp_entry_t entry, const shadow_entry &shadow);
// The slot's shadow entry, if any (get_shadow_from_swap_cache); false without one.
bool swap_get_shadow(swp_entry_t entry, shadow_entry *shadow);

}  // namespace umemcg
