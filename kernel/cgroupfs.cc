// SPDX-License-Identifier: GPL-2.0-only
// kernel/cgroupfs.cc: path-based access to the mounted cgroup hierarchy (see cgroupfs.h).
//
// Mirrors: fs/namei.c (path walk, do_mkdirat, do_rmdir), fs/read_write.c (vfs_write's
//   fsnotify_modify), fs/kernfs/dir.c (kernfs_iop_lookup, kernfs_iop_mkdir, kernfs_iop_rmdir),
//   fs/notify/inotify/inotify_user.c (inotify_add_watch) (Linux 6.19)
#include "kernel/cgroupfs.h"

#include "kernel/cgroup.h"
#include "kernel/kernfs/kernfs-internal.h"
#include "kernel/notify/inotify.h"
#include "shim/errno.h"

namespace umemcg {

namespace {

// Splits a path into components below the mount point; false if it is not under it.
bool split_path(const std::string &path, std::vector<std::string> *comps) {
  std::string rel = path;
  std::string mp = CGROUP_MOUNT_POINT;
  if (!rel.empty() && rel[0] == '/') {
    if (rel.compare(0, mp.size(), mp) != 0) return false;
    if (rel.size() > mp.size() && rel[mp.size()] != '/') return false;
    rel = rel.substr(mp.size());
  }
  size_t i = 0;
  while (i <= rel.size()) {
    size_t j = rel.find('/', i);
    if (j == std::string::npos) j = rel.size();
    std::string c = rel.substr(i, j - i);
    i = j + 1;
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      if (!comps->empty()) comps->pop_back();
      continue;
    }
    comps->push_back(c);
  }
  return true;
}

bool ends_with_slash(const std::string &path) { return !path.empty() && path.back() == '/'; }

kernfs_root *mounted_root(kernfs_super_info **sb) {
  cgroup_root *root = cgroup_current_root();
  if (!root || !root->kf_root) return nullptr;
  if (sb) *sb = root->sb;
  return root->kf_root;
}

// Walks comps[0..n) from the root, one lookup per component: the node with a reference or
// -ENOENT / -ENOTDIR.
kernfs_node *walk(kernfs_root *root, const std::vector<std::string> &comps, size_t n, int *err) {
  kernfs_node *kn = root->kn;
  kernfs_get(kn);
  for (size_t i = 0; i < n; i++) {
    if (kernfs_type(kn) != KERNFS_DIR) {
      kernfs_put(kn);
      *err = -ENOTDIR;
      return nullptr;
    }
    kernfs_node *next = kernfs_find_and_get(kn, comps[i].c_str());
    kernfs_put(kn);
    if (!next) {
      *err = -ENOENT;
      return nullptr;
    }
    kn = next;
  }
  return kn;
}

kernfs_node *lookup(const std::string &path, int *err) {
  kernfs_root *root = mounted_root(nullptr);
  std::vector<std::string> comps;
  if (!root || !split_path(path, &comps)) {
    *err = -ENOENT;
    return nullptr;
  }
  kernfs_node *kn = walk(root, comps, comps.size(), err);
  if (kn && ends_with_slash(path) && kernfs_type(kn) != KERNFS_DIR) {
    kernfs_put(kn);
    *err = -ENOTDIR;
    return nullptr;
  }
  return kn;
}

}  // namespace

int cgroupfs_open(const std::string &path, unsigned int flags, kernfs_file **out) {
  int err = 0;
  kernfs_node *kn = lookup(path, &err);
  if (!kn) return err;
  if (kernfs_type(kn) == KERNFS_DIR) {
    kernfs_put(kn);
    return -EISDIR;
  }
  kernfs_file *file = kernfs_fop_open(kn, flags);
  kernfs_put(kn);
  if (IS_ERR(file)) return static_cast<int>(PTR_ERR(file));
  *out = file;
  return 0;
}

ssize_t cgroupfs_read(kernfs_file *file, std::string *out, loff_t pos, size_t count) {
  return kernfs_fop_read(file, out, pos, count);
}

ssize_t cgroupfs_write(kernfs_file *file, const char *buf, size_t len) {
  ssize_t ret = kernfs_fop_write(file, buf, len, file->f_pos);
  if (ret > 0) {
    // vfs_write: fsnotify_modify(), in the writer's context.
    kernfs_super_info *sb = nullptr;
    kernfs_node *kn = file->of.kn;
    if (mounted_root(&sb) == kernfs_root_of(kn) && sb) {
      kernfs_node *parent = kernfs_get_parent(kn);
      std::string name = kn->name;
      fsnotify_kernfs(sb, kn, parent, name.c_str(), FS_MODIFY);
      kernfs_put(parent);
    }
  }
  return ret;
}

void cgroupfs_close(kernfs_file *file) { kernfs_fop_release(file); }

int cgroupfs_read_file(const std::string &path, std::string *out) {
  kernfs_file *file;
  int err = cgroupfs_open(path, 0, &file);
  if (err) return err;
  // Read until end of file, as cat does. A short read is the end: each read here runs the show
  // handler again (kernfs.h), so reading on would risk text from two different moments.
  constexpr size_t chunk = 65536;
  ssize_t ret;
  loff_t pos = 0;
  do {
    ret = cgroupfs_read(file, out, pos, chunk);
    if (ret > 0) pos += ret;
  } while (ret == static_cast<ssize_t>(chunk));
  cgroupfs_close(file);
  return ret < 0 ? static_cast<int>(ret) : 0;
}

ssize_t cgroupfs_write_file(const std::string &path, const std::string &data) {
  kernfs_file *file;
  int err = cgroupfs_open(path, KF_O_WRONLY | KF_O_APPEND, &file);
  if (err) return err;
  ssize_t ret = cgroupfs_write(file, data.data(), data.size());
  cgroupfs_close(file);
  return ret;
}

int cgroupfs_mkdir(const std::string &path) {
  kernfs_root *root = mounted_root(nullptr);
  std::vector<std::string> comps;
  if (!root || !split_path(path, &comps)) return -ENOENT;
  if (comps.empty()) return -EEXIST;  // the mount point
  int err = 0;
  kernfs_node *parent = walk(root, comps, comps.size() - 1, &err);
  if (!parent) return err;
  if (kernfs_type(parent) != KERNFS_DIR) {
    kernfs_put(parent);
    return -ENOTDIR;
  }
  kernfs_node *existing = kernfs_find_and_get(parent, comps.back().c_str());
  if (existing) {
    kernfs_put(existing);
    kernfs_put(parent);
    return -EEXIST;
  }
  // kernfs_iop_mkdir.
  int ret;
  if (!root->syscall_ops || !root->syscall_ops->mkdir) {
    ret = -EPERM;
  } else if (!kernfs_get_active(parent)) {
    ret = -ENODEV;
  } else {
    ret = root->syscall_ops->mkdir(parent, comps.back().c_str(), 0755);
    kernfs_put_active(parent);
  }
  kernfs_put(parent);
  return ret;
}

int cgroupfs_rmdir(const std::string &path) {
  kernfs_root *root = mounted_root(nullptr);
  std::vector<std::string> comps;
  if (!root || !split_path(path, &comps)) return -ENOENT;
  // rmdir("x/.") is EINVAL, whatever x is.
  if (path == "." || (path.size() >= 2 && path.compare(path.size() - 2, 2, "/.") == 0))
    return -EINVAL;
  int err = 0;
  kernfs_node *kn = walk(root, comps, comps.size(), &err);
  if (!kn) return err;
  int ret;
  if (kernfs_type(kn) != KERNFS_DIR) {
    ret = -ENOTDIR;
  } else if (kn == root->kn) {
    ret = -EBUSY;  // the mount point
  } else if (!root->syscall_ops || !root->syscall_ops->rmdir) {
    ret = -EPERM;
  } else if (!kernfs_get_active(kn)) {
    ret = -ENODEV;
  } else {
    ret = root->syscall_ops->rmdir(kn);
    kernfs_put_active(kn);
  }
  kernfs_put(kn);
  return ret;
}

int cgroupfs_readdir(const std::string &path, std::vector<std::string> *names) {
  int err = 0;
  kernfs_node *kn = lookup(path, &err);
  if (!kn) return err;
  int ret = kernfs_readdir(kn, names);
  kernfs_put(kn);
  return ret;
}

int cgroupfs_stat(const std::string &path, bool *is_dir) {
  int err = 0;
  kernfs_node *kn = lookup(path, &err);
  if (!kn) return err;
  *is_dir = kernfs_type(kn) == KERNFS_DIR;
  kernfs_put(kn);
  return 0;
}

fsnotify_group *cgroupfs_inotify_init() { return inotify_init(); }

int cgroupfs_lookup_cgroup(const std::string &path, cgroup **out) {
  int err = 0;
  kernfs_node *kn = lookup(path, &err);
  if (!kn) return err;
  const bool dir = kernfs_type(kn) == KERNFS_DIR;
  // A cgroup directory's node points at its cgroup (cgroup_fs.cc); kn's reference keeps it.
  if (dir) *out = static_cast<cgroup *>(kn->priv);
  kernfs_put(kn);
  return dir ? 0 : -ENOTDIR;
}

int cgroupfs_inotify_add_watch(fsnotify_group *group, const std::string &path, u32 mask) {
  kernfs_super_info *sb = nullptr;
  if (!mounted_root(&sb)) return -ENOENT;
  int err = 0;
  kernfs_node *kn = lookup(path, &err);
  if (!kn) return err;
  int wd = inotify_add_watch(group, sb, kn, mask);
  kernfs_put(kn);
  return wd;
}

}  // namespace umemcg
