// SPDX-License-Identifier: GPL-2.0-only
// shim/rwsem.cc: reader-writer semaphores (see rwsem.h).
#include "shim/rwsem.h"

#include <algorithm>

#include "shim/bug.h"
#include "shim/emu/machine_impl.h"
#include "shim/errno.h"
#include "shim/hooks.h"
#include "shim/jiffies.h"

namespace umemcg {

namespace {
emu::HookPoint hp_down_read("down_read", 1);
emu::HookPoint hp_up_read("up_read", 1);
emu::HookPoint hp_down_write("down_write", 1);
emu::HookPoint hp_up_write("up_write", 1);
emu::HookPoint hp_down_read_trylock("down_read_trylock", 1);
emu::HookPoint hp_down_write_trylock("down_write_trylock", 1);
emu::HookPoint hp_down_read_killable("down_read_killable", 1);
emu::HookPoint hp_down_write_killable("down_write_killable", 1);

inline std::uint64_t addr(const rw_semaphore *s) { return reinterpret_cast<std::uintptr_t>(s); }

void note_read_acquired(rw_semaphore *sem, task_struct *t, std::uint64_t now) {
  sem->stats.read_acquired++;
  if (emu::TaskImpl *ti = emu::task_impl(t)) ti->held_reads.emplace_back(sem, now);
}

void note_write_acquired(rw_semaphore *sem, task_struct *t, std::uint64_t now) {
  sem->owner = t;
  sem->write_acquired_ns = now;
  sem->stats.write_acquired++;
}

// Hands the lock to waiters at the head of the queue if it is free enough. Caller holds
// wait_lock. A writer at the head needs the lock free; a reader at the head needs no writer, and
// brings every queued reader along (writers between them keep their place).
void rwsem_mark_wake(rw_semaphore *sem) {
  if (sem->wait_list.empty() || sem->owner) return;
  const std::uint64_t now = ktime_get_ns();
  emu::Waiter *head = sem->wait_list.front();
  if (head->writer) {
    if (sem->readers) return;
    sem->wait_list.pop_front();
    sem->stats.max_write_wait_ns =
        std::max(sem->stats.max_write_wait_ns, now - head->enqueued_ns);
    note_write_acquired(sem, head->task, now);
    head->granted = true;
    wake_up_process(head->task);
    return;
  }
  int woken = 0;
  for (auto it = sem->wait_list.begin();
       it != sem->wait_list.end() && woken < MAX_READERS_WAKEUP;) {
    emu::Waiter *w = *it;
    if (w->writer) {
      ++it;
      continue;
    }
    it = sem->wait_list.erase(it);
    sem->readers++;
    sem->stats.max_read_wait_ns = std::max(sem->stats.max_read_wait_ns, now - w->enqueued_ns);
    note_read_acquired(sem, w->task, now);
    w->granted = true;
    wake_up_process(w->task);
    woken++;
  }
}

bool read_trylock_locked(rw_semaphore *sem) {
  // A queued waiter (necessarily behind a holder) blocks new readers: writer preference.
  if (sem->owner || !sem->wait_list.empty()) return false;
  sem->readers++;
  note_read_acquired(sem, current, ktime_get_ns());
  return true;
}

bool write_trylock_locked(rw_semaphore *sem) {
  if (sem->owner || sem->readers || !sem->wait_list.empty()) return false;
  note_write_acquired(sem, current, ktime_get_ns());
  return true;
}

int down_common(rw_semaphore *sem, bool writer, unsigned int state) {
  emu::check_may_sleep(writer ? "down_write" : "down_read");
  std::unique_lock<std::mutex> lk(sem->wait_lock);
  if (writer ? write_trylock_locked(sem) : read_trylock_locked(sem)) return 0;
  (writer ? sem->stats.write_contended : sem->stats.read_contended)++;
  emu::Waiter w;
  w.task = current;
  w.writer = writer;
  w.enqueued_ns = ktime_get_ns();
  sem->wait_list.push_back(&w);
  if (!emu::wait_for_grant(lk, w, state, sem->name)) {
    emu::remove_waiter(sem->wait_list, &w);
    // Our leaving may let the waiters behind us in (a writer that blocked readers).
    rwsem_mark_wake(sem);
    return -EINTR;
  }
  return 0;
}

void release_read_locked(rw_semaphore *sem) {
  const std::uint64_t now = ktime_get_ns();
  if (emu::TaskImpl *ti = emu::task_impl(current)) {
    auto &h = ti->held_reads;
    for (auto it = h.rbegin(); it != h.rend(); ++it) {
      if (it->first != sem) continue;
      sem->stats.max_read_hold_ns = std::max(sem->stats.max_read_hold_ns, now - it->second);
      h.erase(std::next(it).base());
      break;
    }
  }
  WARN_ON_ONCE(sem->readers <= 0);
  if (--sem->readers == 0) rwsem_mark_wake(sem);
}

void release_write_locked(rw_semaphore *sem) {
  WARN_ON_ONCE(sem->owner != current);
  const std::uint64_t now = ktime_get_ns();
  sem->stats.max_write_hold_ns = std::max(sem->stats.max_write_hold_ns,
                                          now - sem->write_acquired_ns);
  sem->owner = nullptr;
  rwsem_mark_wake(sem);
}
}  // namespace

void down_read(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_down_read, addr(sem));
  down_common(sem, false, TASK_UNINTERRUPTIBLE);
  UMEMCG_FEXIT(hp_down_read, 0, addr(sem));
}

int down_read_killable(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_down_read_killable, addr(sem));
  int ret = down_common(sem, false, TASK_KILLABLE);
  UMEMCG_FEXIT(hp_down_read_killable, ret, addr(sem));
  return ret;
}

int down_read_trylock(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_down_read_trylock, addr(sem));
  int ret;
  {
    std::lock_guard<std::mutex> g(sem->wait_lock);
    ret = read_trylock_locked(sem) ? 1 : 0;
  }
  UMEMCG_FEXIT(hp_down_read_trylock, ret, addr(sem));
  return ret;
}

void up_read(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_up_read, addr(sem));
  {
    std::lock_guard<std::mutex> g(sem->wait_lock);
    release_read_locked(sem);
  }
  UMEMCG_FEXIT(hp_up_read, 0, addr(sem));
}

void down_write(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_down_write, addr(sem));
  down_common(sem, true, TASK_UNINTERRUPTIBLE);
  UMEMCG_FEXIT(hp_down_write, 0, addr(sem));
}

int down_write_killable(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_down_write_killable, addr(sem));
  int ret = down_common(sem, true, TASK_KILLABLE);
  UMEMCG_FEXIT(hp_down_write_killable, ret, addr(sem));
  return ret;
}

int down_write_trylock(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_down_write_trylock, addr(sem));
  int ret;
  {
    std::lock_guard<std::mutex> g(sem->wait_lock);
    ret = write_trylock_locked(sem) ? 1 : 0;
  }
  UMEMCG_FEXIT(hp_down_write_trylock, ret, addr(sem));
  return ret;
}

void up_write(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_up_write, addr(sem));
  {
    std::lock_guard<std::mutex> g(sem->wait_lock);
    release_write_locked(sem);
  }
  UMEMCG_FEXIT(hp_up_write, 0, addr(sem));
}

void downgrade_write(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  std::lock_guard<std::mutex> g(sem->wait_lock);
  WARN_ON_ONCE(sem->owner != current);
  const std::uint64_t now = ktime_get_ns();
  sem->stats.max_write_hold_ns = std::max(sem->stats.max_write_hold_ns,
                                          now - sem->write_acquired_ns);
  sem->owner = nullptr;
  sem->readers++;
  note_read_acquired(sem, current, now);
  sem->stats.read_acquired--;  // not a new acquisition
  // Only readers can join now; a writer at the head keeps waiting.
  if (!sem->wait_list.empty() && !sem->wait_list.front()->writer) rwsem_mark_wake(sem);
}

bool rwsem_is_locked(rw_semaphore *sem) {
  std::lock_guard<std::mutex> g(sem->wait_lock);
  return sem->owner || sem->readers;
}

bool rwsem_is_contended(rw_semaphore *sem) {
  std::lock_guard<std::mutex> g(sem->wait_lock);
  return !sem->wait_list.empty();
}

rwsem_stats rwsem_get_stats(rw_semaphore *sem) {
  std::lock_guard<std::mutex> g(sem->wait_lock);
  return sem->stats;
}

void rwsem_reset_stats(rw_semaphore *sem) {
  std::lock_guard<std::mutex> g(sem->wait_lock);
  sem->stats = rwsem_stats{};
}

}  // namespace umemcg
