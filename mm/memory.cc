// SPDX-License-Identifier: GPL-2.0-only
// mm/memory.cc: anonymous mappings, faults and unmapping (see memory.h).
//
// Mirrors: mm/memory.c, mm/mmap.c, mm/madvise.c, mm/gup.c (Linux 6.19)
// Emulation: see memory.h.
#include "mm/memory.h"

#include <vector>

#include "mm/cost_model.h"
#include "mm/memcontrol_folio.h"
#include "mm/page_alloc.h"
#include "mm/swap.h"
#include "mm/swapfile.h"
#include "mm/vmstat.h"
#include "mm/workingset.h"
#include "shim/errno.h"
#include "shim/machine.h"
#include "shim/rcupdate.h"
#include "shim/sched.h"

namespace umemcg {

namespace {

// What a zap collected: the folios' page table references and the swap entries.
struct zap_details {
  std::vector<folio *> folios;
  std::vector<swp_entry_t> entries;
};

// zap_pte_range() for [start, end) of @vma: entries cleared under the lock, the folios' page
// table references and the swap entries collected in @out.
void zap_range(mm_struct *mm, vm_area_struct *vma, unsigned long start, unsigned long end,
               zap_details *out) REQUIRES(mm->page_table_lock) {
  for (unsigned long a = start; a < end; a++) {
    pte_t &pte = vma->ptes[a - vma->vm_start];
    if (pte.swp) {
      out->entries.push_back(swp_entry_t{pte.swp});
      pte = pte_t{};
      add_mm_counter(mm, MM_SWAPENTS, -1);
      continue;
    }
    folio *f = pte.page;
    if (!f) continue;
    pte = pte_t{};
    atomic_dec(&f->_mapcount);
    WRITE_ONCE(f->mapping, nullptr);
    // munlock on the last unmap: the folio is on its way out (__munlock_folio's count).
    if (folio_test_clear_mlocked(f)) count_vm_events(UNEVICTABLE_PGMUNLOCKED, folio_nr_pages(f));
    add_mm_counter(mm, MM_ANONPAGES, -static_cast<long>(folio_nr_pages(f)));
    mod_memcg_lruvec_state(folio_memcg(f), NR_ANON_MAPPED, -static_cast<int>(folio_nr_pages(f)));
    out->folios.push_back(f);
  }
}

// tlb_finish_mmu(): the batched frees (uncharged in batches of folios_put); the swap entries'
// slots are freed (free_swap_and_cache), which uncharges their swap.
void free_zapped(zap_details *z) {
  std::vector<folio *> *folios = &z->folios;
  emu::consume_time((folios->size() + z->entries.size()) * emu::cost_model().zap);
  for (size_t i = 0; i < folios->size(); i += PAGEVEC_SIZE) {
    unsigned int n = static_cast<unsigned int>(std::min<size_t>(PAGEVEC_SIZE, folios->size() - i));
    folios_put(folios->data() + i, n);
  }
  folios->clear();
  for (swp_entry_t e : z->entries) swap_free(e);
  z->entries.clear();
}

// __mm_populate(): faults every page of the new mapping in, in this kernel entry. These are
// get_user_pages() faults, not user faults: a failed one (VM_FAULT_OOM: the charge failed, a
// v1 OOM with oom_kill_disable included, which is not waited out here) ends the population.
void mm_populate(mm_struct *mm, unsigned long start, unsigned long nr_pages) {
  for (unsigned long a = start; a < start + nr_pages; a++) {
    if (fatal_signal_pending(current)) break;
    if (handle_mm_fault(mm, a)) break;
  }
}

// do_swap_page(): a fault on a swap entry reads the page back from its slot into a new folio,
// charged to the memcg recorded for the slot (or the mm's), maps it and frees the slot (a write
// fault on an exclusive folio: the swap cache is not kept, see mm/swapfile.h).
vm_fault_t do_swap_page(mm_struct *mm, unsigned long addr, swp_entry_t entry) {
  emu::consume_time(emu::cost_model().anon_fault + emu::cost_model().swap_in);
  // Not in the swap cache: a major fault (count_vm_event, count_memcg_event_mm(PGMAJFAULT)).
  count_vm_event(PGMAJFAULT);
  rcu_read_lock();
  mem_cgroup *mm_memcg = rcu_dereference(mm->memcg);
  count_memcg_events(mm_memcg ? mm_memcg : root_mem_cgroup, PGMAJFAULT, 1);
  rcu_read_unlock();
  folio *f = folio_alloc(GFP_KERNEL);
  if (!f) return VM_FAULT_OOM;  // the entry stays: the retried fault swaps it in again
  folio_set_swapbacked(f);
  if (mem_cgroup_swapin_charge_folio(f, mm, GFP_KERNEL, entry)) {
    folio_put(f);
    return VM_FAULT_OOM;  // the entry stays: the retried fault swaps it in again
  }
  spin_lock(&mm->page_table_lock);
  vm_area_struct *vma = find_vma(mm, addr);
  // The pte_same() check: a fault from another task (a remote access) can race with the owner's
  // exit, whose zap then freed the slot; the new folio is dropped.
  if (!vma || vma->ptes[addr - vma->vm_start].swp != entry.val) {
    spin_unlock(&mm->page_table_lock);
    folio_put(f);
    return 0;
  }
  // From here the slot is this fault's: the entry is gone from the page table.
  bool mlock = vma->vm_flags & VM_LOCKED;
  f->mapping = mm;
  f->index = addr;
  atomic_set(&f->_mapcount, 1);
  folio_get(f);  // keeps the folio while it is set up (a racing zap may drop the mapping's)
  add_mm_counter(mm, MM_ANONPAGES, folio_nr_pages(f));
  add_mm_counter(mm, MM_SWAPENTS, -static_cast<long>(folio_nr_pages(f)));
  mod_memcg_lruvec_state(folio_memcg(f), NR_ANON_MAPPED, static_cast<int>(folio_nr_pages(f)));
  vma->ptes[addr - vma->vm_start] = pte_t{f, true};
  spin_unlock(&mm->page_table_lock);

  mem_cgroup_swapin_uncharge_swap(entry, folio_nr_pages(f));
  shadow_entry shadow;
  if (swap_get_shadow(entry, &shadow)) workingset_refault(f, shadow);
  // swap_read_folio(): the read completes at once (its bio counts PGPGIN in sectors).
  count_vm_events(PGPGIN, folio_nr_pages(f) << (PAGE_SHIFT - 9));
  count_vm_events(PSWPIN, folio_nr_pages(f));
  count_memcg_events(folio_memcg(f), PSWPIN, folio_nr_pages(f));
  // folio_add_lru_vma(): mlock_new_folio for a VM_LOCKED mapping.
  if (mlock) {
    folio_set_mlocked(f);
    count_vm_events(UNEVICTABLE_PGMLOCKED, folio_nr_pages(f));
  }
  folio_add_lru(f);
  swap_free(entry);
  folio_put(f);
  return 0;
}

}  // namespace

vm_area_struct *find_vma(mm_struct *mm, unsigned long addr) {
  auto it = mm->vmas.upper_bound(addr);
  if (it == mm->vmas.begin()) return nullptr;
  vm_area_struct *vma = std::prev(it)->second;
  return addr < vma->vm_end ? vma : nullptr;
}

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
  zap_details folios;
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
  zap_details folios;
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
  // count_vm_event(PGFAULT), count_memcg_event_mm(mm, PGFAULT)
  count_vm_event(PGFAULT);
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
  if (pte->swp) {
    swp_entry_t entry{pte->swp};
    spin_unlock(&mm->page_table_lock);
    return do_swap_page(mm, addr, entry);
  }
  spin_unlock(&mm->page_table_lock);

  // do_anonymous_page(): allocate, charge, then map under the lock.
  emu::consume_time(emu::cost_model().anon_fault);
  folio *f = folio_alloc(GFP_KERNEL);
  if (!f) return VM_FAULT_OOM;
  folio_set_swapbacked(f);
  if (__mem_cgroup_charge(f, mm, GFP_KERNEL)) {
    folio_put(f);
    return VM_FAULT_OOM;
  }
  spin_lock(&mm->page_table_lock);
  vma = find_vma(mm, addr);
  // The pte_same() check: only a fault from another task (a remote access racing with the
  // owner's exit or its own fault) finds the entry changed; the new folio is dropped.
  if (!vma || vma->ptes[addr - vma->vm_start].page || vma->ptes[addr - vma->vm_start].swp) {
    spin_unlock(&mm->page_table_lock);
    folio_put(f);
    return 0;
  }
  // check_stable_address_space(): the OOM reaper is tearing this mm down.
  if (test_bit(MMF_UNSTABLE, &mm->flags)) {
    spin_unlock(&mm->page_table_lock);
    folio_put(f);
    return VM_FAULT_SIGBUS;
  }
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

bool pte_write_present(mm_struct *mm, unsigned long addr) {
  spin_lock(&mm->page_table_lock);
  vm_area_struct *vma = find_vma(mm, addr);
  pte_t *pte = vma ? &vma->ptes[addr - vma->vm_start] : nullptr;
  const bool present = pte && pte->page;
  // Emulation: the hardware's accessed bit, set on the PTE under the page table's lock.
  if (present) pte->young = true;
  spin_unlock(&mm->page_table_lock);
  return present;
}

vm_fault_t do_user_addr_fault(mm_struct *mm, unsigned long addr) {
  for (;;) {
    // handle_mm_fault() with FAULT_FLAG_USER.
    mem_cgroup_enter_user_fault();
    vm_fault_t ret = handle_mm_fault(mm, addr);
    mem_cgroup_exit_user_fault();
    // A v1 OOM met by a charge that then got its memory another way: just forget it.
    if (task_in_memcg_oom(current) && !(ret & VM_FAULT_OOM)) mem_cgroup_oom_synchronize(false);
    if (!(ret & VM_FAULT_OOM)) return ret;
    // pagefault_out_of_memory(): a v1 OOM with oom_kill_disable is waited out here; then (or
    // when the memcg OOM killer has already run inside the charge) a dying task returns
    // quietly, anything else retries the fault.
    mem_cgroup_oom_synchronize(true);
    if (fatal_signal_pending(current)) return ret;
    cond_resched();
  }
}

void __oom_reap_task_mm(mm_struct *mm) {
  zap_details folios;
  spin_lock(&mm->page_table_lock);
  // A fault that raced with the reaper must not map a new page after it (it fails instead).
  set_bit(MMF_UNSTABLE, &mm->flags);
  for (auto &[start, vma] : mm->vmas) zap_range(mm, vma, vma->vm_start, vma->vm_end, &folios);
  spin_unlock(&mm->page_table_lock);
  free_zapped(&folios);
}

void exit_mmap(mm_struct *mm) {
  zap_details folios;
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
