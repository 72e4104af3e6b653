// SPDX-License-Identifier: GPL-2.0-only
// kernel/sysctl.cc: integer sysctl handlers and the /proc/sys files of registered tables (see
// sysctl.h).
//
// Mirrors: kernel/sysctl.c, fs/proc/proc_sysctl.c (Linux 6.19)
// Emulation: see sysctl.h.
#include "kernel/sysctl.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstring>
#include <set>

#include "shim/compiler.h"
#include "shim/errno.h"
#include "shim/mutex.h"
#include "shim/types.h"

namespace umemcg {

const int sysctl_vals[] = {0, 1, 200, 3000, INT_MAX};

namespace {

// proc_get_long()'s bound on the digits it looks at (a longer number is refused).
constexpr size_t TMPBUFLEN = 22;
// The separators a number may end with (proc_wspace_sep).
constexpr char proc_wspace_sep[] = {' ', '\t', '\n'};

struct sysctl_dir {
  std::string path;  // "/proc/sys/vm"
  const ctl_table *table;
  size_t n;
};

DEFINE_MUTEX(sysctl_lock);
std::vector<sysctl_dir> g_dirs GUARDED_BY(sysctl_lock);

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 16;
}

// strtoul_lenient(): base 0 (the radix from the prefix), as many digits as fit; -ERANGE on
// overflow. *@end is past the last digit.
int strtoul_lenient(const char *cp, const char **end, unsigned long *res) {
  unsigned int base;
  if (cp[0] == '0')
    base = ((cp[1] | 0x20) == 'x' && digit_value(cp[2]) < 16) ? 16 : 8;
  else
    base = 10;
  if (base == 16) cp += 2;
  unsigned long long v = 0;
  bool overflow = false;
  for (; *cp; cp++) {
    int d = digit_value(*cp);
    if (d >= static_cast<int>(base)) break;
    if (v > (ULLONG_MAX - static_cast<unsigned>(d)) / base) overflow = true;
    v = v * base + static_cast<unsigned>(d);
  }
  if (overflow) return -ERANGE;
  *end = cp;
  *res = static_cast<unsigned long>(v);
  return 0;
}

void proc_skip_spaces(char **buf, size_t *size) {
  while (*size && std::isspace(static_cast<unsigned char>(**buf))) {
    (*buf)++;
    (*size)--;
  }
}

// proc_get_long(): one number of @buf, which must be followed by a separator (or the end).
int proc_get_long(char **buf, size_t *size, unsigned long *val, bool *neg) {
  char tmp[TMPBUFLEN];
  size_t len = *size;
  if (len == 0) return -EINVAL;
  len = std::min(len, TMPBUFLEN - 1);
  std::memcpy(tmp, *buf, len);
  tmp[len] = 0;
  const char *p = tmp;
  if (*p == '-' && *size > 1) {
    *neg = true;
    p++;
  } else {
    *neg = false;
  }
  if (!std::isdigit(static_cast<unsigned char>(*p))) return -EINVAL;
  if (strtoul_lenient(p, &p, val)) return -EINVAL;
  len = static_cast<size_t>(p - tmp);
  // A number as long as the buffer may go on beyond it: refused.
  if (len == TMPBUFLEN - 1) return -EINVAL;
  if (len < *size && !std::memchr(proc_wspace_sep, *p, sizeof(proc_wspace_sep))) return -EINVAL;
  *buf += len;
  *size -= len;
  return 0;
}

// do_proc_dointvec_conv() and do_proc_dointvec_minmax_conv() in one: the parsed value into an
// int in [*min, *max] (either may be absent), or the int's value out.
int dointvec_conv(bool *negp, unsigned long *lvalp, int *valp, int write, const int *min,
                  const int *max) {
  if (write) {
    int tmp;
    if (*negp) {
      if (*lvalp > static_cast<unsigned long>(INT_MAX) + 1) return -EINVAL;
      tmp = static_cast<int>(-static_cast<long>(*lvalp));
    } else {
      if (*lvalp > static_cast<unsigned long>(INT_MAX)) return -EINVAL;
      tmp = static_cast<int>(*lvalp);
    }
    if ((min && *min > tmp) || (max && *max < tmp)) return -EINVAL;
    WRITE_ONCE(*valp, tmp);
  } else {
    int val = READ_ONCE(*valp);
    *negp = val < 0;
    *lvalp = val < 0 ? -static_cast<unsigned long>(val) : static_cast<unsigned long>(val);
  }
  return 0;
}

void proc_put(char **buf, size_t *size, const char *s) {
  size_t len = std::min(std::strlen(s), *size);
  std::memcpy(*buf, s, len);
  *buf += len;
  *size -= len;
}

// __do_proc_dointvec().
int do_proc_dointvec(const ctl_table *table, int write, char *buffer, size_t *lenp, loff_t *ppos,
                     const int *min, const int *max) {
  if (!table->data || !table->maxlen || !*lenp || (*ppos && !write)) {
    *lenp = 0;
    return 0;
  }
  int *i = static_cast<int *>(table->data);
  int vleft = table->maxlen / static_cast<int>(sizeof(int));
  size_t left = *lenp;
  bool first = true;
  int err = 0;
  char *p = buffer;
  if (write) {
    // sysctl_writes_strict=1: a write that does not start at 0 is ignored.
    if (*ppos) {
      *ppos += static_cast<loff_t>(*lenp);
      return 0;
    }
    left = std::min(left, static_cast<size_t>(PAGE_SIZE - 1));
  }
  for (; left && vleft--; i++, first = false) {
    unsigned long lval;
    bool neg;
    if (write) {
      proc_skip_spaces(&p, &left);
      if (!left) break;
      err = proc_get_long(&p, &left, &lval, &neg);
      if (err) break;
      if (dointvec_conv(&neg, &lval, i, 1, min, max)) {
        err = -EINVAL;
        break;
      }
    } else {
      dointvec_conv(&neg, &lval, i, 0, nullptr, nullptr);
      char num[32];
      std::snprintf(num, sizeof(num), "%s%s%lu", first ? "" : "\t", neg ? "-" : "", lval);
      proc_put(&p, &left, num);
    }
  }
  if (!write && !first && left && !err) proc_put(&p, &left, "\n");
  if (write && !err && left) proc_skip_spaces(&p, &left);
  if (write && first) return err ? err : -EINVAL;
  *lenp -= left;
  *ppos += static_cast<loff_t>(*lenp);
  return err;
}

}  // namespace

int proc_dointvec(const ctl_table *table, int write, char *buffer, size_t *lenp, loff_t *ppos) {
  return do_proc_dointvec(table, write, buffer, lenp, ppos, nullptr, nullptr);
}

int proc_dointvec_minmax(const ctl_table *table, int write, char *buffer, size_t *lenp,
                         loff_t *ppos) {
  return do_proc_dointvec(table, write, buffer, lenp, ppos,
                          static_cast<const int *>(table->extra1),
                          static_cast<const int *>(table->extra2));
}

void register_sysctl_init(const char *path, const ctl_table *table, size_t n) {
  mutex_guard g(&sysctl_lock);
  for (const sysctl_dir &d : g_dirs)
    if (d.table == table) return;
  g_dirs.push_back({std::string("/proc/sys/") + path, table, n});
}

namespace emu {

const ctl_table *sysctl_lookup(const std::string &path) {
  mutex_guard g(&sysctl_lock);
  for (const sysctl_dir &d : g_dirs) {
    if (path.size() <= d.path.size() + 1 || path.compare(0, d.path.size(), d.path) != 0 ||
        path[d.path.size()] != '/')
      continue;
    std::string name = path.substr(d.path.size() + 1);
    for (size_t k = 0; k < d.n; k++)
      if (name == d.table[k].procname) return &d.table[k];
  }
  return nullptr;
}

std::vector<std::string> sysctl_readdir(const std::string &path) {
  std::set<std::string> names;
  mutex_guard g(&sysctl_lock);
  for (const sysctl_dir &d : g_dirs) {
    if (d.path == path) {
      for (size_t k = 0; k < d.n; k++) names.insert(d.table[k].procname);
    } else if (d.path.size() > path.size() + 1 && d.path.compare(0, path.size(), path) == 0 &&
               d.path[path.size()] == '/') {
      std::string rest = d.path.substr(path.size() + 1);
      names.insert(rest.substr(0, rest.find('/')));
    }
  }
  return {names.begin(), names.end()};
}

bool sysctl_is_dir(const std::string &path) { return !sysctl_readdir(path).empty(); }

int sysctl_read(const ctl_table *table, loff_t pos, std::string *out) {
  out->clear();
  if (!(table->mode & 0444)) return -EACCES;
  char buf[PAGE_SIZE];
  size_t len = sizeof(buf);
  int err = table->proc_handler(table, 0, buf, &len, &pos);
  if (err) return err;
  out->assign(buf, len);
  return 0;
}

long sysctl_write(const ctl_table *table, const std::string &bytes, loff_t *pos) {
  if (!(table->mode & 0222)) return -EACCES;
  // proc_sys_call_handler() hands the handler a NUL-terminated copy.
  std::vector<char> buf(bytes.begin(), bytes.end());
  buf.push_back('\0');
  size_t len = bytes.size();
  int err = table->proc_handler(table, 1, buf.data(), &len, pos);
  if (err) return err;
  return static_cast<long>(len);
}

}  // namespace emu

}  // namespace umemcg
