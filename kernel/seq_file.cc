// SPDX-License-Identifier: GPL-2.0-only
// kernel/seq_file.cc: printing into a seq_file, and strstrip() (see kernel/cftype.h).
//
// Mirrors: fs/seq_file.c (seq_printf, seq_puts, seq_putc), lib/string.c (strstrip) (Linux 6.19)
#include <cctype>
#include <cstdio>
#include <cstring>

#include "kernel/cftype.h"

namespace umemcg {

void seq_puts(seq_file *sf, const char *s) { sf->buf += s; }

void seq_putc(seq_file *sf, char c) { sf->buf += c; }

void seq_vprintf(seq_file *sf, const char *fmt, va_list ap) {
  char small[256];
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(small, sizeof(small), fmt, ap);
  if (n < 0) {
    va_end(again);
    return;
  }
  if (static_cast<size_t>(n) < sizeof(small)) {
    sf->buf.append(small, n);
  } else {
    size_t old = sf->buf.size();
    sf->buf.resize(old + n + 1);
    vsnprintf(sf->buf.data() + old, n + 1, fmt, again);
    sf->buf.resize(old + n);
  }
  va_end(again);
}

void seq_printf(seq_file *sf, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  seq_vprintf(sf, fmt, ap);
  va_end(ap);
}

char *strstrip(char *s) {
  size_t len = strlen(s);
  while (len && isspace(static_cast<unsigned char>(s[len - 1]))) len--;
  s[len] = '\0';
  while (isspace(static_cast<unsigned char>(*s))) s++;
  return s;
}

}  // namespace umemcg
