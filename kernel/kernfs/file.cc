// SPDX-License-Identifier: GPL-2.0-only
// kernel/kernfs/file.cc: open kernfs files (open, seq_file read, write, release, drain at
// removal) and change notification (kernfs_notify and kernfs_notify_workfn).
//
// Mirrors: fs/kernfs/file.c (Linux 6.19): kernfs_fop_open, kernfs_get_open_node,
//   kernfs_unlink_open_file, kernfs_fop_release, kernfs_release_file, kernfs_drain_open_files,
//   kernfs_seq_start/show/stop (through seq_read_iter), kernfs_fop_write_iter,
//   kernfs_generic_poll, kernfs_notify, kernfs_notify_workfn
// Emulation: a read runs the show handler and returns the text from the requested offset (the
//   kernel's seq_read_iter keeps the buffer of a previous sequential read of the same file;
//   single-record cgroup files print the same text either way).
// Emulation: opening checks the node's ops but not its mode bits: the emulated user is root,
//   whose CAP_DAC_OVERRIDE passes the VFS permission check on regular files.
#include <algorithm>
#include <cstring>

#include "kernel/kernfs/kernfs-internal.h"
#include "kernel/notify/inotify.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/gfp.h"
#include "shim/slab.h"
#include "shim/workqueue.h"

namespace umemcg {

DEFINE_SPINLOCK(kernfs_notify_lock);

namespace {

// The end of the notify list: notify_next == nullptr means "not queued".
kernfs_node kernfs_notify_eol_node;
kernfs_node *const KERNFS_NOTIFY_EOL = &kernfs_notify_eol_node;
kernfs_node *kernfs_notify_list GUARDED_BY(kernfs_notify_lock) = KERNFS_NOTIFY_EOL;
void kernfs_notify_workfn(work_struct *work);
work_struct kernfs_notify_work{0, kernfs_notify_workfn};

void kernfs_free_open_node_rcu(rcu_head *head) {
  delete container_of(head, kernfs_open_node, rcu);
}

bool of_readable(const kernfs_file *file) { return !(file->of.file_flags & KF_O_WRONLY); }
bool of_writable(const kernfs_file *file) {
  return file->of.file_flags & (KF_O_WRONLY | KF_O_RDWR);
}

// Registers an open file on its node (creating kn->attr.open on first use).
void kernfs_get_open_node(kernfs_node *kn, kernfs_file *file) {
  kernfs_root *root = kernfs_root_of(kn);
  mutex_guard g(&root->open_file_mutex);
  kernfs_open_node *on = kn->attr.open;
  if (!on) {
    on = new kernfs_open_node;
    atomic_set(&on->event, 1);
    init_waitqueue_head(&on->poll);
    rcu_assign_pointer(kn->attr.open, on);
  }
  on->files.push_back(file);
  file->event = atomic_read(&on->event);
}

// Unregisters an open file; frees the open node with the last one. Runs ops->release first when
// the node has one and removal has not run it yet.
void kernfs_unlink_open_file(kernfs_node *kn, kernfs_file *file) {
  kernfs_root *root = kernfs_root_of(kn);
  mutex_guard g(&root->open_file_mutex);
  if ((kn->flags & KERNFS_HAS_RELEASE) && !file->released) {
    kn->ops->release(&file->of);
    file->released = true;
  }
  kernfs_open_node *on = kn->attr.open;
  if (WARN_ON(!on)) return;
  auto it = std::find(on->files.begin(), on->files.end(), file);
  if (it != on->files.end()) on->files.erase(it);
  if (on->files.empty()) {
    rcu_assign_pointer(kn->attr.open, static_cast<kernfs_open_node *>(nullptr));
    call_rcu(&on->rcu, kernfs_free_open_node_rcu);
  }
}

// Pops one node off the notify list (LIFO: kernfs_notify pushes on the head), nullptr if empty.
kernfs_node *kernfs_notify_pop() EXCLUDES(kernfs_notify_lock) {
  unsigned long flags;
  spin_lock_irqsave(&kernfs_notify_lock, flags);
  kernfs_node *kn = kernfs_notify_list;
  if (kn == KERNFS_NOTIFY_EOL) {
    kn = nullptr;
  } else {
    kernfs_notify_list = kn->attr.notify_next;
    kn->attr.notify_next = nullptr;
  }
  spin_unlock_irqrestore(&kernfs_notify_lock, flags);
  return kn;
}

void kernfs_notify_workfn(work_struct *) NO_THREAD_SAFETY_ANALYSIS {
  for (;;) {
    kernfs_node *kn = kernfs_notify_pop();
    if (!kn) return;

    kernfs_root *root = kernfs_root_of(kn);
    bool take_rwsem = !(root->flags & KERNFS_ROOT_NOTIFY_NO_RWSEM);
    down_read(&root->kernfs_supers_rwsem);
    if (take_rwsem) down_read(&root->kernfs_rwsem);
    for (kernfs_super_info *sb : root->supers) {
      // The name is copied and the parent pinned under kernfs_rename_lock (what keeps them
      // stable when kernfs_rwsem is not held).
      spin_lock(&kernfs_rename_lock);
      std::string name = kn->name;
      spin_unlock(&kernfs_rename_lock);
      kernfs_node *parent = kernfs_get_parent(kn);
      // FS_MODIFY to watches on the file and, with the child's name, on its directory. Each
      // watcher's event is allocated (and charged to the watcher's memcg) here, with the locks
      // above held.
      fsnotify_kernfs(sb, kn, parent, name.c_str(), FS_MODIFY);
      kernfs_put(parent);
    }
    if (take_rwsem) up_read(&root->kernfs_rwsem);
    up_read(&root->kernfs_supers_rwsem);
    kernfs_put(kn);
  }
}

}  // namespace

void kernfs_drain_open_files(kernfs_node *kn) {
  if (!(kn->flags & KERNFS_HAS_RELEASE)) return;
  kernfs_root *root = kernfs_root_of(kn);
  mutex_guard g(&root->open_file_mutex);
  kernfs_open_node *on = kn->attr.open;
  if (!on) return;
  for (kernfs_file *file : on->files) {
    if (!file->released) {
      kn->ops->release(&file->of);
      file->released = true;
    }
  }
}

kernfs_file *kernfs_fop_open(kernfs_node *kn, unsigned int flags) {
  if (kernfs_type(kn) == KERNFS_DIR) return ERR_PTR<kernfs_file>(-EISDIR);
  if (!kernfs_get_active(kn)) return ERR_PTR<kernfs_file>(-ENODEV);
  const kernfs_ops *ops = kn->ops;
  auto *file = new kernfs_file;
  file->of.kn = kn;
  file->of.seq = &file->seq;
  file->of.file_flags = flags;
  file->seq.of = &file->of;
  int error = -EACCES;
  if (of_writable(file) && !ops->write) goto err;
  if (of_readable(file) && !ops->seq_show) goto err;
  kernfs_get(kn);
  kernfs_get_open_node(kn, file);
  if (ops->open) {
    error = ops->open(&file->of);
    if (error) {
      file->released = true;  // ops->release is not called for a failed open
      kernfs_unlink_open_file(kn, file);
      kernfs_put(kn);
      goto err;
    }
  }
  kernfs_put_active(kn);
  return file;
err:
  kernfs_put_active(kn);
  delete file;
  return ERR_PTR<kernfs_file>(error);
}

void kernfs_fop_release(kernfs_file *file) {
  if (!file) return;
  kernfs_node *kn = file->of.kn;
  kernfs_unlink_open_file(kn, file);
  kernfs_put(kn);
  delete file;
}

ssize_t kernfs_fop_read(kernfs_file *file, std::string *out, loff_t pos, size_t count) {
  if (!of_readable(file)) return -EBADF;
  if (pos < 0) return -EINVAL;
  kernfs_node *kn = file->of.kn;
  ssize_t ret;
  mutex_lock(&file->mutex);
  if (!kernfs_get_active(kn)) {
    mutex_unlock(&file->mutex);
    return -ENODEV;
  }
  // Reading resynchronises the poll event (kernfs_seq_show).
  rcu_read_lock();
  kernfs_open_node *on = rcu_dereference(kn->attr.open);
  if (on) file->event = atomic_read(&on->event);
  rcu_read_unlock();
  file->seq.buf.clear();
  int err = kn->ops->seq_show(&file->seq, nullptr);
  if (err < 0) {
    ret = err;
  } else {
    const std::string &text = file->seq.buf;
    size_t from = std::min(static_cast<size_t>(pos), text.size());
    size_t n = std::min(count, text.size() - from);
    out->append(text, from, n);
    ret = static_cast<ssize_t>(n);
    file->f_pos = pos + static_cast<loff_t>(n);
  }
  kernfs_put_active(kn);
  mutex_unlock(&file->mutex);
  return ret;
}

ssize_t kernfs_fop_write(kernfs_file *file, const char *buf, size_t len, loff_t pos) {
  if (!of_writable(file)) return -EBADF;
  kernfs_node *kn = file->of.kn;
  const kernfs_ops *ops = kn->ops;
  if (ops->atomic_write_len) {
    if (len > ops->atomic_write_len) return -E2BIG;
  } else {
    len = std::min<size_t>(len, PAGE_SIZE);
  }
  // The handler gets a NUL-terminated copy (GFP_KERNEL: not accounted).
  char *copy = static_cast<char *>(kmalloc(len + 1, GFP_KERNEL));
  if (!copy) return -ENOMEM;
  if (len) std::memcpy(copy, buf, len);
  copy[len] = '\0';
  ssize_t ret;
  mutex_lock(&file->mutex);
  if (!kernfs_get_active(kn)) {
    ret = -ENODEV;
  } else {
    ret = ops->write ? ops->write(&file->of, copy, len, pos) : -EINVAL;
    kernfs_put_active(kn);
  }
  mutex_unlock(&file->mutex);
  if (ret > 0) file->f_pos = pos + ret;
  kfree(copy);
  return ret;
}

bool kernfs_fop_poll_event(kernfs_file *file) {
  kernfs_node *kn = file->of.kn;
  bool changed = false;
  rcu_read_lock();
  kernfs_open_node *on = rcu_dereference(kn->attr.open);
  if (on) changed = file->event != atomic_read(&on->event);
  rcu_read_unlock();
  return changed || !kernfs_active(kn);
}

void kernfs_notify(kernfs_node *kn) {
  if (WARN_ON(kernfs_type(kn) != KERNFS_FILE)) return;
  // Pollers first, at once.
  rcu_read_lock();
  kernfs_open_node *on = rcu_dereference(kn->attr.open);
  if (on) {
    atomic_inc(&on->event);
    wake_up_interruptible(&on->poll);
  }
  rcu_read_unlock();
  // Then the fsnotify side, from the work item; a node already queued is not queued twice.
  unsigned long flags;
  spin_lock_irqsave(&kernfs_notify_lock, flags);
  if (!kn->attr.notify_next) {
    kernfs_get(kn);
    kn->attr.notify_next = kernfs_notify_list;
    kernfs_notify_list = kn;
    schedule_work(&kernfs_notify_work);
  }
  spin_unlock_irqrestore(&kernfs_notify_lock, flags);
}

namespace emu {
void kernfs_flush_notify() { flush_work(&kernfs_notify_work); }
void kernfs_boot_notify() {
  // The notify work and list belong to one machine: a new machine (boot generation) starts
  // them afresh (anything a previous machine left queued died with it).
  static std::uint64_t generation = 0;
  if (generation == boot_generation()) return;
  generation = boot_generation();
  unsigned long flags;
  spin_lock_irqsave(&kernfs_notify_lock, flags);
  kernfs_notify_list = KERNFS_NOTIFY_EOL;
  spin_unlock_irqrestore(&kernfs_notify_lock, flags);
  INIT_WORK(&kernfs_notify_work, kernfs_notify_workfn);
}
}  // namespace emu

}  // namespace umemcg
