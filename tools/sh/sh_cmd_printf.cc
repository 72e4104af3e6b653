// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_cmd_printf.cc: printf FORMAT [ARGS...] (XCU printf): the conversions d i o u x X
// c s b and %%, with flags (- + space # 0), width and precision (numbers or *); the escapes
// \\ \a \b \f \n \r \t \v and \ddd (octal, so \0 is a NUL byte) in FORMAT, and in %b arguments
// also \0ddd and \c (stop). The FORMAT is reused while arguments remain. Numeric arguments take
// C's constants (0x hex, 0 octal) and 'c (the character's code). The output is one write.
//
// Emulation: a width or precision above 65536 is refused (EOVERFLOW) so no format allocates
//   without bound.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tools/sh/sh_cmds.h"

namespace umemcg::sh {
namespace {

constexpr long kMaxField = 65536;

struct PrintfState {
  Shell &sh;
  const Cmd &c;
  size_t next_arg = 2;
  bool failed = false;
  bool stop = false;  // \c in a %b argument

  const std::string *arg() {
    if (next_arg >= c.argv.size()) return nullptr;
    return &c.argv[next_arg++];
  }

  long long number(bool is_unsigned) {
    const std::string *a = arg();
    if (!a || a->empty()) return 0;
    if ((*a)[0] == '\'' || (*a)[0] == '"') return a->size() > 1 ? static_cast<unsigned char>((*a)[1]) : 0;
    char *end = nullptr;
    errno = 0;
    long long v = is_unsigned && (*a)[0] != '-' ? static_cast<long long>(std::strtoull(a->c_str(), &end, 0))
                                                : std::strtoll(a->c_str(), &end, 0);
    if (end == a->c_str() || *end != '\0') {
      sh.error(c, "invalid number " + *a, EINVAL);
      failed = true;
    } else if (errno == ERANGE) {
      sh.error(c, *a, ERANGE);
      failed = true;
    }
    return v;
  }
};

// One backslash escape at s[*i] (the backslash): appends it to *out and steps past it.
// @in_b: the %b rules (\0ddd, \c).
void escape(const std::string &s, size_t *i, std::string *out, bool in_b, bool *stop) {
  size_t k = *i + 1;
  if (k >= s.size()) {
    *out += '\\';
    *i = k;
    return;
  }
  char e = s[k];
  static const char kFrom[] = "\\abfnrtv\"'";
  static const char kTo[] = "\\\a\b\f\n\r\t\v\"'";
  if (const char *p = std::strchr(kFrom, e); p && e) {
    *out += kTo[p - kFrom];
    *i = k + 1;
    return;
  }
  if (in_b && e == 'c') {
    *stop = true;
    *i = s.size();
    return;
  }
  if (e >= '0' && e <= '7') {
    size_t max = 3;
    if (in_b && e == '0') k++;  // %b: \0ddd
    int v = 0;
    size_t n = 0;
    while (n < max && k < s.size() && s[k] >= '0' && s[k] <= '7') v = v * 8 + (s[k++] - '0'), n++;
    *out += static_cast<char>(v & 0xff);
    *i = k;
    return;
  }
  *out += '\\';
  *out += e;
  *i = k + 1;
}

}  // namespace

int cmd_printf(Shell &sh, const Cmd &c) {
  if (c.argv.size() < 2) {
    sh.error(c, "missing format", EINVAL);
    return 1;
  }
  const std::string &fmt = c.argv[1];
  PrintfState st{sh, c};
  std::string out;
  do {
    size_t args_before = st.next_arg;
    for (size_t i = 0; i < fmt.size() && !st.stop;) {
      char ch = fmt[i];
      if (ch == '\\') {
        escape(fmt, &i, &out, false, &st.stop);
        continue;
      }
      if (ch != '%') {
        out += ch;
        i++;
        continue;
      }
      if (i + 1 < fmt.size() && fmt[i + 1] == '%') {
        out += '%';
        i += 2;
        continue;
      }
      // %[flags][width][.precision]conv
      size_t j = i + 1;
      std::string spec = "%";
      while (j < fmt.size() && std::strchr("-+ #0", fmt[j]) && fmt[j]) spec += fmt[j++];
      auto field = [&](bool *given) -> long {
        long v = 0;
        if (j < fmt.size() && fmt[j] == '*') {
          j++;
          *given = true;
          v = static_cast<long>(st.number(false));
        } else {
          while (j < fmt.size() && fmt[j] >= '0' && fmt[j] <= '9') {
            *given = true;
            v = v * 10 + (fmt[j++] - '0');
            if (v > kMaxField) break;
          }
        }
        return v;
      };
      bool has_width = false, has_prec = false;
      long width = field(&has_width);
      long prec = 0;
      if (j < fmt.size() && fmt[j] == '.') {
        j++;
        has_prec = true;
        bool dummy = false;
        prec = field(&dummy);
      }
      if (width > kMaxField || width < -kMaxField || prec > kMaxField) {
        sh.error(c, "field width or precision too large", EOVERFLOW);
        return 1;
      }
      if (has_width) spec += std::to_string(width);
      if (has_prec) spec += "." + std::to_string(prec < 0 ? 0 : prec);
      if (j >= fmt.size()) {
        sh.error(c, "missing conversion in " + fmt.substr(i), EINVAL);
        return 1;
      }
      char conv = fmt[j];
      i = j + 1;
      std::string piece;
      // snprintf of one number: its length first, then the text.
      auto format = [&piece](const std::string &f, auto v) {
        int n = std::snprintf(nullptr, 0, f.c_str(), v);
        piece.assign(static_cast<size_t>(n > 0 ? n : 0) + 1, '\0');
        std::snprintf(piece.data(), piece.size(), f.c_str(), v);
        piece.pop_back();
      };
      switch (conv) {
        case 'd':
        case 'i':
          format(spec + "lld", st.number(false));
          break;
        case 'o':
        case 'u':
        case 'x':
        case 'X':
          format(spec + "ll" + conv, static_cast<unsigned long long>(st.number(true)));
          break;
        case 'c':
        case 's':
        case 'b': {
          const std::string *a = st.arg();
          std::string s = a ? *a : "";
          if (conv == 'c') s = s.substr(0, 1);
          if (conv == 'b') {
            std::string t;
            for (size_t k = 0; k < s.size() && !st.stop;) {
              if (s[k] == '\\') escape(s, &k, &t, true, &st.stop);
              else t += s[k++];
            }
            s = t;
          }
          if (has_prec && conv != 'c' && static_cast<size_t>(prec) < s.size()) s.resize(static_cast<size_t>(prec));
          bool left = spec.find('-') != std::string::npos || width < 0;
          size_t w = static_cast<size_t>(width < 0 ? -width : width);
          if (s.size() < w) s = left ? s + std::string(w - s.size(), ' ') : std::string(w - s.size(), ' ') + s;
          piece = s;
          break;
        }
        default:
          sh.error(c, std::string("invalid directive %") + conv, EINVAL);
          return 1;
      }
      out += piece;
    }
    if (st.next_arg == args_before) break;  // the format consumes no argument
  } while (st.next_arg < c.argv.size() && !st.stop);
  int r = sh.out(c, out);
  return r || st.failed ? 1 : 0;
}

}  // namespace umemcg::sh
