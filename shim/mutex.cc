// SPDX-License-Identifier: GPL-2.0-only
// shim/mutex.cc: the mutex (see mutex.h).
#include "shim/mutex.h"

#include <string>

#include "shim/bug.h"
#include "shim/emu/machine_impl.h"
#include "shim/errno.h"
#include "shim/jiffies.h"

namespace umemcg {

namespace emu {
bool simulated_mode() { return g_machine && g_machine->sim(); }
}  // namespace emu

namespace {
bool fast_acquire(struct mutex *m) {
  task_struct *expected = nullptr;
  return m->owner.compare_exchange_strong(expected, current, std::memory_order_acquire,
                                          std::memory_order_relaxed);
}

int mutex_lock_common(struct mutex *m, unsigned int state) NO_THREAD_SAFETY_ANALYSIS {
  emu::check_may_sleep("mutex_lock");
  BUG_ON(m->owner.load(std::memory_order_relaxed) == current);  // recursive locking deadlock
  if (fast_acquire(m)) return 0;
  std::unique_lock<std::mutex> lk(m->wait_lock);
  // Re-check under wait_lock: the owner's unlock takes wait_lock to look for waiters.
  if (fast_acquire(m)) return 0;
  emu::Waiter w;
  w.task = current;
  w.enqueued_ns = ktime_get_ns();
  m->wait_list.push_back(&w);
  if (!emu::wait_for_grant(lk, w, state, m->name)) {
    emu::remove_waiter(m->wait_list, &w);
    return -EINTR;
  }
  return 0;  // the unlocker made us the owner
}
}  // namespace

void mutex_lock(struct mutex *m) NO_THREAD_SAFETY_ANALYSIS {
  mutex_lock_common(m, TASK_UNINTERRUPTIBLE);
}

int mutex_lock_killable(struct mutex *m) NO_THREAD_SAFETY_ANALYSIS {
  return mutex_lock_common(m, TASK_KILLABLE);
}

int mutex_trylock(struct mutex *m) NO_THREAD_SAFETY_ANALYSIS { return fast_acquire(m) ? 1 : 0; }

void mutex_unlock(struct mutex *m) NO_THREAD_SAFETY_ANALYSIS {
  WARN_ON_ONCE(m->owner.load(std::memory_order_relaxed) != current);
  std::lock_guard<std::mutex> g(m->wait_lock);
  if (m->wait_list.empty()) {
    m->owner.store(nullptr, std::memory_order_release);
    return;
  }
  emu::Waiter *w = m->wait_list.front();
  m->wait_list.pop_front();
  m->owner.store(w->task, std::memory_order_release);  // hand-over
  w->granted = true;
  wake_up_process(w->task);
}

void lockdep_assert_held(struct mutex *m) NO_THREAD_SAFETY_ANALYSIS {
  WARN_ON_ONCE(m->owner.load(std::memory_order_relaxed) != current);
}

}  // namespace umemcg
