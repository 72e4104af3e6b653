// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/helpers_impl_str.cc: the string-to-integer helpers, bpf_strtol() and bpf_strtoul().
//
// Both parse at most buf_len bytes of buf (no NUL needed): leading white space, an optional
// '-', then digits in the base of flags' low five bits (0: from the prefix, "0x" hexadecimal,
// "0" octal, else decimal; or 8, 10, 16, where 16 skips a "0x" prefix). They return the bytes
// consumed and store the value in *res, or a negative errno and leave *res alone: -EINVAL for a
// bad base or flag, no digits, or (bpf_strtoul) a '-'; -ERANGE when the value does not fit.
// Only the first 63 bytes after the sign are looked at, as the kernel copies them to a
// NUL-terminated buffer of 64.
//
// Mirrors: kernel/bpf/helpers.c (__bpf_strtoull, __bpf_strtoll, bpf_strtol, bpf_strtoul),
//          lib/kstrtox.c (_parse_integer_fixup_radix, _parse_integer), lib/ctype.c (isspace)
//          (Linux 6.19)
#include <cstring>

#include "bpfvm/helpers_impl_internal.h"
#include "shim/errno.h"

namespace umemcg::emu::helpers {

namespace {

constexpr u64 BPF_STRTOX_BASE_MASK = 0x1f;

// The kernel's isspace(): the C white space and Latin-1's non-breaking space (0xa0).
bool kernel_isspace(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

int digit_value(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

// __bpf_strtoull(): bytes consumed (> 0) or -errno; *neg says whether a '-' came first.
int bpf_strtoull(const char *buf, u64 buf_len, u64 flags, u64 *res, bool *neg) {
  unsigned base = (unsigned)(flags & BPF_STRTOX_BASE_MASK);
  if (!buf || !buf_len) return -EINVAL;
  if (base != 0 && base != 8 && base != 10 && base != 16) return -EINVAL;
  if (flags & ~BPF_STRTOX_BASE_MASK) return -EINVAL;
  u64 i = 0;
  while (i < buf_len && kernel_isspace((unsigned char)buf[i])) i++;
  *neg = i < buf_len && buf[i] == '-';
  if (*neg) i++;
  if (i == buf_len) return -EINVAL;
  char str[64];
  const u64 len = buf_len - i < sizeof(str) - 1 ? buf_len - i : sizeof(str) - 1;
  std::memcpy(str, buf + i, len);
  str[len] = '\0';
  const char *s = str;
  // _parse_integer_fixup_radix()
  const auto lower = [](char c) { return (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); };
  if (base == 0) {
    if (s[0] == '0') {
      base = lower(s[1]) == 'x' && digit_value((unsigned char)s[2]) < 16 ? 16 : 8;
    } else {
      base = 10;
    }
  }
  if (base == 16 && s[0] == '0' && lower(s[1]) == 'x') s += 2;
  // _parse_integer(): digits of the base; an overflow is -ERANGE.
  u64 v = 0;
  u64 n = 0;
  bool overflow = false;
  for (;; n++) {
    const int d = digit_value((unsigned char)s[n]);
    if (d >= (int)base) break;
    if (v > (~0ull - (u64)d) / base) overflow = true;
    v = v * base + (u64)d;
  }
  if (overflow) return -ERANGE;
  if (n == 0) return -EINVAL;
  *res = v;
  return (int)(i + (u64)(s + n - str));
}

}  // namespace

// bpf_strtol(buf, buf_len, flags, long *res)
BPF_HELPER(strtol_h) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (!check_mem(ctx, r1, r2, false, "bpf_strtol", "buf") ||
      !check_mem(ctx, r4, sizeof(long), true, "bpf_strtol", "res"))
    return (u64)-EFAULT;
  u64 v = 0;
  bool neg = false;
  const int err = bpf_strtoull(reinterpret_cast<const char *>(r1), r2, r3, &v, &neg);
  if (err < 0) return (u64)(s64)err;
  s64 out;
  if (neg) {
    if ((s64)(0 - v) > 0) return (u64)-ERANGE;
    out = (s64)(0 - v);
  } else {
    if ((s64)v < 0) return (u64)-ERANGE;
    out = (s64)v;
  }
  std::memcpy(reinterpret_cast<void *>(r4), &out, sizeof(out));
  return (u64)err;
}

// bpf_strtoul(buf, buf_len, flags, unsigned long *res)
BPF_HELPER(strtoul_h) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (!check_mem(ctx, r1, r2, false, "bpf_strtoul", "buf") ||
      !check_mem(ctx, r4, sizeof(unsigned long), true, "bpf_strtoul", "res"))
    return (u64)-EFAULT;
  u64 v = 0;
  bool neg = false;
  const int err = bpf_strtoull(reinterpret_cast<const char *>(r1), r2, r3, &v, &neg);
  if (err < 0) return (u64)(s64)err;
  if (neg) return (u64)-EINVAL;
  std::memcpy(reinterpret_cast<void *>(r4), &v, sizeof(v));
  return (u64)err;
}

}  // namespace umemcg::emu::helpers
