// SPDX-License-Identifier: GPL-2.0-only
// kernel/fdtable.cc: the user's descriptor table (see fdtable.h).
//
// Mirrors: fs/file.c (Linux 6.19): alloc_fd, fd_install, fdget, close_fd
#include "kernel/fdtable.h"

#include <map>

#include "shim/errno.h"
#include "shim/spinlock.h"

namespace umemcg {

namespace {
// file_lock of the one files_struct; the map is ordered, so the lowest free number is found by
// walking the used ones from 3.
DEFINE_SPINLOCK(file_lock);
std::map<int, fd_entry> g_fds GUARDED_BY(file_lock);
}  // namespace

int fd_install(const fd_entry &e) {
  spin_lock(&file_lock);
  int fd = 3;
  for (auto it = g_fds.lower_bound(3); it != g_fds.end() && it->first == fd; ++it) fd++;
  g_fds.emplace(fd, e);
  spin_unlock(&file_lock);
  return fd;
}

int fdget(int fd, fd_entry *e) {
  spin_lock(&file_lock);
  auto it = g_fds.find(fd);
  int ret = -EBADF;
  if (it != g_fds.end()) {
    *e = it->second;
    ret = 0;
  }
  spin_unlock(&file_lock);
  return ret;
}

int close_fd(int fd, fd_entry *e) {
  spin_lock(&file_lock);
  auto it = g_fds.find(fd);
  int ret = -EBADF;
  if (it != g_fds.end()) {
    *e = it->second;
    g_fds.erase(it);
    ret = 0;
  }
  spin_unlock(&file_lock);
  return ret;
}

}  // namespace umemcg
