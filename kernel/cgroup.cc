// SPDX-License-Identifier: GPL-2.0-only
// kernel/cgroup.cc: the cgroup tree: mount, mkdir, rmdir, css release and free (see cgroup.h).
//
// Mirrors: kernel/cgroup/cgroup.c (Linux 6.19): cgroup_setup_root, cgroup_mkdir/css_create,
//   cgroup_rmdir/cgroup_destroy_locked/kill_css, css_release/css_release_work_fn,
//   css_free_rwork_fn
// Emulation: see cgroup.h. In addition, a registry of every allocated css (dying ones included)
//   is kept for the emulator's invariant checks (emu::for_each_css).
#include "kernel/cgroup.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <queue>
#include <vector>

#include "kernel/cgroup_internal.h"
#include "kernel/kernfs/kernfs.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/spinlock.h"

namespace umemcg {

DEFINE_MUTEX(cgroup_mutex);

namespace {

cgroup_root *g_root = nullptr;
// The kernel's queues for the release and free stages of a css (cgroup_wq_init()): per-CPU,
// one item at a time per vCPU. (Offlining runs in kill_css() itself: see cgroup.h.)
workqueue_struct *cgroup_release_wq = nullptr;
workqueue_struct *cgroup_free_wq = nullptr;
u64 g_serial GUARDED_BY(cgroup_mutex) = 0;

// Emulator bookkeeping: every allocated css by serial number (allocation order), and the
// releases in flight.
std::mutex g_registry_mu;
std::map<u64, cgroup_subsys_state *> g_registry;
// The ids: the lowest free one is given out, as idr_alloc() does. Every id below g_next_id is
// either in use or in g_free_ids.
int g_next_id GUARDED_BY(cgroup_mutex) = 1;
std::priority_queue<int, std::vector<int>, std::greater<int>> g_free_ids GUARDED_BY(cgroup_mutex);
atomic_long_t g_live;
atomic_long_t g_inflight;

constexpr int CGROUP_ID_MAX = 65535;  // MEM_CGROUP_ID_MAX: private memcg ids are 1..65535

int alloc_id() REQUIRES(cgroup_mutex) {
  if (!g_free_ids.empty()) {
    int id = g_free_ids.top();
    g_free_ids.pop();
    return id;
  }
  if (g_next_id > CGROUP_ID_MAX) return -ENOSPC;
  return g_next_id++;
}

void free_id(int id) REQUIRES(cgroup_mutex) {
  if (id > 0 && id < g_next_id) g_free_ids.push(id);
}

void registry_add(cgroup_subsys_state *css) {
  std::lock_guard<std::mutex> g(g_registry_mu);
  g_registry.emplace(css->serial_nr, css);
  atomic_long_inc(&g_live);
}

// Emulation: the kernel boots once. Here a new hierarchy may be set up in the process after an
// earlier one was destroyed while some of its css were still referenced: a task ended by an
// exception (a failed test's REQUIRE) with references held. Those css are leaked on purpose (a
// reference may still point at them) and forgotten here, so that for_each_css() and
// cgroup_live_css() describe the new machine only. The leak was reported where it happened:
// the destroyed machine's own checks counted it in cgroup_live_css(). They stay reachable from
// a list that is never freed, so a leak checker at exit does not report the same leak again.
void forget_leaked_css() {
  std::lock_guard<std::mutex> g(g_registry_mu);
  if (g_registry.empty()) return;
  std::fprintf(stderr, "cgroup: %zu css of an earlier hierarchy were never freed; forgetting them\n",
               g_registry.size());
  static auto *leaked = new std::vector<cgroup_subsys_state *>;  // never freed, see above
  for (const auto &[serial, css] : g_registry) leaked->push_back(css);
  g_registry.clear();
  atomic_long_set(&g_live, 0);
}

void registry_del(cgroup_subsys_state *css) {
  std::lock_guard<std::mutex> g(g_registry_mu);
  auto it = g_registry.find(css->serial_nr);
  if (!WARN_ON(it == g_registry.end() || it->second != css)) g_registry.erase(it);
  atomic_long_dec(&g_live);
}

// Frees a css and its cgroup, then drops the reference the css held on its parent.
void free_css(cgroup_subsys_state *css) {
  cgroup_subsys_state *parent = css->parent;
  cgroup *cgrp = css->cgroup;
  bool is_root = !parent;

  registry_del(css);
  css->ss->css_free(css);
  cgroup_bpf_free(cgrp);
  if (!is_root) {
    cgroup_free_cset(cgrp);
    delete cgrp;
  }
  if (parent) css_put(parent);
}

void css_free_work_fn(work_struct *work) {
  cgroup_subsys_state *css = container_of(work, cgroup_subsys_state, destroy_work);
  free_css(css);
  atomic_long_dec(&g_inflight);
}

void css_free_rcu_fn(rcu_head *head) {
  cgroup_subsys_state *css = container_of(head, cgroup_subsys_state, rcu);
  // RCU callbacks may not sleep: css_free runs from a work item, as queue_rcu_work() does.
  INIT_WORK(&css->destroy_work, css_free_work_fn);
  queue_work(cgroup_free_wq, &css->destroy_work);
}

void css_release_work_fn(work_struct *work) {
  cgroup_subsys_state *css = container_of(work, cgroup_subsys_state, destroy_work);
  {
    mutex_guard g(&cgroup_mutex);
    WRITE_ONCE(css->flags, css->flags | CSS_RELEASED);
    if (css->ss->css_released) css->ss->css_released(css);
    free_id(css->id);
    cgroup *cgrp = css->cgroup;
    if (cgrp->removed) {
      for (cgroup *p = cgrp->parent; p; p = p->parent) p->nr_dying_descendants--;
      if (cgrp->dying_visible)
        for (cgroup *p = cgrp; p; p = p->parent) p->nr_dying_subsys--;
    }
  }
  // Readers under rcu_read_lock() may still hold a pointer: free after a grace period.
  call_rcu(&css->rcu, css_free_rcu_fn);
}

void init_css(cgroup_subsys_state *css, cgroup *cgrp, cgroup_subsys *ss,
              cgroup_subsys_state *parent, int id) REQUIRES(cgroup_mutex) {
  css->cgroup = cgrp;
  css->ss = ss;
  css->parent = parent;
  css->id = id;
  css->serial_nr = ++g_serial;
  atomic_long_set(&css->refcnt, 1);  // the base reference
  cgrp->self.cgroup = cgrp;
  cgrp->self.flags = CSS_NO_REF;
  cgrp->dom_cgrp = cgrp;  // a new cgroup is a domain
  cgrp->self.id = id;
  cgrp->subsys_css = css;
  cgrp->id = static_cast<u64>(id);
  registry_add(css);
}

bool valid_name(const std::string &name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.size() < 256;
}

// Offlines a css whose cgroup is being removed (kill_css + css_killed_work_fn).
void kill_css(cgroup_subsys_state *css) {
  WRITE_ONCE(css->flags, css->flags | CSS_DYING);
  if (css->ss->css_offline) css->ss->css_offline(css);
  WRITE_ONCE(css->flags, css->flags & ~CSS_ONLINE);
  css_put(css);  // the base reference
}

}  // namespace

DEFINE_SPINLOCK(cgroup_file_kn_lock);

namespace {

void __cgroup_file_notify(cgroup_file *cfile) {
  unsigned long flags;
  spin_lock_irqsave(&cgroup_file_kn_lock, flags);
  if (cfile->kn) {
    unsigned long last = cfile->notified_at;
    unsigned long next = last + CGROUP_FILE_NOTIFY_MIN_INTV;
    unsigned long now = jiffies;
    if (time_after_eq(now, last) && time_before_eq(now, next)) {
      // Too soon: notify at the end of the interval (timer_reduce: only ever earlier).
      // Emulation: shim timers fire at their exact expiry, the kernel's wheel runs a timer
      // armed for a time already reached at the next tick; so does this one. (The timer that
      // fires at `next` finds jiffies == next still inside the interval: the notification
      // comes one tick later, as in the kernel.)
      unsigned long expires = time_after(next, now) ? next : now + 1;
      if (!timer_pending(&cfile->notify_timer) ||
          time_before(expires, cfile->notify_timer.expires))
        mod_timer(&cfile->notify_timer, expires);
    } else {
      kernfs_notify(cfile->kn);
      cfile->notified_at = now;
    }
  }
  spin_unlock_irqrestore(&cgroup_file_kn_lock, flags);
}

void cgroup_file_notify_timer(timer_list *timer) {
  __cgroup_file_notify(container_of(timer, cgroup_file, notify_timer));
}

}  // namespace

void cgroup_file_notify(cgroup_file *cfile) {
  atomic_long_inc(&cfile->notified);
  __cgroup_file_notify(cfile);
}

void cgroup_file_set_kn(cgroup_file *cfile, kernfs_node *kn) {
  unsigned long flags;
  if (kn) {
    timer_setup(&cfile->notify_timer, cgroup_file_notify_timer, 0);
    spin_lock_irqsave(&cgroup_file_kn_lock, flags);
    // Emulation: jiffies start at 0 here (the kernel's start 5 minutes before the wrap), so a
    // new file starts out of the interval explicitly.
    cfile->notified_at = jiffies - CGROUP_FILE_NOTIFY_MIN_INTV - 1;
    cfile->kn = kn;
    spin_unlock_irqrestore(&cgroup_file_kn_lock, flags);
    return;
  }
  spin_lock_irqsave(&cgroup_file_kn_lock, flags);
  cfile->kn = nullptr;
  spin_unlock_irqrestore(&cgroup_file_kn_lock, flags);
  timer_delete_sync(&cfile->notify_timer);
}

void css_release(cgroup_subsys_state *css) {
  // May run in any context (the last css_put can come from an interrupt): defer to a worker.
  WARN_ON_ONCE(!(css->flags & CSS_DYING));
  atomic_long_inc(&g_inflight);
  INIT_WORK(&css->destroy_work, css_release_work_fn);
  queue_work(cgroup_release_wq, &css->destroy_work);
}

cgroup_root *cgroup_current_root() { return g_root; }

cgroup_root *cgroup_setup_root(bool dfl, unsigned int flags, cgroup_subsys *ss, int *err) {
  mutex_guard g(&cgroup_mutex);
  if (g_root) {
    if (err) *err = -EBUSY;
    return nullptr;
  }
  if (!cgroup_release_wq) {
    cgroup_release_wq = alloc_workqueue("cgroup_release", WQ_PERCPU, 1);
    cgroup_free_wq = alloc_workqueue("cgroup_free", WQ_PERCPU, 1);
  }
  cgroup_freezer_boot();
  forget_leaked_css();
  g_next_id = 1;
  g_free_ids = {};
  auto *root = new cgroup_root;
  root->dfl = dfl;
  root->flags = flags;
  root->ss = ss;
  root->cgrp.root = root;
  root->cgrp.name = "";
  cgroup_subsys_state *css = ss->css_alloc(nullptr);
  if (!css) {
    delete root;
    if (err) *err = -ENOMEM;
    return nullptr;
  }
  init_css(css, &root->cgrp, ss, nullptr, alloc_id());
  // The root css is never released by reference counting (CSS_NO_REF), as in the kernel.
  css->flags |= CSS_NO_REF;
  g_root = root;
  if (ss->css_online && ss->css_online(css)) {
    g_root = nullptr;
    registry_del(css);
    ss->css_free(css);
    delete root;
    if (err) *err = -ENOMEM;
    return nullptr;
  }
  css->flags |= CSS_ONLINE;
  unsigned int kf_flags = 0;
  if (flags & CGRP_ROOT_EMU_KERNFS_NOTIFY_NO_RWSEM) kf_flags |= KERNFS_ROOT_NOTIFY_NO_RWSEM;
  int ret = cgroup_fs_setup_root(root, kf_flags);
  if (ret) {
    g_root = nullptr;
    if (ss->css_offline) ss->css_offline(css);
    registry_del(css);
    ss->css_free(css);
    delete root;
    if (err) *err = ret;
    return nullptr;
  }
  if (err) *err = 0;
  return root;
}

namespace {
// Children lists change under css_set_lock as well as cgroup_mutex (see cgroup::children).
void cgroup_link_child(cgroup *cgrp) REQUIRES(cgroup_mutex) {
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  list_add_tail(&cgrp->sibling, &cgrp->parent->children.head);
  spin_unlock_irqrestore(&css_set_lock, flags);
}

void cgroup_unlink_child(cgroup *cgrp) REQUIRES(cgroup_mutex) {
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  list_del(&cgrp->sibling);
  spin_unlock_irqrestore(&css_set_lock, flags);
}

// cgroup_destroy_locked: unlink, remove the directory (draining its files' operations, with
// cgroup_mutex held as the kernel does), update the counters, offline the css.
void cgroup_destroy_locked(cgroup *cgrp) REQUIRES(cgroup_mutex) {
  cgroup_unlink_child(cgrp);
  cgrp->removed = true;
  cgrp->dying_visible = cgrp->subsys_css->flags & CSS_VISIBLE;
  cgroup_fs_remove_dir(cgrp);
  if (cgroup_is_threaded(cgrp))
    WRITE_ONCE(cgrp->parent->nr_threaded_children, cgrp->parent->nr_threaded_children - 1);
  {
    unsigned long flags;
    spin_lock_irqsave(&css_set_lock, flags);
    for (cgroup *p = cgrp->parent; p; p = p->parent) {
      p->nr_descendants--;
      p->nr_dying_descendants++;
      // A frozen cgroup leaves its ancestors' frozen descendants.
      if (test_bit(CGRP_FROZEN, &cgrp->flags)) p->freezer.nr_frozen_descendants--;
    }
    spin_unlock_irqrestore(&css_set_lock, flags);
  }
  if (cgrp->dying_visible)
    for (cgroup *p = cgrp; p; p = p->parent) p->nr_dying_subsys++;
  cgroup_bpf_offline(cgrp);
  kill_css(cgrp->subsys_css);
}

// Teardown's check that no mm is left attached: a snapshot without css_set_lock (it only feeds
// a WARN_ON, as cgroup_is_populated() does next to it), hence no thread-safety analysis.
bool cgroup_has_mms_unlocked(const cgroup *cgrp) NO_THREAD_SAFETY_ANALYSIS {
  return cgrp->nr_populated != 0;
}

void rmdir_subtree_locked(cgroup *cgrp) REQUIRES(cgroup_mutex) {
  while (!cgrp->children.empty()) {
    cgroup *child = cgrp->children.back();
    rmdir_subtree_locked(child);
  }
  if (!cgrp->parent) return;
  WARN_ON(cgroup_has_mms_unlocked(cgrp));  // mms left attached at teardown
  WARN_ON(cgroup_is_populated(cgrp));  // tasks left at teardown
  cgroup_destroy_locked(cgrp);
}
}  // namespace

void cgroup_destroy_root(cgroup_root *root) {
  cgroup_subsys_state *root_css;
  {
    mutex_guard g(&cgroup_mutex);
    rmdir_subtree_locked(&root->cgrp);
    cgroup_bpf_offline(&root->cgrp);
    root_css = root->cgrp.subsys_css;
    WRITE_ONCE(root_css->flags, root_css->flags | CSS_DYING);
    if (root->ss->css_offline) root->ss->css_offline(root_css);
    WRITE_ONCE(root_css->flags, root_css->flags & ~CSS_ONLINE);
  }
  emu::cgroup_flush_releases();
  {
    mutex_guard g(&cgroup_mutex);
    cgroup_fs_destroy_root(root);
    if (root->ss->css_released) root->ss->css_released(root_css);
    g_root = nullptr;
  }
  cgroup_free_cset(&root->cgrp);
  synchronize_rcu();
  free_css(root_css);
  delete root;
  emu::cgroup_flush_releases();
  destroy_workqueue(cgroup_release_wq);
  destroy_workqueue(cgroup_free_wq);
  cgroup_release_wq = cgroup_free_wq = nullptr;
}

cgroup *cgroup_find_child(cgroup *parent, const std::string &name) {
  // On a mounted hierarchy the name is looked up in the directory's kernfs children (a tree,
  // O(log n), as kernfs_find_ns()); a directory's priv is its cgroup.
  if (parent->kn) {
    kernfs_node *kn = kernfs_find_and_get(parent->kn, name.c_str());
    if (!kn) return nullptr;
    cgroup *c = kernfs_type(kn) == KERNFS_DIR ? static_cast<cgroup *>(kn->priv) : nullptr;
    kernfs_put(kn);
    return c;
  }
  for (cgroup *c : parent->children)
    if (c->name == name) return c;
  return nullptr;
}

cgroup *cgroup_mkdir(cgroup *parent, const std::string &name, int *err) {
  int dummy;
  if (!err) err = &dummy;
  if (!parent) {
    *err = -EINVAL;
    return nullptr;
  }
  mutex_guard g(&cgroup_mutex);
  if (parent->removed) {
    *err = -ENOENT;
    return nullptr;
  }
  if (!valid_name(name)) {
    *err = -EINVAL;
    return nullptr;
  }
  if (cgroup_find_child(parent, name)) {
    *err = -EEXIST;
    return nullptr;
  }
  // cgroup_check_hierarchy_limits.
  int level = 0;
  for (cgroup *c = parent; c; c = c->parent, level++) {
    if (c->nr_descendants >= c->max_descendants || level >= c->max_depth) {
      *err = -EAGAIN;
      return nullptr;
    }
  }
  int id = alloc_id();
  if (id < 0) {
    *err = id;
    return nullptr;
  }
  cgroup_subsys *ss = parent->root->ss;
  cgroup_subsys_state *parent_css = parent->subsys_css;
  cgroup_subsys_state *css = ss->css_alloc(parent_css);
  if (!css) {
    free_id(id);
    *err = -ENOMEM;
    return nullptr;
  }
  auto *cgrp = new cgroup;
  cgrp->name = name;
  cgrp->parent = parent;
  cgrp->root = parent->root;
  cgrp->level = parent->level + 1;
  init_css(css, cgrp, ss, parent_css, id);
  css_get(parent_css);  // a child pins its parent until it is freed
  cgroup_link_child(cgrp);
  cgroup_bpf_inherit(cgrp);

  int ret = parent->kn ? cgroup_fs_create_dir(cgrp) : 0;
  if (!ret && ss->css_online) {
    ret = ss->css_online(css);
    if (ret) cgroup_fs_remove_dir(cgrp);
  }
  if (ret) {
    cgroup_unlink_child(cgrp);
    free_id(id);
    free_css(css);
    *err = ret;
    return nullptr;
  }
  WRITE_ONCE(css->flags, css->flags | CSS_ONLINE);
  cgroup_freezer_inherit(cgrp);
  {
    // Under css_set_lock as well: the freezer compares nr_frozen_descendants with
    // nr_descendants from tasks' traps, which hold css_set_lock only.
    unsigned long flags;
    spin_lock_irqsave(&css_set_lock, flags);
    for (cgroup *p = parent; p; p = p->parent) {
      p->nr_descendants++;
      // A new cgroup that starts frozen is a frozen descendant; no ancestor changes state by it.
      if (cgrp->freezer.e_freeze) p->freezer.nr_frozen_descendants++;
    }
    spin_unlock_irqrestore(&css_set_lock, flags);
  }
  if (cgrp->kn) cgroup_fs_activate_dir(cgrp);
  if (parent->children.singular() && ss->css_became_parent) ss->css_became_parent(parent_css);
  *err = 0;
  return cgrp;
}

int cgroup_rmdir(cgroup *cgrp) {
  if (!cgrp) return -EINVAL;
  mutex_guard g(&cgroup_mutex);
  if (!cgrp->parent) return -EINVAL;  // the root cannot be removed
  if (cgrp->removed) return -ENOENT;
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  bool busy = !cgrp->children.empty() || cgrp->nr_populated || cgroup_is_populated(cgrp);
  spin_unlock_irqrestore(&css_set_lock, flags);
  if (busy) return -EBUSY;
  cgroup_destroy_locked(cgrp);
  return 0;
}

namespace {
// kernfs_syscall_ops: mkdir/rmdir arriving through the filesystem hold an active reference on
// the directory; it is given up while cgroup_mutex is taken (cgroup_kn_lock_live).
int cgroup_mkdir_kn(kernfs_node *parent_kn, const char *name, unsigned short) {
  auto *parent = static_cast<cgroup *>(parent_kn->priv);
  // The css reference keeps the cgroup allocated once the active reference is given up.
  css_get(parent->subsys_css);
  kernfs_get(parent_kn);
  kernfs_break_active_protection(parent_kn);
  int err = 0;
  if (!cgroup_mkdir(parent, name, &err) && err == -ENOENT) err = -ENODEV;
  kernfs_unbreak_active_protection(parent_kn);
  kernfs_put(parent_kn);
  css_put(parent->subsys_css);
  return err;
}

int cgroup_rmdir_kn(kernfs_node *kn) {
  auto *cgrp = static_cast<cgroup *>(kn->priv);
  cgroup_subsys_state *css = cgrp->subsys_css;
  css_get(css);
  kernfs_get(kn);
  kernfs_break_active_protection(kn);
  int ret = cgroup_rmdir(cgrp);
  if (ret == -ENOENT) ret = 0;  // already gone: nothing to do (cgroup_kn_lock_live failed)
  kernfs_unbreak_active_protection(kn);
  kernfs_put(kn);
  css_put(css);
  return ret;
}
}  // namespace

const kernfs_syscall_ops cgroup_kf_syscall_ops = {cgroup_mkdir_kn, cgroup_rmdir_kn};

// Under css_set_lock, so that controllers may call them from attach (under cgroup_mutex).
void cgroup_inc_populated(cgroup *cgrp) {
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  cgrp->nr_populated++;
  spin_unlock_irqrestore(&css_set_lock, flags);
}

void cgroup_dec_populated(cgroup *cgrp) {
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  WARN_ON(cgrp->nr_populated <= 0);
  cgrp->nr_populated--;
  spin_unlock_irqrestore(&css_set_lock, flags);
}

bool cgroup_is_descendant(const cgroup *cgrp, const cgroup *ancestor) {
  for (const cgroup *c = cgrp; c; c = c->parent)
    if (c == ancestor) return true;
  return false;
}

}  // namespace umemcg

namespace umemcg::emu {

long cgroup_live_css() { return atomic_long_read(&g_live); }

void cgroup_flush_releases() {
  // A release queues an RCU callback that queues the free work: alternate until nothing is left.
  for (int i = 0; i < 1000 && atomic_long_read(&g_inflight) > 0; i++) {
    if (cgroup_release_wq) flush_workqueue(cgroup_release_wq);
    rcu_barrier();
    if (cgroup_free_wq) flush_workqueue(cgroup_free_wq);
  }
  WARN_ON(atomic_long_read(&g_inflight) != 0);
}

void for_each_css(void (*fn)(cgroup_subsys_state *, void *), void *arg) {
  std::vector<cgroup_subsys_state *> copy;
  {
    std::lock_guard<std::mutex> g(g_registry_mu);
    copy.reserve(g_registry.size());
    for (const auto &entry : g_registry) copy.push_back(entry.second);
  }
  for (cgroup_subsys_state *css : copy) fn(css, arg);
}

}  // namespace umemcg::emu
