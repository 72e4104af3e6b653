// SPDX-License-Identifier: GPL-2.0-only
// kernel/cftype.h: how a controller declares its control files: struct cftype, the open file a
//   handler sees (struct kernfs_open_file) and the seq_file a read handler prints into.
//
// A controller lists its files as an array of cftype rows ending in an empty row (name[0] == 0),
// as memory_files[] and the cgroup core's tables do; cgroup_subsys::dfl_cftypes (v2) and
// ::legacy_cftypes (v1) point at them. The cgroup core creates one kernfs file per row in every
// cgroup where the row applies (CFTYPE_NOT_ON_ROOT / CFTYPE_ONLY_ON_ROOT, and for controller
// files only where the parent enables the controller on v2), and routes reads and writes of the
// file to the row's handlers. A new file is one row and its handlers.
//
// Handler contract (the kernel's):
//   - seq_show(sf, v): prints the whole file into sf (seq_printf/seq_puts); returns 0 or -errno.
//     The reader gets the text from offset 0 (a read at offset > 0 gets the rest).
//   - read_u64 / read_s64: the file reads as "%llu\n" / "%lld\n" of the value.
//   - write(of, buf, nbytes, off): buf is NUL-terminated (nbytes bytes of it are the data);
//     returns nbytes (or the bytes consumed) on success, -errno on failure. A write that is
//     longer than max_write_len (default: one page, 4096 bytes) fails with -E2BIG before the
//     handler runs.
//   - write_u64 / write_s64: the data parsed with kstrtoull/kstrtoll, base 0 (kernel/kstrtox.h:
//     one trailing newline accepted, no other blank), else -EINVAL / -ERANGE. A zero-byte write
//     returns 0 without calling any handler.
//   - a file with no read handler fails reads with -EINVAL; one with no write handler fails
//     writes with -EINVAL (cgroup files can always be opened for writing by root).
//   - open(of) / release(of): per-open state lives in of->priv (memory.peak keeps its
//     per-descriptor watermark there).
//
// Mirrors: include/linux/cgroup-defs.h (struct cftype), include/linux/kernfs.h
//   (struct kernfs_open_file), include/linux/seq_file.h (Linux 6.19)
// Emulation: a seq_file is a growable string; there is no seq_start/next/stop iteration, a
//   show handler prints everything once per read from offset 0.
// Emulation: kernfs_open_file carries the css and cftype it was opened on (the kernel derives
//   them from kn->parent->priv and kn->priv); handlers use of_css()/of_cft() as in the kernel.
#pragma once

#include <cstdarg>
#include <cstddef>
#include <string>
#include <sys/types.h>

#include "shim/types.h"

namespace umemcg {

struct cgroup_subsys;
struct cgroup_subsys_state;
struct kernfs_node;
struct kernfs_open_file;
struct cftype;

inline constexpr int MAX_CFTYPE_NAME = 64;

// cftype::flags (kernel values).
inline constexpr unsigned int CFTYPE_ONLY_ON_ROOT = 1u << 0;  // only on the root cgroup
inline constexpr unsigned int CFTYPE_NOT_ON_ROOT = 1u << 1;   // not on the root cgroup
inline constexpr unsigned int CFTYPE_NS_DELEGATABLE = 1u << 2;
inline constexpr unsigned int CFTYPE_NO_PREFIX = 1u << 3;     // name has no "<ss>." prefix
inline constexpr unsigned int CFTYPE_WORLD_WRITABLE = 1u << 4;
inline constexpr unsigned int CFTYPE_DEBUG = 1u << 5;

// Open flags a handler may test in kernfs_open_file::file_flags (Linux's user-space values).
inline constexpr unsigned int KF_O_WRONLY = 01;
inline constexpr unsigned int KF_O_RDWR = 02;
inline constexpr unsigned int KF_O_APPEND = 02000;
inline constexpr unsigned int KF_O_NONBLOCK = 04000;

struct seq_file {
  std::string buf;          // what the show handler printed
  kernfs_open_file *of = nullptr;  // the kernel's seq_file::private
};

void seq_puts(seq_file *sf, const char *s);
void seq_putc(seq_file *sf, char c);
void seq_printf(seq_file *sf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void seq_vprintf(seq_file *sf, const char *fmt, va_list ap);

struct kernfs_open_file {
  kernfs_node *kn = nullptr;
  seq_file *seq = nullptr;
  unsigned int file_flags = 0;  // KF_O_* given at open
  // The handler's per-open data (set in cftype::open, freed in cftype::release).
  void *priv = nullptr;
  // Emulation: see the banner.
  cgroup_subsys_state *css = nullptr;
  const cftype *cft = nullptr;
};

struct cftype {
  // Without the subsystem prefix unless CFTYPE_NO_PREFIX ("max" becomes "memory.max").
  char name[MAX_CFTYPE_NAME] = {};
  unsigned long private_ = 0;  // the kernel's cftype::private (a field selector for handlers)
  size_t max_write_len = 0;    // 0: one page
  unsigned int flags = 0;      // CFTYPE_*
  // Offset of a cgroup_file inside the css (0 = none): cgroup_file_notify() on it notifies this
  // file's watchers (memory.events, memory.swap.events, cgroup.events).
  unsigned int file_offset = 0;

  int (*open)(kernfs_open_file *of) = nullptr;
  void (*release)(kernfs_open_file *of) = nullptr;
  u64 (*read_u64)(cgroup_subsys_state *css, const cftype *cft) = nullptr;
  s64 (*read_s64)(cgroup_subsys_state *css, const cftype *cft) = nullptr;
  int (*seq_show)(seq_file *sf, void *v) = nullptr;
  int (*write_u64)(cgroup_subsys_state *css, const cftype *cft, u64 val) = nullptr;
  int (*write_s64)(cgroup_subsys_state *css, const cftype *cft, s64 val) = nullptr;
  ssize_t (*write)(kernfs_open_file *of, char *buf, size_t nbytes, off_t off) = nullptr;
};

inline cgroup_subsys_state *of_css(const kernfs_open_file *of) { return of->css; }
inline const cftype *of_cft(const kernfs_open_file *of) { return of->cft; }
inline cgroup_subsys_state *seq_css(const seq_file *sf) { return sf->of->css; }
inline const cftype *seq_cft(const seq_file *sf) { return sf->of->cft; }

// strstrip(): removes leading and trailing whitespace in place; returns the first kept byte.
char *strstrip(char *s);

}  // namespace umemcg
