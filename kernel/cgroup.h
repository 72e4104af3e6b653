// SPDX-License-Identifier: GPL-2.0-only
// kernel/cgroup.h: a minimal cgroup tree: cgroups, their subsystem state (css) with reference
// counting, online/offline, deferred release and free, and one mounted hierarchy (v1 or v2).
//
// Mirrors: include/linux/cgroup.h, include/linux/cgroup-defs.h, kernel/cgroup/cgroup.c
//   (Linux 6.19; the parts memcg depends on)
// Lifetime of a css, as in the kernel:
//   mkdir:  css_alloc -> linked under the parent (holds a reference on the parent css) ->
//           css_online -> CSS_ONLINE.
//   rmdir:  -EBUSY with live children or attached tasks; else CSS_DYING is set (css_tryget_online
//           fails from here on), css_offline runs, CSS_ONLINE is cleared and the base reference
//           is dropped.
//   last css_put: release work (css_released, unlink, id freed) -> RCU grace period ->
//           free work (css_free, then the parent reference is put). The two works run on
//           cgroup_release_wq and cgroup_free_wq, per-CPU queues running one item at a time
//           per vCPU (max_active 1), as the kernel's.
// Emulation: the css reference count is one atomic counter (the kernel's percpu_ref switches to
//   atomic mode at kill; the observable rules, tryget after kill and "release at zero", are
//   kept). css_get/css_put are therefore atomic RMWs on a shared line, as percpu_ref is after kill.
// Emulation: one hierarchy per machine, with one controller (memory) bound to it; a cgroup has
//   exactly one css, and the struct cgroup is freed together with it.
// Emulation: offline runs synchronously inside rmdir under cgroup_mutex (the kernel runs it from
//   the percpu_ref kill-confirm work); callers observe the same order.
// Emulation: children lists are walked under cgroup_mutex or css_set_lock (no RCU-protected
//   iteration).
// cgroup_file_notify() follows kernel/cgroup/cgroup.c of 6.19 (global cgroup_file_kn_lock,
//   kernfs_notify under it, the 10 ms rate limit on the machine clock).
#pragma once

#include <climits>
#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

#include "kernel/cftype.h"
#include "kernel/cgroup_bpf.h"
#include "shim/atomic.h"
#include "shim/mutex.h"
#include "shim/jiffies.h"
#include "shim/list.h"
#include "shim/rcupdate.h"
#include "shim/spinlock.h"
#include "shim/timer.h"
#include "shim/types.h"
#include "shim/workqueue.h"

namespace umemcg {

struct cgroup;
struct cgroup_root;
struct cgroup_subsys;
struct css_rstat_cpu;
template <typename T>
struct percpu;
struct cgroup_taskset;
struct css_set;
struct kernfs_node;
struct kernfs_root;
struct kernfs_super_info;
struct task_struct;

// The cgroup core's locks, named in the GUARDED_BY/REQUIRES rules below (clang thread-safety
// capabilities, shim/thread_annotations.h).
// cgroup_mutex: the hierarchy (children lists, limits, threaded mode, freezer settings,
// cgroup-bpf attachments). css_set_lock: task membership, populated and frozen counts.
// cgroup_file_kn_lock: every cgroup_file's kn (cgroup_file_notify runs under it).
extern struct mutex cgroup_mutex;
extern spinlock_t css_set_lock;
extern spinlock_t cgroup_file_kn_lock;

// css flags (kernel values).
inline constexpr unsigned int CSS_NO_REF = 1u << 0;
inline constexpr unsigned int CSS_ONLINE = 1u << 1;
inline constexpr unsigned int CSS_RELEASED = 1u << 2;
inline constexpr unsigned int CSS_VISIBLE = 1u << 3;
inline constexpr unsigned int CSS_DYING = 1u << 4;

// cgroup_root flags (kernel values).
inline constexpr unsigned int CGRP_ROOT_MEMORY_LOCAL_EVENTS = 1u << 17;
inline constexpr unsigned int CGRP_ROOT_MEMORY_RECURSIVE_PROT = 1u << 18;
// Emulation: a boot option, not a mount option: the hierarchy's kernfs delivers notifications
// without kernfs_rwsem (KERNFS_ROOT_NOTIFY_NO_RWSEM, kernel/kernfs/kernfs.h).
inline constexpr unsigned int CGRP_ROOT_EMU_KERNFS_NOTIFY_NO_RWSEM = 1u << 30;

struct cgroup_subsys_state {
  struct cgroup *cgroup = nullptr;
  struct cgroup_subsys *ss = nullptr;
  // References: the base reference (dropped at rmdir), one per child css, and any css_get().
  atomic_long_t refcnt;
  struct cgroup_subsys_state *parent = nullptr;
  // Private id of this css within its subsystem, 1.. (the root is 1).
  int id = 0;
  // CSS_* (written under cgroup_mutex). Not annotated: css_get/css_put/css_tryget and the other
  // lock-free readers read it with READ_ONCE from any context (CSS_NO_REF never changes).
  unsigned int flags = 0;
  // Order of creation, never reused.
  u64 serial_nr = 0;
  work_struct destroy_work;
  rcu_head rcu;
  // rstat (kernel/cgroup_rstat.h): this css's links in each CPU's updated tree (nullptr unless
  // the controller keeps rstat statistics), and the flush list link (under the rstat lock).
  percpu<css_rstat_cpu> *rstat_cpu = nullptr;
  cgroup_subsys_state *rstat_flush_next = nullptr;
};

// A cgroup's per-file notification state: cgroup_file_notify() notifies the file's pollers and
// inotify watchers (kernfs_notify) at most once per CGROUP_FILE_NOTIFY_MIN_INTV; a notification
// inside the interval is deferred to its end by notify_timer (one timer, so a burst gives one
// immediate and one deferred notification).
// Emulation: `notified` counts the cgroup_file_notify() calls (a statistic for tests; the
//   kernel keeps no such count).
struct cgroup_file {
  struct kernfs_node *kn GUARDED_BY(cgroup_file_kn_lock) = nullptr;  // nullptr: no file
  unsigned long notified_at = 0;     // jiffies of the last kernfs_notify
  timer_list notify_timer;
  atomic_long_t notified;
};
// 10 ms at HZ=1000 (DIV_ROUND_UP(HZ, 100)).
inline constexpr unsigned long CGROUP_FILE_NOTIFY_MIN_INTV = (HZ + 99) / 100;
/**
 * cgroup_file_notify - notify a cgroup file's watchers that it changed
 * Context: any (takes cgroup_file_kn_lock with interrupts off; no sleep, no allocation).
 */
void cgroup_file_notify(cgroup_file *cfile);
// Binds a cgroup_file to its kernfs node (file creation) or unbinds it (kn == nullptr: file
// removal; waits for a running deferred notification).
void cgroup_file_set_kn(cgroup_file *cfile, struct kernfs_node *kn);

// A cgroup's list of children (of their cgroup::sibling links), iterated as cgroup pointers:
// `for (cgroup *child : cgrp->children)` walks them in creation order, as
// css_for_each_child() does.
struct cgroup_children {
  list_head head;

  struct iterator {
    using iterator_category = std::forward_iterator_tag;
    using value_type = cgroup *;
    using difference_type = std::ptrdiff_t;
    using pointer = cgroup **;
    using reference = cgroup *;
    list_head *pos = nullptr;
    cgroup *operator*() const;
    iterator &operator++() {
      pos = pos->next;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      pos = pos->next;
      return old;
    }
    bool operator==(const iterator &o) const { return pos == o.pos; }
    bool operator!=(const iterator &o) const { return pos != o.pos; }
  };

  cgroup_children() = default;
  cgroup_children(const cgroup_children &) = delete;
  cgroup_children &operator=(const cgroup_children &) = delete;

  iterator begin() { return iterator{head.next}; }
  iterator end() { return iterator{&head}; }
  bool empty() const { return list_empty(&head); }
  // The youngest child. The list must not be empty.
  cgroup *back() const;
  // Exactly one child (list_is_singular).
  bool singular() const { return !list_empty(&head) && head.next == head.prev; }
};

// cgroup::flags bits (kernel values).
inline constexpr int CGRP_FREEZE = 2;  // this cgroup is to be frozen (itself or an ancestor)
inline constexpr int CGRP_FROZEN = 3;  // ... and it is: every task and descendant is frozen

struct cgroup_freezer_state {
  // cgroup.freeze: this cgroup's own setting (its show reads it without the lock through
  // cgroup_freeze_read(), kernel/cgroup_fs.cc).
  bool freeze GUARDED_BY(cgroup_mutex) = false;
  // Own and ancestors' settings that are 1.
  int e_freeze GUARDED_BY(cgroup_mutex) = 0;
  // Live descendants in the frozen state.
  int nr_frozen_descendants GUARDED_BY(css_set_lock) = 0;
  // Tasks of this cgroup in the frozen state.
  int nr_frozen_tasks GUARDED_BY(css_set_lock) = 0;
};

struct cgroup {
  // The cgroup's own css (css->ss == nullptr), first as in the kernel, so &cgrp->self is the
  // cgroup's address: BPF programs pass it to kfuncs taking any css (bpf_get_mem_cgroup).
  // Emulation: it is not reference counted (CSS_NO_REF): a cgroup lives as long as its one
  // controller css (see the banner), and self.parent is not set.
  struct cgroup_subsys_state self;
  std::string name;
  struct cgroup *parent = nullptr;  // nullptr for the root
  struct cgroup_root *root = nullptr;
  int level = 0;  // 0 for the root
  u64 id = 0;     // the kernfs id (here: the css id)
  struct cgroup_subsys_state *subsys_css = nullptr;  // the one controller's css
  // Live (not yet removed) children in creation order, linked through their sibling (the
  // kernel's self.children list of self.sibling links: rmdir unlinks a cgroup in O(1) with
  // list_del()). Linked and unlinked under cgroup_mutex and css_set_lock both; walked under
  // cgroup_mutex, or under css_set_lock alone by for_each_cgroup_pre_cset_locked()
  // (kernel/cgroup_tasks.cc: cgroup.procs and the pid lookup).
  // Emulation: the kernel's cgroup.procs of a threaded domain walks the domain's threaded
  // css_sets under css_set_lock; here it walks the cgroups of the threaded subtree, so the
  // children lists change under css_set_lock too.
  struct cgroup_children children GUARDED_BY(cgroup_mutex);
  list_head sibling GUARDED_BY(cgroup_mutex);
  int nr_populated GUARDED_BY(css_set_lock) = 0;  // mms attached by emu::mm_attach
  bool removed = false;            // rmdir done
  struct cgroup_bpf bpf;           // cgroup-bpf attachments and effective arrays

  // The cgroup filesystem (kernel/cgroup_fs.cc).
  struct kernfs_node *kn = nullptr;  // this cgroup's directory
  u16 subtree_control = 0;           // v2: controllers enabled for the children (bit 0: memory)
  // cgroup.max.depth and cgroup.max.descendants; their show functions read them without the
  // lock (WRITE_ONCE/READ_ONCE) through cgroup_max_depth_read()/cgroup_max_descendants_read()
  // (kernel/cgroup_fs.cc).
  int max_depth GUARDED_BY(cgroup_mutex) = INT_MAX;
  int max_descendants GUARDED_BY(cgroup_mutex) = INT_MAX;
  // Live descendants: written under cgroup_mutex and css_set_lock both, read under either (the
  // freezer's traps hold css_set_lock only; cgroup.stat reads it with READ_ONCE). Not
  // annotated: a guard of "either of two locks" has no clang capability expression.
  int nr_descendants = 0;
  int nr_dying_descendants = 0;      // removed descendants whose css is not freed yet
  int nr_subsys_descendants = 0;     // descendants whose controller css is visible
  int nr_dying_subsys = 0;           // dying controller csses of this cgroup and below
  bool dying_visible = false;        // removed while its controller css was visible
  bool clone_children = false;       // v1 cgroup.clone_children
  bool notify_on_release = false;    // v1 notify_on_release
  cgroup_file procs_file;            // cgroup.procs (notified on population changes)
  cgroup_file events_file;           // cgroup.events

  // Tasks (kernel/cgroup_tasks.cc). The populated counts are read without the lock only by
  // cgroup_has_tasks(), cgroup_has_tasks_locked(), cgroup_is_populated() and
  // cgroup_can_be_thread_root() (racy snapshots, as in the kernel).
  struct css_set *cset GUARDED_BY(css_set_lock) = nullptr;  // the css_set of tasks in cgroup
  int nr_populated_csets GUARDED_BY(css_set_lock) = 0;      // 1 while the cgroup has tasks
  // Domain children and threaded children that are populated.
  int nr_populated_domain_children GUARDED_BY(css_set_lock) = 0;
  int nr_populated_threaded_children GUARDED_BY(css_set_lock) = 0;

  // Threaded mode (v2, kernel/cgroup_fs.cc). dom_cgrp is the cgroup itself for a domain cgroup,
  // the threaded domain (the thread root) for a threaded one. Readers without cgroup_mutex
  // (cgroup.type, migration's checks under css_set_lock) go through cgroup_is_threaded(),
  // cgroup_dom_cgrp() and cgroup_is_thread_root() (kernel/cgroup_internal.h), READ_ONCE.
  struct cgroup *dom_cgrp GUARDED_BY(cgroup_mutex) = nullptr;
  int nr_threaded_children GUARDED_BY(cgroup_mutex) = 0;  // live threaded children

  // The v2 freezer (kernel/cgroup_freezer.cc). flags holds CGRP_FREEZE and CGRP_FROZEN (atomic
  // bitops, changed under css_set_lock, read without it on the fork path).
  unsigned long flags = 0;
  struct cgroup_freezer_state freezer;
};

inline cgroup *cgroup_children::iterator::operator*() const {
  return list_entry(pos, cgroup, sibling);
}
inline cgroup *cgroup_children::back() const { return list_entry(head.prev, cgroup, sibling); }

struct cgroup_root {
  bool dfl = true;         // the default (v2) hierarchy, else v1
  unsigned int flags = 0;  // CGRP_ROOT_*
  struct cgroup cgrp;      // the root cgroup
  struct cgroup_subsys *ss = nullptr;
  struct kernfs_root *kf_root = nullptr;        // the hierarchy's kernfs
  struct kernfs_super_info *sb = nullptr;       // its mount at /sys/fs/cgroup
  std::string release_agent_path GUARDED_BY(cgroup_mutex);  // v1 release_agent
};

// The controller callbacks (the subset memcg implements).
struct cgroup_subsys {
  const char *name;
  // Allocates the css of a new cgroup; parent_css is nullptr for the root. nullptr on failure.
  cgroup_subsys_state *(*css_alloc)(cgroup_subsys_state *parent_css);
  // Called once linked and visible; non-zero fails the mkdir (the css is then freed).
  int (*css_online)(cgroup_subsys_state *css);
  // At rmdir, after CSS_DYING is set.
  void (*css_offline)(cgroup_subsys_state *css);
  // When the last reference is gone, before the grace period.
  void (*css_released)(cgroup_subsys_state *css);
  // After the grace period: free the css.
  void (*css_free)(cgroup_subsys_state *css);
  // A cgroup gets its first child (emulator hook for seed 003's leaf-only stock; nullable).
  void (*css_became_parent)(cgroup_subsys_state *css);
  // The controller's control files on v2 and on v1 (kernel/cftype.h), each ending in an empty
  // row; nullptr: none.
  const cftype *dfl_cftypes = nullptr;
  const cftype *legacy_cftypes = nullptr;
  // Migration (kernel/cgroup_tasks.cc): can_attach may refuse (-errno) before anything moves;
  // attach runs after the tasks moved; fork when a task joins its parent's cgroup. Nullable.
  int (*can_attach)(struct cgroup_taskset *tset) = nullptr;
  void (*attach)(struct cgroup_taskset *tset) = nullptr;
  void (*fork)(task_struct *task) = nullptr;
  // v2: the controller was disabled in the parent's subtree_control while the css stays
  // (see kernel/cgroup_fs.cc): reset its configuration to the defaults. Nullable.
  void (*css_reset)(cgroup_subsys_state *css) = nullptr;
  // Folds @css's per-CPU statistics of @cpu into its aggregates (kernel/cgroup_rstat.h);
  // nullptr: the controller keeps no rstat statistics.
  void (*css_rstat_flush)(cgroup_subsys_state *css, int cpu) = nullptr;
};

// The tasks moving in one migration and where they go (for can_attach/attach).
struct cgroup_taskset {
  std::vector<task_struct *> tasks;
  cgroup_subsys_state *dst_css = nullptr;  // the destination's effective css
  cgroup *dst_cgrp = nullptr;
};

/**
 * cgroup_setup_root - mount the machine's one hierarchy with @ss bound to it
 * @dfl: cgroup v2 (true) or v1
 * @flags: CGRP_ROOT_* mount options
 * @ss: the controller
 *
 * Context: task context; takes cgroup_mutex. Returns the root, or nullptr (-ENOMEM/-EBUSY in
 * *err) if css_alloc failed or a hierarchy is already mounted.
 */
cgroup_root *cgroup_setup_root(bool dfl, unsigned int flags, cgroup_subsys *ss, int *err);
// Removes every cgroup (post-order), offlines and puts the root css, and waits until every css
// has been freed. Context: task context.
void cgroup_destroy_root(cgroup_root *root);
// The mounted hierarchy, or nullptr.
cgroup_root *cgroup_current_root();

/**
 * cgroup_mkdir - create a child cgroup
 * Returns the cgroup, or nullptr with *err = -EEXIST (name taken), -ENOENT (parent removed),
 * -EINVAL (bad name), -ENOSPC (no free id) or the css_alloc/online failure.
 */
cgroup *cgroup_mkdir(cgroup *parent, const std::string &name, int *err);
// Removes a cgroup: 0, -EBUSY (children or tasks), -EINVAL (root), -ENOENT (already removed).
int cgroup_rmdir(cgroup *cgrp);
// Looks a child up by name, nullptr if none. Context: cgroup_mutex held.
cgroup *cgroup_find_child(cgroup *parent, const std::string &name) REQUIRES(cgroup_mutex);

// mm attachment counting (emu::mm_attach; rmdir of a cgroup with attached mms fails). Any
// context but hardirq; takes css_set_lock.
void cgroup_inc_populated(cgroup *cgrp);
void cgroup_dec_populated(cgroup *cgrp);

bool cgroup_is_descendant(const cgroup *cgrp, const cgroup *ancestor);
inline bool cgroup_on_dfl(const cgroup *cgrp) { return cgrp->root->dfl; }

// --- the cgroup filesystem (kernel/cgroup_fs.cc) ----------------------------------------------
// Every cgroup is a kernfs directory of its root's kernfs (cgroup_root::kf_root, mounted as
// cgroup_root::sb); its files are the cgroup core's (v2: cgroup.type, .procs, .controllers,
// .subtree_control, .events, .max.descendants, .max.depth, .stat, .kill; v1: cgroup.procs,
// tasks, cgroup.clone_children, notify_on_release, release_agent, cgroup.sane_behavior) and,
// where the controller's css is visible, the rows of ss->dfl_cftypes (v2) or
// ss->legacy_cftypes (v1) named "<ss>.<row>". User-space access by path: kernel/cgroupfs.h.

// The controllers offered to cgrp (cgroup.controllers): the parent's subtree_control, or every
// controller on the root. Bit 0 is the hierarchy's controller.
u16 cgroup_control(cgroup *cgrp);
// Whether cgrp's controller css is visible (has its files): v1, the root, or the parent's
// subtree_control enables the controller.
bool cgroup_css_visible(cgroup *cgrp);
// The css tasks of cgrp use: v2, the nearest cgroup up from cgrp (itself included) whose css
// is visible; v1, its own.
cgroup_subsys_state *cgroup_e_css(cgroup *cgrp);
/**
 * cgroup_apply_subtree_control - enable/disable the controller for cgrp's children (v2)
 * Returns 0, -ENOENT (enabling what cgroup.controllers lacks), -EBUSY (disabling while a child
 * enables it, or enabling in a non-root cgroup with tasks), -EINVAL (v1).
 * Context: cgroup_mutex held.
 */
int cgroup_apply_subtree_control(cgroup *cgrp, u16 enable, u16 disable) REQUIRES(cgroup_mutex);

// --- tasks (kernel/cgroup_tasks.cc) -----------------------------------------------------------
// Emulation: one css_set per cgroup; task_struct::cgroups points to it.
struct css_set {
  cgroup *dfl_cgrp = nullptr;
  std::vector<task_struct *> tasks GUARDED_BY(css_set_lock);  // in order of arrival
};

// A new task joins its parent's cgroup (the root's if parent is nullptr or in none); the
// controller's fork callback runs. Context: task context.
void cgroup_post_fork(task_struct *child, task_struct *parent);
// A task leaves its cgroup for good (populated counts drop, cgroup.events notified).
void cgroup_exit(task_struct *task);
// The task's cgroup (the root's if it never joined one).
cgroup *task_dfl_cgroup(task_struct *task);
// The task with this pid among those that joined through cgroup_post_fork, or nullptr. Takes
// css_set_lock.
task_struct *find_task_by_vpid(int pid);
// -EBUSY when dst cannot take tasks (v2: a non-root cgroup with controllers in its
// subtree_control), else 0. Context: cgroup_mutex held.
int cgroup_migrate_vet_dst(cgroup *dst) REQUIRES(cgroup_mutex);
/**
 * cgroup_attach_task - move a task (threadgroup: its whole thread group) to dst
 * The controller's can_attach may refuse; attach runs after the move for the tasks whose
 * effective css changed. Charges stay where they are. Returns 0 or -errno.
 * Context: cgroup_mutex held.
 */
int cgroup_attach_task(cgroup *dst, task_struct *leader, bool threadgroup)
    REQUIRES(cgroup_mutex);
// The cgroup.procs write: pid 0 is current; -ESRCH when no such task. Context: cgroup_mutex
// held.
int cgroup_attach_pid(cgroup *dst, int pid, bool threadgroup) REQUIRES(cgroup_mutex);
bool cgroup_has_tasks(cgroup *cgrp);
// Tasks in cgrp or any descendant (under css_set_lock or racy).
bool cgroup_is_populated(cgroup *cgrp);
// SIGKILL to every task of cgrp's subtree but kernel threads. Context: cgroup_mutex held.
void cgroup_kill(cgroup *cgrp) REQUIRES(cgroup_mutex);
/**
 * cgroup_freeze - the cgroup.freeze write: freeze (1) or thaw (0) @cgrp and its subtree
 * The tasks of each cgroup whose effective setting changes take (leave) the freezer's trap at
 * their next return to user mode; cgroup.events' "frozen" follows once they have. Writing the
 * current value does nothing. Context: cgroup_mutex held (kernel/cgroup_freezer.cc).
 */
void cgroup_freeze(cgroup *cgrp, bool freeze) REQUIRES(cgroup_mutex);
// The pids of cgroup.procs (procs: thread-group leaders' tgids) or of tasks (every pid).
std::vector<int> cgroup_procs_pids(cgroup *cgrp, bool procs, bool sorted);

// --- css references ---------------------------------------------------------------------------

void css_release(cgroup_subsys_state *css);  // refcount reached zero

// CSS_NO_REF never changes after creation, but other bits of flags do (CSS_DYING, CSS_ONLINE,
// written by rmdir while references are taken and dropped): the flags are read with READ_ONCE.
inline void css_get(cgroup_subsys_state *css) {
  if (!(READ_ONCE(css->flags) & CSS_NO_REF)) atomic_long_inc(&css->refcnt);
}
inline void css_get_many(cgroup_subsys_state *css, unsigned int n) {
  if (!(READ_ONCE(css->flags) & CSS_NO_REF)) atomic_long_add(n, &css->refcnt);
}
inline void css_put(cgroup_subsys_state *css) {
  if (READ_ONCE(css->flags) & CSS_NO_REF) return;
  // Fully ordered: every access made under this reference happens before the release work.
  if (atomic_long_sub_return(1, &css->refcnt) == 0) css_release(css);
}
inline void css_put_many(cgroup_subsys_state *css, unsigned int n) {
  if (READ_ONCE(css->flags) & CSS_NO_REF) return;
  if (atomic_long_sub_return(n, &css->refcnt) == 0) css_release(css);
}
// Takes a reference unless the count already reached zero (released). Succeeds on a dying css.
inline bool css_tryget(cgroup_subsys_state *css) {
  if (READ_ONCE(css->flags) & CSS_NO_REF) return true;
  long v = atomic_long_read(&css->refcnt);
  while (v > 0)
    if (atomic_long_try_cmpxchg(&css->refcnt, &v, v + 1)) return true;
  return false;
}
// Takes a reference only while the css is online (not dying).
inline bool css_tryget_online(cgroup_subsys_state *css) {
  if (READ_ONCE(css->flags) & CSS_DYING) return false;
  // A racing rmdir may set CSS_DYING right after the test; the reference taken then is an
  // ordinary one on a dying css, as percpu_ref_tryget_live() allows before the kill is seen.
  return css_tryget(css);
}
inline bool css_is_dying(const cgroup_subsys_state *css) {
  return READ_ONCE(css->flags) & CSS_DYING;
}
inline bool css_is_online(const cgroup_subsys_state *css) {
  return READ_ONCE(css->flags) & CSS_ONLINE;
}

}  // namespace umemcg

namespace umemcg::emu {
// Number of css structures allocated and not yet freed (leak checks).
long cgroup_live_css();
// Waits (task context) until no release/free work is in flight.
void cgroup_flush_releases();
}  // namespace umemcg::emu
