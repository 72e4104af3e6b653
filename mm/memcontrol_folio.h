// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_folio.h: charging and uncharging folios (user pages) and swap entries.
//
// Mirrors: include/linux/memcontrol.h, include/linux/mm_types.h (struct folio's memcg_data),
//   include/linux/swap.h (swp_entry_t), mm/memcontrol.c, mm/swap_cgroup.c (Linux 6.19)
// Emulation: a folio is what memcg and the LRU model read of it: its size (order), memcg_data,
//   page flags, reference and map counts, LRU links and its mapping (mm/page_flags.h). There is
//   no page allocator behind it and no page contents.
// Emulation: the swap_cgroup map (entry -> memcg id) is a hash map under a spinlock.
#pragma once

#include "mm/memcontrol.h"
#include "shim/list.h"

namespace umemcg {

struct obj_cgroup;

inline constexpr unsigned long MEMCG_DATA_OBJEXTS = 1UL << 0;
inline constexpr unsigned long MEMCG_DATA_KMEM = 1UL << 1;
inline constexpr unsigned long MEMCG_DATA_FLAGS_MASK = 3;

struct folio {
  unsigned int order = 0;
  // memcg pointer (user folio) or objcg pointer | MEMCG_DATA_KMEM (kmem page); 0 = uncharged.
  unsigned long memcg_data = 0;

  // The LRU and mapping model (mm/page_flags.h); a folio the charge path alone uses leaves
  // these untouched.
  unsigned long flags = 0;  // PG_* bits, atomic bitops
  atomic_t _refcount;       // references (page tables, page cache, LRU batches, isolation)
  atomic_t _mapcount;       // page table entries mapping it (0: unmapped)
  list_head lru;            // on an LRU list of its memcg's lruvec (PG_lru), or isolated
  void *mapping = nullptr;  // address_space (page cache) or mm_struct (anon): see folio_anon_mm
  unsigned long index = 0;  // page index in the file, or virtual page number (anon)
};

inline unsigned int folio_nr_pages(const folio *f) { return 1u << f->order; }
inline bool folio_memcg_kmem(const folio *f) { return f->memcg_data & MEMCG_DATA_KMEM; }
// The memcg of a charged user folio (nullptr if uncharged or kmem).
inline mem_cgroup *folio_memcg(const folio *f) {
  if (!f->memcg_data || folio_memcg_kmem(f)) return nullptr;
  return reinterpret_cast<mem_cgroup *>(f->memcg_data & ~MEMCG_DATA_FLAGS_MASK);
}

/**
 * __mem_cgroup_charge - charge a new folio to @mm's memcg (or the active memcg)
 * Returns 0 (charged; folio->memcg_data set, one css reference held) or -ENOMEM.
 */
int __mem_cgroup_charge(folio *f, mm_struct *mm, gfp_t gfp);
// Charges to a given memcg (charge_memcg()).
int charge_memcg(folio *f, mem_cgroup *memcg, gfp_t gfp);
// Uncharges a folio being freed (directly on the counters, not through the stock).
void __mem_cgroup_uncharge(folio *f);
// Uncharges several folios, batching runs of the same memcg into one counter update.
void __mem_cgroup_uncharge_folios(folio **folios, unsigned int nr);
// Force-charges @new_folio like @old's memcg (migration replacing a folio).
void mem_cgroup_replace_folio(folio *old_folio, folio *new_folio);
// Moves the charge from @old to @new_folio (counters unchanged).
void mem_cgroup_migrate(folio *old_folio, folio *new_folio);

// kmem pages (obj_cgroup based): charge to current's objcg.
int __memcg_kmem_charge_page(folio *f, gfp_t gfp, int order);
void __memcg_kmem_uncharge_page(folio *f, int order);

// Swap (v2; a no-op on v1 where memsw already covers it).
struct swp_entry_t {
  unsigned long val;
};
int __mem_cgroup_try_charge_swap(folio *f, swp_entry_t entry);
void __mem_cgroup_uncharge_swap(swp_entry_t entry, unsigned int nr_pages);
// Pages of swap this memcg may still use: the free swap, capped on v2 by min over the non-root
// ancestors of swap.max - swap usage.
long mem_cgroup_get_nr_swap_pages(mem_cgroup *memcg);
/**
 * memcg1_swapout - v1: move @f's charge to its swap slot @entry at swap-out
 * @f: isolated, locked, unmapped anon folio leaving memory
 *
 * The memory charge is dropped and the folio uncharged (memcg_data cleared); the memsw charge
 * stays, moved to the nearest online ancestor when the memcg is offline, recorded for @entry and
 * counted in MEMCG_SWAP. A no-op on v2 (the folio is uncharged when it is freed).
 */
void memcg1_swapout(folio *f, swp_entry_t entry);
/**
 * mem_cgroup_swapin_charge_folio - charge a folio being swapped in
 * The memcg recorded for @entry if it is online, else @mm's memcg, is charged (reclaim and the
 * OOM killer may run). Returns 0 or -ENOMEM.
 */
int mem_cgroup_swapin_charge_folio(folio *f, mm_struct *mm, gfp_t gfp, swp_entry_t entry);
// After a swap-in charge: v1 drops the slot's memsw charge now; v2 keeps the swap charge until
// the slot is freed.
void mem_cgroup_swapin_uncharge_swap(swp_entry_t entry, unsigned int nr_pages);
// The memcg id recorded for @entry (0 if none).
unsigned short lookup_swap_cgroup_id(swp_entry_t entry);

}  // namespace umemcg
