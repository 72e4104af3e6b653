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
//           free work (css_free, then the parent reference is put).
// Emulation: the css reference count is one atomic counter (the kernel's percpu_ref switches to
//   atomic mode at kill; the observable rules, tryget after kill and "release at zero", are
//   kept). css_get/css_put are therefore atomic RMWs on a shared line, as percpu_ref is after kill.
// Emulation: one hierarchy per machine, with one controller (memory) bound to it; a cgroup has
//   exactly one css, and the struct cgroup is freed together with it.
// Emulation: offline runs synchronously inside rmdir under cgroup_mutex (the kernel runs it from
//   the percpu_ref kill-confirm work); callers observe the same order.
// Emulation: children lists are only walked under cgroup_mutex (no RCU-protected iteration).
#pragma once

#include <string>
#include <vector>

#include "kernel/cftype.h"
#include "kernel/cgroup_bpf.h"
#include "shim/atomic.h"
#include "shim/mutex.h"
#include "shim/rcupdate.h"
#include "shim/types.h"
#include "shim/workqueue.h"

namespace umemcg {

struct cgroup;
struct cgroup_root;
struct cgroup_subsys;
struct css_rstat_cpu;
template <typename T>
struct percpu;

// css flags (kernel values).
inline constexpr unsigned int CSS_NO_REF = 1u << 0;
inline constexpr unsigned int CSS_ONLINE = 1u << 1;
inline constexpr unsigned int CSS_RELEASED = 1u << 2;
inline constexpr unsigned int CSS_VISIBLE = 1u << 3;
inline constexpr unsigned int CSS_DYING = 1u << 4;

// cgroup_root flags (kernel values).
inline constexpr unsigned int CGRP_ROOT_MEMORY_LOCAL_EVENTS = 1u << 17;
inline constexpr unsigned int CGRP_ROOT_MEMORY_RECURSIVE_PROT = 1u << 18;

struct cgroup_subsys_state {
  struct cgroup *cgroup = nullptr;
  struct cgroup_subsys *ss = nullptr;
  // References: the base reference (dropped at rmdir), one per child css, and any css_get().
  atomic_long_t refcnt;
  struct cgroup_subsys_state *parent = nullptr;
  // Private id of this css within its subsystem, 1.. (the root is 1).
  int id = 0;
  unsigned int flags = 0;  // CSS_* (written under cgroup_mutex, read racily)
  // Order of creation, never reused.
  u64 serial_nr = 0;
  work_struct destroy_work;
  rcu_head rcu;
  // rstat (kernel/cgroup_rstat.h): this css's links in each CPU's updated tree (nullptr unless
  // the controller keeps rstat statistics), and the flush list link (under the rstat lock).
  percpu<css_rstat_cpu> *rstat_cpu = nullptr;
  cgroup_subsys_state *rstat_flush_next = nullptr;
};

// A cgroup's per-file notification state (cgroup_file_notify() wakes pollers of the file).
// Emulation: there are no files or pollers yet; a notification is counted.
struct cgroup_file {
  atomic_long_t notified;
};
void cgroup_file_notify(cgroup_file *cfile);

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
  std::vector<cgroup *> children;  // live (not yet removed) children, under cgroup_mutex
  int nr_populated = 0;            // tasks attached (under cgroup_mutex)
  bool removed = false;            // rmdir done
  struct cgroup_bpf bpf;           // cgroup-bpf attachments and effective arrays
};

struct cgroup_root {
  bool dfl = true;         // the default (v2) hierarchy, else v1
  unsigned int flags = 0;  // CGRP_ROOT_*
  struct cgroup cgrp;      // the root cgroup
  struct cgroup_subsys *ss = nullptr;
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
  // Folds @css's per-CPU statistics of @cpu into its aggregates (kernel/cgroup_rstat.h);
  // nullptr: the controller keeps no rstat statistics.
  void (*css_rstat_flush)(cgroup_subsys_state *css, int cpu) = nullptr;
};

extern struct mutex cgroup_mutex;

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
// Looks a child up by name (under cgroup_mutex), nullptr if none.
cgroup *cgroup_find_child(cgroup *parent, const std::string &name);

// Task attachment counting (rmdir of a populated cgroup fails).
void cgroup_inc_populated(cgroup *cgrp);
void cgroup_dec_populated(cgroup *cgrp);

bool cgroup_is_descendant(const cgroup *cgrp, const cgroup *ancestor);
inline bool cgroup_on_dfl(const cgroup *cgrp) { return cgrp->root->dfl; }

// --- css references ---------------------------------------------------------------------------

void css_release(cgroup_subsys_state *css);  // refcount reached zero

inline void css_get(cgroup_subsys_state *css) {
  if (!(css->flags & CSS_NO_REF)) atomic_long_inc(&css->refcnt);
}
inline void css_get_many(cgroup_subsys_state *css, unsigned int n) {
  if (!(css->flags & CSS_NO_REF)) atomic_long_add(n, &css->refcnt);
}
inline void css_put(cgroup_subsys_state *css) {
  if (css->flags & CSS_NO_REF) return;
  // Fully ordered: every access made under this reference happens before the release work.
  if (atomic_long_sub_return(1, &css->refcnt) == 0) css_release(css);
}
inline void css_put_many(cgroup_subsys_state *css, unsigned int n) {
  if (css->flags & CSS_NO_REF) return;
  if (atomic_long_sub_return(n, &css->refcnt) == 0) css_release(css);
}
// Takes a reference unless the count already reached zero (released). Succeeds on a dying css.
inline bool css_tryget(cgroup_subsys_state *css) {
  if (css->flags & CSS_NO_REF) return true;
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
