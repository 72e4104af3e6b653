// SPDX-License-Identifier: GPL-2.0-only
// mm/cmdline.cc: memparse() and simple_strtoull() (see cmdline.h).
//
// Mirrors: lib/cmdline.c, lib/vsprintf.c, lib/kstrtox.c (_parse_integer_fixup_radix) (Linux 6.19)
// Emulation: see cmdline.h.
#include "mm/cmdline.h"

namespace umemcg {
namespace {

// The kernel's _tolower(): sets the ASCII lower-case bit, which is all a radix prefix needs.
char ascii_lower(char c) { return static_cast<char>(c | 0x20); }

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (ascii_lower(c) >= 'a' && ascii_lower(c) <= 'f');
}

// _parse_integer_fixup_radix(): settle base 0 and step over a "0x" prefix in base 16.
// "0x" must be followed by a hex digit to mean hex; otherwise the leading 0 makes it octal and
// parsing stops at the 'x'.
const char *fixup_radix(const char *s, unsigned int *base) {
  if (*base == 0) {
    if (s[0] == '0')
      *base = (ascii_lower(s[1]) == 'x' && is_hex_digit(s[2])) ? 16 : 8;
    else
      *base = 10;
  }
  if (*base == 16 && s[0] == '0' && ascii_lower(s[1]) == 'x') s += 2;
  return s;
}

// Value of one digit character in bases up to 16, or 16 (never a valid digit) if none.
unsigned int digit_value(char c) {
  if (c >= '0' && c <= '9') return static_cast<unsigned int>(c - '0');
  char lc = ascii_lower(c);
  if (lc >= 'a' && lc <= 'f') return static_cast<unsigned int>(lc - 'a' + 10);
  return 16;
}

}  // namespace

long simple_strtol(const char *cp, char **endp, unsigned int base) {
  // Unsigned negation: wraps as the kernel's does, without signed overflow.
  if (*cp == '-') return static_cast<long>(0ull - simple_strtoull(cp + 1, endp, base));
  return static_cast<long>(simple_strtoull(cp, endp, base));
}

unsigned long long simple_strtoull(const char *cp, char **endp, unsigned int base) {
  const char *s = fixup_radix(cp, &base);
  unsigned long long result = 0;

  for (;; s++) {
    unsigned int val = digit_value(*s);
    if (val >= base) break;
    // Unsigned arithmetic: overflow wraps, and simple_strtoull() ignores the overflow flag that
    // the kernel's _parse_integer() computes.
    result = result * base + val;
  }
  if (endp) *endp = const_cast<char *>(s);
  return result;
}

unsigned long long memparse(const char *ptr, char **retptr) {
  char *endptr;
  unsigned long long ret = simple_strtoull(ptr, &endptr, 0);
  unsigned int shift = 0;

  // One suffix letter; each step up the K < M < G < T < P < E ladder is another 10 bits.
  switch (*endptr) {
    case 'E': case 'e': shift += 10; [[fallthrough]];
    case 'P': case 'p': shift += 10; [[fallthrough]];
    case 'T': case 't': shift += 10; [[fallthrough]];
    case 'G': case 'g': shift += 10; [[fallthrough]];
    case 'M': case 'm': shift += 10; [[fallthrough]];
    case 'K': case 'k':
      shift += 10;
      endptr++;
      break;
    default:
      break;
  }
  // shift <= 60, so the shift itself is defined; bits shifted out are lost, as in the kernel.
  ret <<= shift;

  if (retptr) *retptr = endptr;
  return ret;
}

}  // namespace umemcg
