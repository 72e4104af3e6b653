// SPDX-License-Identifier: GPL-2.0-only
// shim/mutex.h: struct mutex, a sleeping lock with an owner.
//
// Mirrors: include/linux/mutex.h, kernel/locking/mutex.c (Linux 6.19)
// Emulation: no optimistic spinning; an unlock with waiters hands the mutex straight to the
//   first waiter (the kernel does that only after a waiter starved; otherwise a running task may
//   steal it). Ownership, FIFO wait order, killable waits and trylock are the kernel's.
#pragma once

#include <atomic>
#include <deque>
#include <mutex>

#include "shim/emu/waitlist.h"
#include "shim/thread_annotations.h"

namespace umemcg {

struct CAPABILITY("mutex") mutex {
  std::atomic<task_struct *> owner{nullptr};
  const char *name = "mutex";
  std::mutex wait_lock;              // emulator-internal: guards wait_list and hand-over
  std::deque<emu::Waiter *> wait_list;
  mutex() = default;
  explicit mutex(const char *n) : name(n) {}
};

#define DEFINE_MUTEX(x) ::umemcg::mutex x{#x}

inline void mutex_init(struct mutex *m) { m->owner.store(nullptr, std::memory_order_relaxed); }

void mutex_lock(struct mutex *m) ACQUIRE(m);
// Returns 0, or -EINTR if a fatal signal arrived while waiting.
[[nodiscard]] int mutex_lock_killable(struct mutex *m) TRY_ACQUIRE(0, m);
// Returns 1 on success, 0 if the mutex is held.
[[nodiscard]] int mutex_trylock(struct mutex *m) TRY_ACQUIRE(1, m);
void mutex_unlock(struct mutex *m) RELEASE(m);
inline bool mutex_is_locked(struct mutex *m) {
  return m->owner.load(std::memory_order_relaxed) != nullptr;
}
void lockdep_assert_held(struct mutex *m) ASSERT_CAPABILITY(m);

class SCOPED_CAPABILITY mutex_guard {
 public:
  explicit mutex_guard(struct mutex *m) ACQUIRE(m) : m_(m) { mutex_lock(m_); }
  ~mutex_guard() RELEASE() { mutex_unlock(m_); }
  mutex_guard(const mutex_guard &) = delete;
  mutex_guard &operator=(const mutex_guard &) = delete;

 private:
  struct mutex *m_;
};

}  // namespace umemcg
