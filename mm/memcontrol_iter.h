// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_iter.h: the reclaim walk over a memcg subtree (mem_cgroup_iter) and the tree of
// every allocated memcg it walks.
//
// The walk is pre-order, the root of the walk first, children in creation order, and includes
// memcgs that are offline but not yet freed (they still hold pages). Reclaim walks that pass a
// cookie share one round-robin position per target memcg: each starts after the memcg the
// previous one handed out, and reaching the end of the subtree starts a new generation; a walk
// whose generation is stale stops.
//
// Mirrors: mm/memcontrol.c (mem_cgroup_iter, mem_cgroup_iter_break,
//   invalidate_reclaim_iterators), include/linux/memcontrol.h (struct
//   mem_cgroup_reclaim_cookie) (Linux 6.19)
// Emulation: the tree lives in mem_cgroup_per_node::tree under one spinlock (see mm/mmzone.h).
#pragma once

#include "mm/memcontrol.h"

namespace umemcg {

struct mem_cgroup_reclaim_cookie {
  unsigned int generation = 0;
};

/**
 * mem_cgroup_iter - the next memcg of a pre-order walk of @root's subtree
 * @root: subtree root (nullptr: the root memcg)
 * @prev: what the previous call returned (its reference is dropped), or nullptr to start
 * @reclaim: shared-position cookie, or nullptr for a full private walk
 *
 * Returns the next memcg with a css reference, or nullptr at the end of the walk (or when a
 * shared walk's generation went stale).
 */
mem_cgroup *mem_cgroup_iter(mem_cgroup *root, mem_cgroup *prev,
                            mem_cgroup_reclaim_cookie *reclaim);
// Abandons a walk early: drops @prev's reference.
void mem_cgroup_iter_break(mem_cgroup *root, mem_cgroup *prev);

// css callbacks: link a new memcg into the tree (css_alloc) / unlink it (css_free).
void mem_cgroup_tree_link(mem_cgroup *memcg, mem_cgroup *parent);
void mem_cgroup_tree_unlink(mem_cgroup *memcg);

}  // namespace umemcg
