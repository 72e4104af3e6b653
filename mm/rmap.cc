// SPDX-License-Identifier: GPL-2.0-only
// mm/rmap.cc: folio_referenced and try_to_unmap over the one mapping of a private anonymous
// folio (see rmap.h).
//
// Mirrors: mm/rmap.c (Linux 6.19)
// Emulation: see rmap.h.
#include "mm/rmap.h"

#include "mm/memory.h"
#include "mm/mm_types.h"
#include "mm/swapfile.h"
#include "shim/bug.h"
#include "shim/rcupdate.h"

namespace umemcg {

namespace {

// The entry of @mm's page table that maps @f (an anon folio's index is its address), with its
// VMA in *@vmap, or nullptr (page_vma_mapped_walk for the one mapping of a private anonymous
// folio).
pte_t *folio_pte(mm_struct *mm, folio *f, vm_area_struct **vmap) REQUIRES(mm->page_table_lock) {
  vm_area_struct *vma = find_vma(mm, f->index);
  if (!vma) return nullptr;
  pte_t *pte = &vma->ptes[f->index - vma->vm_start];
  *vmap = vma;
  return pte->page == f ? pte : nullptr;
}

}  // namespace

int folio_referenced(folio *f, bool is_locked, mem_cgroup *memcg, unsigned long *vm_flags) {
  *vm_flags = 0;
  if (!folio_mapped(f) || !folio_test_anon(f)) return 0;
  if (!is_locked && !folio_trylock(f)) return -1;

  int referenced = 0;
  rcu_read_lock();
  auto *mm = static_cast<mm_struct *>(READ_ONCE(f->mapping));
  // invalid_folio_referenced_vma(): only mms charged inside the reclaimed subtree count.
  mem_cgroup *mm_memcg = mm ? rcu_dereference(mm->memcg) : nullptr;
  if (mm && (!memcg || mem_cgroup_is_descendant(mm_memcg ? mm_memcg : root_mem_cgroup, memcg))) {
    spin_lock(&mm->page_table_lock);
    vm_area_struct *vma = nullptr;
    if (pte_t *pte = folio_pte(mm, f, &vma)) {
      if (vma->vm_flags & VM_LOCKED) {
        *vm_flags |= VM_LOCKED;
      } else if (pte->young) {
        pte->young = false;
        referenced++;
      }
    }
    spin_unlock(&mm->page_table_lock);
  }
  rcu_read_unlock();
  if (!is_locked) folio_unlock(f);
  return referenced;
}

bool try_to_unmap(folio *f, swp_entry_t entry) {
  bool unmapped = false;
  long nr = folio_nr_pages(f);
  rcu_read_lock();
  auto *mm = static_cast<mm_struct *>(READ_ONCE(f->mapping));
  if (mm) {
    spin_lock(&mm->page_table_lock);
    vm_area_struct *vma = nullptr;
    if (pte_t *pte = folio_pte(mm, f, &vma)) {
      swap_duplicate(entry);  // the page table's hold on the slot
      *pte = pte_t{nullptr, false, entry.val};
      atomic_dec(&f->_mapcount);
      WRITE_ONCE(f->mapping, nullptr);
      add_mm_counter(mm, MM_ANONPAGES, -nr);
      add_mm_counter(mm, MM_SWAPENTS, nr);
      mod_memcg_lruvec_state(folio_memcg(f), NR_ANON_MAPPED, -static_cast<int>(nr));
      // The page table's reference; the caller's isolation reference keeps the folio.
      WARN_ON_ONCE(folio_put_testzero(f));
      unmapped = true;
    }
    spin_unlock(&mm->page_table_lock);
  }
  rcu_read_unlock();
  return unmapped;
}

}  // namespace umemcg
