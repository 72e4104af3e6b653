// SPDX-License-Identifier: GPL-2.0-only
// kernel/cgroup_fs.cc: the cgroup filesystem: every cgroup a kernfs directory, control files
// created from cftype tables and routed to their handlers, the cgroup core's own files, and
// controller enabling through cgroup.subtree_control.
//
// Mirrors: kernel/cgroup/cgroup.c (Linux 6.19): cgroup_kf_ops, cgroup_file_open/release,
//   cgroup_seqfile_show, cgroup_file_write, cgroup_file_name/mode, cgroup_add_file,
//   cgroup_rm_file, cgroup_addrm_files, css_populate_dir, css_clear_dir, cgroup_kn_lock_live,
//   cgroup_base_files (cgroup.type, .procs, .threads, .controllers, .subtree_control, .events,
//   .max.descendants, .max.depth, .stat, .freeze, .kill), cgroup_subtree_control_write,
//   cgroup_vet_subtree_control_enable, cgroup_apply_control_enable/disable,
//   cgroup_update_dfl_csses, cgroup_control, cgroup_enable_threaded, cgroup_type_show/write,
//   cgroup_procs_start (-EOPNOTSUPP in a threaded cgroup), cgroup_threads_write;
//   kernel/cgroup/cgroup-v1.c (cgroup1_base_files: cgroup.procs, tasks, notify_on_release,
//   release_agent, cgroup.clone_children, cgroup.sane_behavior)
// Emulation: a cgroup has its controller css for its whole life (kernel/cgroup.h). On v2 the
//   css's files exist only where the parent's subtree_control enables the controller
//   (CSS_VISIBLE), and tasks use the nearest such css up the tree (cgroup_e_css), as in the
//   kernel. Disabling the controller hides the files and resets the css (ss->css_reset, what
//   the kernel does to a css that must stay); the kernel instead kills the css and creates a
//   new one at the next enable, so here charges the old css still holds are seen again after
//   re-enabling.
// Threaded mode (v2): "threaded" written to cgroup.type makes a cgroup join its parent's
//   threaded domain (dom_cgrp); memory is a domain controller, so a threaded cgroup has no
//   memory.* files, cannot enable memory for its children (-ENOENT), its tasks are charged to
//   the threaded domain's memcg, and a non-root thread root cannot enable it either
//   (-EOPNOTSUPP). The rules and errnos of cgroup_enable_threaded,
//   cgroup_vet_subtree_control_enable and cgroup_migrate_vet_dst are the kernel's.
// cgroup.freeze and cgroup.events' frozen line are the freezer's (kernel/cgroup_freezer.cc).
// Emulation: there is no namespace delegation (CFTYPE_NS_DELEGATABLE has no effect) and the user is root.
// Emulation: cgroup.stat's counters are kept up to date under cgroup_mutex and read without it
//   (the kernel also reads them racily).
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <climits>

#include "kernel/cgroup.h"
#include "kernel/cgroup_internal.h"
#include "kernel/kernfs/kernfs.h"
#include "kernel/kstrtox.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/sched.h"

namespace umemcg {

namespace {

constexpr size_t PATH_MAX_LEN = 4096;  // PATH_MAX

// The one controller's bit in subtree_control masks (its ssid is 0).
constexpr u16 SS_MASK = 1u << 0;

// What a control file's kernfs node points to: its row, its subsystem (nullptr: cgroup core),
// its kernfs_ops (a private copy when the row's max_write_len is not one page, as
// cgroup_init_cftypes makes), and the file's name and mode, which depend on the row only
// (cgroup_file_name, cgroup_file_mode), so they are worked out once per row, not per cgroup.
struct cft_binding {
  const cftype *cft = nullptr;
  cgroup_subsys *ss = nullptr;
  kernfs_ops ops;
  std::string name;
  unsigned short mode = 0;
};

// Bindings live as long as the process (rows are static tables).
std::map<std::pair<const cftype *, cgroup_subsys *>, std::unique_ptr<cft_binding>> g_bindings
    GUARDED_BY(cgroup_mutex);

cgroup *kn_cgroup(kernfs_node *kn) {
  return static_cast<cgroup *>(kernfs_type(kn) == KERNFS_DIR ? kn->priv : kn->parent->priv);
}

cft_binding *kn_binding(kernfs_node *kn) { return static_cast<cft_binding *>(kn->priv); }

int cgroup_file_open(kernfs_open_file *of) {
  cft_binding *b = kn_binding(of->kn);
  cgroup *cgrp = kn_cgroup(of->kn);
  of->cft = b->cft;
  of->css = b->ss ? cgrp->subsys_css : &cgrp->self;
  return b->cft->open ? b->cft->open(of) : 0;
}

void cgroup_file_release(kernfs_open_file *of) {
  const cftype *cft = of->cft;
  if (cft->release) cft->release(of);
}

int cgroup_seqfile_show(seq_file *sf, void *v) {
  const cftype *cft = seq_cft(sf);
  cgroup_subsys_state *css = seq_css(sf);
  if (cft->seq_show) return cft->seq_show(sf, v);
  if (cft->read_u64) {
    seq_printf(sf, "%llu\n", static_cast<unsigned long long>(cft->read_u64(css, cft)));
  } else if (cft->read_s64) {
    seq_printf(sf, "%lld\n", static_cast<long long>(cft->read_s64(css, cft)));
  } else {
    return -EINVAL;
  }
  return 0;
}

ssize_t cgroup_file_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t off) {
  const cftype *cft = of->cft;
  cgroup_subsys_state *css = of->css;
  int ret;
  if (!nbytes) return 0;
  if (cft->write) return cft->write(of, buf, nbytes, off);
  if (cft->write_u64) {
    unsigned long long v;
    ret = kstrtoull(buf, 0, &v);
    if (!ret) ret = cft->write_u64(css, cft, v);
  } else if (cft->write_s64) {
    long long v;
    ret = kstrtoll(buf, 0, &v);
    if (!ret) ret = cft->write_s64(css, cft, v);
  } else {
    ret = -EINVAL;
  }
  return ret ? ret : static_cast<ssize_t>(nbytes);
}

std::string cgroup_file_name(const cftype *cft, cgroup_subsys *ss);
unsigned short cgroup_file_mode(const cftype *cft);

cft_binding *get_binding(const cftype *cft, cgroup_subsys *ss) REQUIRES(cgroup_mutex) {
  auto &slot = g_bindings[{cft, ss}];
  if (!slot) {
    slot = std::make_unique<cft_binding>();
    slot->cft = cft;
    slot->ss = ss;
    slot->ops = kernfs_ops{cgroup_file_open, cgroup_file_release, cgroup_seqfile_show,
                           cgroup_file_write, PAGE_SIZE};
    if (cft->max_write_len && cft->max_write_len != PAGE_SIZE)
      slot->ops.atomic_write_len = cft->max_write_len;
    slot->name = cgroup_file_name(cft, ss);
    slot->mode = cgroup_file_mode(cft);
  }
  return slot.get();
}

std::string cgroup_file_name(const cftype *cft, cgroup_subsys *ss) {
  if (ss && !(cft->flags & CFTYPE_NO_PREFIX)) return std::string(ss->name) + "." + cft->name;
  return cft->name;
}

unsigned short cgroup_file_mode(const cftype *cft) {
  unsigned short mode = 0;
  if (cft->read_u64 || cft->read_s64 || cft->seq_show) mode |= 0444;
  if (cft->write_u64 || cft->write_s64 || cft->write) {
    mode |= (cft->flags & CFTYPE_WORLD_WRITABLE) ? 0222 : 0200;
  }
  return mode;
}

cgroup_file *cft_cfile(cgroup_subsys_state *css, const cftype *cft) {
  return reinterpret_cast<cgroup_file *>(reinterpret_cast<char *>(css) + cft->file_offset);
}

int cgroup_add_file(cgroup_subsys_state *css, cgroup *cgrp, const cftype *cft,
                    cgroup_subsys *ss) REQUIRES(cgroup_mutex) {
  cft_binding *b = get_binding(cft, ss);
  kernfs_node *kn = kernfs_create_file(cgrp->kn, b->name.c_str(), b->mode, 0, &b->ops, b);
  if (IS_ERR(kn)) return static_cast<int>(PTR_ERR(kn));
  if (cft->file_offset) cgroup_file_set_kn(cft_cfile(css, cft), kn);
  return 0;
}

void cgroup_rm_file(cgroup_subsys_state *css, cgroup *cgrp, const cftype *cft, cgroup_subsys *ss)
    REQUIRES(cgroup_mutex) {
  if (cft->file_offset) cgroup_file_set_kn(cft_cfile(css, cft), nullptr);
  kernfs_remove_by_name(cgrp->kn, get_binding(cft, ss)->name.c_str());
}

bool cft_applies(const cftype *cft, cgroup *cgrp) {
  if ((cft->flags & CFTYPE_NOT_ON_ROOT) && !cgrp->parent) return false;
  if ((cft->flags & CFTYPE_ONLY_ON_ROOT) && cgrp->parent) return false;
  if (cft->flags & CFTYPE_DEBUG) return false;
  return true;
}

int cgroup_addrm_files(cgroup_subsys_state *css, cgroup *cgrp, const cftype *cfts,
                       cgroup_subsys *ss, bool is_add) REQUIRES(cgroup_mutex) {
  if (!cfts) return 0;
  for (const cftype *cft = cfts; cft->name[0]; cft++) {
    if (!cft_applies(cft, cgrp)) continue;
    if (is_add) {
      int ret = cgroup_add_file(css, cgrp, cft, ss);
      if (ret) {
        // Undo the rows added so far.
        for (const cftype *c = cfts; c != cft; c++)
          if (cft_applies(c, cgrp)) cgroup_rm_file(css, cgrp, c, ss);
        return ret;
      }
    } else {
      cgroup_rm_file(css, cgrp, cft, ss);
    }
  }
  return 0;
}

const cftype *core_files(cgroup *cgrp);

const cftype *ss_files(cgroup *cgrp) {
  cgroup_subsys *ss = cgrp->root->ss;
  return cgroup_on_dfl(cgrp) ? ss->dfl_cftypes : ss->legacy_cftypes;
}

// Creates the files of css (the cgroup's self: the core files).
int css_populate_dir(cgroup *cgrp, bool self) REQUIRES(cgroup_mutex) {
  if (self) return cgroup_addrm_files(&cgrp->self, cgrp, core_files(cgrp), nullptr, true);
  cgroup_subsys_state *css = cgrp->subsys_css;
  if (css->flags & CSS_VISIBLE) return 0;
  int ret = cgroup_addrm_files(css, cgrp, ss_files(cgrp), cgrp->root->ss, true);
  if (!ret) {
    css->flags |= CSS_VISIBLE;
    cgroup_adjust_subsys_counts(cgrp, 1);
  }
  return ret;
}

void css_clear_dir(cgroup *cgrp, bool self) REQUIRES(cgroup_mutex) {
  if (self) {
    cgroup_addrm_files(&cgrp->self, cgrp, core_files(cgrp), nullptr, false);
    return;
  }
  cgroup_subsys_state *css = cgrp->subsys_css;
  if (!(css->flags & CSS_VISIBLE)) return;
  css->flags &= ~CSS_VISIBLE;
  cgroup_adjust_subsys_counts(cgrp, -1);
  cgroup_addrm_files(css, cgrp, ss_files(cgrp), cgrp->root->ss, false);
}

// --- cgroup_kn_lock_live --------------------------------------------------------------------

// Takes cgroup_mutex for an operation on kn (a cgroup directory or one of its files), giving up
// the operation's active reference first so that rmdir (which holds cgroup_mutex while it
// drains) cannot deadlock with it. Returns the cgroup, or nullptr (unlocked) if it is removed.
// The css reference (cgroup_get in the kernel) keeps the cgroup allocated meanwhile.
cgroup *cgroup_kn_lock_live(kernfs_node *kn) TRY_ACQUIRE(true, cgroup_mutex) {
  cgroup *cgrp = kn_cgroup(kn);
  css_get(cgrp->subsys_css);
  kernfs_get(kn);
  kernfs_break_active_protection(kn);
  mutex_lock(&cgroup_mutex);
  if (!cgrp->removed) return cgrp;
  mutex_unlock(&cgroup_mutex);
  kernfs_unbreak_active_protection(kn);
  kernfs_put(kn);
  css_put(cgrp->subsys_css);
  return nullptr;
}

void cgroup_kn_unlock(kernfs_node *kn) RELEASE(cgroup_mutex) {
  cgroup *cgrp = kn_cgroup(kn);
  mutex_unlock(&cgroup_mutex);
  kernfs_unbreak_active_protection(kn);
  kernfs_put(kn);
  css_put(cgrp->subsys_css);
}

// --- controller masks -------------------------------------------------------------------------

void print_ss_mask(seq_file *sf, u16 mask, cgroup *cgrp) {
  if (mask & SS_MASK) seq_puts(sf, cgrp->root->ss->name);
  seq_putc(sf, '\n');
}

// Tasks of the subtree whose effective css changed get ss->attach (cgroup_update_dfl_csses).
void update_dfl_csses(cgroup *cgrp) REQUIRES(cgroup_mutex) {
  for (cgroup *child : cgrp->children) cgroup_migrate_subtree_to_e_css(child);
}

// --- the cgroup core's files ------------------------------------------------------------------

int cgroup_type_show(seq_file *sf, void *) {
  cgroup *cgrp = seq_css(sf)->cgroup;
  // Without cgroup_mutex, as the kernel reads it (rmdir holds the mutex while it drains this
  // file): the fields are read once each, and a concurrent type change may show either type.
  if (cgroup_is_threaded(cgrp))
    seq_puts(sf, "threaded\n");
  else if (!cgroup_is_valid_domain(cgrp))
    seq_puts(sf, "domain invalid\n");
  else if (cgroup_is_thread_root(cgrp))
    seq_puts(sf, "domain threaded\n");
  else
    seq_puts(sf, "domain\n");
  return 0;
}

// cgroup_enable_threaded: @cgrp joins its parent's threaded domain. Not populated, no domain
// controller enabled for its children, and the parent's domain valid and able to be a thread
// root, else -EOPNOTSUPP. Threaded already: nothing to do.
int cgroup_enable_threaded(cgroup *cgrp) {
  lockdep_assert_held(&cgroup_mutex);
  cgroup *parent = cgrp->parent;
  cgroup *dom_cgrp = parent->dom_cgrp;
  if (cgroup_is_threaded(cgrp)) return 0;
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  bool populated = cgroup_is_populated(cgrp);
  bool can_root = cgroup_can_be_thread_root(dom_cgrp);
  spin_unlock_irqrestore(&css_set_lock, flags);
  if (populated || (cgrp->subtree_control & ~cgrp_dfl_threaded_ss_mask)) return -EOPNOTSUPP;
  if (!cgroup_is_valid_domain(dom_cgrp) || !can_root) return -EOPNOTSUPP;
  // cgrp and its threaded descendants join dom_cgrp (domain descendants stay domains: they
  // become "domain invalid").
  std::vector<cgroup *> stack{cgrp};
  while (!stack.empty()) {
    cgroup *dsct = stack.back();
    stack.pop_back();
    if (dsct == cgrp || cgroup_is_threaded(dsct)) WRITE_ONCE(dsct->dom_cgrp, dom_cgrp);
    for (cgroup *c : dsct->children) stack.push_back(c);
  }
  // cgroup_apply_control: a threaded cgroup has no domain controller, so cgrp's memory css
  // (shown if the parent enables memory: only the root can, being mixable) goes. cgrp is not
  // populated: no task changes its effective css.
  if (cgrp->subsys_css->flags & CSS_VISIBLE) {
    css_clear_dir(cgrp, false);
    cgroup_subsys *ss = cgrp->root->ss;
    if (ss->css_reset) ss->css_reset(cgrp->subsys_css);
  }
  WRITE_ONCE(parent->nr_threaded_children, parent->nr_threaded_children + 1);
  return 0;
}

ssize_t cgroup_type_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  // Only switching to threaded mode is supported.
  if (strcmp(strstrip(buf), "threaded")) return -EINVAL;
  cgroup *cgrp = cgroup_kn_lock_live(of->kn);
  if (!cgrp) return -ENOENT;
  int ret = cgroup_enable_threaded(cgrp);
  cgroup_kn_unlock(of->kn);
  return ret ? ret : static_cast<ssize_t>(nbytes);
}

int cgroup_procs_show(seq_file *sf, void *) {
  cgroup *cgrp = seq_css(sf)->cgroup;
  // A threaded cgroup's processes belong to its threaded domain: its cgroup.procs cannot be
  // read (it can be written, moving a whole process into it).
  if (cgroup_on_dfl(cgrp) && cgroup_is_threaded(cgrp)) return -EOPNOTSUPP;
  for (int pid : cgroup_procs_pids(cgrp, true, !cgroup_on_dfl(cgrp))) seq_printf(sf, "%d\n", pid);
  return 0;
}

// cgroup.threads: every task of the cgroup itself, unsorted.
int cgroup_threads_show(seq_file *sf, void *) {
  cgroup *cgrp = seq_css(sf)->cgroup;
  for (int pid : cgroup_procs_pids(cgrp, false, false)) seq_printf(sf, "%d\n", pid);
  return 0;
}

int cgroup_tasks_show(seq_file *sf, void *) {
  cgroup *cgrp = seq_css(sf)->cgroup;
  for (int pid : cgroup_procs_pids(cgrp, false, true)) seq_printf(sf, "%d\n", pid);
  return 0;
}

ssize_t procs_write(kernfs_open_file *of, char *buf, size_t nbytes, bool threadgroup) {
  int pid;
  if (kstrtoint(strstrip(buf), 0, &pid) || pid < 0) return -EINVAL;
  cgroup *dst = cgroup_kn_lock_live(of->kn);
  if (!dst) return -ENODEV;
  int ret = cgroup_attach_pid(dst, pid, threadgroup);
  cgroup_kn_unlock(of->kn);
  return ret ? ret : static_cast<ssize_t>(nbytes);
}

ssize_t cgroup_procs_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  return procs_write(of, buf, nbytes, true);
}

ssize_t cgroup_tasks_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  return procs_write(of, buf, nbytes, false);
}

ssize_t cgroup_threads_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  return procs_write(of, buf, nbytes, false);
}

int cgroup_controllers_show(seq_file *sf, void *) {
  cgroup *cgrp = seq_css(sf)->cgroup;
  print_ss_mask(sf, cgroup_control(cgrp), cgrp);
  return 0;
}

int cgroup_subtree_control_show(seq_file *sf, void *) {
  cgroup *cgrp = seq_css(sf)->cgroup;
  print_ss_mask(sf, READ_ONCE(cgrp->subtree_control), cgrp);
  return 0;
}

ssize_t cgroup_subtree_control_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  u16 enable = 0, disable = 0;
  const char *ss_name = kn_cgroup(of->kn)->root->ss->name;
  // Space-separated "+name" / "-name" tokens; the last one for a controller wins.
  char *p = strstrip(buf);
  while (p) {
    char *tok = strsep(&p, " ");
    if (tok[0] == '\0') continue;
    if (strcmp(tok + 1, ss_name)) return -EINVAL;
    if (*tok == '+') {
      enable |= SS_MASK;
      disable &= ~SS_MASK;
    } else if (*tok == '-') {
      disable |= SS_MASK;
      enable &= ~SS_MASK;
    } else {
      return -EINVAL;
    }
  }
  cgroup *cgrp = cgroup_kn_lock_live(of->kn);
  if (!cgrp) return -ENODEV;
  int ret = cgroup_apply_subtree_control(cgrp, enable, disable);
  cgroup_kn_unlock(of->kn);
  return ret ? ret : static_cast<ssize_t>(nbytes);
}

int cgroup_events_show(seq_file *sf, void *) {
  cgroup *cgrp = seq_css(sf)->cgroup;
  seq_printf(sf, "populated %d\n", cgroup_is_populated(cgrp) ? 1 : 0);
  seq_printf(sf, "frozen %d\n", test_bit(CGRP_FROZEN, &cgrp->flags) ? 1 : 0);
  return 0;
}

// The show functions of cgroup.freeze, cgroup.max.descendants and cgroup.max.depth read the
// setting without cgroup_mutex (the kernel reads them racily too; the writers WRITE_ONCE under
// it), hence no thread-safety analysis in these three readers.
bool cgroup_freeze_read(const cgroup *cgrp) NO_THREAD_SAFETY_ANALYSIS {
  return READ_ONCE(cgrp->freezer.freeze);
}
int cgroup_max_descendants_read(const cgroup *cgrp) NO_THREAD_SAFETY_ANALYSIS {
  return READ_ONCE(cgrp->max_descendants);
}
int cgroup_max_depth_read(const cgroup *cgrp) NO_THREAD_SAFETY_ANALYSIS {
  return READ_ONCE(cgrp->max_depth);
}

int cgroup_freeze_show(seq_file *sf, void *) {
  seq_printf(sf, "%d\n", cgroup_freeze_read(seq_css(sf)->cgroup) ? 1 : 0);
  return 0;
}

ssize_t cgroup_freeze_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  int freeze;
  int ret = kstrtoint(strstrip(buf), 0, &freeze);
  if (ret) return ret;
  if (freeze < 0 || freeze > 1) return -ERANGE;
  cgroup *cgrp = cgroup_kn_lock_live(of->kn);
  if (!cgrp) return -ENOENT;
  cgroup_freeze(cgrp, freeze);
  cgroup_kn_unlock(of->kn);
  return static_cast<ssize_t>(nbytes);
}

int print_limit(seq_file *sf, int v) {
  if (v == INT_MAX)
    seq_puts(sf, "max\n");
  else
    seq_printf(sf, "%d\n", v);
  return 0;
}

int cgroup_max_descendants_show(seq_file *sf, void *) {
  return print_limit(sf, cgroup_max_descendants_read(seq_css(sf)->cgroup));
}

int cgroup_max_depth_show(seq_file *sf, void *) {
  return print_limit(sf, cgroup_max_depth_read(seq_css(sf)->cgroup));
}

ssize_t limit_write(kernfs_open_file *of, char *buf, size_t nbytes, bool depth) {
  int v;
  buf = strstrip(buf);
  if (!strcmp(buf, "max")) {
    v = INT_MAX;
  } else {
    int ret = kstrtoint(buf, 0, &v);
    if (ret) return ret;
  }
  if (v < 0) return -ERANGE;
  cgroup *cgrp = cgroup_kn_lock_live(of->kn);
  if (!cgrp) return -ENOENT;
  if (depth)
    WRITE_ONCE(cgrp->max_depth, v);
  else
    WRITE_ONCE(cgrp->max_descendants, v);
  cgroup_kn_unlock(of->kn);
  return static_cast<ssize_t>(nbytes);
}

ssize_t cgroup_max_descendants_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  return limit_write(of, buf, nbytes, false);
}

ssize_t cgroup_max_depth_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  return limit_write(of, buf, nbytes, true);
}

int cgroup_stat_show(seq_file *sf, void *) {
  cgroup *cgrp = seq_css(sf)->cgroup;
  const char *ss_name = cgrp->root->ss->name;
  seq_printf(sf, "nr_descendants %d\n", READ_ONCE(cgrp->nr_descendants));
  bool has_css = READ_ONCE(cgrp->subsys_css->flags) & CSS_VISIBLE;
  seq_printf(sf, "nr_subsys_%s %d\n", ss_name,
             has_css ? READ_ONCE(cgrp->nr_subsys_descendants) + 1 : 0);
  seq_printf(sf, "nr_dying_descendants %d\n", READ_ONCE(cgrp->nr_dying_descendants));
  seq_printf(sf, "nr_dying_subsys_%s %d\n", ss_name, READ_ONCE(cgrp->nr_dying_subsys));
  return 0;
}

ssize_t cgroup_kill_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  int kill;
  int ret = kstrtoint(strstrip(buf), 0, &kill);
  if (ret) return ret;
  if (kill != 1) return -ERANGE;
  cgroup *cgrp = cgroup_kn_lock_live(of->kn);
  if (!cgrp) return -ENOENT;
  // Killing takes whole processes: like cgroup.procs, not in a threaded cgroup.
  if (cgroup_is_threaded(cgrp))
    ret = -EOPNOTSUPP;
  else
    cgroup_kill(cgrp);
  cgroup_kn_unlock(of->kn);
  return ret ? ret : static_cast<ssize_t>(nbytes);
}

// v1 flags and strings.
u64 cgroup_clone_children_read(cgroup_subsys_state *css, const cftype *) {
  return READ_ONCE(css->cgroup->clone_children);
}
int cgroup_clone_children_write(cgroup_subsys_state *css, const cftype *, u64 val) {
  WRITE_ONCE(css->cgroup->clone_children, val != 0);
  return 0;
}
u64 cgroup_read_notify_on_release(cgroup_subsys_state *css, const cftype *) {
  return READ_ONCE(css->cgroup->notify_on_release);
}
int cgroup_write_notify_on_release(cgroup_subsys_state *css, const cftype *, u64 val) {
  WRITE_ONCE(css->cgroup->notify_on_release, val != 0);
  return 0;
}
int cgroup_sane_behavior_show(seq_file *sf, void *) {
  seq_puts(sf, "0\n");
  return 0;
}
int cgroup_release_agent_show(seq_file *sf, void *) {
  cgroup *cgrp = seq_css(sf)->cgroup;
  // The kernel reads it under release_agent_path_lock; cgroup_mutex is not taken by readers of
  // other files here, and no remover drains the root's files.
  mutex_lock(&cgroup_mutex);
  seq_puts(sf, cgrp->root->release_agent_path.c_str());
  mutex_unlock(&cgroup_mutex);
  seq_putc(sf, '\n');
  return 0;
}
ssize_t cgroup_release_agent_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  if (strlen(buf) >= PATH_MAX_LEN) return -EINVAL;
  cgroup *cgrp = cgroup_kn_lock_live(of->kn);
  if (!cgrp) return -ENODEV;
  cgrp->root->release_agent_path = strstrip(buf);
  cgroup_kn_unlock(of->kn);
  return static_cast<ssize_t>(nbytes);
}

cftype make_cft(const char *name, unsigned int flags) {
  cftype c;
  std::strncpy(c.name, name, MAX_CFTYPE_NAME - 1);
  c.flags = flags;
  return c;
}

struct base_tables {
  cftype dfl[12];
  cftype v1[7];
  base_tables() {
    int i = 0;
    cftype *c;
    c = &dfl[i++];
    *c = make_cft("cgroup.type", CFTYPE_NOT_ON_ROOT);
    c->seq_show = cgroup_type_show;
    c->write = cgroup_type_write;
    c = &dfl[i++];
    *c = make_cft("cgroup.procs", CFTYPE_NS_DELEGATABLE);
    c->file_offset = offsetof(cgroup, procs_file);
    c->seq_show = cgroup_procs_show;
    c->write = cgroup_procs_write;
    c = &dfl[i++];
    *c = make_cft("cgroup.threads", CFTYPE_NS_DELEGATABLE);
    c->seq_show = cgroup_threads_show;
    c->write = cgroup_threads_write;
    c = &dfl[i++];
    *c = make_cft("cgroup.controllers", 0);
    c->seq_show = cgroup_controllers_show;
    c = &dfl[i++];
    *c = make_cft("cgroup.subtree_control", CFTYPE_NS_DELEGATABLE);
    c->seq_show = cgroup_subtree_control_show;
    c->write = cgroup_subtree_control_write;
    c = &dfl[i++];
    *c = make_cft("cgroup.events", CFTYPE_NOT_ON_ROOT);
    c->file_offset = offsetof(cgroup, events_file);
    c->seq_show = cgroup_events_show;
    c = &dfl[i++];
    *c = make_cft("cgroup.max.descendants", 0);
    c->seq_show = cgroup_max_descendants_show;
    c->write = cgroup_max_descendants_write;
    c = &dfl[i++];
    *c = make_cft("cgroup.max.depth", 0);
    c->seq_show = cgroup_max_depth_show;
    c->write = cgroup_max_depth_write;
    c = &dfl[i++];
    *c = make_cft("cgroup.stat", 0);
    c->seq_show = cgroup_stat_show;
    c = &dfl[i++];
    *c = make_cft("cgroup.freeze", CFTYPE_NOT_ON_ROOT);
    c->seq_show = cgroup_freeze_show;
    c->write = cgroup_freeze_write;
    c = &dfl[i++];
    *c = make_cft("cgroup.kill", CFTYPE_NOT_ON_ROOT);
    c->write = cgroup_kill_write;
    dfl[i] = cftype{};

    i = 0;
    c = &v1[i++];
    *c = make_cft("cgroup.procs", 0);
    c->file_offset = offsetof(cgroup, procs_file);
    c->seq_show = cgroup_procs_show;
    c->write = cgroup_procs_write;
    c = &v1[i++];
    *c = make_cft("cgroup.clone_children", 0);
    c->read_u64 = cgroup_clone_children_read;
    c->write_u64 = cgroup_clone_children_write;
    c = &v1[i++];
    *c = make_cft("cgroup.sane_behavior", CFTYPE_ONLY_ON_ROOT);
    c->seq_show = cgroup_sane_behavior_show;
    c = &v1[i++];
    *c = make_cft("tasks", 0);
    c->seq_show = cgroup_tasks_show;
    c->write = cgroup_tasks_write;
    c = &v1[i++];
    *c = make_cft("notify_on_release", 0);
    c->read_u64 = cgroup_read_notify_on_release;
    c->write_u64 = cgroup_write_notify_on_release;
    c = &v1[i++];
    *c = make_cft("release_agent", CFTYPE_ONLY_ON_ROOT);
    c->seq_show = cgroup_release_agent_show;
    c->write = cgroup_release_agent_write;
    c->max_write_len = PATH_MAX_LEN - 1;
    v1[i] = cftype{};
  }
};

const base_tables &tables() {
  static const base_tables t;
  return t;
}

const cftype *core_files(cgroup *cgrp) {
  return cgroup_on_dfl(cgrp) ? tables().dfl : tables().v1;
}

}  // namespace

u16 cgroup_control(cgroup *cgrp) {
  // The root offers every controller bound to the hierarchy; others what the parent enables,
  // and a threaded cgroup only the threaded controllers of that.
  if (!cgrp->parent) return SS_MASK;
  u16 ss_mask = READ_ONCE(cgrp->parent->subtree_control);
  if (cgroup_is_threaded(cgrp)) ss_mask &= cgrp_dfl_threaded_ss_mask;
  return ss_mask;
}

bool cgroup_css_visible(cgroup *cgrp) {
  return !cgroup_on_dfl(cgrp) || !cgrp->parent || (cgroup_control(cgrp) & SS_MASK);
}

cgroup_subsys_state *cgroup_e_css(cgroup *cgrp) {
  if (cgroup_on_dfl(cgrp)) {
    // Up to the nearest cgroup whose css is enabled (a threaded cgroup's never is: its tasks
    // use their threaded domain's, or the domain's effective one).
    while (cgrp->parent && !(cgroup_control(cgrp) & SS_MASK)) cgrp = cgrp->parent;
  }
  return cgrp->subsys_css;
}

namespace {
// cgroup_vet_subtree_control_enable: whether @cgrp may enable @enable for its children.
int cgroup_vet_subtree_control_enable(cgroup *cgrp, u16 enable) REQUIRES(cgroup_mutex) {
  u16 domain_enable = enable & ~cgrp_dfl_threaded_ss_mask;
  if (!enable) return 0;
  // Can cgrp host any resources?
  if (!cgroup_is_valid_domain(cgrp->dom_cgrp)) return -EOPNOTSUPP;
  if (cgroup_is_mixable(cgrp)) return 0;  // the root
  unsigned long flags;
  spin_lock_irqsave(&css_set_lock, flags);
  bool thread_root = cgroup_is_thread_root(cgrp);
  bool can_root = cgroup_can_be_thread_root(cgrp);
  bool has_tasks = cgroup_has_tasks(cgrp);
  spin_unlock_irqrestore(&css_set_lock, flags);
  if (domain_enable) {
    // No domain controller inside a threaded subtree.
    if (thread_root || cgroup_is_threaded(cgrp)) return -EOPNOTSUPP;
  } else if (can_root || cgroup_is_threaded(cgrp)) {
    // Threaded controllers handle internal competition.
    return 0;
  }
  // The no-internal-process rule.
  if (has_tasks) return -EBUSY;
  return 0;
}
}  // namespace

int cgroup_apply_subtree_control(cgroup *cgrp, u16 enable, u16 disable) {
  lockdep_assert_held(&cgroup_mutex);
  if (!cgroup_on_dfl(cgrp)) return -EINVAL;  // v1 has no cgroup.subtree_control
  if (enable & SS_MASK) {
    if (cgrp->subtree_control & SS_MASK)
      enable &= ~SS_MASK;
    else if (!(cgroup_control(cgrp) & SS_MASK))
      return -ENOENT;
  } else if (disable & SS_MASK) {
    if (!(cgrp->subtree_control & SS_MASK)) {
      disable &= ~SS_MASK;
    } else {
      for (cgroup *child : cgrp->children)
        if (child->subtree_control & SS_MASK) return -EBUSY;  // a child has it enabled
    }
  }
  if (!enable && !disable) return 0;
  int vet = cgroup_vet_subtree_control_enable(cgrp, enable);
  if (vet) return vet;

  if (enable) {
    cgrp->subtree_control |= enable;
    for (cgroup *child : cgrp->children) {
      if (!cgroup_css_visible(child)) continue;  // threaded: no domain controller
      int ret = css_populate_dir(child, false);
      if (ret) {
        for (cgroup *c : cgrp->children) css_clear_dir(c, false);
        cgrp->subtree_control &= ~enable;
        return ret;
      }
      kernfs_activate(child->kn);
    }
  } else {
    cgrp->subtree_control &= ~disable;
    cgroup_subsys *ss = cgrp->root->ss;
    for (cgroup *child : cgrp->children) {
      if (!(child->subsys_css->flags & CSS_VISIBLE)) continue;  // threaded: never shown
      css_clear_dir(child, false);
      if (ss->css_reset) ss->css_reset(child->subsys_css);
    }
  }
  update_dfl_csses(cgrp);
  return 0;
}

// The kernel counts a css's online descendants in css->nr_descendants as online_css() and
// offline_css() run, walking up the parents; here a controller css counts once its files are
// shown (CSS_VISIBLE), which is when it is enabled for its cgroup. O(depth), never a walk of
// the hierarchy. Called under cgroup_mutex, the only writer; readers (cgroup.stat) READ_ONCE.
void cgroup_adjust_subsys_counts(cgroup *cgrp, int delta) {
  for (cgroup *p = cgrp->parent; p; p = p->parent)
    WRITE_ONCE(p->nr_subsys_descendants, p->nr_subsys_descendants + delta);
}

int cgroup_fs_setup_root(cgroup_root *root, unsigned int kf_flags) {
  root->kf_root = kernfs_create_root(&cgroup_kf_syscall_ops,
                                     KERNFS_ROOT_CREATE_DEACTIVATED |
                                         KERNFS_ROOT_SUPPORT_INOTIFY_EVENTS_ON_REMOVAL | kf_flags,
                                     &root->cgrp);
  cgroup *cgrp = &root->cgrp;
  cgrp->kn = root->kf_root->kn;
  int ret = css_populate_dir(cgrp, true);
  if (!ret) ret = css_populate_dir(cgrp, false);
  if (ret) {
    kernfs_destroy_root(root->kf_root);
    root->kf_root = nullptr;
    cgrp->kn = nullptr;
    return ret;
  }
  kernfs_activate(cgrp->kn);
  root->sb = kernfs_mount(root->kf_root);
  return 0;
}

void cgroup_fs_destroy_root(cgroup_root *root) {
  if (!root->kf_root) return;
  cgroup *cgrp = &root->cgrp;
  kernfs_kill_sb(root->sb);
  root->sb = nullptr;
  css_clear_dir(cgrp, false);
  css_clear_dir(cgrp, true);
  kernfs_destroy_root(root->kf_root);
  root->kf_root = nullptr;
  cgrp->kn = nullptr;
}

int cgroup_fs_create_dir(cgroup *cgrp) {
  kernfs_node *kn = kernfs_create_dir(cgrp->parent->kn, cgrp->name.c_str(), 0755, cgrp);
  if (IS_ERR(kn)) return static_cast<int>(PTR_ERR(kn));
  cgrp->kn = kn;
  int ret = css_populate_dir(cgrp, true);
  if (!ret && cgroup_css_visible(cgrp)) ret = css_populate_dir(cgrp, false);
  if (ret) {
    kernfs_remove(kn);
    cgrp->kn = nullptr;
    return ret;
  }
  return 0;
}

void cgroup_fs_activate_dir(cgroup *cgrp) { kernfs_activate(cgrp->kn); }

void cgroup_fs_remove_dir(cgroup *cgrp) {
  if (!cgrp->kn) return;
  css_clear_dir(cgrp, false);
  css_clear_dir(cgrp, true);
  kernfs_remove(cgrp->kn);
  cgrp->kn = nullptr;
}

}  // namespace umemcg
