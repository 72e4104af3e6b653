// SPDX-License-Identifier: GPL-2.0-only
// kernel/fdtable.h: user space's file descriptors, for the kernel code that is handed a
// descriptor number in a write (cgroup.event_control's "<event_fd> <control_fd> <args>").
//
// Mirrors: fs/file.c (Linux 6.19): alloc_fd's lowest free descriptor, fd_install, fdget,
//   close_fd
// Emulation: one descriptor table for all of user space (the machine's user is one process,
//   the shell or a test); descriptors start at 3 (0-2 are the standard streams). A descriptor
//   names an open cgroup file (kernel/cgroupfs.h), an eventfd (kernel/eventfd.h), or another
//   file the caller keeps itself (a placeholder holding the number).
// Emulation: fdget() takes no reference on the file: the descriptor's owner closes it only
//   from the same user thread, never while its own write is in progress.
#pragma once

namespace umemcg {

struct kernfs_file;
struct eventfd_ctx;

struct fd_entry {
  kernfs_file *kf = nullptr;   // an open cgroup file
  eventfd_ctx *efd = nullptr;  // an eventfd
};

// The lowest free descriptor >= 3, now naming @e (an empty entry: a placeholder).
int fd_install(const fd_entry &e);
// The entry of @fd: 0 with *e, or -EBADF.
int fdget(int fd, fd_entry *e);
// Frees @fd and returns what it named in *e (the caller releases it): 0 or -EBADF.
int close_fd(int fd, fd_entry *e);

}  // namespace umemcg
