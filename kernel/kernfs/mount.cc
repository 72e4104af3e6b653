// SPDX-License-Identifier: GPL-2.0-only
// kernel/kernfs/mount.cc: kernfs roots and their mounted superblocks.
//
// Mirrors: fs/kernfs/dir.c (kernfs_create_root, kernfs_destroy_root), fs/kernfs/mount.c
//   (kernfs_get_tree, kernfs_kill_sb) (Linux 6.19)
// Emulation: a superblock is a kernfs_super_info on the root's list (see kernfs.h).
#include <algorithm>

#include "kernel/kernfs/kernfs-internal.h"
#include "kernel/notify/inotify.h"
#include "shim/bug.h"

namespace umemcg {

namespace {
// A root's fields before it is published (kernfs_create_root) and once no mount can reach it
// (kernfs_destroy_root): nothing else sees the root then (as in a constructor or destructor,
// which the analysis does not check either), hence no thread-safety analysis in these two.
u64 kernfs_new_root_first_id(kernfs_root *root) NO_THREAD_SAFETY_ANALYSIS {
  return ++root->last_id;
}
bool kernfs_dying_root_has_supers(const kernfs_root *root) NO_THREAD_SAFETY_ANALYSIS {
  return !root->supers.empty();
}
}  // namespace

kernfs_root *kernfs_create_root(const kernfs_syscall_ops *scops, unsigned int flags, void *priv) {
  emu::kernfs_boot_notify();
  auto *root = new kernfs_root;
  root->flags = flags;
  root->syscall_ops = scops;
  init_waitqueue_head(&root->deactivate_waitq);
  spin_lock_init(&root->marks_lock);
  kernfs_node *kn = kernfs_new_node(root, nullptr, "", 0755, KERNFS_DIR);
  kn->priv = priv;
  kn->id = kernfs_new_root_first_id(root);
  kn->linked = true;  // the root directory is never in a parent's list
  root->kn = kn;
  // The root directory is active at once, whatever the root's flags (kernfs_create_root).
  kn->flags |= KERNFS_ACTIVATED;
  atomic_sub(KN_DEACTIVATED_BIAS, &kn->active);
  return root;
}

void kernfs_destroy_root(kernfs_root *root) {
  WARN_ON(kernfs_dying_root_has_supers(root));
  // Deliver what is queued for this root's nodes before they go.
  emu::kernfs_flush_notify();
  kernfs_node *kn = root->kn;
  kernfs_get(kn);
  kernfs_remove(kn);
  kernfs_put(kn);  // the base reference of the root directory
  kernfs_put(kn);
  // Nodes are freed after a grace period; wait for them before freeing the root they name.
  rcu_barrier();
  delete root;
}

kernfs_super_info *kernfs_mount(kernfs_root *root) {
  auto *sb = new kernfs_super_info;
  sb->root = root;
  down_write(&root->kernfs_supers_rwsem);
  root->supers.push_back(sb);
  up_write(&root->kernfs_supers_rwsem);
  return sb;
}

void kernfs_kill_sb(kernfs_super_info *sb) {
  kernfs_root *root = sb->root;
  // The superblock's inodes go, and their watches with them (IN_IGNORED to each watcher).
  fsnotify_sb_delete(sb);
  down_write(&root->kernfs_supers_rwsem);
  auto it = std::find(root->supers.begin(), root->supers.end(), sb);
  if (!WARN_ON(it == root->supers.end())) root->supers.erase(it);
  up_write(&root->kernfs_supers_rwsem);
  delete sb;
}

}  // namespace umemcg
