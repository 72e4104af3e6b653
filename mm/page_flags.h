// SPDX-License-Identifier: GPL-2.0-only
// mm/page_flags.h: folio flags, reference counts and the LRU list a folio belongs on.
//
// Mirrors: include/linux/page-flags.h, include/linux/mm_inline.h (folio_lru_list,
//   folio_is_file_lru), include/linux/mm.h (folio_get/folio_try_get/folio_put) (Linux 6.19)
// Emulation: PG_* are bit numbers in folio::flags with the kernel's names, not its values.
// Emulation: folio_put() of the last reference does not free the folio itself: the caller
//   collects it (folios_put_refs/free_unref_folios do the same in batches); see mm/swap.cc.
#pragma once

#include "mm/memcontrol_folio.h"
#include "mm/mmzone.h"
#include "shim/atomic.h"

namespace umemcg {

enum pageflags {
  PG_locked,
  PG_referenced,
  PG_uptodate,
  PG_dirty,
  PG_lru,
  PG_active,
  PG_workingset,
  PG_swapbacked,  // anon (and shmem): reclaimed through swap, lives on the anon lists
  PG_unevictable,
  PG_mlocked,
  PG_reclaim,
};

#define UMEMCG_FOLIO_FLAG(name, bit)                                                        \
  inline bool folio_test_##name(const folio *f) {                                           \
    return test_bit(bit, &f->flags);                                                        \
  }                                                                                         \
  inline void folio_set_##name(folio *f) { set_bit(bit, &f->flags); }                      \
  inline void folio_clear_##name(folio *f) { clear_bit(bit, &f->flags); }                  \
  inline bool folio_test_set_##name(folio *f) { return test_and_set_bit(bit, &f->flags); } \
  inline bool folio_test_clear_##name(folio *f) { return test_and_clear_bit(bit, &f->flags); }

UMEMCG_FOLIO_FLAG(locked, PG_locked)
UMEMCG_FOLIO_FLAG(referenced, PG_referenced)
UMEMCG_FOLIO_FLAG(dirty, PG_dirty)
UMEMCG_FOLIO_FLAG(lru, PG_lru)
UMEMCG_FOLIO_FLAG(active, PG_active)
UMEMCG_FOLIO_FLAG(workingset, PG_workingset)
UMEMCG_FOLIO_FLAG(swapbacked, PG_swapbacked)
UMEMCG_FOLIO_FLAG(unevictable, PG_unevictable)
UMEMCG_FOLIO_FLAG(mlocked, PG_mlocked)
#undef UMEMCG_FOLIO_FLAG

// folio_trylock()/folio_unlock(): the folio lock (PG_locked), never slept on here.
[[nodiscard]] inline bool folio_trylock(folio *f) { return !test_and_set_bit(PG_locked, &f->flags); }
inline void folio_unlock(folio *f) { clear_bit_unlock(PG_locked, &f->flags); }

inline int folio_ref_count(const folio *f) { return atomic_read(&f->_refcount); }
inline void folio_get(folio *f) { atomic_inc(&f->_refcount); }
inline void folio_ref_add(folio *f, int n) { atomic_add(n, &f->_refcount); }
// Takes a reference unless the count already reached zero (the folio is being freed).
inline bool folio_try_get(folio *f) {
  int v = atomic_read(&f->_refcount);
  while (v > 0)
    if (atomic_cmpxchg(&f->_refcount, v, v + 1) == v) return true;
    else v = atomic_read(&f->_refcount);
  return false;
}
// Drops a reference; true when it was the last (the caller frees the folio).
[[nodiscard]] inline bool folio_put_testzero(folio *f) { return atomic_dec_and_test(&f->_refcount); }

inline bool folio_mapped(const folio *f) { return atomic_read(&f->_mapcount) > 0; }
inline bool folio_is_file_lru(const folio *f) { return !folio_test_swapbacked(f); }
inline bool folio_test_anon(const folio *f) { return folio_test_swapbacked(f); }

// The list a folio on an LRU belongs on.
inline lru_list folio_lru_list(const folio *f) {
  if (folio_test_unevictable(f)) return LRU_UNEVICTABLE;
  int lru = folio_is_file_lru(f) ? LRU_INACTIVE_FILE : LRU_INACTIVE_ANON;
  if (folio_test_active(f)) lru += LRU_ACTIVE;
  return static_cast<lru_list>(lru);
}

}  // namespace umemcg
