// SPDX-License-Identifier: GPL-2.0-only
// kernel/cgroupfs.h: the cgroup hierarchy as user space sees it at /sys/fs/cgroup: open, read,
// write, close, mkdir, rmdir, readdir and inotify watches by path, with the errnos the system
// calls return.
//
// Mirrors: the VFS paths into kernfs (Linux 6.19): path lookup (kernfs_iop_lookup per
//   component), open(2)/read(2)/pwrite(2)/close(2) on kernfs files (kernfs_fop_*), the write
//   path's fsnotify_modify(), mkdir(2)/rmdir(2) (kernfs_iop_mkdir/rmdir -> cgroup_mkdir/rmdir),
//   getdents(2) (kernfs_fop_readdir), inotify_add_watch(2)
// Paths: absolute ones must lie under /sys/fs/cgroup; relative ones are taken from it. "." and
//   ".." are resolved (".." stops at the mount point).
// Emulation: the caller is root (no permission checks beyond the kernel's file operations).
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include "shim/types.h"

namespace umemcg {

struct kernfs_file;
struct fsnotify_group;

inline constexpr const char *CGROUP_MOUNT_POINT = "/sys/fs/cgroup";

/**
 * cgroupfs_open - open a cgroup file (flags: 0 = O_RDONLY, or KF_O_WRONLY / KF_O_RDWR, with
 * KF_O_APPEND / KF_O_NONBLOCK)
 * Returns 0 with *out, or -ENOENT (no such path, or no hierarchy mounted), -ENOTDIR (a file
 * used as a directory), -EISDIR (a directory opened for writing, or any directory: there is no
 * reading a directory as a file here), -EACCES, -ENODEV (removed meanwhile), the open
 * handler's error.
 */
int cgroupfs_open(const std::string &path, unsigned int flags, kernfs_file **out);
// pread(2): the text from pos. Returns the bytes appended to *out or -errno (-EINVAL for a
// file that cannot be read, e.g. cgroup.kill).
ssize_t cgroupfs_read(kernfs_file *file, std::string *out, loff_t pos, size_t count);
// write(2) at the file position: one call of the file's handler. On success watchers of the
// file and of its directory get IN_MODIFY. Returns the bytes written or -errno.
ssize_t cgroupfs_write(kernfs_file *file, const char *buf, size_t len);
void cgroupfs_close(kernfs_file *file);

// The whole file from offset 0 (open, read, close): 0 or -errno.
int cgroupfs_read_file(const std::string &path, std::string *out);
// One write of data to a file opened O_WRONLY|O_APPEND (as `echo > FILE`): bytes or -errno.
ssize_t cgroupfs_write_file(const std::string &path, const std::string &data);

// mkdir(2): 0, -EEXIST, -ENOENT, -ENOTDIR, -EAGAIN (cgroup.max.*), -ENODEV.
int cgroupfs_mkdir(const std::string &path);
// rmdir(2): 0, -ENOENT, -ENOTDIR, -EBUSY (tasks, children, the mount point), -EINVAL (".").
int cgroupfs_rmdir(const std::string &path);
// The names in a directory (no "." and ".."), in the directory's order: 0 or -errno.
int cgroupfs_readdir(const std::string &path, std::vector<std::string> *names);
// Whether the path exists (0, *is_dir set) or -errno.
int cgroupfs_stat(const std::string &path, bool *is_dir);

/**
 * cgroupfs_lookup_cgroup - the cgroup whose directory is @path, as an open(O_DIRECTORY) of it
 * and cgroup_get_from_fd() find it
 * Returns 0 with *out, or -ENOENT (no such path), -ENOTDIR (a file). No reference is taken: the
 * cgroup stays valid until it is removed, so callers resolve and use it within one system call.
 */
int cgroupfs_lookup_cgroup(const std::string &path, struct cgroup **out);
// An inotify instance (inotify_init1), charged to and listening for current's memcg.
fsnotify_group *cgroupfs_inotify_init();
// inotify_add_watch(2) on a path: the watch descriptor or -errno.
int cgroupfs_inotify_add_watch(fsnotify_group *group, const std::string &path, u32 mask);

}  // namespace umemcg
