// SPDX-License-Identifier: GPL-2.0-only
// mm/memory.h: private anonymous memory of an address space: mappings, faults, unmapping.
//
// A fault on a missing page of a mapping allocates a folio (the machine's RAM, mm/page_alloc.h:
// global reclaim, then the global OOM killer, may run inside), charges it to the mm's memcg
// (__mem_cgroup_charge, GFP_KERNEL: reclaim, then the OOM killer, may run inside), maps it
// (MM_ANONPAGES) and queues it for the LRU through this CPU's lru_add batch; a VM_LOCKED
// mapping's folios are mlocked (unevictable). A fault on a swap entry (a page reclaim swapped
// out) is a major fault: a new folio is charged to the memcg recorded for the slot (or the mm's),
// refault-tested against the slot's shadow entry, mapped, and the slot freed (MM_SWAPENTS ->
// MM_ANONPAGES). Unmapping (munmap, MADV_DONTNEED, exit) zaps the entries and drops the page
// tables' references: the freed folios are uncharged in batches, swap entries free their slots.
//
// Mirrors: mm/memory.c (handle_mm_fault, do_anonymous_page, do_swap_page, zap_pte_range,
//   unmap_vmas),
//   mm/mmap.c (do_mmap, do_munmap, exit_mmap), mm/madvise.c (MADV_DONTNEED), mm/gup.c
//   (__mm_populate), mm/oom_kill.c (pagefault_out_of_memory, __oom_reap_task_mm) (Linux 6.19)
// Emulation: addresses are page numbers (see mm/mm_types.h); only private anonymous mappings.
// Emulation: each fault costs anon_fault, each swap-in swap_in more, and each zapped page or
//   swap entry zap of machine time (mm/cost_model.h, docs/memory-model.md).
#pragma once

#include "mm/mm_types.h"

namespace umemcg {

using vm_fault_t = unsigned int;
inline constexpr vm_fault_t VM_FAULT_OOM = 0x0001;
inline constexpr vm_fault_t VM_FAULT_SIGBUS = 0x0002;

// mmap flags (kernel values) understood by do_mmap_anon.
inline constexpr unsigned long MAP_LOCKED = 0x02000;
inline constexpr unsigned long MAP_POPULATE = 0x08000;

// The VMA of @mm that contains @addr, or nullptr (the kernel's find_vma, narrowed to the
// containing one as vma_lookup does).
vm_area_struct *find_vma(mm_struct *mm, unsigned long addr) REQUIRES(mm->page_table_lock);

/**
 * do_mmap_anon - create a private anonymous mapping of @nr_pages
 * @mm: address space of the current task
 * @nr_pages: length in pages (> 0)
 * @flags: MAP_LOCKED (VM_LOCKED) and MAP_POPULATE (fault every page in now)
 * @addr: gets the first page number
 *
 * Context: inside a kernel entry of the owning task. Returns 0 or -EINVAL/-ENOMEM. Population
 * errors are not reported (as mm_populate's): population stops at a fatal signal or at the
 * first page whose fault fails (get_user_pages faults: no retry, no OOM wait).
 */
int do_mmap_anon(mm_struct *mm, unsigned long nr_pages, unsigned long flags, unsigned long *addr);
// munmap(): unmaps [@start, @start + @nr_pages), which must be whole mappings here.
int do_munmap(mm_struct *mm, unsigned long start, unsigned long nr_pages);
// madvise(MADV_DONTNEED): zaps the pages of the range; the mappings stay.
int madvise_dontneed(mm_struct *mm, unsigned long start, unsigned long nr_pages);
/**
 * handle_mm_fault - a write access to page @addr of @mm
 * A swap entry is swapped in (do_swap_page). Returns 0 (mapped, accessed bit set; or the entry
 * changed under a fault from another task, which then maps nothing), VM_FAULT_SIGBUS (no
 * mapping) or VM_FAULT_OOM (the charge failed). Context: task context: a kernel entry of the
 * owning task, or another task's remote access (as get_user_pages_remote) to a live mm.
 */
vm_fault_t handle_mm_fault(mm_struct *mm, unsigned long addr);
// The page fault as the architecture's handler runs it: handle_mm_fault as a user fault, retried
// after VM_FAULT_OOM unless a fatal signal is pending; a v1 OOM with oom_kill_disable is waited
// out first (mem_cgroup_oom_synchronize). Returns 0, VM_FAULT_SIGBUS or VM_FAULT_OOM.
vm_fault_t do_user_addr_fault(mm_struct *mm, unsigned long addr);
/**
 * pte_write_present - the MMU's side of a write to page @addr of @mm: if a page is mapped
 *   there, its accessed bit is set and true returned (no fault: nothing counted, no kernel
 *   entry); false if the write must fault (nothing mapped, or a swap entry)
 * Context: user mode (no vCPU needed); takes the page table's lock.
 */
bool pte_write_present(mm_struct *mm, unsigned long addr);
// __oom_reap_task_mm(): the OOM reaper's unmap of every private mapping of @mm (the mappings
// stay, their pages and swap entries go, mlocked ones too), after setting MMF_UNSTABLE so that
// a later fault of the victim fails with VM_FAULT_SIGBUS instead of mapping a page.
void __oom_reap_task_mm(mm_struct *mm);
// exit_mmap(): unmaps everything and sets MMF_OOM_SKIP.
void exit_mmap(mm_struct *mm);

}  // namespace umemcg
