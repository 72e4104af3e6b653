// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_iter.cc: mem_cgroup_iter over the all-memcg tree (see memcontrol_iter.h).
//
// Mirrors: mm/memcontrol.c (Linux 6.19)
// Emulation: see memcontrol_iter.h.
#include "mm/memcontrol_iter.h"

#include "shim/spinlock.h"

namespace umemcg {

DEFINE_SPINLOCK(memcg_tree_lock);

namespace {

memcg_tree_node &node(mem_cgroup *m) { return m->nodeinfo.tree; }

// The memcg after @pos in a pre-order walk of @root's subtree (@pos nullptr: @root).
mem_cgroup *next_pre(mem_cgroup *pos, mem_cgroup *root) REQUIRES(memcg_tree_lock) {
  if (!pos) return root;
  if (node(pos).first_child) return node(pos).first_child;
  for (mem_cgroup *m = pos; m != root; m = node(m).parent)
    if (node(m).next_sibling) return node(m).next_sibling;
  return nullptr;
}

}  // namespace

void mem_cgroup_tree_link(mem_cgroup *memcg, mem_cgroup *parent) {
  spin_lock(&memcg_tree_lock);
  memcg->nodeinfo.lruvec.memcg = memcg;
  node(memcg).parent = parent;
  if (parent) {
    node(memcg).prev_sibling = node(parent).last_child;
    if (node(parent).last_child)
      node(node(parent).last_child).next_sibling = memcg;
    else
      node(parent).first_child = memcg;
    node(parent).last_child = memcg;
  }
  spin_unlock(&memcg_tree_lock);
}

void mem_cgroup_tree_unlink(mem_cgroup *memcg) {
  spin_lock(&memcg_tree_lock);
  // invalidate_reclaim_iterators(): no shared position may point at a freed memcg.
  for (mem_cgroup *m = memcg; m; m = node(m).parent)
    if (m->nodeinfo.iter.position == memcg) m->nodeinfo.iter.position = nullptr;
  mem_cgroup *parent = node(memcg).parent;
  mem_cgroup *prev = node(memcg).prev_sibling, *next = node(memcg).next_sibling;
  if (prev)
    node(prev).next_sibling = next;
  else if (parent)
    node(parent).first_child = next;
  if (next)
    node(next).prev_sibling = prev;
  else if (parent)
    node(parent).last_child = prev;
  // A parent is freed only after its children (each holds a reference on it).
  WARN_ON_ONCE(node(memcg).first_child);
  node(memcg) = memcg_tree_node{};
  spin_unlock(&memcg_tree_lock);
}

mem_cgroup *mem_cgroup_iter(mem_cgroup *root, mem_cgroup *prev,
                            mem_cgroup_reclaim_cookie *reclaim) {
  if (!root) root = root_mem_cgroup;
  mem_cgroup *memcg = nullptr;
  bool restarted = false;

  spin_lock(&memcg_tree_lock);
  mem_cgroup_reclaim_iter *iter = reclaim ? &root->nodeinfo.iter : nullptr;
  if (iter && prev && reclaim->generation != iter->generation) goto out;
restart:
  {
    mem_cgroup *pos = iter ? iter->position : prev;
    for (memcg = next_pre(pos, root); memcg; memcg = next_pre(memcg, root))
      // The walk's root needs no reference (its caller holds one); a memcg being released is
      // skipped.
      if (memcg == root || css_tryget(&memcg->css)) break;
    if (iter) {
      iter->position = memcg;
      if (!memcg) {
        iter->generation++;
        // A walker that has just joined starts the new round rather than returning nothing.
        if (!prev && !restarted) {
          restarted = true;
          goto restart;
        }
      } else if (!prev) {
        reclaim->generation = iter->generation;
      }
    }
  }
out:
  spin_unlock(&memcg_tree_lock);
  if (prev && prev != root) css_put(&prev->css);
  return memcg;
}

void mem_cgroup_iter_break(mem_cgroup *root, mem_cgroup *prev) {
  if (!root) root = root_mem_cgroup;
  if (prev && prev != root) css_put(&prev->css);
}

}  // namespace umemcg
