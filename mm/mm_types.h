// SPDX-License-Identifier: GPL-2.0-only
// mm/mm_types.h: the address space model: struct mm_struct and its mappings.
//
// An mm_struct is the address space of one emulated process (mm/process.h): its memcg, its RSS
// counters and its private anonymous mappings (vm_area_struct), each with one page table entry
// per page. Faults (mm/memory.cc) fill the entries, munmap/MADV_DONTNEED and exit zap them,
// reclaim reaches them through the folio's reverse map (folio::mapping = the mm,
// folio::index = the virtual page number) and swap-out turns them into swap entries
// (MM_ANONPAGES -> MM_SWAPENTS), which the next fault on the page swaps in.
//
// Mirrors: include/linux/mm_types.h (Linux 6.19): mm_struct (rss_stat, flags, owner),
//   vm_area_struct (vm_start, vm_end, vm_flags), enum NR_MM_COUNTERS, MMF_* bits
// Emulation: instead of mm->owner (a task whose css_set names the memcg), the mm records its
//   memcg directly, with a css reference; emu::mm_attach() is the cgroup migration of the
//   owning process. Attaching counts the cgroup as populated (rmdir then fails with -EBUSY).
// Emulation: addresses are page numbers; a mapping's page table is a vector of pte_t, one per
//   page, and page_table_lock guards both the VMA set and every entry (the kernel has the
//   mmap_lock, per-table locks and hardware accessed bits).
#pragma once

#include <map>
#include <vector>

#include "shim/atomic.h"
#include "shim/spinlock.h"
#include "shim/thread_annotations.h"

namespace umemcg {

struct mem_cgroup;
struct folio;
struct task_struct;

enum { MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS, MM_SHMEMPAGES, NR_MM_COUNTERS };

// vm_flags (kernel values).
inline constexpr unsigned long VM_READ = 0x1;
inline constexpr unsigned long VM_WRITE = 0x2;
inline constexpr unsigned long VM_LOCKED = 0x2000;

// mm_struct::flags bits (kernel names).
inline constexpr int MMF_OOM_SKIP = 21;
// Set by the OOM reaper: the mm's memory is being torn down, a new fault must not map a page.
inline constexpr int MMF_UNSTABLE = 22;
inline constexpr int MMF_OOM_REAP_QUEUED = 25;

// One page table entry: a present page (with its accessed bit), a swap entry (the page is in
// swap slot @swp: see mm/swapfile.h) or nothing.
struct pte_t {
  folio *page = nullptr;
  bool young = false;  // the hardware accessed bit: set by an access, cleared by reclaim's check
  unsigned long swp = 0;  // swp_entry_t::val of a swapped-out page (page == nullptr), else 0
};

struct mm_struct;

struct vm_area_struct {
  unsigned long vm_start = 0;  // first page number
  unsigned long vm_end = 0;    // one past the last page number
  unsigned long vm_flags = 0;
  mm_struct *vm_mm = nullptr;
  std::vector<pte_t> ptes;  // vm_end - vm_start entries
};

struct mm_struct {
  // The owner's memcg (holds a css reference), nullptr = the root. Published with
  // rcu_assign_pointer, read under rcu_read_lock().
  mem_cgroup *memcg = nullptr;

  // get_mm_counter(): pages mapped (MM_ANONPAGES, MM_FILEPAGES) and swap entries.
  atomic_long_t rss_stat[NR_MM_COUNTERS];
  unsigned long flags = 0;  // MMF_* bits, atomic bitops
  task_struct *owner = nullptr;

  spinlock_t page_table_lock{0, "page_table_lock"};
  // Mappings by first page number.
  std::map<unsigned long, vm_area_struct *> vmas GUARDED_BY(page_table_lock);
  // Where the next mapping goes (get_unmapped_area, bottom-up).
  unsigned long mmap_base GUARDED_BY(page_table_lock) = 0x10000;
};

inline long get_mm_counter(mm_struct *mm, int member) {
  return atomic_long_read(&mm->rss_stat[member]);
}
inline void add_mm_counter(mm_struct *mm, int member, long value) {
  atomic_long_add(value, &mm->rss_stat[member]);
}
inline unsigned long get_mm_rss(mm_struct *mm) {
  return static_cast<unsigned long>(get_mm_counter(mm, MM_FILEPAGES) +
                                    get_mm_counter(mm, MM_ANONPAGES) +
                                    get_mm_counter(mm, MM_SHMEMPAGES));
}

}  // namespace umemcg

namespace umemcg::emu {
// Moves @mm (its owning process) into @memcg (nullptr: the root). Task context.
void mm_attach(mm_struct *mm, mem_cgroup *memcg);
}  // namespace umemcg::emu
