// SPDX-License-Identifier: GPL-2.0-only
// kernel/notify/inotify.h: inotify on kernfs nodes: notification groups (one per inotify
//   instance), marks (watches) on nodes, the per-group event queue and its blocking read.
//
// Mirrors: fs/notify/fsnotify.c (fsnotify, fsnotify_inoderemove, fsnotify_sb_delete),
//   fs/notify/mark.c, fs/notify/notification.c (fsnotify_insert_event, overflow),
//   fs/notify/inotify/inotify_user.c (inotify_init1, inotify_add_watch, inotify_rm_watch, read),
//   fs/notify/inotify/inotify_fsnotify.c (inotify_handle_inode_event, inotify_merge,
//   inotify_ignored_and_remove_idr) (Linux 6.19)
// What is charged, as in the kernel: the group and its marks at creation, to the caller's
//   memcg; each event when it is queued, GFP_KERNEL_ACCOUNT under set_active_memcg(the group's
//   memcg), that is to the memcg of the task that created the group (the listener), whoever
//   delivers it. A refused event allocation queues the overflow event instead (IN_Q_OVERFLOW).
// Emulation: IN_DELETE_SELF on the removal of a watched node, followed by IN_IGNORED, is what
//   a removed inode gives on other filesystems; for kernfs it comes from a series posted in
//   Feb 2026 (not in Linux 6.19), which the emulator's roots always behave as.
// Emulation: marks live on the kernfs node (per superblock) rather than on a VFS inode; the
//   kernel's SRCU-protected mark iteration is a copy of the mark list under the root's
//   marks_lock, each mark pinned by a reference while its event is delivered.
#pragma once

#include <deque>
#include <map>
#include <string>

#include "shim/atomic.h"
#include "shim/mutex.h"
#include "shim/spinlock.h"
#include "shim/types.h"
#include "shim/wait.h"

namespace umemcg {

struct kernfs_node;
struct kernfs_super_info;
struct mem_cgroup;

// Event bits (the uapi values; FS_* equal IN_*).
inline constexpr u32 IN_ACCESS = 0x00000001;
inline constexpr u32 IN_MODIFY = 0x00000002;
inline constexpr u32 IN_ATTRIB = 0x00000004;
inline constexpr u32 IN_DELETE_SELF = 0x00000400;
inline constexpr u32 IN_Q_OVERFLOW = 0x00004000;
inline constexpr u32 IN_IGNORED = 0x00008000;
inline constexpr u32 IN_ISDIR = 0x40000000;
inline constexpr u32 FS_MODIFY = IN_MODIFY;
inline constexpr u32 FS_DELETE_SELF = IN_DELETE_SELF;
inline constexpr u32 FS_IN_IGNORED = IN_IGNORED;
inline constexpr u32 FS_EVENT_ON_CHILD = 0x08000000;
// Every event a watch may ask for (kernfs raises IN_MODIFY and IN_DELETE_SELF; IN_IGNORED and
// IN_Q_OVERFLOW are always reported).
inline constexpr u32 IN_ALL_EVENTS = 0x00000fff;

// /proc/sys/fs/inotify/max_queued_events default.
inline constexpr unsigned int INOTIFY_MAX_QUEUED_EVENTS = 16384;

// A queued event; the name (events on a watched directory's child) follows the struct.
struct inotify_event_info {
  inotify_event_info *next;
  int wd;
  u32 mask;
  u32 name_len;
  const char *name() const { return reinterpret_cast<const char *>(this + 1); }
};

struct fsnotify_mark;

struct fsnotify_group {
  atomic_t refcnt;
  spinlock_t notification_lock;  // the event queue
  inotify_event_info *head GUARDED_BY(notification_lock) = nullptr;
  inotify_event_info *tail GUARDED_BY(notification_lock) = nullptr;
  unsigned int q_len GUARDED_BY(notification_lock) = 0;
  unsigned int max_events = INOTIFY_MAX_QUEUED_EVENTS;
  bool overflow_queued GUARDED_BY(notification_lock) = false;
  bool shutdown GUARDED_BY(notification_lock) = false;
  wait_queue_head_t notification_waitq;
  struct mutex mark_mutex{"fsnotify_mark_mutex"};
  std::map<int, fsnotify_mark *> idr GUARDED_BY(mark_mutex);  // wd -> mark
  int last_wd GUARDED_BY(mark_mutex) = 0;  // idr_alloc_cyclic from 1
  mem_cgroup *memcg = nullptr;         // the listener's memcg (a reference)
};

// mask and attached are under the node's root's marks_lock; not annotated: the lock is the
// kernfs root's, which a mark reaches only through kn (a pointer the analysis cannot match).
struct fsnotify_mark {
  atomic_t refcnt;
  fsnotify_group *group = nullptr;  // a reference
  kernfs_node *kn = nullptr;        // a reference, while attached
  kernfs_super_info *sb = nullptr;
  u32 mask = 0;   // under the root's marks_lock
  int wd = 0;
  bool attached = false;  // on kn->marks (under the root's marks_lock)
};

// One read event for callers.
struct inotify_event {
  int wd = 0;
  u32 mask = 0;
  std::string name;
};

/**
 * inotify_init - a new inotify instance (group), charged to and listening for current's memcg
 * Returns the group, or ERR_PTR(-ENOMEM).
 */
fsnotify_group *inotify_init();
// Closes the instance: every watch is removed (no events), queued events are freed.
void inotify_release(fsnotify_group *group);

/**
 * inotify_add_watch - watch @kn, as mounted in @sb, for @mask (bits of IN_ALL_EVENTS)
 * Returns the watch descriptor (>= 1; the same one, with the new mask, if the group already
 * watches the node), or -EINVAL (no event bit in @mask), -ENOENT (node removed), -ENOMEM.
 */
int inotify_add_watch(fsnotify_group *group, kernfs_super_info *sb, kernfs_node *kn, u32 mask);
// Removes a watch; IN_IGNORED is queued. 0 or -EINVAL (no such wd).
int inotify_rm_watch(fsnotify_group *group, int wd);

/**
 * inotify_read_event - take the next event, waiting up to @timeout jiffies for one
 * Returns 1 (an event in *ev), 0 (timeout; 0 jiffies: do not wait), -EINTR (fatal signal).
 */
int inotify_read_event(fsnotify_group *group, long timeout, inotify_event *ev);
// Queued events (the FIONREAD idea, in events).
unsigned int inotify_queued(fsnotify_group *group);

// --- delivery (called by kernfs) ------------------------------------------------------------

// fsnotify(mask) for kn in sb: to its marks, and to its parent's marks with the child's name.
// May sleep (allocation). Context: task context.
void fsnotify_kernfs(kernfs_super_info *sb, kernfs_node *kn, kernfs_node *parent,
                     const char *name, u32 mask);
// kn was removed: IN_DELETE_SELF to its marks, then every mark goes (IN_IGNORED).
void fsnotify_inoderemove(kernfs_node *kn);
// sb goes away: every mark in it goes (IN_IGNORED).
void fsnotify_sb_delete(kernfs_super_info *sb);

}  // namespace umemcg
