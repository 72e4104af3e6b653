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
  bool used = false;         // allocated: off the free stack
  // The slot's holds (the kernel's swap_map byte): the page-table entries that hold it, and
  // SWAP_HAS_CACHE while the folio being swapped out holds it. The last hold dropped frees it.
  unsigned short count = 0;
  bool has_cache = false;
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
      s.count = 0;
      s.has_cache = true;  // the folio's hold until put_swap_folio()
      s.has_shadow = false;
      entry.val = off;
      atomic_long_dec(&g_nr_swap_pages);
    }
  }
  // mem_cgroup_try_charge_swap(): with entry 0 it raises MEMCG_SWAP_FAIL and returns 0.
  if (__mem_cgroup_try_charge_swap(f, entry)) {
    put_swap_folio(entry);  // nothing was recorded for it
    entry.val = 0;
  }
  return entry;
}

namespace {
/**
 * swap_put - drop one hold on @entry's slot: a page-table entry's (@cache false) or the swap
 *   cache's (@cache true)
 * The last hold frees the slot: its swap (v2) or memsw (v1) charge record is uncharged first,
 * then the slot goes back on the free stack. Between the two the slot has no hold, so nothing
 * can take one (holds come from a page table holding the entry or from the folio being
 * swapped out), and it is not yet on the free stack, so it cannot be handed out again while
 * its old record is still there.
 */
void swap_put(swp_entry_t entry, bool cache) {
  if (!entry.val) return;
  {
    spin_guard g(&g_si.lock);
    if (WARN_ON_ONCE(entry.val >= g_si.slots.size() || !g_si.slots[entry.val].used)) return;
    swap_slot &s = g_si.slots[entry.val];
    if (cache) {
      if (WARN_ON_ONCE(!s.has_cache)) return;
      s.has_cache = false;
    } else {
      if (WARN_ON_ONCE(s.count == 0)) return;
      s.count--;
    }
    if (s.count || s.has_cache) return;
  }
  __mem_cgroup_uncharge_swap(entry, 1);
  spin_guard g(&g_si.lock);
  swap_slot &s = g_si.slots[entry.val];
  s.used = false;
  s.has_shadow = false;
  g_si.free_stack.push_back(static_cast<unsigned int>(entry.val));
  atomic_long_inc(&g_nr_swap_pages);
}
}  // namespace

void swap_duplicate(swp_entry_t entry) {
  spin_guard g(&g_si.lock);
  if (WARN_ON_ONCE(entry.val == 0 || entry.val >= g_si.slots.size() ||
                   !g_si.slots[entry.val].used))
    return;
  g_si.slots[entry.val].count++;
}

void swap_free(swp_entry_t entry) { swap_put(entry, false); }

void put_swap_folio(swp_entry_t entry) { swap_put(entry, true); }

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
