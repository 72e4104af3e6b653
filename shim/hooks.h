// SPDX-License-Identifier: GPL-2.0-only
// shim/hooks.h: named instrumentation points at the entry and exit of emulated kernel functions,
// to which BPF fentry/fexit programs (and tests) attach.
//
// Models the kernel's BPF trampolines: a function with attached programs calls them with its
// arguments (as u64s, the fentry context) on entry, and with its arguments and return value (the
// fexit context) on exit. A point with nothing attached costs one relaxed load and a
// predictable branch.
// Attach and detach are RCU-protected: callers run the attached list under rcu_read_lock(), a
// detacher publishes a new list and frees the old one after a grace period. Attached functions
// therefore run with preemption disabled and must not sleep (fentry/fexit programs are
// non-sleepable unless declared otherwise).
#pragma once

#include <atomic>
#include <cstdint>

namespace umemcg::emu {

struct HookList;

using hook_fn_t = void (*)(void *data, const std::uint64_t *args, unsigned int nargs,
                           std::uint64_t ret);

class HookPoint {
 public:
  HookPoint(const char *name, unsigned int nargs);
  HookPoint(const HookPoint &) = delete;
  HookPoint &operator=(const HookPoint &) = delete;

  const char *name() const { return name_; }
  unsigned int nargs() const { return nargs_; }
  bool has_entry() const { return entry_.load(std::memory_order_relaxed) != nullptr; }
  bool has_exit() const { return exit_.load(std::memory_order_relaxed) != nullptr; }

  void call_entry(const std::uint64_t *args);
  void call_exit(const std::uint64_t *args, std::uint64_t ret);

  // Attaches fn(data, ...) at entry (is_exit false) or exit; returns an id for detach.
  int attach(bool is_exit, hook_fn_t fn, void *data);
  // Detaches; waits for a grace period so that fn is no longer running anywhere on return.
  // Must be called from task context (it sleeps). Returns false if no such id.
  bool detach(int id);

  // The point with this name, or nullptr. Points register themselves at static initialisation.
  static HookPoint *find(const char *name);
  // Calls fn for every registered point.
  static void for_each(void (*fn)(HookPoint *, void *), void *arg);

 private:
  const char *name_;
  unsigned int nargs_;
  std::atomic<HookList *> entry_{nullptr};
  std::atomic<HookList *> exit_{nullptr};
  HookPoint *next_ = nullptr;
};

}  // namespace umemcg::emu

// Call sites: FENTRY(point, a0, a1...) / FEXIT(point, ret, a0, a1...).
#define UMEMCG_FENTRY(point, ...)                                     \
  do {                                                                \
    if (__builtin_expect((point).has_entry(), 0)) {                   \
      const std::uint64_t __hook_args[] = {__VA_ARGS__};              \
      (point).call_entry(__hook_args);                                \
    }                                                                 \
  } while (0)
#define UMEMCG_FEXIT(point, ret, ...)                                 \
  do {                                                                \
    if (__builtin_expect((point).has_exit(), 0)) {                    \
      const std::uint64_t __hook_args[] = {__VA_ARGS__};              \
      (point).call_exit(__hook_args, static_cast<std::uint64_t>(ret)); \
    }                                                                 \
  } while (0)
