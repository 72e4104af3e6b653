// SPDX-License-Identifier: GPL-2.0-only
// mm/memory.cc: anonymous mappings, faults and unmapping (see memory.h).
//
// Mirrors: mm/memory.c, mm/mmap.c, mm/madvise.c, mm/gup.c (Linux 6.19)
// Emulation: see memory.h.
#include "mm/memory.h"

#include <vector>

#include "mm/memcontrol_folio.h"
#include "mm/swap.h"
#include "shim/errno.h"
#include "shim/machine.h"
#include "shim/rcupdate.h"
#include "shim/sched.h"

namespace umemcg {

namespace {

constexpr std::uint64_t kFaultNs = 1200;  // trap, allocate and zero a page, charge, map, LRU add
constexpr std::uint64_t kZapNs = 350;     // clear the entry, free the page, uncharge (batched)

vm_area_struct *find_vma(mm_struct *mm, unsigned long addr) REQUIRES(mm->page_table_lock) {
  auto it = mm->vmas.upper_bound(addr);
  if (it == mm->vmas.begin()) return nullptr;
  vm_area_struct *vma = std::prev(it)->second;
  return addr < vma->vm_end ? vma : nullptr;
}

// zap_pte_range() for [start, end) of @vma: entries cleared under the lock, the folios' page
// table references collected in @out.
void zap_range(mm_struct *mm, vm_area_struct *vma, unsigned long start, unsigned long end,
               std::vector<folio *> *out) REQUIRES(mm->page_table_lock) {
  for (unsigned long a = start; a < end; a++) {
    pte_t &pte = vma->ptes[a - vma->vm_start];
    folio *f = pte.page;
    if (!f) continue;
    pte = pte_t{};
    atomic_dec(&f->_mapcount);
    WRITE_ONCE(f->mapping, nullptr);
    // munlock on the last unmap: the folio is on its way out.
    folio_clear_mlocked(f);
    add_mm_counter(mm, MM_ANONPAGES, -static_cast<long>(folio_nr_pages(f)));
    mod_memcg_lruvec_state(folio_memcg(f), NR_ANON_MAPPED, -static_cast<int>(folio_nr_pages(f)));
    out->push_back(f);
  }
}

// tlb_finish_mmu(): the batched frees (uncharged in batches of folios_put).
void free_zapped(std::vector<folio *> *folios) {
  emu::consume_time(folios->size() * kZapNs);
  for (size_t i = 0; i < folios->size(); i += PAGEVEC_SIZE) {
    unsigned int n = static_cast<unsigned int>(std::min<size_t>(PAGEVEC_SIZE, folios->size() - i));
    folios_put(folios->data() + i, n);
  }
  folios->clear();
}

// __mm_populate(): faults every page of the new mapping in, in this kernel entry.
void mm_populate(mm_struct *mm, unsigned long start, unsigned long nr_pages) {
  for (unsigned long a = start; a < start + nr_pages; a++) {
    if (fatal_signal_pending(current)) break;
    if (do_user_addr_fault(mm, a)) break;
  }
}

}  // namespace

int do_mmap_anon(mm_struct *mm, unsigned long nr_pages, unsigned long flags, unsigned long *addr) {
  if (nr_pages == 0 || nr_pages > (1UL << 36)) return -EINVAL;
  auto *vma = new vm_area_struct;
  vma->vm_mm = mm;
  vma->vm_flags = VM_READ | VM_WRITE | ((flags & MAP_LOCKED) ? VM_LOCKED : 0);
  vma->ptes.resize(nr_pages);
  spin_lock(&mm->page_table_lock);
  vma->vm_start = mm->mmap_base;
  vma->vm_end = vma->vm_start + nr_pages;
  mm->mmap_base = vma->vm_end + 1;  // a guard gap keeps mappings apart
  mm->vmas[vma->vm_start] = vma;
  spin_unlock(&mm->page_table_lock);
  *addr = vma->vm_start;
  if (flags & (MAP_POPULATE | MAP_LOCKED)) mm_populate(mm, vma->vm_start, nr_pages);
  return 0;
}

int do_munmap(mm_struct *mm, unsigned long start, unsigned long nr_pages) {
  std::vector<folio *> folios;
  std::vector<vm_area_struct *> gone;
  spin_lock(&mm->page_table_lock);
  auto it = mm->vmas.lower_bound(start);
  while (it != mm->vmas.end() && it->second->vm_end <= start + nr_pages) {
    vm_area_struct *vma = it->second;
    zap_range(mm, vma, vma->vm_start, vma->vm_end, &folios);
    gone.push_back(vma);
    it = mm->vmas.erase(it);
  }
  spin_unlock(&mm->page_table_lock);
  free_zapped(&folios);
  for (vm_area_struct *vma : gone) delete vma;
  return 0;
}

int madvise_dontneed(mm_struct *mm, unsigned long start, unsigned long nr_pages) {
  std::vector<folio *> folios;
  spin_lock(&mm->page_table_lock);
  for (unsigned long a = start; a < start + nr_pages;) {
    vm_area_struct *vma = find_vma(mm, a);
    if (!vma) {
      spin_unlock(&mm->page_table_lock);
      free_zapped(&folios);
      return -ENOMEM;  // unmapped range, as madvise reports it
    }
    // MADV_DONTNEED refuses locked mappings.
    if (vma->vm_flags & VM_LOCKED) {
      spin_unlock(&mm->page_table_lock);
      free_zapped(&folios);
      return -EINVAL;
    }
    unsigned long end = std::min(vma->vm_end, start + nr_pages);
    zap_range(mm, vma, a, end, &folios);
    a = end;
  }
  spin_unlock(&mm->page_table_lock);
  free_zapped(&folios);
  return 0;
}

vm_fault_t handle_mm_fault(mm_struct *mm, unsigned long addr) {
  // count_memcg_event_mm(mm, PGFAULT)
  rcu_read_lock();
  mem_cgroup *mm_memcg = rcu_dereference(mm->memcg);
  count_memcg_events(mm_memcg ? mm_memcg : root_mem_cgroup, PGFAULT, 1);
  rcu_read_unlock();
  spin_lock(&mm->page_table_lock);
  vm_area_struct *vma = find_vma(mm, addr);
  if (!vma) {
    spin_unlock(&mm->page_table_lock);
    return VM_FAULT_SIGBUS;
  }
  pte_t *pte = &vma->ptes[addr - vma->vm_start];
  if (pte->page) {
    pte->young = true;  // a write to a present page: the hardware sets the accessed bit
    spin_unlock(&mm->page_table_lock);
    return 0;
  }
  spin_unlock(&mm->page_table_lock);

  // do_anonymous_page(): allocate, charge, then map under the lock.
  emu::consume_time(kFaultNs);
  folio *f = folio_alloc();
  folio_set_swapbacked(f);
  if (__mem_cgroup_charge(f, mm, GFP_KERNEL)) {
    folio_put(f);
    return VM_FAULT_OOM;
  }
  spin_lock(&mm->page_table_lock);
  vma = find_vma(mm, addr);
  // Only the owning task changes its mappings, and it is here.
  WARN_ON_ONCE(!vma || vma->ptes[addr - vma->vm_start].page);
  f->mapping = mm;
  f->index = addr;
  atomic_set(&f->_mapcount, 1);
  add_mm_counter(mm, MM_ANONPAGES, folio_nr_pages(f));
  mod_memcg_lruvec_state(folio_memcg(f), NR_ANON_MAPPED, static_cast<int>(folio_nr_pages(f)));
  // The page table now holds the allocation's reference; the batch takes its own.
  folio_add_lru_vma(f, vma);
  vma->ptes[addr - vma->vm_start] = pte_t{f, true};
  spin_unlock(&mm->page_table_lock);
  return 0;
}

vm_fault_t do_user_addr_fault(mm_struct *mm, unsigned long addr) {
  for (;;) {
    vm_fault_t ret = handle_mm_fault(mm, addr);
    if (!(ret & VM_FAULT_OOM)) return ret;
    // pagefault_out_of_memory(): a dying task returns quietly, anything else retries the fault
    // (the memcg OOM killer has already run inside the charge).
    if (fatal_signal_pending(current)) return ret;
    cond_resched();
  }
}

void exit_mmap(mm_struct *mm) {
  std::vector<folio *> folios;
  std::vector<vm_area_struct *> gone;
  spin_lock(&mm->page_table_lock);
  for (auto &[start, vma] : mm->vmas) {
    zap_range(mm, vma, vma->vm_start, vma->vm_end, &folios);
    gone.push_back(vma);
  }
  mm->vmas.clear();
  spin_unlock(&mm->page_table_lock);
  free_zapped(&folios);
  for (vm_area_struct *vma : gone) delete vma;
  // The OOM killer may pick another victim now.
  set_bit(MMF_OOM_SKIP, &mm->flags);
}

}  // namespace umemcg
