// SPDX-License-Identifier: GPL-2.0-only
// test/support/memcg_invariants.h: the charge-path invariant checker (target R4) and the
// ledger of what a test has charged.
//
// Checked, for every allocated memcg (online or dying), in both stock designs:
//   - memory.usage == pages the test charged in the memcg's subtree (folios, forced charges,
//     direct try_charge) + pages the memory model holds (folios on the memcg's LRU lists or in
//     per-CPU lru_add batches: process memory and page cache) + net kmem pages (MEMCG_KMEM) + socket pages (MEMCG_SOCK) of the
//     subtree + pages held for the subtree in per-CPU stocks; the root's own statistics are
//     left out (the root is never charged). On v1 the same for memsw (with memsw's own stock in
//     the page_counter design), plus the swapped-out pages recorded in the subtree (MEMCG_SWAP).
//   - swap.usage (v2) == MEMCG_SWAP of the subtree, root excluded.
//   - no counter negative, no stock slot above MEMCG_CHARGE_BATCH.
//   - the css reference count equals the references that must exist: the base one while not
//     dying, one per allocated child, one while the id is live, one per stock slot, plus the
//     test's own (folios, attached mms, held references: the ledger), plus one per model folio
//     and one per live emulated process's mm.
//   - objcg byte conservation: sum of MEMCG_KMEM over all memcgs, in bytes == live object bytes
//     + bytes parked in objcgs + bytes in obj stocks + kmem pages charged whole.
// Statistics are read as each memcg's exact own value, the sum of its per-CPU running totals
// (emu::memcg_page_state_local_sum), not through memcg_page_state(): those totals need no
// flush, so checking never flushes and never changes what memory.stat readers see next.
// The checks assume a quiescent machine (no task in the middle of a charge): call between
// steps.
#pragma once

#include <map>
#include <string>

#include "mm/memcontrol.h"
#include "mm/obj_cgroup.h"

namespace umemcg::test {

struct ChargeLedger {
  std::map<mem_cgroup *, long> user_pages;  // pages charged to the memcg's counters directly
  std::map<mem_cgroup *, long> css_refs;    // references the test holds (folios, mms, gets)
  std::map<obj_cgroup *, long> obj_bytes;   // live bytes charged with obj_cgroup_charge
  std::map<obj_cgroup *, long> objcg_refs;  // objcg references the test holds (kmem pages)
  long kmem_page_pages = 0;                 // pages charged with __memcg_kmem_charge_page

  void forget(mem_cgroup *m) {
    if (user_pages.count(m) && user_pages[m] == 0) user_pages.erase(m);
    if (css_refs.count(m) && css_refs[m] == 0) css_refs.erase(m);
  }
};

// Returns "" when every invariant holds, else one line per violation.
std::string check_memcg_invariants(const ChargeLedger &ledger);
// After the machine is gone: every css and objcg freed. "" or the violations.
std::string check_memcg_teardown();

}  // namespace umemcg::test
