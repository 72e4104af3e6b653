// SPDX-License-Identifier: GPL-2.0-only
// shim/bug.cc: warning and bug accounting (see bug.h).
#include "shim/bug.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace umemcg::emu {
namespace {
std::atomic<std::uint64_t> g_warnings{0};
std::atomic<bool> g_quiet{false};
std::mutex g_last_mu;
std::string g_last;  // guarded by g_last_mu
std::atomic<bug_handler_t> g_bug_handler{nullptr};
}  // namespace

namespace {
// Starts at 1 so that a WARN_ON_ONCE site (zero-initialised) fires before any machine boots.
std::atomic<std::uint64_t> g_boot_generation{1};
}  // namespace
std::uint64_t boot_generation() { return g_boot_generation.load(std::memory_order_relaxed); }
void new_boot_generation() { g_boot_generation.fetch_add(1, std::memory_order_relaxed); }

void report_warning(const char *file, int line, const std::string &msg) {
  g_warnings.fetch_add(1, std::memory_order_relaxed);
  std::string text = std::string(file) + ":" + std::to_string(line) + ": " + msg;
  if (!g_quiet.load(std::memory_order_relaxed)) std::fprintf(stderr, "WARNING: %s\n", text.c_str());
  std::lock_guard<std::mutex> g(g_last_mu);
  g_last = std::move(text);
}

std::uint64_t warn_count() { return g_warnings.load(std::memory_order_relaxed); }

std::string last_warning() {
  std::lock_guard<std::mutex> g(g_last_mu);
  return g_last;
}

void reset_warnings() {
  g_warnings.store(0, std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(g_last_mu);
  g_last.clear();
}

void set_warnings_quiet(bool quiet) { g_quiet.store(quiet, std::memory_order_relaxed); }

std::string format_warning(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

bug_handler_t set_bug_handler(bug_handler_t h) { return g_bug_handler.exchange(h); }

void report_bug(const char *file, int line, const char *what) {
  if (bug_handler_t h = g_bug_handler.load()) h(file, line, what);
  std::fprintf(stderr, "kernel BUG at %s:%d: %s\n", file, line, what);
  std::abort();
}

void throwing_bug_handler(const char *file, int line, const char *what) {
  throw KernelBug(std::string(file) + ":" + std::to_string(line) + ": " + what);
}

}  // namespace umemcg::emu
