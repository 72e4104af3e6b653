// SPDX-License-Identifier: GPL-2.0-only
// mm/workingset.h: workingset detection: shadow entries left by evicted page-cache folios (in
// the file's page cache) and swapped-out anon folios (in their swap slot, mm/swapfile.h), and
// the refault test that tells whether a refaulting folio was part of the workingset.
//
// Every lruvec has a nonresident age, a clock that advances with evictions and activations in
// it and in its descendants. An evicted folio leaves a shadow entry recording the clock of the
// reclaim target's lruvec, that memcg's id and whether the folio was in the workingset. When the
// page faults back in, the distance the clock has advanced since is compared with the size of
// the workingset the eviction memcg could have held: a refault within it is activated at once.
//
// Mirrors: mm/workingset.c (workingset_age_nonresident, workingset_eviction,
//   workingset_test_recent, workingset_refault, workingset_activation) (Linux 6.19)
// Emulation: a shadow entry stores the clock, the memcg id and the workingset bit as they are
//   (no bit packing, no bucket_order, the single node implied).
// Emulation: the shadow-node shrinker (WORKINGSET_NODERECLAIM) is not modelled: shadow entries
//   live until their file range is truncated or refaulted, or their swap slot is freed.
// Emulation: the workingset size reads the eviction memcg's exact LRU sizes summed over its
//   subtree (the kernel reads the same sums from rstat, as fresh as its last flush).
#pragma once

#include "mm/page_flags.h"

namespace umemcg {

struct shadow_entry {
  unsigned long eviction = 0;  // nonresident_age of the eviction lruvec when evicted
  unsigned short memcgid = 0;  // mem_cgroup_id of the reclaim target (0: none)
  bool workingset = false;     // PG_workingset of the evicted folio
};

// Adds @nr_pages to the nonresident age of @lv and of every ancestor's lruvec.
void workingset_age_nonresident(lruvec *lv, unsigned long nr_pages);
// The shadow entry for @f, evicted by reclaim targeting @target_memcg (ages that lruvec).
shadow_entry workingset_eviction(folio *f, mem_cgroup *target_memcg);
// Whether a refault with @shadow is recent (@workingset: the shadow's workingset bit).
bool workingset_test_recent(const shadow_entry &shadow, bool file, bool *workingset);
// A folio refaults into the page cache or is swapped in over @shadow: counts it
// (WORKINGSET_REFAULT_FILE/ANON) and activates a recent one. @f is charged and not yet on the
// LRU.
void workingset_refault(folio *f, const shadow_entry &shadow);
// folio_mark_accessed activated @f: ages its lruvec's nonresident clock.
void workingset_activation(folio *f);

// Pages of @lru in @memcg's subtree (lruvec_page_state of an LRU item; see the banner).
unsigned long lruvec_subtree_lru_pages(mem_cgroup *memcg, lru_list lru);

}  // namespace umemcg
