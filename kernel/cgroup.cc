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
#include <mutex>

#include "kernel/cgroup_internal.h"
#include "shim/bug.h"
#include "shim/errno.h"

namespace umemcg {

DEFINE_MUTEX(cgroup_mutex);

namespace {

cgroup_root *g_root = nullptr;
workqueue_struct *cgroup_destroy_wq = nullptr;
u64 g_serial = 0;  // under cgroup_mutex

// Emulator bookkeeping: every allocated css, and the releases in flight.
std::mutex g_registry_mu;
std::vector<cgroup_subsys_state *> g_registry;
std::vector<bool> g_ids_used;  // index = id; under cgroup_mutex
atomic_long_t g_live;
atomic_long_t g_inflight;

constexpr int CGROUP_ID_MAX = 65535;  // MEM_CGROUP_ID_MAX: private memcg ids are 1..65535

int alloc_id() {
  if (g_ids_used.empty()) g_ids_used.assign(2, false);
  for (int id = 1; id <= CGROUP_ID_MAX; id++) {
    if (id >= static_cast<int>(g_ids_used.size())) g_ids_used.resize(id + 1, false);
    if (!g_ids_used[id]) {
      g_ids_used[id] = true;
      return id;
    }
  }
  return -ENOSPC;
}

void free_id(int id) {
  if (id > 0 && id < static_cast<int>(g_ids_used.size())) g_ids_used[id] = false;
}

void registry_add(cgroup_subsys_state *css) {
  std::lock_guard<std::mutex> g(g_registry_mu);
  g_registry.push_back(css);
  atomic_long_inc(&g_live);
}

void registry_del(cgroup_subsys_state *css) {
  std::lock_guard<std::mutex> g(g_registry_mu);
  auto it = std::find(g_registry.begin(), g_registry.end(), css);
  if (!WARN_ON(it == g_registry.end())) g_registry.erase(it);
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
  if (!is_root) delete cgrp;
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
  queue_work(cgroup_destroy_wq, &css->destroy_work);
}

void css_release_work_fn(work_struct *work) {
  cgroup_subsys_state *css = container_of(work, cgroup_subsys_state, destroy_work);
  {
    mutex_guard g(&cgroup_mutex);
    WRITE_ONCE(css->flags, css->flags | CSS_RELEASED);
    if (css->ss->css_released) css->ss->css_released(css);
    free_id(css->id);
  }
  // Readers under rcu_read_lock() may still hold a pointer: free after a grace period.
  call_rcu(&css->rcu, css_free_rcu_fn);
}

void init_css(cgroup_subsys_state *css, cgroup *cgrp, cgroup_subsys *ss,
              cgroup_subsys_state *parent, int id) {
  css->cgroup = cgrp;
  css->ss = ss;
  css->parent = parent;
  css->id = id;
  css->serial_nr = ++g_serial;
  atomic_long_set(&css->refcnt, 1);  // the base reference
  cgrp->self.cgroup = cgrp;
  cgrp->self.flags = CSS_NO_REF;
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

void cgroup_file_notify(cgroup_file *cfile) { atomic_long_inc(&cfile->notified); }

void css_release(cgroup_subsys_state *css) {
  // May run in any context (the last css_put can come from an interrupt): defer to a worker.
  WARN_ON_ONCE(!(css->flags & CSS_DYING));
  atomic_long_inc(&g_inflight);
  INIT_WORK(&css->destroy_work, css_release_work_fn);
  queue_work(cgroup_destroy_wq, &css->destroy_work);
}

cgroup_root *cgroup_current_root() { return g_root; }

cgroup_root *cgroup_setup_root(bool dfl, unsigned int flags, cgroup_subsys *ss, int *err) {
  mutex_guard g(&cgroup_mutex);
  if (g_root) {
    if (err) *err = -EBUSY;
    return nullptr;
  }
  if (!cgroup_destroy_wq) cgroup_destroy_wq = alloc_workqueue("cgroup_destroy", WQ_UNBOUND, 1);
  g_ids_used.clear();
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
  if (err) *err = 0;
  return root;
}

namespace {
void rmdir_subtree_locked(cgroup *cgrp) {
  while (!cgrp->children.empty()) {
    cgroup *child = cgrp->children.back();
    rmdir_subtree_locked(child);
  }
  if (!cgrp->parent) return;
  WARN_ON(cgrp->nr_populated);  // tasks left attached at teardown
  auto &sib = cgrp->parent->children;
  sib.erase(std::find(sib.begin(), sib.end(), cgrp));
  cgrp->removed = true;
  cgroup_bpf_offline(cgrp);
  kill_css(cgrp->subsys_css);
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
    if (root->ss->css_released) root->ss->css_released(root_css);
    g_root = nullptr;
  }
  synchronize_rcu();
  free_css(root_css);
  delete root;
  emu::cgroup_flush_releases();
  destroy_workqueue(cgroup_destroy_wq);
  cgroup_destroy_wq = nullptr;
}

cgroup *cgroup_find_child(cgroup *parent, const std::string &name) {
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
  parent->children.push_back(cgrp);
  cgroup_bpf_inherit(cgrp);

  if (ss->css_online) {
    int ret = ss->css_online(css);
    if (ret) {
      parent->children.pop_back();
      free_id(id);
      free_css(css);
      *err = ret;
      return nullptr;
    }
  }
  WRITE_ONCE(css->flags, css->flags | CSS_ONLINE);
  if (parent->children.size() == 1 && ss->css_became_parent) ss->css_became_parent(parent_css);
  *err = 0;
  return cgrp;
}

int cgroup_rmdir(cgroup *cgrp) {
  if (!cgrp) return -EINVAL;
  mutex_guard g(&cgroup_mutex);
  if (!cgrp->parent) return -EINVAL;  // the root cannot be removed
  if (cgrp->removed) return -ENOENT;
  if (!cgrp->children.empty() || cgrp->nr_populated) return -EBUSY;
  auto &sib = cgrp->parent->children;
  sib.erase(std::find(sib.begin(), sib.end(), cgrp));
  cgrp->removed = true;
  cgroup_bpf_offline(cgrp);
  kill_css(cgrp->subsys_css);
  return 0;
}

void cgroup_inc_populated(cgroup *cgrp) {
  mutex_guard g(&cgroup_mutex);
  cgrp->nr_populated++;
}

void cgroup_dec_populated(cgroup *cgrp) {
  mutex_guard g(&cgroup_mutex);
  WARN_ON(cgrp->nr_populated <= 0);
  cgrp->nr_populated--;
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
    if (cgroup_destroy_wq) flush_workqueue(cgroup_destroy_wq);
    rcu_barrier();
    if (cgroup_destroy_wq) flush_workqueue(cgroup_destroy_wq);
  }
  WARN_ON(atomic_long_read(&g_inflight) != 0);
}

void for_each_css(void (*fn)(cgroup_subsys_state *, void *), void *arg) {
  std::vector<cgroup_subsys_state *> copy;
  {
    std::lock_guard<std::mutex> g(g_registry_mu);
    copy = g_registry;
  }
  for (cgroup_subsys_state *css : copy) fn(css, arg);
}

}  // namespace umemcg::emu
