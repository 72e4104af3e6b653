// SPDX-License-Identifier: GPL-2.0-only
// kernel/kernfs/kernfs.h: kernfs, the pseudo filesystem under cgroupfs: a tree of directory and
// file nodes per root, active references that removal drains, open files with seq_file reads and
// whole-buffer writes, and change notification (kernfs_notify and its delivery work).
//
// Mirrors: include/linux/kernfs.h, fs/kernfs/kernfs-internal.h (Linux 6.19)
// Locks (per root, as the kernel's; the rwsems are shim rw_semaphores, so their statistics and
// fentry/fexit hook points record every hold):
//   - kernfs_rwsem: write for kernfs_add_one, kernfs_activate, kernfs_remove (dropped and
//     retaken while draining active references), kernfs_rename; read for lookups
//     (kernfs_find_and_get, kernfs_walk_and_get), readdir (the whole emit loop) and the notify
//     work's delivery (unless the root was created with KERNFS_ROOT_NOTIFY_NO_RWSEM).
//   - kernfs_supers_rwsem: write for mount/umount (kernfs_mount/kernfs_kill_sb); read for the
//     notify work's delivery.
//   - file operations (read, write, open, release) take no rwsem: they hold an active reference
//     on the node and the open file's mutex.
// Emulation: no VFS: an inode is the kernfs_node itself within one superblock (struct
//   kernfs_super_info); inotify marks are attached to (node, superblock) pairs. Open files are
//   struct kernfs_file (the kernel's struct file with the seq_file and kernfs_open_file).
// Emulation: siblings are kept in name order (the kernel's rbtree orders by name hash, then
//   name); readdir therefore lists names in byte order.
// Emulation: KERNFS_ROOT_NOTIFY_NO_RWSEM is a boot option reproducing the proposed upstream
//   change that delivers notifications without kernfs_rwsem (name and parent are then read under
//   kernfs_rename_lock, as kernfs_get_parent and kernfs_name do); it is not in Linux 6.19.
#pragma once

#include <climits>
#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "kernel/cftype.h"
#include "shim/atomic.h"
#include "shim/mutex.h"
#include "shim/rcupdate.h"
#include "shim/rwsem.h"
#include "shim/spinlock.h"
#include "shim/types.h"
#include "shim/wait.h"

namespace umemcg {

struct kernfs_root;
struct kernfs_node;
struct kernfs_open_node;
struct kernfs_super_info;
struct fsnotify_mark;

// kernfs_node::flags (kernel values).
inline constexpr unsigned short KERNFS_DIR = 0x0001;
inline constexpr unsigned short KERNFS_FILE = 0x0002;
inline constexpr unsigned short KERNFS_LINK = 0x0004;
inline constexpr unsigned short KERNFS_TYPE_MASK = 0x000f;
inline constexpr unsigned short KERNFS_ACTIVATED = 0x0010;
inline constexpr unsigned short KERNFS_HAS_SEQ_SHOW = 0x0040;
inline constexpr unsigned short KERNFS_HIDDEN = 0x0200;
inline constexpr unsigned short KERNFS_HAS_RELEASE = 0x2000;
inline constexpr unsigned short KERNFS_REMOVING = 0x4000;

// kernfs_root::flags (kernel values, and one emulator option).
inline constexpr unsigned int KERNFS_ROOT_CREATE_DEACTIVATED = 0x0001;
inline constexpr unsigned int KERNFS_ROOT_EXTRA_OPEN_PERM_CHECK = 0x0002;
inline constexpr unsigned int KERNFS_ROOT_SUPPORT_INOTIFY_EVENTS_ON_REMOVAL = 0x0040;
// Emulation: see the banner.
inline constexpr unsigned int KERNFS_ROOT_NOTIFY_NO_RWSEM = 0x10000;

// Active reference count of a deactivated node (kernel value).
inline constexpr int KN_DEACTIVATED_BIAS = INT_MIN + 1;

// A file's operations (the subset cgroupfs uses).
struct kernfs_ops {
  int (*open)(kernfs_open_file *of) = nullptr;
  void (*release)(kernfs_open_file *of) = nullptr;
  // Prints the file into sf; 0 or -errno.
  int (*seq_show)(seq_file *sf, void *v) = nullptr;
  // buf is NUL-terminated; returns the bytes consumed or -errno.
  ssize_t (*write)(kernfs_open_file *of, char *buf, size_t bytes, off_t off) = nullptr;
  // Writes longer than this fail with -E2BIG; 0: writes are cut to one page.
  size_t atomic_write_len = 0;
};

// Directory operations the filesystem user implements (mkdir/rmdir from user space).
struct kernfs_syscall_ops {
  int (*mkdir)(kernfs_node *parent, const char *name, unsigned short mode) = nullptr;
  int (*rmdir)(kernfs_node *kn) = nullptr;
};

// Per-node data of files that are open (kn->attr.open).
struct kernfs_open_node {
  rcu_head rcu;
  atomic_t event;             // bumped by kernfs_notify (poll)
  wait_queue_head_t poll;
  // Under the root's open_file_mutex. Not annotated: the lock is another object's (the root's),
  // which this struct cannot name.
  std::vector<struct kernfs_file *> files;
};

// Orders a directory's children by name (byte order) and finds them by a name without
// building a string (the kernel's rbtree keyed by the node itself).
struct kernfs_name_less {
  using is_transparent = void;
  bool operator()(const kernfs_node *a, const kernfs_node *b) const;
  bool operator()(const kernfs_node *a, std::string_view b) const;
  bool operator()(std::string_view a, const kernfs_node *b) const;
};

// Guards every node's attr.notify_next and the notify list (file.cc).
extern spinlock_t kernfs_notify_lock;

// The fields under the node's root's locks (flags, children: kernfs_rwsem; attr.open: the
// open_file_mutex; marks: marks_lock) are not annotated: callers lock them through a root
// pointer of their own, which the analysis cannot match with kn->root.
struct kernfs_node {
  atomic_t count;   // references (the parent link holds one)
  atomic_t active;  // active references; KN_DEACTIVATED_BIAS once deactivated
  // parent and name: written under kernfs_rwsem and kernfs_rename_lock both, read under either.
  // Not annotated: a guard of "either of two locks" has no clang capability expression (and
  // kernfs_rwsem is the node's root's, reached through root).
  kernfs_node *parent = nullptr;
  std::string name;
  kernfs_root *root = nullptr;
  unsigned short flags = 0;       // KERNFS_* (written under kernfs_rwsem)
  unsigned short mode = 0;        // permission bits (0444, 0644, 0755, ...)
  u64 id = 0;                     // inode number, never reused within the root
  // Directories: the children by name, under kernfs_rwsem.
  std::set<kernfs_node *, kernfs_name_less> children;
  bool linked = false;            // in its parent's children (kernel: !RB_EMPTY_NODE)
  // Files.
  const kernfs_ops *ops = nullptr;
  struct {
    kernfs_open_node *open = nullptr;  // RCU; under the root's open_file_mutex
    kernfs_node *notify_next GUARDED_BY(kernfs_notify_lock) = nullptr;
    std::size_t size = 0;
  } attr;
  void *priv = nullptr;
  // inotify marks on this node (its inode), under the root's marks_lock.
  std::vector<fsnotify_mark *> marks;
};

struct kernfs_root {
  kernfs_node *kn = nullptr;  // the root directory
  unsigned int flags = 0;     // KERNFS_ROOT_*
  const kernfs_syscall_ops *syscall_ops = nullptr;
  u64 last_id GUARDED_BY(kernfs_rwsem) = 0;  // kernfs_rwsem held for write
  rw_semaphore kernfs_rwsem{"kernfs_rwsem"};
  rw_semaphore kernfs_supers_rwsem{"kernfs_supers_rwsem"};
  wait_queue_head_t deactivate_waitq;
  // Emulation: one mutex per root for kn->attr.open (the kernel hashes nodes to a mutex table).
  struct mutex open_file_mutex{"kernfs_open_file_mutex"};
  spinlock_t marks_lock;  // every node's marks (the kernel's per-inode connector lock)
  std::vector<kernfs_super_info *> supers GUARDED_BY(kernfs_supers_rwsem);
};

// A mounted instance of a root (the kernel's super_block with its kernfs_super_info).
struct kernfs_super_info {
  kernfs_root *root = nullptr;
  std::vector<fsnotify_mark *> marks;  // inotify marks in this superblock, under marks_lock
};

/**
 * struct kernfs_file - an open kernfs file (the kernel's struct file for it)
 * @of: the kernfs_open_file handlers see (kernel/cftype.h)
 * @seq: the seq_file of->seq points to
 * @mutex: serialises reads and writes of this open file (the kernel's of->mutex)
 * @event: the node's event count seen at the last read (poll)
 * @released: ops->release already ran (at drain, or at close)
 */
struct kernfs_file {
  kernfs_open_file of;
  seq_file seq;
  struct mutex mutex{"kernfs_of_mutex"};
  int event = 0;
  bool released = false;
  loff_t f_pos = 0;
};

inline bool kernfs_name_less::operator()(const kernfs_node *a, const kernfs_node *b) const {
  return a->name < b->name;
}
inline bool kernfs_name_less::operator()(const kernfs_node *a, std::string_view b) const {
  return std::string_view(a->name) < b;
}
inline bool kernfs_name_less::operator()(std::string_view a, const kernfs_node *b) const {
  return a < std::string_view(b->name);
}

inline unsigned short kernfs_type(const kernfs_node *kn) { return kn->flags & KERNFS_TYPE_MASK; }
inline kernfs_root *kernfs_root_of(const kernfs_node *kn) { return kn->root; }

// --- roots and superblocks (mount.cc) ---------------------------------------------------------

/**
 * kernfs_create_root - create a root with an empty root directory
 * @scops: mkdir/rmdir handlers (nullable)
 * @flags: KERNFS_ROOT_*
 * @priv: the root directory's priv
 */
kernfs_root *kernfs_create_root(const kernfs_syscall_ops *scops, unsigned int flags, void *priv);
// Removes every node and frees the root. Every superblock must be gone.
void kernfs_destroy_root(kernfs_root *root);
// Mounts the root: a new superblock (kernfs_supers_rwsem write).
kernfs_super_info *kernfs_mount(kernfs_root *root);
// Unmounts: the superblock's marks are destroyed (IN_IGNORED), then it is removed.
void kernfs_kill_sb(kernfs_super_info *sb);

// --- nodes (dir.cc) -----------------------------------------------------------------------------

void kernfs_get(kernfs_node *kn);
void kernfs_put(kernfs_node *kn);
// Active references: a node's operations run under one; removal waits until none is held.
kernfs_node *kernfs_get_active(kernfs_node *kn);
void kernfs_put_active(kernfs_node *kn);
// From inside an operation on kn (which holds an active reference): give the reference up so
// that removal can proceed while the operation sleeps on a lock the remover holds (cgroupfs
// handlers taking cgroup_mutex); unbreak before returning. The caller holds a plain reference.
void kernfs_break_active_protection(kernfs_node *kn);
void kernfs_unbreak_active_protection(kernfs_node *kn);

/**
 * kernfs_create_dir - create a directory
 * Returns the node (the caller holds no extra reference), or ERR_PTR(-EEXIST / -ENOENT when the
 * parent is being removed / -EINVAL for a bad name). Takes kernfs_rwsem for write.
 */
kernfs_node *kernfs_create_dir(kernfs_node *parent, const char *name, unsigned short mode,
                               void *priv);
// The same for a regular file with ops; size is what stat reports (cgroup files: 0).
kernfs_node *kernfs_create_file(kernfs_node *parent, const char *name, unsigned short mode,
                                std::size_t size, const kernfs_ops *ops, void *priv);
// Makes kn and its descendants visible and usable (roots with KERNFS_ROOT_CREATE_DEACTIVATED).
void kernfs_activate(kernfs_node *kn);
// Shows or hides a node (hidden nodes are deactivated, as a removed one, but stay linked).
void kernfs_show(kernfs_node *kn, bool show);

/**
 * kernfs_remove - remove kn and everything under it
 *
 * Deactivates the subtree, then for each node (leaves first) waits until no active reference is
 * held (kernfs_rwsem dropped while waiting), releases its open files (ops->release once, their
 * later operations fail with -ENODEV) and unlinks it. Inotify watches on removed nodes get
 * IN_DELETE_SELF and IN_IGNORED after kernfs_rwsem is released.
 * Context: task context; takes kernfs_rwsem for write.
 */
void kernfs_remove(kernfs_node *kn);
// Removes the child called name: 0 or -ENOENT.
int kernfs_remove_by_name(kernfs_node *parent, const char *name);
// Renames/moves kn: 0, -EEXIST, -ENOENT, -EINVAL.
int kernfs_rename(kernfs_node *kn, kernfs_node *new_parent, const char *new_name);

// Looks up a child (kernfs_rwsem read); returns it with a reference, or nullptr.
kernfs_node *kernfs_find_and_get(kernfs_node *parent, const char *name);
// Walks a '/'-separated relative path (kernfs_rwsem read, the whole walk); with a reference.
kernfs_node *kernfs_walk_and_get(kernfs_node *parent, const char *path);
// The names of a directory's visible children (kernfs_rwsem read over the whole emit loop), or
// -ENOTDIR / -ENOENT (removed).
int kernfs_readdir(kernfs_node *dir, std::vector<std::string> *names);
// The path of kn from its root ("/" for the root), read under kernfs_rename_lock.
std::string kernfs_path(kernfs_node *kn);
// Whether kn is linked and active (not removed, not hidden).
bool kernfs_active(kernfs_node *kn);

// --- open files (file.cc) ----------------------------------------------------------------------

/**
 * kernfs_fop_open - open a file node
 * @flags: KF_O_* (the access mode must be allowed by kn->mode: -EACCES otherwise)
 * Returns the open file or ERR_PTR(-errno): -ENODEV when kn is being removed, -EISDIR for a
 * directory, ops->open's error.
 */
kernfs_file *kernfs_fop_open(kernfs_node *kn, unsigned int flags);
// Closes: ops->release (unless already released by removal), then frees the open file.
void kernfs_fop_release(kernfs_file *file);
/**
 * kernfs_fop_read - read from @pos: the text seq_show prints, from byte @pos
 * Returns the bytes copied into *out (appended), or -ENODEV (node removed), -EBADF (not opened
 * for reading), -EINVAL (no seq_show), the handler's error.
 */
ssize_t kernfs_fop_read(kernfs_file *file, std::string *out, loff_t pos, size_t count);
/**
 * kernfs_fop_write - one write(2) of @len bytes
 * Returns the handler's result: bytes consumed or -errno; -E2BIG when @len exceeds the file's
 * atomic_write_len, -ENODEV when the node is removed, -EBADF when not opened for writing,
 * -EINVAL when the file has no write handler. A zero-length write returns 0 without calling
 * the handler only when ops->write says so (cgroup files do).
 */
ssize_t kernfs_fop_write(kernfs_file *file, const char *buf, size_t len, loff_t pos);
// poll: whether a notification arrived since the last read (EPOLLERR|EPOLLPRI in the kernel).
bool kernfs_fop_poll_event(kernfs_file *file);

// --- notification (file.cc) --------------------------------------------------------------------

/**
 * kernfs_notify - notify a file's pollers and watchers that it changed
 *
 * Context: any (no allocation, no sleep). Pollers are woken at once; inotify watchers get
 * IN_MODIFY from the single kernfs_notify_work item (system workqueue), which coalesces
 * notifications of a node queued and not yet delivered.
 */
void kernfs_notify(kernfs_node *kn);

}  // namespace umemcg

namespace umemcg::emu {
// Waits (task context) until the notify work has delivered everything queued so far.
void kernfs_flush_notify();
// Number of kernfs nodes allocated and not yet freed (leak checks).
long kernfs_live_nodes();
}  // namespace umemcg::emu
