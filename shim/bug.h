// SPDX-License-Identifier: GPL-2.0-only
// shim/bug.h: WARN_ON, WARN_ON_ONCE, WARN_ONCE, WARN, BUG_ON, BUG.
//
// Mirrors: include/asm-generic/bug.h, include/linux/once_lite.h (Linux 6.19)
// Every warning is counted, so a test can assert that no unexpected warning fired (the kernel's
// selftests grep dmesg for the same thing) and that an expected one did.
// Emulation: "once" means once per machine boot (the kernel's is once per kernel boot): each
//   site remembers the boot generation it last fired in.
// Emulation: BUG() calls the installed bug handler; the default prints the report and aborts,
//   tests may install one that throws emu::KernelBug so the condition itself can be tested.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace umemcg::emu {

// Records a warning and prints "WARNING: file:line: message". Thread-safe.
void report_warning(const char *file, int line, const std::string &msg);
// Boot generation of the current (or last) machine; WARN_ON_ONCE sites compare against it.
std::uint64_t boot_generation();
// Called by the machine at boot: every WARN_ON_ONCE site may fire again.
void new_boot_generation();
// Number of warnings recorded since the last reset_warnings().
std::uint64_t warn_count();
// The text of the most recent warning ("" if none).
std::string last_warning();
void reset_warnings();
// Silences the "WARNING:" printout (the counting stays). For tests that expect warnings.
void set_warnings_quiet(bool quiet);

struct KernelBug : std::runtime_error {
  using std::runtime_error::runtime_error;
};
using bug_handler_t = void (*)(const char *file, int line, const char *what);
// Installs a BUG() handler and returns the previous one. nullptr restores the default (abort).
bug_handler_t set_bug_handler(bug_handler_t h);
[[noreturn]] void report_bug(const char *file, int line, const char *what);
// A bug handler that throws KernelBug (for tests).
[[noreturn]] void throwing_bug_handler(const char *file, int line, const char *what);

std::string format_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

inline bool warn_once_site(std::uint64_t *site) {
  std::uint64_t gen = boot_generation();
  if (__atomic_load_n(site, __ATOMIC_RELAXED) == gen) return false;
  return __atomic_exchange_n(site, gen, __ATOMIC_RELAXED) != gen;
}

}  // namespace umemcg::emu

#define WARN_ON(cond)                                                    \
  ({                                                                     \
    bool __w = !!(cond);                                                 \
    if (__builtin_expect(__w, 0))                                        \
      ::umemcg::emu::report_warning(__FILE__, __LINE__, "WARN_ON(" #cond ")"); \
    __w;                                                                 \
  })

// Emulation: test frameworks (Catch2) have a WARN macro of their own; the kernel's wins here.
#ifdef WARN
#undef WARN
#endif
#define WARN(cond, ...)                                                  \
  ({                                                                     \
    bool __w = !!(cond);                                                 \
    if (__builtin_expect(__w, 0))                                        \
      ::umemcg::emu::report_warning(__FILE__, __LINE__,                  \
                                    ::umemcg::emu::format_warning(__VA_ARGS__)); \
    __w;                                                                 \
  })

#define WARN_ON_ONCE(cond)                                               \
  ({                                                                     \
    static std::uint64_t __site_gen;                                     \
    bool __w = !!(cond);                                                 \
    if (__builtin_expect(__w, 0) && ::umemcg::emu::warn_once_site(&__site_gen)) \
      ::umemcg::emu::report_warning(__FILE__, __LINE__, "WARN_ON_ONCE(" #cond ")"); \
    __w;                                                                 \
  })

#define WARN_ONCE(cond, ...)                                             \
  ({                                                                     \
    static std::uint64_t __site_gen;                                     \
    bool __w = !!(cond);                                                 \
    if (__builtin_expect(__w, 0) && ::umemcg::emu::warn_once_site(&__site_gen)) \
      ::umemcg::emu::report_warning(__FILE__, __LINE__,                  \
                                    ::umemcg::emu::format_warning(__VA_ARGS__)); \
    __w;                                                                 \
  })

#define BUG() ::umemcg::emu::report_bug(__FILE__, __LINE__, "BUG()")
#define BUG_ON(cond)                                                     \
  do {                                                                   \
    if (__builtin_expect(!!(cond), 0))                                   \
      ::umemcg::emu::report_bug(__FILE__, __LINE__, "BUG_ON(" #cond ")"); \
  } while (0)
