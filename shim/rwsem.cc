// SPDX-License-Identifier: GPL-2.0-only
// shim/rwsem.cc: reader-writer semaphores: the count-word fast paths, the wait-list slow paths,
// statistics and hook points (see rwsem.h for the model and its Emulation: differences).
//
// Mirrors: kernel/locking/rwsem.c (Linux 6.19)
// Emulation: a woken task is put on a local wake list and woken after wait_lock is dropped, as
//   the kernel's wake_q; task_structs outlive the machine's tasks, so no reference is taken.
// Emulation: no task is real-time, so only the wait timeout makes a writer ask for a handoff.
#include "shim/rwsem.h"

#include <chrono>
#include <vector>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "shim/bug.h"
#include "shim/compiler.h"
#include "shim/emu/machine_impl.h"
#include "shim/errno.h"
#include "shim/hooks.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/preempt.h"
#include "shim/sched.h"

namespace umemcg {

enum rwsem_waiter_type { RWSEM_WAITING_FOR_WRITE, RWSEM_WAITING_FOR_READ };

enum rwsem_wake_type {
  RWSEM_WAKE_ANY,        // wake whatever is at the head of the queue
  RWSEM_WAKE_READERS,    // wake readers only
  RWSEM_WAKE_READ_OWNED  // the waker holds a read lock
};

// Time in the queue before a waiter may ask for a handoff: 4 ms at HZ = 1000 (kernel formula,
// DIV_ROUND_UP(HZ, 250)).
inline constexpr unsigned long RWSEM_WAIT_TIMEOUT = (HZ + 249) / 250;

struct rwsem_waiter {
  rwsem_waiter *prev = nullptr;  // wait_list links, under wait_lock
  rwsem_waiter *next = nullptr;
  // The waiting task. A reader's is cleared (release) when the lock is granted to it; after that
  // store the granter touches the waiter no more, for it lives on the reader's stack.
  std::atomic<task_struct *> task{nullptr};
  rwsem_waiter_type type = RWSEM_WAITING_FOR_READ;
  unsigned long timeout = 0;  // jiffies after which this waiter may request a handoff
  bool handoff_set = false;   // under wait_lock
  // Emulation: statistics. granted_ns is written by the granter before the release store.
  std::uint64_t enqueued_ns = 0;
  std::uint64_t granted_ns = 0;
};

namespace {

using WakeQ = std::vector<task_struct *>;

emu::HookPoint hp_down_read("down_read", 1);
emu::HookPoint hp_up_read("up_read", 1);
emu::HookPoint hp_down_write("down_write", 1);
emu::HookPoint hp_up_write("up_write", 1);
emu::HookPoint hp_down_read_trylock("down_read_trylock", 1);
emu::HookPoint hp_down_write_trylock("down_write_trylock", 1);
emu::HookPoint hp_down_read_killable("down_read_killable", 1);
emu::HookPoint hp_down_write_killable("down_write_killable", 1);
emu::HookPoint hp_downgrade_write("downgrade_write", 1);

inline std::uint64_t addr(const rw_semaphore *s) { return reinterpret_cast<std::uintptr_t>(s); }

// ---- the statistics' clock ----

// Emulation: the TSC is read directly, converted with one ratio measured against the steady
// clock at first use (2 ms of busy waiting, once per process). Used only where the CPU says the
// TSC is invariant (constant rate, running in every C-state), as the kernel's tsc clocksource.
struct TscCalibration {
  double ns_per_tick = 0;  // 0: no usable TSC, use the steady clock
  std::uint64_t tsc0 = 0;
};

std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

TscCalibration calibrate_tsc() {
  TscCalibration c;
#if defined(__x86_64__)
  unsigned int a = 0, b = 0, cx = 0, d = 0;
  if (!__get_cpuid(0x80000007, &a, &b, &cx, &d) || !(d & (1u << 8))) return c;
  const std::uint64_t t0 = steady_ns();
  const std::uint64_t c0 = __rdtsc();
  std::uint64_t t1 = t0, c1 = c0;
  while (t1 - t0 < 2 * NSEC_PER_MSEC) {
    t1 = steady_ns();
    c1 = __rdtsc();
  }
  if (c1 <= c0) return c;
  c.ns_per_tick = static_cast<double>(t1 - t0) / static_cast<double>(c1 - c0);
  c.tsc0 = c0;
#endif
  return c;
}

const TscCalibration &tsc_calibration() {
  static const TscCalibration c = calibrate_tsc();  // thread-safe one-time initialisation
  return c;
}

inline std::uint64_t native_clock_ns() {
#if defined(__x86_64__)
  const TscCalibration &c = tsc_calibration();
  if (likely(c.ns_per_tick > 0)) {
    // Signed: a CPU whose TSC lags the calibrating one by a few ticks reads as time 0.
    const auto ticks = static_cast<std::int64_t>(__rdtsc() - c.tsc0);
    return ticks > 0 ? static_cast<std::uint64_t>(static_cast<double>(ticks) * c.ns_per_tick)
                     : 0;
  }
#endif
  return steady_ns();
}

inline std::uint64_t stat_clock() {
  emu::Machine::Impl *m = emu::g_machine;
  // Simulated mode: one OS thread runs every task, so sim_now is read without a race.
  if (m && m->sim()) return m->sim_now;
  return native_clock_ns();
}

inline std::uint64_t elapsed(std::uint64_t from, std::uint64_t to) { return to > from ? to - from : 0; }

// ---- statistics ----

// The lock_stat switch (the kernel's lock_stat sysctl): on unless turned off.
std::atomic<bool> g_lock_stat{true};
inline bool lock_stat_on() { return likely(g_lock_stat.load(std::memory_order_relaxed)); }

// A count: one relaxed load and store, no locked instruction (see emu::RwsemStatWords).
inline void stat_inc(std::atomic<std::uint64_t> &c) {
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}
// A maximum: exact, a CAS only when v beats the current value.
inline void stat_max(std::atomic<std::uint64_t> &m, std::uint64_t v) {
  std::uint64_t cur = m.load(std::memory_order_relaxed);
  while (v > cur && !m.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {}
}

// A read hold starts: the start time goes to the reading task (lockdep keeps its held_locks in
// the task too), so each of many concurrent readers has its own.
inline void read_hold_begin(rw_semaphore *sem, std::uint64_t now) {
  if (!lock_stat_on()) return;
  stat_inc(sem->stats.read_acquired);
  task_struct *t = current;
  if (emu::TaskImpl *ti = t ? t->emu : nullptr) ti->held_reads.emplace_back(sem, now);
}

// A read hold ends (before the count is released). Nothing is recorded when the releasing task
// is not the one that acquired (up_read_non_owner style), runs outside a task, or took the lock
// while lock_stat was off. The record goes even when lock_stat is off now.
inline void read_hold_end(rw_semaphore *sem) {
  task_struct *t = current;
  emu::TaskImpl *ti = t ? t->emu : nullptr;
  if (!ti) return;
  auto &h = ti->held_reads;
  for (std::size_t i = h.size(); i-- > 0;) {
    if (h[i].first != sem) continue;
    if (lock_stat_on()) stat_max(sem->stats.max_read_hold_ns, elapsed(h[i].second, stat_clock()));
    h[i] = h.back();  // order does not matter: lookups are by lock
    h.pop_back();
    return;
  }
}

inline void write_hold_begin(rw_semaphore *sem, std::uint64_t now) {
  sem->write_timed = false;
  if (!lock_stat_on()) return;
  stat_inc(sem->stats.write_acquired);  // exact: writers are exclusive
  sem->write_acquired_ns = now;
  sem->write_timed = true;
}

inline void write_hold_end(rw_semaphore *sem) {
  if (sem->write_timed && lock_stat_on())
    stat_max(sem->stats.max_write_hold_ns, elapsed(sem->write_acquired_ns, stat_clock()));
}

// The fast paths' time stamp: none when lock_stat is off.
inline std::uint64_t stat_stamp() { return lock_stat_on() ? stat_clock() : 0; }

// ---- owner word ----

inline void rwsem_set_owner(rw_semaphore *sem) {
  sem->owner.store(reinterpret_cast<std::uintptr_t>(current), std::memory_order_relaxed);
}
inline void rwsem_clear_owner(rw_semaphore *sem) {
  sem->owner.store(0, std::memory_order_relaxed);
}
inline void rwsem_set_reader_owned(rw_semaphore *sem, task_struct *t) {
  sem->owner.store(reinterpret_cast<std::uintptr_t>(t) | RWSEM_READER_OWNED,
                   std::memory_order_relaxed);
}
inline task_struct *rwsem_owner(const rw_semaphore *sem) {
  return reinterpret_cast<task_struct *>(sem->owner.load(std::memory_order_relaxed) &
                                         ~RWSEM_READER_OWNED);
}

// ---- the wait list (the kernel's list_head), under wait_lock ----

inline bool list_empty(const rw_semaphore *sem) { return !sem->wait_list.first; }
inline rwsem_waiter *rwsem_first_waiter(rw_semaphore *sem) { return sem->wait_list.first; }
inline bool list_is_singular(const rw_semaphore *sem) {
  return sem->wait_list.first && sem->wait_list.first == sem->wait_list.last;
}

void rwsem_add_waiter(rw_semaphore *sem, rwsem_waiter *w) {
  emu::RwsemWaitList &l = sem->wait_list;
  w->next = nullptr;
  w->prev = l.last;
  if (l.last) l.last->next = w;
  else l.first = w;
  l.last = w;
  l.nr++;
}

void list_del(rw_semaphore *sem, rwsem_waiter *w) {
  emu::RwsemWaitList &l = sem->wait_list;
  if (w->prev) w->prev->next = w->next;
  else l.first = w->next;
  if (w->next) w->next->prev = w->prev;
  else l.last = w->prev;
  w->prev = w->next = nullptr;
  l.nr--;
}

// Removes a waiter; when the queue becomes empty, clears WAITERS and HANDOFF. Returns whether
// waiters remain.
bool rwsem_del_waiter(rw_semaphore *sem, rwsem_waiter *w) {
  list_del(sem, w);
  if (!list_empty(sem)) return true;
  sem->count.fetch_and(~(RWSEM_FLAG_HANDOFF | RWSEM_FLAG_WAITERS), std::memory_order_relaxed);
  return false;
}

void wake_up_q(WakeQ &q) {
  for (task_struct *t : q) wake_up_process(t);
  q.clear();
}

// Hands the lock on to the waiters at the head of the queue, if it can. Caller holds wait_lock
// and the queue is not empty.
//   - A writer at the head is only woken (RWSEM_WAKE_ANY): it takes the lock itself in
//     rwsem_try_write_lock(), and may be overtaken meanwhile; readers stay blocked by WAITERS.
//   - A reader at the head: every queued reader (up to MAX_READERS_WAKEUP) gets the lock now,
//     writers keep their place in the queue (phase-fair).
void rwsem_mark_wake(rw_semaphore *sem, rwsem_wake_type wake_type, WakeQ &wake_q) {
  rwsem_waiter *waiter = rwsem_first_waiter(sem);
  if (waiter->type == RWSEM_WAITING_FOR_WRITE) {
    if (wake_type == RWSEM_WAKE_ANY) wake_q.push_back(waiter->task.load(std::memory_order_relaxed));
    return;
  }
  // No reader wake-up when the reader count has overflowed into READFAIL.
  if (unlikely(sem->count.load(std::memory_order_relaxed) < 0)) return;

  long adjustment = 0;
  if (wake_type != RWSEM_WAKE_READ_OWNED) {
    // Take one read bias first, so that a writer stealing the lock now is seen and we back off.
    adjustment = RWSEM_READER_BIAS;
    const long oldcount = sem->count.fetch_add(adjustment);
    if (unlikely(oldcount & RWSEM_WRITER_MASK)) {
      // A writer holds it. After waiting too long, ask for a handoff: no more stealing.
      if (time_after(jiffies, waiter->timeout)) {
        if (!(oldcount & RWSEM_FLAG_HANDOFF)) adjustment -= RWSEM_FLAG_HANDOFF;
        waiter->handoff_set = true;
      }
      sem->count.fetch_add(-adjustment);
      return;
    }
    rwsem_set_reader_owned(sem, waiter->task.load(std::memory_order_relaxed));
  }

  // First pass: take the readers off the queue and count them; the count word gets all their
  // biases before any of them is told (a woken reader may release at once).
  rwsem_waiter *granted[MAX_READERS_WAKEUP];
  long woken = 0;
  for (rwsem_waiter *w = sem->wait_list.first, *next; w && woken < MAX_READERS_WAKEUP; w = next) {
    next = w->next;
    if (w->type == RWSEM_WAITING_FOR_WRITE) continue;
    list_del(sem, w);
    granted[woken++] = w;
  }
  adjustment = woken * RWSEM_READER_BIAS - adjustment;
  const long oldcount = sem->count.load(std::memory_order_relaxed);
  if (list_empty(sem)) {
    adjustment -= RWSEM_FLAG_WAITERS;
    if (oldcount & RWSEM_FLAG_HANDOFF) adjustment -= RWSEM_FLAG_HANDOFF;
  } else if (woken && (oldcount & RWSEM_FLAG_HANDOFF)) {
    // A reader got the lock: writers need no longer be forced to hand it over.
    adjustment -= RWSEM_FLAG_HANDOFF;
  }
  if (adjustment) sem->count.fetch_add(adjustment, std::memory_order_relaxed);

  // Second pass: grant. The release store pairs with the reader's acquire load of its task.
  const std::uint64_t now = stat_clock();
  for (long i = 0; i < woken; i++) {
    rwsem_waiter *w = granted[i];
    task_struct *tsk = w->task.load(std::memory_order_relaxed);
    w->granted_ns = now;
    w->task.store(nullptr, std::memory_order_release);
    wake_q.push_back(tsk);
  }
}

// Removes a waiter that gives up (a fatal signal); if it was first, the waiters behind it may
// now be able to go. Caller holds wait_lock through lk, which is released.
void rwsem_del_wake_waiter(rw_semaphore *sem, rwsem_waiter *waiter,
                           std::unique_lock<std::mutex> &lk) {
  WakeQ wake_q;
  const bool first = rwsem_first_waiter(sem) == waiter;
  if (rwsem_del_waiter(sem, waiter) && first) rwsem_mark_wake(sem, RWSEM_WAKE_ANY, wake_q);
  lk.unlock();
  wake_up_q(wake_q);
}

// Wakes waiters when the lock is free of writers: all of them if it is free, readers only if
// readers hold it.
void rwsem_cond_wake_waiter(rw_semaphore *sem, long count, WakeQ &wake_q) {
  if (count & RWSEM_WRITER_MASK) return;
  rwsem_mark_wake(sem, (count & RWSEM_READER_MASK) ? RWSEM_WAKE_READERS : RWSEM_WAKE_ANY, wake_q);
}

// The slow part of a release: the count said WAITERS.
void rwsem_wake(rw_semaphore *sem) {
  WakeQ wake_q;
  {
    std::lock_guard<std::mutex> g(sem->wait_lock);
    if (!list_empty(sem)) rwsem_mark_wake(sem, RWSEM_WAKE_ANY, wake_q);
  }
  wake_up_q(wake_q);
}

inline bool signal_pending_state(unsigned int state, task_struct *p) {
  if (!(state & (TASK_INTERRUPTIBLE | TASK_WAKEKILL))) return false;
  if (!signal_pending(p)) return false;
  return (state & TASK_INTERRUPTIBLE) || fatal_signal_pending(p);
}

// might_sleep(): BUG when called where sleeping is illegal, even if this call would not sleep.
inline void rwsem_might_sleep(const char *what) {
  if (unlikely(!current || !preemptible())) emu::check_may_sleep(what);
}

// ---- readers ----

// The reader fast path: one atomic add. The bias stays in the count whatever happens; the slow
// path removes it if it has to queue.
inline bool rwsem_read_trylock(rw_semaphore *sem, long *cntp) {
  *cntp = sem->count.fetch_add(RWSEM_READER_BIAS, std::memory_order_acquire) + RWSEM_READER_BIAS;
  WARN_ON_ONCE(*cntp < 0);  // reader count overflow (READFAIL)
  if (likely(!(*cntp & RWSEM_READ_FAILED_MASK))) {
    rwsem_set_reader_owned(sem, current);
    return true;
  }
  return false;
}

int rwsem_down_read_slowpath(rw_semaphore *sem, long count, unsigned int state) {
  const long rcnt = count >> RWSEM_READER_SHIFT;
  WakeQ wake_q;

  // Lock stealing: the lock is not writer-held and no handoff is pending, so our bias in the
  // count makes us an owner. Not when other readers very likely hold it: then a waiter (a writer)
  // is waiting for them, and joining them would starve it.
  const bool reader_owned = sem->owner.load(std::memory_order_relaxed) & RWSEM_READER_OWNED;
  if (!(reader_owned && rcnt > 1 && !(count & RWSEM_WRITER_LOCKED)) &&
      !(count & (RWSEM_WRITER_LOCKED | RWSEM_FLAG_HANDOFF))) {
    rwsem_set_reader_owned(sem, current);
    // The first reader in: let the queued readers join.
    if (rcnt == 1 && (count & RWSEM_FLAG_WAITERS)) {
      {
        std::lock_guard<std::mutex> g(sem->wait_lock);
        if (!list_empty(sem)) rwsem_mark_wake(sem, RWSEM_WAKE_READ_OWNED, wake_q);
      }
      wake_up_q(wake_q);
    }
    read_hold_begin(sem, stat_clock());
    return 0;
  }

  rwsem_waiter waiter;
  waiter.task.store(current, std::memory_order_relaxed);
  waiter.type = RWSEM_WAITING_FOR_READ;
  waiter.timeout = jiffies + RWSEM_WAIT_TIMEOUT;
  waiter.enqueued_ns = stat_clock();

  long adjustment = -RWSEM_READER_BIAS;
  std::unique_lock<std::mutex> lk(sem->wait_lock);
  if (list_empty(sem)) {
    // Nobody queued and no writer: our bias already makes us an owner.
    if (!(sem->count.load(std::memory_order_relaxed) & RWSEM_WRITER_MASK)) {
      std::atomic_thread_fence(std::memory_order_acquire);  // ACQUIRE after the control dependency
      lk.unlock();
      rwsem_set_reader_owned(sem, current);
      read_hold_begin(sem, stat_clock());
      return 0;
    }
    adjustment += RWSEM_FLAG_WAITERS;
  }
  rwsem_add_waiter(sem, &waiter);

  // Queued: our bias goes (and WAITERS comes if we are the first waiter). Fully ordered.
  count = sem->count.fetch_add(adjustment) + adjustment;
  // No holder left: wake the head. No writer and we made the queue: readers may join now.
  if (!(count & RWSEM_LOCK_MASK) ||
      (!(count & RWSEM_WRITER_MASK) && (adjustment & RWSEM_FLAG_WAITERS)))
    rwsem_mark_wake(sem, RWSEM_WAKE_ANY, wake_q);
  lk.unlock();
  wake_up_q(wake_q);

  if (lock_stat_on()) stat_inc(sem->stats.read_contended);
  for (;;) {
    set_current_state(state);
    if (!waiter.task.load(std::memory_order_acquire)) break;  // granted by rwsem_mark_wake()
    if (signal_pending_state(state, current)) {
      lk.lock();
      if (waiter.task.load(std::memory_order_relaxed)) {
        __set_current_state(TASK_RUNNING);
        emu::set_wait_reason("running");
        rwsem_del_wake_waiter(sem, &waiter, lk);
        return -EINTR;
      }
      lk.unlock();
      break;  // granted meanwhile (ordered by wait_lock): we own it
    }
    emu::set_wait_reason(sem->name);
    schedule();
  }
  __set_current_state(TASK_RUNNING);
  emu::set_wait_reason("running");
  if (lock_stat_on())
    stat_max(sem->stats.max_read_wait_ns, elapsed(waiter.enqueued_ns, waiter.granted_ns));
  read_hold_begin(sem, waiter.granted_ns);
  return 0;
}

int __down_read_common(rw_semaphore *sem, unsigned int state) {
  long count;
  if (likely(rwsem_read_trylock(sem, &count))) {
    read_hold_begin(sem, stat_stamp());
    return 0;
  }
  return rwsem_down_read_slowpath(sem, count, state);
}

// ---- writers ----

inline bool rwsem_write_trylock(rw_semaphore *sem) {
  long tmp = RWSEM_UNLOCKED_VALUE;
  if (sem->count.compare_exchange_strong(tmp, RWSEM_WRITER_LOCKED, std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
    rwsem_set_owner(sem);
    return true;
  }
  return false;
}

// A queued writer tries to take the lock (caller holds wait_lock). If the lock is held and this
// waiter has waited past its timeout, it sets HANDOFF instead: then only the first waiter may
// take the lock, and no reader or writer can steal it.
bool rwsem_try_write_lock(rw_semaphore *sem, rwsem_waiter *waiter) {
  rwsem_waiter *first = rwsem_first_waiter(sem);
  long count = sem->count.load(std::memory_order_relaxed);
  long next;
  do {
    const bool has_handoff = count & RWSEM_FLAG_HANDOFF;
    // Honour a handoff only when the first waiter asked for it.
    if (has_handoff && first->handoff_set && waiter != first) return false;
    next = count;
    if (count & RWSEM_LOCK_MASK) {
      if (has_handoff || !time_after(jiffies, waiter->timeout)) return false;
      next |= RWSEM_FLAG_HANDOFF;
    } else {
      next |= RWSEM_WRITER_LOCKED;
      next &= ~RWSEM_FLAG_HANDOFF;
      if (list_is_singular(sem)) next &= ~RWSEM_FLAG_WAITERS;
    }
  } while (!sem->count.compare_exchange_weak(count, next, std::memory_order_acquire,
                                             std::memory_order_relaxed));
  if (next & RWSEM_FLAG_HANDOFF) {
    first->handoff_set = true;
    return false;
  }
  list_del(sem, waiter);
  rwsem_set_owner(sem);
  return true;
}

int rwsem_down_write_slowpath(rw_semaphore *sem, unsigned int state) {
  rwsem_waiter waiter;
  waiter.task.store(current, std::memory_order_relaxed);
  waiter.type = RWSEM_WAITING_FOR_WRITE;
  waiter.timeout = jiffies + RWSEM_WAIT_TIMEOUT;
  waiter.enqueued_ns = stat_clock();
  WakeQ wake_q;

  std::unique_lock<std::mutex> lk(sem->wait_lock);
  rwsem_add_waiter(sem, &waiter);
  if (rwsem_first_waiter(sem) != &waiter) {
    // Readers ahead of us may be able to go now (the lock may have become free or reader-held).
    rwsem_cond_wake_waiter(sem, sem->count.load(std::memory_order_relaxed), wake_q);
    if (!wake_q.empty()) {
      lk.unlock();
      wake_up_q(wake_q);
      lk.lock();
    }
  } else {
    sem->count.fetch_or(RWSEM_FLAG_WAITERS, std::memory_order_relaxed);
  }

  bool contended = false;
  set_current_state(state);
  for (;;) {
    if (rwsem_try_write_lock(sem, &waiter)) break;  // implies ACQUIRE
    lk.unlock();
    if (!contended) {
      contended = true;
      if (lock_stat_on()) stat_inc(sem->stats.write_contended);
    }
    if (signal_pending_state(state, current)) {
      __set_current_state(TASK_RUNNING);
      emu::set_wait_reason("running");
      lk.lock();
      rwsem_del_wake_waiter(sem, &waiter, lk);
      return -EINTR;
    }
    emu::set_wait_reason(sem->name);
    schedule();
    set_current_state(state);
    lk.lock();
  }
  __set_current_state(TASK_RUNNING);
  lk.unlock();
  const std::uint64_t now = stat_clock();
  if (contended) {
    emu::set_wait_reason("running");
    if (lock_stat_on()) stat_max(sem->stats.max_write_wait_ns, elapsed(waiter.enqueued_ns, now));
  }
  write_hold_begin(sem, now);
  return 0;
}

int __down_write_common(rw_semaphore *sem, unsigned int state) {
  if (likely(rwsem_write_trylock(sem))) {
    write_hold_begin(sem, stat_stamp());
    return 0;
  }
  return rwsem_down_write_slowpath(sem, state);
}

}  // namespace

void init_rwsem(rw_semaphore *sem) {
  sem->count.store(RWSEM_UNLOCKED_VALUE, std::memory_order_relaxed);
  sem->owner.store(0, std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(sem->wait_lock);
  WARN_ON_ONCE(!list_empty(sem));
}

// Shaped as the write entry points below on purpose: each is a kernel function, own hook point.
void down_read(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_down_read, addr(sem));
  rwsem_might_sleep("down_read");
  __down_read_common(sem, TASK_UNINTERRUPTIBLE);
  UMEMCG_FEXIT(hp_down_read, 0, addr(sem));
}

int down_read_killable(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_down_read_killable, addr(sem));
  rwsem_might_sleep("down_read_killable");
  const int ret = __down_read_common(sem, TASK_KILLABLE);
  UMEMCG_FEXIT(hp_down_read_killable, ret, addr(sem));
  return ret;
}

int down_read_trylock(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_down_read_trylock, addr(sem));
  int ret = 0;
  long tmp = sem->count.load(std::memory_order_relaxed);
  while (!(tmp & RWSEM_READ_FAILED_MASK)) {
    if (sem->count.compare_exchange_weak(tmp, tmp + RWSEM_READER_BIAS, std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
      rwsem_set_reader_owned(sem, current);
      read_hold_begin(sem, stat_stamp());
      ret = 1;
      break;
    }
  }
  UMEMCG_FEXIT(hp_down_read_trylock, ret, addr(sem));
  return ret;
}

void up_read(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_up_read, addr(sem));
  read_hold_end(sem);
  const long tmp = sem->count.fetch_sub(RWSEM_READER_BIAS, std::memory_order_release) -
                   RWSEM_READER_BIAS;
  WARN_ON_ONCE(tmp < 0);  // released a read lock nobody held
  // The last reader out with waiters queued wakes them.
  if (unlikely((tmp & (RWSEM_LOCK_MASK | RWSEM_FLAG_WAITERS)) == RWSEM_FLAG_WAITERS))
    rwsem_wake(sem);
  UMEMCG_FEXIT(hp_up_read, 0, addr(sem));
}

// Shaped as the read entry points above on purpose: each is a kernel function, own hook point.
void down_write(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_down_write, addr(sem));
  rwsem_might_sleep("down_write");
  __down_write_common(sem, TASK_UNINTERRUPTIBLE);
  UMEMCG_FEXIT(hp_down_write, 0, addr(sem));
}

int down_write_killable(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_down_write_killable, addr(sem));
  rwsem_might_sleep("down_write_killable");
  const int ret = __down_write_common(sem, TASK_KILLABLE);
  UMEMCG_FEXIT(hp_down_write_killable, ret, addr(sem));
  return ret;
}

int down_write_trylock(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_down_write_trylock, addr(sem));
  int ret = 0;
  if (rwsem_write_trylock(sem)) {
    write_hold_begin(sem, stat_stamp());
    ret = 1;
  }
  UMEMCG_FEXIT(hp_down_write_trylock, ret, addr(sem));
  return ret;
}

void up_write(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_up_write, addr(sem));
  WARN_ON_ONCE(rwsem_owner(sem) != current);
  write_hold_end(sem);
  rwsem_clear_owner(sem);
  const long tmp = sem->count.fetch_sub(RWSEM_WRITER_LOCKED, std::memory_order_release);
  if (unlikely(tmp & RWSEM_FLAG_WAITERS)) rwsem_wake(sem);
  UMEMCG_FEXIT(hp_up_write, 0, addr(sem));
}

void downgrade_write(rw_semaphore *sem) NO_THREAD_SAFETY_ANALYSIS {
  UMEMCG_FENTRY(hp_downgrade_write, addr(sem));
  WARN_ON_ONCE(rwsem_owner(sem) != current);
  write_hold_end(sem);
  // Not a new read acquisition: the read hold starts without counting one.
  emu::TaskImpl *ti = current ? current->emu : nullptr;
  if (ti && lock_stat_on()) ti->held_reads.emplace_back(sem, stat_clock());
  const long tmp = sem->count.fetch_add(-RWSEM_WRITER_LOCKED + RWSEM_READER_BIAS,
                                        std::memory_order_release);
  rwsem_set_reader_owned(sem, current);
  if (tmp & RWSEM_FLAG_WAITERS) {
    // Only readers can join now; a writer at the head keeps waiting.
    WakeQ wake_q;
    {
      std::lock_guard<std::mutex> g(sem->wait_lock);
      if (!list_empty(sem)) rwsem_mark_wake(sem, RWSEM_WAKE_READ_OWNED, wake_q);
    }
    wake_up_q(wake_q);
  }
  UMEMCG_FEXIT(hp_downgrade_write, 0, addr(sem));
}

bool rwsem_is_contended(rw_semaphore *sem) {
  std::lock_guard<std::mutex> g(sem->wait_lock);
  return !list_empty(sem);
}

rwsem_stats rwsem_get_stats(const rw_semaphore *sem) {
  const emu::RwsemStatWords &w = sem->stats;
  auto rd = [](const std::atomic<std::uint64_t> &a) { return a.load(std::memory_order_relaxed); };
  rwsem_stats s;
  s.read_acquired = rd(w.read_acquired);
  s.write_acquired = rd(w.write_acquired);
  s.read_contended = rd(w.read_contended);
  s.write_contended = rd(w.write_contended);
  s.max_read_hold_ns = rd(w.max_read_hold_ns);
  s.max_write_hold_ns = rd(w.max_write_hold_ns);
  s.max_read_wait_ns = rd(w.max_read_wait_ns);
  s.max_write_wait_ns = rd(w.max_write_wait_ns);
  return s;
}

void rwsem_reset_stats(rw_semaphore *sem) {
  emu::RwsemStatWords &w = sem->stats;
  for (std::atomic<std::uint64_t> *a :
       {&w.read_acquired, &w.write_acquired, &w.read_contended, &w.write_contended,
        &w.max_read_hold_ns, &w.max_write_hold_ns, &w.max_read_wait_ns, &w.max_write_wait_ns})
    a->store(0, std::memory_order_relaxed);
}

namespace emu {

std::uint64_t rwsem_clock_ns() { return stat_clock(); }

bool set_rwsem_lock_stat(bool on) { return g_lock_stat.exchange(on); }

unsigned long rwsem_nr_waiters(rw_semaphore *sem) {
  std::lock_guard<std::mutex> g(sem->wait_lock);
  return sem->wait_list.nr;
}

double rwsem_tsc_ns_per_tick() {
#if defined(__x86_64__)
  return tsc_calibration().ns_per_tick;
#else
  return 0;
#endif
}

}  // namespace emu

}  // namespace umemcg
