// SPDX-License-Identifier: GPL-2.0-only
// mm/mmzone.h: LRU lists and the per-memcg lruvec of the machine's one node.
//
// A lruvec holds the five LRU lists of one memcg (inactive/active anon, inactive/active file,
// unevictable), their exact sizes, the reclaim cost balance (anon_cost/file_cost), the
// nonresident age of workingset detection and the refault snapshot of the last reclaim.
// Folios are linked through folio::lru under lru_lock.
//
// Mirrors: include/linux/mmzone.h (enum lru_list, struct lruvec), include/linux/memcontrol.h
//   (struct mem_cgroup_per_node, struct mem_cgroup_reclaim_iter), include/linux/mmzone.h
//   (struct pglist_data's kswapd fields) (Linux 6.19)
// struct pglist_data holds the node's kswapd state (mm/vmscan.h).
//
// Emulation: one node and one zone, so lru_zone_size is one number per list and every memcg has
//   exactly one lruvec, embedded in its mem_cgroup_per_node.
// Emulation: the reclaim iterator walks a tree of every allocated memcg (online or dying) kept
//   here (parent, first/last child, siblings in creation order) under one spinlock; the kernel
//   walks the css tree under RCU.
#pragma once

#include "shim/atomic.h"
#include "shim/list.h"
#include "shim/spinlock.h"
#include "shim/thread_annotations.h"
#include "shim/types.h"
#include "shim/wait.h"

namespace umemcg {

struct mem_cgroup;

inline constexpr int LRU_BASE = 0;
inline constexpr int LRU_ACTIVE = 1;
inline constexpr int LRU_FILE = 2;

enum lru_list {
  LRU_INACTIVE_ANON = LRU_BASE,
  LRU_ACTIVE_ANON = LRU_BASE + LRU_ACTIVE,
  LRU_INACTIVE_FILE = LRU_BASE + LRU_FILE,
  LRU_ACTIVE_FILE = LRU_BASE + LRU_FILE + LRU_ACTIVE,
  LRU_UNEVICTABLE,
  NR_LRU_LISTS
};
inline constexpr int NR_EVICTABLE_LRU = LRU_UNEVICTABLE;

inline bool is_file_lru(lru_list lru) {
  return lru == LRU_INACTIVE_FILE || lru == LRU_ACTIVE_FILE;
}
inline bool is_active_lru(lru_list lru) {
  return lru == LRU_ACTIVE_ANON || lru == LRU_ACTIVE_FILE;
}

// Indices of anon_cost/file_cost style pairs and of lruvec::refaults.
enum { WORKINGSET_ANON = 0, WORKINGSET_FILE = 1, ANON_AND_FILE = 2 };

struct lruvec {
  spinlock_t lru_lock{0, "lru_lock"};
  list_head lists[NR_LRU_LISTS] GUARDED_BY(lru_lock);
  // Exact list sizes in pages (the kernel's lru_zone_size of the one zone).
  unsigned long lru_zone_size[NR_LRU_LISTS] GUARDED_BY(lru_lock) = {};
  // Reclaim cost of each type (lru_note_cost), halved when it outgrows the LRU size.
  unsigned long anon_cost GUARDED_BY(lru_lock) = 0;
  unsigned long file_cost GUARDED_BY(lru_lock) = 0;
  // Evictions and activations seen by this lruvec and its descendants (workingset clock).
  atomic_long_t nonresident_age;
  // WORKINGSET_ACTIVATE_{ANON,FILE} at the end of the last reclaim of this memcg.
  unsigned long refaults[ANON_AND_FILE] = {};
  // Emulation: the owner (the kernel derives it with container_of from mem_cgroup_per_node).
  mem_cgroup *memcg = nullptr;
};

// Shared round-robin position of reclaim walks targeting one memcg.
struct mem_cgroup_reclaim_iter {
  mem_cgroup *position = nullptr;  // last memcg handed out, no reference (cleared at free)
  unsigned int generation = 0;     // bumped each time a walk reaches the end of the subtree
};

// Guards every memcg_tree_node (mm/memcontrol_iter.cc).
extern spinlock_t memcg_tree_lock;

// Emulation: links of the all-memcg tree (see the banner).
struct memcg_tree_node {
  mem_cgroup *parent GUARDED_BY(memcg_tree_lock) = nullptr;
  mem_cgroup *first_child GUARDED_BY(memcg_tree_lock) = nullptr;
  mem_cgroup *last_child GUARDED_BY(memcg_tree_lock) = nullptr;
  mem_cgroup *prev_sibling GUARDED_BY(memcg_tree_lock) = nullptr;
  mem_cgroup *next_sibling GUARDED_BY(memcg_tree_lock) = nullptr;
};

struct mem_cgroup_per_node {
  struct lruvec lruvec;
  mem_cgroup_reclaim_iter iter;
  memcg_tree_node tree;
};

// The kswapd fields of the one node (pg_data_t).
struct pglist_data {
  // kswapd sleeps here; wakeup_kswapd() wakes it when it is on the queue.
  wait_queue_head kswapd_wait{{0, "kswapd_wait"}, nullptr, nullptr, "kswapd_wait"};
  // The order the allocations that woke kswapd asked for (0 here: order-0 folios).
  int kswapd_order = 0;
  // balance_pgdat() runs that reclaimed nothing in a row; at MAX_RECLAIM_RETRIES the node is
  // hopeless and left to direct reclaim, which resets it when it makes progress.
  int kswapd_failures = 0;
  // The kswapd thread, or nullptr before its start (see mm/vmscan.h).
  task_struct *kswapd = nullptr;
};
using pg_data_t = pglist_data;

}  // namespace umemcg
