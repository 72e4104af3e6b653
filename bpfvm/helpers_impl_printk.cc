// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/helpers_impl_printk.cc: bpf_trace_printk() and its format checker/formatter.
//
// The format must be NUL-terminated within fmt_size, printable ASCII, and use at most three
// conversions among %d %i %u %x %X %o (each optionally with l or ll), %c, %s, %p (%px, %pK) and
// %%, each optionally with the flags "0+- " and a width. Anything else is -EINVAL.
//
// Mirrors: kernel/bpf/helpers.c (bpf_bprintf_prepare), kernel/trace/bpf_trace.c
//          (bpf_trace_printk), lib/vsprintf.c (bstr_printf) (Linux 6.19)
// Emulation: see bpfvm/helpers_impl.h (%p is not hashed; an unreadable %s prints empty).
#include <cctype>
#include <cstdio>
#include <cstring>

#include "bpfvm/helpers_impl_internal.h"
#include "bpfvm/log.h"
#include "shim/errno.h"

namespace umemcg::emu {

namespace {

template <typename T>
void append_fmt(std::string *out, const std::string &spec, T v) {
  char buf[MAX_BPRINTF_BUF];
  int n = std::snprintf(buf, sizeof(buf), spec.c_str(), v);
  if (n > 0) out->append(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

}  // namespace

int bpf_bprintf(const char *fmt, u32 fmt_size, const u64 *args, int nargs, std::string *out,
                bpf_read_str_t read_str, void *opaque) {
  if (!fmt || fmt_size == 0 || !std::memchr(fmt, 0, fmt_size)) return -EINVAL;
  out->clear();
  int nspec = 0;
  for (size_t i = 0; fmt[i]; i++) {
    const unsigned char c = (unsigned char)fmt[i];
    if ((!std::isprint(c) && !std::isspace(c)) || !isascii(c)) return -EINVAL;
    if (c != '%') {
      out->push_back((char)c);
      continue;
    }
    if (fmt[i + 1] == '%') {
      out->push_back('%');
      i++;
      continue;
    }
    if (nspec >= nargs) return -EINVAL;
    const u64 arg = args[nspec++];
    std::string spec = "%";
    i++;
    // The optional "[0 +-][width]" field.
    while (fmt[i] == '0' || fmt[i] == '+' || fmt[i] == '-' || fmt[i] == ' ') spec += fmt[i++];
    if (fmt[i] >= '1' && fmt[i] <= '9') {
      while (fmt[i] >= '0' && fmt[i] <= '9') spec += fmt[i++];
    }
    if (fmt[i] == 'p') {
      const unsigned char n = (unsigned char)fmt[i + 1];
      if (n == 'x' || n == 'K')
        i++;
      else if (n != 0 && !std::isspace(n) && !std::ispunct(n))
        return -EINVAL;  // %pB, %pI4, %ps ... are not modelled
      append_fmt(out, spec + "016llx", (unsigned long long)arg);
      continue;
    }
    if (fmt[i] == 'c') {
      append_fmt(out, spec + "c", (int)(unsigned char)arg);
      continue;
    }
    if (fmt[i] == 's') {
      std::string s;
      if (!read_str(opaque, arg, &s)) s.clear();
      append_fmt(out, spec + "s", s.c_str());
      continue;
    }
    int lcount = 0;
    while (fmt[i] == 'l' && lcount < 2) {
      lcount++;
      i++;
    }
    const char conv = fmt[i];
    if (!conv || !std::strchr("diouxX", conv)) return -EINVAL;
    const bool is_signed = conv == 'd' || conv == 'i';
    if (lcount) {
      spec += "ll";
      spec += conv;
      if (is_signed)
        append_fmt(out, spec, (long long)arg);
      else
        append_fmt(out, spec, (unsigned long long)arg);
    } else {
      spec += conv;
      if (is_signed)
        append_fmt(out, spec, (int)(u32)arg);
      else
        append_fmt(out, spec, (unsigned)(u32)arg);
    }
  }
  if (out->size() > MAX_BPRINTF_BUF - 1) out->resize(MAX_BPRINTF_BUF - 1);
  return (int)out->size();
}

namespace helpers {

namespace {

struct StrReader {
  bpf_run_ctx *ctx;
};

// strncpy_from_kernel_nofault(): byte by byte, each byte checked in checked runs.
bool read_str(void *opaque, u64 ptr, std::string *out) {
  auto *r = static_cast<StrReader *>(opaque);
  if (!ptr) return false;
  for (u32 n = 0; n < MAX_BPRINTF_BUF; n++) {
    if (r->ctx && r->ctx->chk && !bpf_run_mem_ok(r->ctx, ptr + n, 1, false, true))
      return false;
    const char ch = *reinterpret_cast<const char *>((uintptr_t)(ptr + n));
    if (!ch) return true;
    out->push_back(ch);
  }
  return true;
}

}  // namespace

// bpf_trace_printk(fmt, fmt_size, arg1, arg2, arg3): the formatted length, or -EINVAL.
BPF_HELPER(trace_printk) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (!check_mem(ctx, r1, r2, false, "bpf_trace_printk", "fmt")) return (u64)-EFAULT;
  const u64 args[3] = {r3, r4, r5};
  StrReader reader{ctx};
  std::string msg;
  int ret = bpf_bprintf(reinterpret_cast<const char *>((uintptr_t)r1), (u32)r2, args, 3, &msg,
                        read_str, &reader);
  if (ret < 0) return (u64)(s64)ret;
  bpf_trace_log_append(msg);
  return (u64)ret;
}

}  // namespace helpers
}  // namespace umemcg::emu
