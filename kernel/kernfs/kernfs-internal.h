// SPDX-License-Identifier: GPL-2.0-only
// kernel/kernfs/kernfs-internal.h: what dir.cc, file.cc and mount.cc share.
//
// Mirrors: fs/kernfs/kernfs-internal.h (Linux 6.19)
// Emulation: kernfs_rename_lock is a spinlock (the kernel's is an rwlock_t; readers here are
//   short and never nest).
#pragma once

#include "kernel/kernfs/kernfs.h"

namespace umemcg {

extern spinlock_t kernfs_rename_lock;

// Allocates an unlinked, deactivated node (count 1).
kernfs_node *kernfs_new_node(kernfs_root *root, kernfs_node *parent, const char *name,
                             unsigned short mode, unsigned short flags);
// Links kn under kn->parent (kernfs_rwsem write): 0, -EEXIST, -ENOENT (parent removed).
int kernfs_add_one(kernfs_node *kn);
// Releases the open files of a node being removed (ops->release once each).
void kernfs_drain_open_files(kernfs_node *kn);
// The parent with a reference (kernfs_rename_lock), nullptr for the root.
kernfs_node *kernfs_get_parent(kernfs_node *kn);

namespace emu {
// The node count (kernfs_live_nodes).
void kernfs_node_allocated();
void kernfs_node_freed();
// Called when a root is created: resets the notify work on a new machine.
void kernfs_boot_notify();
}  // namespace emu

}  // namespace umemcg
