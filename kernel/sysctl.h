// SPDX-License-Identifier: GPL-2.0-only
// kernel/sysctl.h: sysctl tables and the files of /proc/sys they make: struct ctl_table, the
// integer handlers (proc_dointvec, proc_dointvec_minmax), registration of a directory's table,
// and the read and write of one file as proc_sys_call_handler() does them.
//
// A table entry names a file (procname), the int it holds (data, maxlen bytes: one int per
// sizeof(int)), its mode and its handler; extra1/extra2 point at the bounds proc_dointvec_minmax
// enforces. A write is parsed as the kernel parses it: leading blanks skipped, an optional '-',
// a number in base 0 (decimal, 0x hexadecimal, 0 octal) followed by a blank, a newline or the
// end; out of the int range or of [*extra1, *extra2]: -EINVAL, and nothing is written. A write
// at a non-zero position is ignored (sysctl_writes_strict=1, the default). A read at a non-zero
// position is at its end.
//
// Mirrors: include/linux/sysctl.h (struct ctl_table, SYSCTL_ZERO...), kernel/sysctl.c
//   (proc_get_long, proc_skip_spaces, __do_proc_dointvec, do_proc_dointvec_conv,
//   do_proc_dointvec_minmax_conv, proc_dointvec, proc_dointvec_minmax,
//   proc_first_pos_non_zero_ignore), fs/proc/proc_sysctl.c (register_sysctl_init,
//   proc_sys_call_handler) (Linux 6.19)
// Emulation: registered tables are looked up by "/proc/sys/<dir>/<procname>" in a list (no
//   ctl_table_header tree, no per-namespace sets, no permissions beyond the mode's owner bits:
//   the machine's only user is root); registration is idempotent, so that every boot of the
//   machine may register its tables again.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "shim/types.h"

namespace umemcg {

struct ctl_table;

// A table's handler: @write 0 reads into @buffer (at most *@lenp bytes), 1 parses *@lenp bytes
// of @buffer; *@lenp becomes the bytes produced or consumed, *@ppos advances by them.
using proc_handler_t = int (*)(const ctl_table *table, int write, char *buffer, size_t *lenp,
                               loff_t *ppos);

struct ctl_table {
  const char *procname;
  void *data;
  int maxlen;
  unsigned short mode;
  proc_handler_t proc_handler;
  const void *extra1 = nullptr;
  const void *extra2 = nullptr;
};

// The bounds the kernel's tables share (sysctl_vals[]).
extern const int sysctl_vals[];
#define SYSCTL_ZERO (&::umemcg::sysctl_vals[0])
#define SYSCTL_ONE (&::umemcg::sysctl_vals[1])
#define SYSCTL_TWO_HUNDRED (&::umemcg::sysctl_vals[2])
#define SYSCTL_THREE_THOUSAND (&::umemcg::sysctl_vals[3])
#define SYSCTL_INT_MAX (&::umemcg::sysctl_vals[4])

int proc_dointvec(const ctl_table *table, int write, char *buffer, size_t *lenp, loff_t *ppos);
int proc_dointvec_minmax(const ctl_table *table, int write, char *buffer, size_t *lenp,
                         loff_t *ppos);

/**
 * register_sysctl_init - add the files of @table (@n entries) under /proc/sys/@path
 * @path: the directory below /proc/sys ("vm")
 *
 * @table must stay valid for the life of the process; registering it again is a no-op.
 * Context: task context.
 */
void register_sysctl_init(const char *path, const ctl_table *table, size_t n);

namespace emu {
// The entry behind a "/proc/sys/..." path, or nullptr.
const ctl_table *sysctl_lookup(const std::string &path);
// Whether @path is a directory of /proc/sys with registered files ("/proc/sys", "/proc/sys/vm").
bool sysctl_is_dir(const std::string &path);
// The file names of a directory of /proc/sys (subdirectories too), sorted; empty if none.
std::vector<std::string> sysctl_readdir(const std::string &path);

/**
 * sysctl_read - read(2) of a sysctl file at @pos: its text from there, as the handler makes it
 * Returns 0 with *@out set, or -errno.
 */
int sysctl_read(const ctl_table *table, loff_t pos, std::string *out);
/**
 * sysctl_write - write(2) of @bytes to a sysctl file at *@pos
 * Returns the bytes consumed (*@pos advanced by them), or -errno (-EINVAL for a bad number).
 */
long sysctl_write(const ctl_table *table, const std::string &bytes, loff_t *pos);
}  // namespace emu

}  // namespace umemcg
