// SPDX-License-Identifier: GPL-2.0-only
// kernel/kernfs/dir.cc: kernfs nodes: creation, activation, active references, removal with
// draining, lookup, path walks, readdir and rename.
//
// Mirrors: fs/kernfs/dir.c (Linux 6.19): kernfs_new_node, kernfs_add_one, kernfs_activate,
//   kernfs_show, kernfs_get/put, kernfs_get_active/put_active, kernfs_drain,
//   kernfs_should_drain_open_files, __kernfs_remove,
//   kernfs_remove, kernfs_remove_by_name_ns, kernfs_find_and_get_ns, kernfs_walk_and_get_ns,
//   kernfs_fop_readdir, kernfs_rename_ns, kernfs_get_parent, kernfs_path_from_node
// Emulation: see kernfs.h (name-ordered siblings). The kernel marks a node removed by clearing
//   its rbtree link; here kernfs_node::linked.
// Emulation: inotify removal events are delivered after kernfs_rwsem is released (the kernel
//   raises them when the inode is evicted, which also happens outside kernfs_rwsem).
#include <algorithm>

#include "kernel/kernfs/kernfs-internal.h"
#include "kernel/notify/inotify.h"
#include "shim/bug.h"
#include "shim/errno.h"

namespace umemcg {

DEFINE_SPINLOCK(kernfs_rename_lock);

namespace {

atomic_long_t g_live_nodes;

// A node is freed after a grace period (lookups under RCU may still see it); kernfs_node is
// not standard-layout, so the rcu_head travels in a small carrier.
struct kernfs_free_carrier {
  rcu_head rcu;
  kernfs_node *kn;
};

void kernfs_free_rcu(rcu_head *head) {
  auto *c = container_of(head, kernfs_free_carrier, rcu);
  delete c->kn;
  delete c;
}

bool kernfs_valid_name(const char *name) {
  if (!name || !*name) return false;
  std::string_view s(name);
  return s != "." && s != ".." && s.find('/') == std::string_view::npos && s.size() <= 255;
}

// Next node in post-order within the subtree of root (leaves first), nullptr at the end.
// Under kernfs_rwsem (write).
kernfs_node *kernfs_leftmost_descendant(kernfs_node *pos) {
  while (kernfs_type(pos) == KERNFS_DIR && !pos->children.empty())
    pos = *pos->children.begin();
  return pos;
}

kernfs_node *kernfs_next_descendant_post(kernfs_node *pos, kernfs_node *root) {
  if (!pos) return kernfs_leftmost_descendant(root);
  if (pos == root) return nullptr;
  kernfs_node *parent = pos->parent;
  auto it = parent->children.upper_bound(std::string_view(pos->name));
  if (it != parent->children.end()) return kernfs_leftmost_descendant(*it);
  return parent;
}

// Whether removing kn must release open files (kernfs_should_drain_open_files): only a file
// whose ops have a release handler and that is open. attr.open is read without the
// open_file_mutex, after kn->active showed the node drained: every open that got an active
// reference published attr.open (rcu_assign_pointer) before dropping it, and a node without
// active references can no longer be opened.
bool kernfs_should_drain_open_files(kernfs_node *kn) {
  if (!(kn->flags & KERNFS_HAS_RELEASE)) return false;
  smp_rmb();  // the caller's read of kn->active, then attr.open
  return rcu_dereference(kn->attr.open) != nullptr;
}

// Waits until no active reference is held on kn, then releases its open files. Drops and
// retakes kernfs_rwsem, as the kernel does, unless there is nothing to wait for: a node with
// no active reference left and no open file to release is skipped without dropping the lock.
void kernfs_drain(kernfs_node *kn) NO_THREAD_SAFETY_ANALYSIS {
  kernfs_root *root = kernfs_root_of(kn);
  if (atomic_read(&kn->active) == KN_DEACTIVATED_BIAS && !kernfs_should_drain_open_files(kn))
    return;
  up_write(&root->kernfs_rwsem);
  wait_event(root->deactivate_waitq, atomic_read(&kn->active) == KN_DEACTIVATED_BIAS);
  kernfs_drain_open_files(kn);
  down_write(&root->kernfs_rwsem);
}

void kernfs_unlink_sibling(kernfs_node *kn) {
  if (!kn->linked || !kn->parent) return;
  spin_lock(&kernfs_rename_lock);
  kn->parent->children.erase(kn);
  kn->linked = false;
  spin_unlock(&kernfs_rename_lock);
}

// Removes kn's subtree; collects the removed nodes (with a reference) for the removal events.
// Caller holds kernfs_rwsem for write (dropped and retaken by each drain).
void __kernfs_remove(kernfs_node *kn, std::vector<kernfs_node *> *removed) {
  if (!kn || (kn->parent && !kn->linked)) return;  // already removed
  // Mark the whole subtree first: nothing under it can be activated or added to any more.
  for (kernfs_node *pos = nullptr; (pos = kernfs_next_descendant_post(pos, kn));) {
    pos->flags |= KERNFS_REMOVING;
    if (pos->flags & KERNFS_ACTIVATED) atomic_add(KN_DEACTIVATED_BIAS, &pos->active);
    pos->flags &= ~KERNFS_ACTIVATED;
  }
  // Drain and unlink, leaves first. The walk restarts after each drain: the lock was dropped.
  kernfs_node *pos;
  do {
    pos = kernfs_leftmost_descendant(kn);
    kernfs_get(pos);
    kernfs_drain(pos);
    kernfs_unlink_sibling(pos);
    if (!pos->parent) pos->linked = false;  // the root directory
    kernfs_get(pos);
    removed->push_back(pos);
    if (pos->parent) kernfs_put(pos);  // the parent's link
    kernfs_put(pos);
  } while (pos != kn);
}

void kernfs_remove_events(std::vector<kernfs_node *> &removed) {
  for (kernfs_node *pos : removed) {
    fsnotify_inoderemove(pos);
    kernfs_put(pos);
  }
}

}  // namespace

namespace emu {
void kernfs_node_allocated() { atomic_long_inc(&g_live_nodes); }
void kernfs_node_freed() { atomic_long_dec(&g_live_nodes); }
long kernfs_live_nodes() { return atomic_long_read(&g_live_nodes); }
}  // namespace emu

void kernfs_get(kernfs_node *kn) {
  if (kn) {
    WARN_ON(!atomic_read(&kn->count));
    atomic_inc(&kn->count);
  }
}

void kernfs_put(kernfs_node *kn) {
  // Dropping the last reference frees the node and drops the one it held on its parent.
  while (kn && atomic_dec_and_test(&kn->count)) {
    kernfs_node *parent = kn->parent;
    WARN_ON(kn->linked && parent);
    WARN_ON(!kn->marks.empty());
    emu::kernfs_node_freed();
    auto *c = new kernfs_free_carrier{{}, kn};
    call_rcu(&c->rcu, kernfs_free_rcu);
    kn = parent;
  }
}

kernfs_node *kernfs_get_active(kernfs_node *kn) {
  if (!kn) return nullptr;
  // atomic_inc_unless_negative: a deactivated node's count is negative (KN_DEACTIVATED_BIAS).
  int v = atomic_read(&kn->active);
  for (;;) {
    if (v < 0) return nullptr;
    int old = atomic_cmpxchg(&kn->active, v, v + 1);
    if (old == v) return kn;
    v = old;
  }
}

void kernfs_put_active(kernfs_node *kn) {
  if (!kn) return;
  int v = atomic_dec_return(&kn->active);
  // The last active reference of a deactivated node: wake the remover.
  if (v == KN_DEACTIVATED_BIAS) wake_up_all(&kernfs_root_of(kn)->deactivate_waitq);
}

void kernfs_break_active_protection(kernfs_node *kn) { kernfs_put_active(kn); }

void kernfs_unbreak_active_protection(kernfs_node *kn) {
  // Unconditional: the operation's final kernfs_put_active() balances it, whether or not the
  // node was deactivated meanwhile.
  atomic_inc(&kn->active);
}

kernfs_node *kernfs_new_node(kernfs_root *root, kernfs_node *parent, const char *name,
                             unsigned short mode, unsigned short flags) {
  auto *kn = new kernfs_node;
  atomic_set(&kn->count, 1);
  atomic_set(&kn->active, KN_DEACTIVATED_BIAS);
  kn->root = root;
  kn->name = name;
  kn->mode = mode;
  kn->flags = flags;
  kn->parent = parent;
  if (parent) kernfs_get(parent);  // a node pins its parent until it is freed
  emu::kernfs_node_allocated();
  return kn;
}

int kernfs_add_one(kernfs_node *kn) {
  kernfs_node *parent = kn->parent;
  kernfs_root *root = kernfs_root_of(kn);
  int ret;
  down_write(&root->kernfs_rwsem);
  ret = -EINVAL;
  if (kernfs_type(parent) != KERNFS_DIR) goto out;
  ret = -ENOENT;
  if ((parent->flags & KERNFS_REMOVING) || (parent->parent && !parent->linked)) goto out;
  ret = -EEXIST;
  if (parent->children.count(std::string_view(kn->name))) goto out;
  kn->id = ++root->last_id;
  spin_lock(&kernfs_rename_lock);
  parent->children.insert(kn);
  kn->linked = true;
  spin_unlock(&kernfs_rename_lock);
  ret = 0;
out:
  up_write(&root->kernfs_rwsem);
  // Activate unless the root defers it (cgroupfs populates a directory, then activates it).
  if (!ret && !(root->flags & KERNFS_ROOT_CREATE_DEACTIVATED)) kernfs_activate(kn);
  return ret;
}

namespace {
kernfs_node *create_node(kernfs_node *parent, const char *name, unsigned short mode,
                         unsigned short flags) {
  if (!parent) return ERR_PTR<kernfs_node>(-ENOENT);
  if (!kernfs_valid_name(name)) return ERR_PTR<kernfs_node>(-EINVAL);
  return kernfs_new_node(kernfs_root_of(parent), parent, name, mode, flags);
}
}  // namespace

kernfs_node *kernfs_create_dir(kernfs_node *parent, const char *name, unsigned short mode,
                               void *priv) {
  kernfs_node *kn = create_node(parent, name, mode, KERNFS_DIR);
  if (IS_ERR(kn)) return kn;
  kn->priv = priv;
  int ret = kernfs_add_one(kn);
  if (ret) {
    kernfs_put(kn);
    return ERR_PTR<kernfs_node>(ret);
  }
  return kn;
}

kernfs_node *kernfs_create_file(kernfs_node *parent, const char *name, unsigned short mode,
                                std::size_t size, const kernfs_ops *ops, void *priv) {
  unsigned short flags = KERNFS_FILE;
  if (ops && ops->seq_show) flags |= KERNFS_HAS_SEQ_SHOW;
  if (ops && ops->release) flags |= KERNFS_HAS_RELEASE;
  kernfs_node *kn = create_node(parent, name, mode, flags);
  if (IS_ERR(kn)) return kn;
  kn->ops = ops;
  kn->priv = priv;
  kn->attr.size = size;
  int ret = kernfs_add_one(kn);
  if (ret) {
    kernfs_put(kn);
    return ERR_PTR<kernfs_node>(ret);
  }
  return kn;
}

namespace {
void kernfs_activate_one(kernfs_node *kn) {
  if ((kn->flags & (KERNFS_ACTIVATED | KERNFS_HIDDEN | KERNFS_REMOVING)) || !kn->linked) return;
  kn->flags |= KERNFS_ACTIVATED;
  atomic_sub(KN_DEACTIVATED_BIAS, &kn->active);
}
}  // namespace

void kernfs_activate(kernfs_node *kn) {
  kernfs_root *root = kernfs_root_of(kn);
  down_write(&root->kernfs_rwsem);
  for (kernfs_node *pos = nullptr; (pos = kernfs_next_descendant_post(pos, kn));)
    kernfs_activate_one(pos);
  up_write(&root->kernfs_rwsem);
}

void kernfs_show(kernfs_node *kn, bool show) {
  kernfs_root *root = kernfs_root_of(kn);
  down_write(&root->kernfs_rwsem);
  if (show) {
    kn->flags &= ~KERNFS_HIDDEN;
    kernfs_activate_one(kn);
  } else if (!(kn->flags & KERNFS_HIDDEN)) {
    kn->flags |= KERNFS_HIDDEN;
    if (kn->flags & KERNFS_ACTIVATED) atomic_add(KN_DEACTIVATED_BIAS, &kn->active);
    kn->flags &= ~KERNFS_ACTIVATED;
    kernfs_drain(kn);
  }
  up_write(&root->kernfs_rwsem);
}

void kernfs_remove(kernfs_node *kn) {
  if (!kn) return;
  kernfs_root *root = kernfs_root_of(kn);
  std::vector<kernfs_node *> removed;
  down_write(&root->kernfs_rwsem);
  __kernfs_remove(kn, &removed);
  up_write(&root->kernfs_rwsem);
  kernfs_remove_events(removed);
}

int kernfs_remove_by_name(kernfs_node *parent, const char *name) {
  if (!parent) return -ENOENT;
  kernfs_root *root = kernfs_root_of(parent);
  std::vector<kernfs_node *> removed;
  down_write(&root->kernfs_rwsem);
  auto it = parent->children.find(std::string_view(name));
  kernfs_node *kn = it == parent->children.end() ? nullptr : *it;
  if (kn) {
    kernfs_get(kn);
    __kernfs_remove(kn, &removed);
    kernfs_put(kn);
  }
  up_write(&root->kernfs_rwsem);
  kernfs_remove_events(removed);
  return kn ? 0 : -ENOENT;
}

int kernfs_rename(kernfs_node *kn, kernfs_node *new_parent, const char *new_name) {
  if (!kn->parent) return -EINVAL;  // the root
  if (!kernfs_valid_name(new_name)) return -EINVAL;
  kernfs_root *root = kernfs_root_of(kn);
  int ret = 0;
  down_write(&root->kernfs_rwsem);
  if (!kernfs_active(kn) || !kernfs_active(new_parent) || kernfs_type(new_parent) != KERNFS_DIR) {
    ret = -ENOENT;
  } else if (kn->parent == new_parent && kn->name == new_name) {
    ret = 0;
  } else if (new_parent->children.count(std::string_view(new_name))) {
    ret = -EEXIST;
  } else {
    // Moving a directory under itself is refused.
    for (kernfs_node *p = new_parent; p; p = p->parent)
      if (p == kn) ret = -EINVAL;
    if (!ret) {
      kernfs_get(new_parent);
      kernfs_node *old_parent = kn->parent;
      spin_lock(&kernfs_rename_lock);
      old_parent->children.erase(kn);
      kn->name = new_name;
      kn->parent = new_parent;
      new_parent->children.insert(kn);
      spin_unlock(&kernfs_rename_lock);
      kernfs_put(old_parent);
    }
  }
  up_write(&root->kernfs_rwsem);
  return ret;
}

bool kernfs_active(kernfs_node *kn) {
  return kn->linked && atomic_read(&kn->active) >= 0;
}

kernfs_node *kernfs_find_and_get(kernfs_node *parent, const char *name) {
  kernfs_root *root = kernfs_root_of(parent);
  kernfs_node *kn = nullptr;
  down_read(&root->kernfs_rwsem);
  auto it = parent->children.find(std::string_view(name));
  if (it != parent->children.end() && kernfs_active(*it)) {
    kn = *it;
    kernfs_get(kn);
  }
  up_read(&root->kernfs_rwsem);
  return kn;
}

kernfs_node *kernfs_walk_and_get(kernfs_node *parent, const char *path) {
  kernfs_root *root = kernfs_root_of(parent);
  kernfs_node *kn = parent;
  std::string p(path ? path : "");
  down_read(&root->kernfs_rwsem);
  size_t i = 0;
  while (kn && i < p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string::npos) j = p.size();
    std::string comp = p.substr(i, j - i);
    i = j + 1;
    if (comp.empty() || comp == ".") continue;
    if (comp == "..") {
      if (kn->parent) kn = kn->parent;
      continue;
    }
    if (kernfs_type(kn) != KERNFS_DIR) {
      kn = nullptr;
      break;
    }
    auto it = kn->children.find(std::string_view(comp));
    kn = (it != kn->children.end() && kernfs_active(*it)) ? *it : nullptr;
  }
  if (kn && !kernfs_active(kn)) kn = nullptr;
  if (kn) kernfs_get(kn);
  up_read(&root->kernfs_rwsem);
  return kn;
}

int kernfs_readdir(kernfs_node *dir, std::vector<std::string> *names) {
  if (kernfs_type(dir) != KERNFS_DIR) return -ENOTDIR;
  kernfs_root *root = kernfs_root_of(dir);
  int ret = 0;
  down_read(&root->kernfs_rwsem);
  if (!kernfs_active(dir)) {
    ret = -ENOENT;
  } else {
    for (kernfs_node *kn : dir->children)
      if (kernfs_active(kn)) names->push_back(kn->name);
  }
  up_read(&root->kernfs_rwsem);
  return ret;
}

kernfs_node *kernfs_get_parent(kernfs_node *kn) {
  spin_lock(&kernfs_rename_lock);
  kernfs_node *parent = kn->parent;
  kernfs_get(parent);
  spin_unlock(&kernfs_rename_lock);
  return parent;
}

std::string kernfs_path(kernfs_node *kn) {
  std::vector<std::string> parts;
  spin_lock(&kernfs_rename_lock);
  for (kernfs_node *p = kn; p && p->parent; p = p->parent) parts.push_back(p->name);
  spin_unlock(&kernfs_rename_lock);
  std::string path;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) path += "/" + *it;
  return path.empty() ? "/" : path;
}

}  // namespace umemcg
