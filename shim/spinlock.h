// SPDX-License-Identifier: GPL-2.0-only
// shim/spinlock.h: spinlock_t and raw_spinlock_t.
//
// Mirrors: include/linux/spinlock.h, include/linux/spinlock_api_smp.h (Linux 6.19, !RT)
// A spinlock disables preemption while held; contenders on other vCPUs spin. Holding one across
// a sleep is a bug (BUG "scheduling while atomic").
// Emulation: a test-and-test-and-set lock on one atomic word (the kernel uses queued spinlocks):
//   same exclusion and ordering (acquire on lock, release on unlock), different fairness.
// Emulation: in simulated mode a spinlock can never be found held: a task never switches out
//   with preemption disabled. Finding one held there means a lock leaked, which is a BUG.
#pragma once

#include <atomic>
#include <thread>

#include "shim/bug.h"
#include "shim/preempt.h"
#include "shim/thread_annotations.h"

namespace umemcg {

namespace emu {
bool simulated_mode();
}

struct CAPABILITY("spinlock") spinlock_t {
  std::atomic<int> locked{0};
  const char *name = "spinlock";
};
using raw_spinlock_t = spinlock_t;

#define DEFINE_SPINLOCK(x) ::umemcg::spinlock_t x{0, #x}
#define DEFINE_RAW_SPINLOCK(x) DEFINE_SPINLOCK(x)

inline void spin_lock_init(spinlock_t *l) { l->locked.store(0, std::memory_order_relaxed); }

inline void __spin_acquire(spinlock_t *l) {
  for (;;) {
    if (!l->locked.exchange(1, std::memory_order_acquire)) return;
    BUG_ON(emu::simulated_mode());
    while (l->locked.load(std::memory_order_relaxed)) std::this_thread::yield();
  }
}

inline void spin_lock(spinlock_t *l) ACQUIRE(l) NO_THREAD_SAFETY_ANALYSIS {
  preempt_disable();
  __spin_acquire(l);
}
inline void spin_unlock(spinlock_t *l) RELEASE(l) NO_THREAD_SAFETY_ANALYSIS {
  l->locked.store(0, std::memory_order_release);
  preempt_enable();
}
[[nodiscard]] inline bool spin_trylock(spinlock_t *l) TRY_ACQUIRE(true, l)
    NO_THREAD_SAFETY_ANALYSIS {
  preempt_disable();
  if (!l->locked.load(std::memory_order_relaxed) &&
      !l->locked.exchange(1, std::memory_order_acquire))
    return true;
  preempt_enable();
  return false;
}
inline void spin_lock_irq(spinlock_t *l) ACQUIRE(l) NO_THREAD_SAFETY_ANALYSIS {
  local_irq_disable();
  spin_lock(l);
}
inline void spin_unlock_irq(spinlock_t *l) RELEASE(l) NO_THREAD_SAFETY_ANALYSIS {
  spin_unlock(l);
  local_irq_enable();
}
inline void spin_lock_irqsave_impl(spinlock_t *l, unsigned long *flags) ACQUIRE(l)
    NO_THREAD_SAFETY_ANALYSIS {
  *flags = emu::irq_save();
  spin_lock(l);
}
inline void spin_unlock_irqrestore(spinlock_t *l, unsigned long flags) RELEASE(l)
    NO_THREAD_SAFETY_ANALYSIS {
  spin_unlock(l);
  emu::irq_restore(flags);
}
#define spin_lock_irqsave(l, flags) ::umemcg::spin_lock_irqsave_impl((l), &(flags))
#define raw_spin_lock spin_lock
#define raw_spin_unlock spin_unlock
#define raw_spin_lock_irqsave spin_lock_irqsave
#define raw_spin_unlock_irqrestore spin_unlock_irqrestore

inline bool spin_is_locked(spinlock_t *l) { return l->locked.load(std::memory_order_relaxed); }
inline void lockdep_assert_held(spinlock_t *l) ASSERT_CAPABILITY(l) {
  WARN_ON_ONCE(!spin_is_locked(l));
}

// Scoped guard (the kernel's guard(spinlock)).
class SCOPED_CAPABILITY spin_guard {
 public:
  explicit spin_guard(spinlock_t *l) ACQUIRE(l) : l_(l) { spin_lock(l_); }
  ~spin_guard() RELEASE() { spin_unlock(l_); }
  spin_guard(const spin_guard &) = delete;
  spin_guard &operator=(const spin_guard &) = delete;

 private:
  spinlock_t *l_;
};

}  // namespace umemcg
