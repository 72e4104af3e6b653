// SPDX-License-Identifier: GPL-2.0-only
// kernel/notify/inotify.cc: inotify groups, marks on kernfs nodes, event delivery and reading
// (see inotify.h).
//
// Mirrors: fs/notify/fsnotify.c, fs/notify/mark.c, fs/notify/notification.c,
//   fs/notify/inotify/inotify_user.c, fs/notify/inotify/inotify_fsnotify.c (Linux 6.19)
#include "kernel/notify/inotify.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "kernel/kernfs/kernfs.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/gfp.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/sched.h"
#include "shim/slab.h"

namespace umemcg {

namespace {

// Modelled cost (machine time) of queueing one event for one watch: allocate, fill, link, wake.
// Simulated mode only (emu::consume_time); it is what a notify pass holds its locks for.
constexpr std::uint64_t kInotifyEventNs = 250;

// The preallocated overflow event of each group follows the group in its allocation.
struct group_alloc {
  fsnotify_group group;
  inotify_event_info overflow_event;
};

inotify_event_info *overflow_event(fsnotify_group *group) {
  return &reinterpret_cast<group_alloc *>(group)->overflow_event;
}

void free_event(fsnotify_group *group, inotify_event_info *ev) {
  if (ev == overflow_event(group)) return;
  kfree(ev);
}

// The queue of a group whose last reference is gone: nothing else can reach it (as in a
// destructor, which the analysis does not check either), hence no thread-safety analysis.
inotify_event_info *fsnotify_dead_group_queue(fsnotify_group *group) NO_THREAD_SAFETY_ANALYSIS {
  return group->head;
}

void fsnotify_put_group(fsnotify_group *group) {
  if (!atomic_dec_and_test(&group->refcnt)) return;
  for (inotify_event_info *ev = fsnotify_dead_group_queue(group); ev;) {
    inotify_event_info *next = ev->next;
    free_event(group, ev);
    ev = next;
  }
  kmem_put_memcg(group->memcg);
  auto *ga = reinterpret_cast<group_alloc *>(group);
  ga->~group_alloc();
  kfree(ga);
}

void fsnotify_put_mark(fsnotify_mark *mark) {
  if (!atomic_dec_and_test(&mark->refcnt)) return;
  fsnotify_group *group = mark->group;
  mark->~fsnotify_mark();
  kfree(mark);
  fsnotify_put_group(group);
}

// Queues ev, merging it with an identical last event; an allocation failure or a full queue
// queues the overflow event once (fsnotify_insert_event + inotify_merge).
void fsnotify_add_event(fsnotify_group *group, inotify_event_info *ev) {
  spin_lock(&group->notification_lock);
  if (group->shutdown) {
    spin_unlock(&group->notification_lock);
    free_event(group, ev);
    return;
  }
  inotify_event_info *ovf = overflow_event(group);
  if (ev != ovf && group->q_len >= group->max_events) {
    free_event(group, ev);
    ev = ovf;
  }
  if (ev == ovf) {
    if (group->overflow_queued) {
      spin_unlock(&group->notification_lock);
      return;
    }
    group->overflow_queued = true;
  } else if (group->tail) {
    inotify_event_info *last = group->tail;
    if (last->mask == ev->mask && last->wd == ev->wd && last->name_len == ev->name_len &&
        !std::memcmp(last->name(), ev->name(), ev->name_len)) {
      // Merged with the last event: no new event, no wakeup.
      spin_unlock(&group->notification_lock);
      free_event(group, ev);
      return;
    }
  }
  ev->next = nullptr;
  if (group->tail)
    group->tail->next = ev;
  else
    group->head = ev;
  group->tail = ev;
  group->q_len++;
  spin_unlock(&group->notification_lock);
  wake_up(&group->notification_waitq);
}

// inotify_handle_inode_event: one event for one watch, allocated for and charged to the
// listener's memcg.
void inotify_handle_event(fsnotify_mark *mark, u32 mask, const char *name) {
  fsnotify_group *group = mark->group;
  emu::consume_time(kInotifyEventNs);
  u32 name_len = name ? static_cast<u32>(std::strlen(name)) : 0;
  size_t alloc_len = sizeof(inotify_event_info) + (name_len ? name_len + 1 : 0);
  mem_cgroup *old_memcg = kmem_set_active_memcg(group->memcg);
  void *p = kmalloc(alloc_len, GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
  kmem_set_active_memcg(old_memcg);
  if (!p) {
    fsnotify_add_event(group, overflow_event(group));
    return;
  }
  auto *ev = static_cast<inotify_event_info *>(p);
  ev->next = nullptr;
  ev->wd = mark->wd;
  ev->mask = mask;
  ev->name_len = name_len;
  if (name_len) std::memcpy(reinterpret_cast<char *>(ev + 1), name, name_len + 1);
  fsnotify_add_event(group, ev);
}

// Detaches a mark from its node and superblock and drops it from the group's idr, then queues
// IN_IGNORED (inotify_freeing_mark). Returns false if it was already detached.
bool fsnotify_destroy_mark(fsnotify_mark *mark) {
  kernfs_node *kn = mark->kn;
  kernfs_root *root = kernfs_root_of(kn);
  spin_lock(&root->marks_lock);
  if (!mark->attached) {
    spin_unlock(&root->marks_lock);
    return false;
  }
  mark->attached = false;
  auto &km = kn->marks;
  km.erase(std::find(km.begin(), km.end(), mark));
  auto &sm = mark->sb->marks;
  sm.erase(std::find(sm.begin(), sm.end(), mark));
  spin_unlock(&root->marks_lock);

  fsnotify_group *group = mark->group;
  mutex_lock(&group->mark_mutex);
  auto it = group->idr.find(mark->wd);
  if (it != group->idr.end() && it->second == mark) group->idr.erase(it);
  mutex_unlock(&group->mark_mutex);

  inotify_handle_event(mark, FS_IN_IGNORED, nullptr);
  kernfs_put(kn);
  fsnotify_put_mark(mark);  // the attachment's reference
  return true;
}

struct pending_event {
  fsnotify_mark *mark;
  const char *name;
};

}  // namespace

fsnotify_group *inotify_init() {
  void *p = kmalloc(sizeof(group_alloc), GFP_KERNEL_ACCOUNT);
  if (!p) return ERR_PTR<fsnotify_group>(-ENOMEM);
  auto *ga = new (p) group_alloc;
  fsnotify_group *group = &ga->group;
  atomic_set(&group->refcnt, 1);
  spin_lock_init(&group->notification_lock);
  init_waitqueue_head(&group->notification_waitq);
  ga->overflow_event = inotify_event_info{nullptr, -1, IN_Q_OVERFLOW, 0};
  group->memcg = kmem_get_current_memcg();
  return group;
}

void inotify_release(fsnotify_group *group) {
  // Stop queueing first: the marks' IN_IGNORED events are dropped.
  spin_lock(&group->notification_lock);
  group->shutdown = true;
  spin_unlock(&group->notification_lock);
  for (;;) {
    fsnotify_mark *mark = nullptr;
    mutex_lock(&group->mark_mutex);
    if (!group->idr.empty()) {
      mark = group->idr.begin()->second;
      group->idr.erase(group->idr.begin());
      atomic_inc(&mark->refcnt);
    }
    mutex_unlock(&group->mark_mutex);
    if (!mark) break;
    fsnotify_destroy_mark(mark);
    fsnotify_put_mark(mark);
  }
  fsnotify_put_group(group);
}

int inotify_add_watch(fsnotify_group *group, kernfs_super_info *sb, kernfs_node *kn, u32 mask) {
  if (!(mask & IN_ALL_EVENTS)) return -EINVAL;
  mask &= IN_ALL_EVENTS;
  kernfs_root *root = kernfs_root_of(kn);
  mutex_guard g(&group->mark_mutex);
  // A second watch of the same inode by the same group updates the first.
  spin_lock(&root->marks_lock);
  for (fsnotify_mark *m : kn->marks) {
    if (m->group == group && m->sb == sb) {
      m->mask = mask;
      int wd = m->wd;
      spin_unlock(&root->marks_lock);
      return wd;
    }
  }
  spin_unlock(&root->marks_lock);

  void *p = kzalloc(sizeof(fsnotify_mark), GFP_KERNEL_ACCOUNT);
  if (!p) return -ENOMEM;
  auto *mark = new (p) fsnotify_mark;
  atomic_set(&mark->refcnt, 1);
  mark->group = group;
  atomic_inc(&group->refcnt);
  mark->sb = sb;
  mark->mask = mask;
  // idr_alloc_cyclic(1..INT_MAX): the next free descriptor after the last one handed out.
  int wd = group->last_wd;
  do {
    wd = wd >= INT_MAX - 1 ? 1 : wd + 1;
  } while (group->idr.count(wd));
  mark->wd = wd;

  spin_lock(&root->marks_lock);
  if (!kernfs_active(kn)) {
    spin_unlock(&root->marks_lock);
    fsnotify_put_mark(mark);
    return -ENOENT;
  }
  kernfs_get(kn);
  mark->kn = kn;
  mark->attached = true;
  kn->marks.push_back(mark);
  sb->marks.push_back(mark);
  spin_unlock(&root->marks_lock);
  group->idr.emplace(wd, mark);
  group->last_wd = wd;
  return wd;
}

int inotify_rm_watch(fsnotify_group *group, int wd) {
  mutex_lock(&group->mark_mutex);
  auto it = group->idr.find(wd);
  fsnotify_mark *mark = it == group->idr.end() ? nullptr : it->second;
  if (mark) atomic_inc(&mark->refcnt);
  mutex_unlock(&group->mark_mutex);
  if (!mark) return -EINVAL;
  fsnotify_destroy_mark(mark);
  fsnotify_put_mark(mark);
  return 0;
}

// The loop has the shape of eventfd_read_timeout()'s (kernel/eventfd.cc): each mirrors its own
// kernel read, which the kernel writes out separately too.
int inotify_read_event(fsnotify_group *group, long timeout, inotify_event *ev) {
  unsigned long deadline = jiffies + static_cast<unsigned long>(timeout > 0 ? timeout : 0);
  wait_queue_entry we;
  int ret;
  for (;;) {
    prepare_to_wait(&group->notification_waitq, &we, TASK_INTERRUPTIBLE);
    spin_lock(&group->notification_lock);
    inotify_event_info *e = group->head;
    if (e) {
      group->head = e->next;
      if (!group->head) group->tail = nullptr;
      group->q_len--;
      if (e == overflow_event(group)) group->overflow_queued = false;
    }
    spin_unlock(&group->notification_lock);
    if (e) {
      ev->wd = e->wd;
      ev->mask = e->mask;
      ev->name.assign(e->name_len ? e->name() : "", e->name_len);
      free_event(group, e);
      ret = 1;
      break;
    }
    if (signal_pending(current) || fatal_signal_pending(current)) {
      ret = -EINTR;
      break;
    }
    long left = static_cast<long>(deadline - jiffies);
    if (left <= 0) {
      ret = 0;
      break;
    }
    emu::set_wait_reason("inotify_read");
    schedule_timeout(left);
  }
  finish_wait(&group->notification_waitq, &we);
  return ret;
}

unsigned int inotify_queued(fsnotify_group *group) {
  spin_lock(&group->notification_lock);
  unsigned int n = group->q_len;
  spin_unlock(&group->notification_lock);
  return n;
}

void fsnotify_kernfs(kernfs_super_info *sb, kernfs_node *kn, kernfs_node *parent,
                     const char *name, u32 mask) {
  kernfs_root *root = kernfs_root_of(kn);
  std::vector<pending_event> todo;
  spin_lock(&root->marks_lock);
  for (fsnotify_mark *m : kn->marks) {
    if (m->sb == sb && (m->mask & mask)) {
      atomic_inc(&m->refcnt);
      todo.push_back({m, nullptr});
    }
  }
  // A watched directory hears of its children's events, with the child's name.
  if (parent) {
    for (fsnotify_mark *m : parent->marks) {
      if (m->sb == sb && (m->mask & mask)) {
        atomic_inc(&m->refcnt);
        todo.push_back({m, name});
      }
    }
  }
  spin_unlock(&root->marks_lock);
  u32 isdir = kernfs_type(kn) == KERNFS_DIR ? IN_ISDIR : 0;
  for (const pending_event &pe : todo) {
    inotify_handle_event(pe.mark, mask | (pe.name ? isdir : 0), pe.name);
    fsnotify_put_mark(pe.mark);
  }
}

void fsnotify_inoderemove(kernfs_node *kn) {
  kernfs_root *root = kernfs_root_of(kn);
  std::vector<fsnotify_mark *> marks;
  spin_lock(&root->marks_lock);
  for (fsnotify_mark *m : kn->marks) {
    atomic_inc(&m->refcnt);
    marks.push_back(m);
  }
  spin_unlock(&root->marks_lock);
  for (fsnotify_mark *m : marks) {
    if (m->mask & FS_DELETE_SELF) inotify_handle_event(m, FS_DELETE_SELF, nullptr);
    fsnotify_destroy_mark(m);
    fsnotify_put_mark(m);
  }
}

void fsnotify_sb_delete(kernfs_super_info *sb) {
  kernfs_root *root = sb->root;
  std::vector<fsnotify_mark *> marks;
  spin_lock(&root->marks_lock);
  for (fsnotify_mark *m : sb->marks) {
    atomic_inc(&m->refcnt);
    marks.push_back(m);
  }
  spin_unlock(&root->marks_lock);
  for (fsnotify_mark *m : marks) {
    fsnotify_destroy_mark(m);
    fsnotify_put_mark(m);
  }
}

}  // namespace umemcg
