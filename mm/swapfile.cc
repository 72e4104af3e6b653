// SPDX-License-Identifier: GPL-2.0-only
// mm/swapfile.cc: the machine's swap device and its slots (see swapfile.h).
//
// Mirrors: mm/swapfile.c, mm/swap_state.c (Linux 6.19)
// Emulation: see swapfile.h.
#include "mm/swapfile.h"

#include <vector>

#include "shim/atomic.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/spinlock.h"

namespace umemcg {

namespace {

struct swap_slot {
  bool used = false;         // allocated (the kernel's swap_map count, one user here)
  bool has_shadow = false;   // a swapped-out folio left its shadow entry here
  shadow_entry shadow;
};

// struct swap_info_struct of the one device.
struct swap_info_struct {
  spinlock_t lock{0, "swap_info"};
  // Slot 0 is the header and never allocated; offsets 1..pages.
  std::vector<swap_slot> slots GUARDED_BY(lock);
  // Free offsets, the lowest on top.
  std::vector<unsigned int> free_stack GUARDED_BY(lock);
};

swap_info_struct g_si;
atomic_long_t g_total_swap_pages;  // written at swapon/swapoff only
atomic_long_t g_nr_swap_pages;     // free slots

}  // namespace

int swapon(unsigned long nr_pages) {
  if (nr_pages == 0 || nr_pages > (1UL << 32)) return -EINVAL;
  spin_guard g(&g_si.lock);
  if (!g_si.slots.empty()) return -EBUSY;
  g_si.slots.assign(nr_pages + 1, swap_slot{});
  g_si.slots[0].used = true;  // the header
  g_si.free_stack.clear();
  g_si.free_stack.reserve(nr_pages);
  for (unsigned long off = nr_pages; off >= 1; off--)
    g_si.free_stack.push_back(static_cast<unsigned int>(off));
  atomic_long_set(&g_total_swap_pages, static_cast<long>(nr_pages));
  atomic_long_set(&g_nr_swap_pages, static_cast<long>(nr_pages));
  return 0;
}

void swapoff_all() {
  spin_guard g(&g_si.lock);
  if (g_si.slots.empty()) return;
  long in_use = atomic_long_read(&g_total_swap_pages) - atomic_long_read(&g_nr_swap_pages);
  // Every process exited and every mapping was zapped before the machine stops.
  WARN_ON(in_use != 0);
  g_si.slots.clear();
  g_si.slots.shrink_to_fit();
  g_si.free_stack.clear();
  g_si.free_stack.shrink_to_fit();
  atomic_long_set(&g_total_swap_pages, 0);
  atomic_long_set(&g_nr_swap_pages, 0);
}

long total_swap_pages() { return atomic_long_read(&g_total_swap_pages); }
long get_nr_swap_pages() { return atomic_long_read(&g_nr_swap_pages); }

bool vm_swap_full() {
  return atomic_long_read(&g_nr_swap_pages) * 2 < atomic_long_read(&g_total_swap_pages);
}

swp_entry_t folio_alloc_swap(folio *f) {
  swp_entry_t entry{0};
  {
    spin_guard g(&g_si.lock);
    if (!g_si.free_stack.empty()) {
      unsigned int off = g_si.free_stack.back();
      g_si.free_stack.pop_back();
      swap_slot &s = g_si.slots[off];
      s.used = true;
      s.has_shadow = false;
      entry.val = off;
      atomic_long_dec(&g_nr_swap_pages);
    }
  }
  // mem_cgroup_try_charge_swap(): with entry 0 it raises MEMCG_SWAP_FAIL and returns 0.
  if (__mem_cgroup_try_charge_swap(f, entry)) {
    swap_free(entry);  // put_swap_folio(): nothing was recorded for it
    entry.val = 0;
  }
  return entry;
}

void swap_free(swp_entry_t entry) {
  if (!entry.val) return;
  // The charge goes first: the slot may be reused (and recorded again) once it is free.
  __mem_cgroup_uncharge_swap(entry, 1);
  spin_guard g(&g_si.lock);
  if (WARN_ON_ONCE(entry.val >= g_si.slots.size() || !g_si.slots[entry.val].used)) return;
  swap_slot &s = g_si.slots[entry.val];
  s.used = false;
  s.has_shadow = false;
  g_si.free_stack.push_back(static_cast<unsigned int>(entry.val));
  atomic_long_inc(&g_nr_swap_pages);
}

void swap_set_shadow(swp_entry_t entry, const shadow_entry &shadow) {
  spin_guard g(&g_si.lock);
  if (WARN_ON_ONCE(entry.val == 0 || entry.val >= g_si.slots.size())) return;
  g_si.slots[entry.val].shadow = shadow;
  g_si.slots[entry.val].has_shadow = true;
}

bool swap_get_shadow(swp_entry_t entry, shadow_entry *shadow) {
  spin_guard g(&g_si.lock);
  if (entry.val == 0 || entry.val >= g_si.slots.size()) return false;
  const swap_slot &s = g_si.slots[entry.val];
  if (!s.has_shadow) return false;
  *shadow = s.shadow;
  return true;
}

}  // namespace umemcg
