// SPDX-License-Identifier: GPL-2.0-only
// kernel/kstrtox.cc: kstrtoull and friends (see kstrtox.h).
//
// Mirrors: lib/kstrtox.c (_parse_integer_fixup_radix, _parse_integer_limit, _kstrtoull)
//   (Linux 6.19)
#include "kernel/kstrtox.h"

#include <climits>

#include "shim/errno.h"

namespace umemcg {

namespace {

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 16;
}

int _kstrtoull(const char *s, unsigned int base, unsigned long long *res) {
  if (base == 0) {
    if (s[0] == '0') {
      base = ((s[1] | 0x20) == 'x' && digit_value(s[2]) < 16) ? 16 : 8;
    } else {
      base = 10;
    }
  }
  if (base == 16 && s[0] == '0' && (s[1] | 0x20) == 'x') s += 2;
  unsigned long long v = 0;
  bool overflow = false;
  int n = 0;
  for (; *s; s++, n++) {
    int d = digit_value(*s);
    if (d >= static_cast<int>(base)) break;
    if (v > (ULLONG_MAX - d) / base) overflow = true;
    v = v * base + d;
  }
  if (!n) return -EINVAL;
  if (overflow) return -ERANGE;
  if (*s == '\n') s++;
  if (*s) return -EINVAL;
  *res = v;
  return 0;
}

}  // namespace

int kstrtoull(const char *s, unsigned int base, unsigned long long *res) {
  if (s[0] == '+') s++;
  return _kstrtoull(s, base, res);
}

int kstrtoll(const char *s, unsigned int base, long long *res) {
  unsigned long long tmp;
  int rv;
  if (s[0] == '-') {
    rv = _kstrtoull(s + 1, base, &tmp);
    if (rv < 0) return rv;
    if (static_cast<long long>(-tmp) > 0) return -ERANGE;
    *res = static_cast<long long>(-tmp);
  } else {
    rv = kstrtoull(s, base, &tmp);
    if (rv < 0) return rv;
    if (static_cast<long long>(tmp) < 0) return -ERANGE;
    *res = static_cast<long long>(tmp);
  }
  return 0;
}

int kstrtoint(const char *s, unsigned int base, int *res) {
  long long tmp;
  int rv = kstrtoll(s, base, &tmp);
  if (rv < 0) return rv;
  if (tmp != static_cast<int>(tmp)) return -ERANGE;
  *res = static_cast<int>(tmp);
  return 0;
}

int kstrtouint(const char *s, unsigned int base, unsigned int *res) {
  unsigned long long tmp;
  int rv = kstrtoull(s, base, &tmp);
  if (rv < 0) return rv;
  if (tmp != static_cast<unsigned int>(tmp)) return -ERANGE;
  *res = static_cast<unsigned int>(tmp);
  return 0;
}

}  // namespace umemcg
