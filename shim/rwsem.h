// SPDX-License-Identifier: GPL-2.0-only
// shim/rwsem.h: struct rw_semaphore with the kernel's design and semantics, statistics and hook
// points.
//
// Mirrors: include/linux/rwsem.h, kernel/locking/rwsem.c (Linux 6.19)
// Design reproduced (see rwsem.cc for the reasoning at each step):
//   - one atomic count word: RWSEM_WRITER_LOCKED (bit 0), RWSEM_FLAG_WAITERS (bit 1),
//     RWSEM_FLAG_HANDOFF (bit 2), the reader count in units of RWSEM_READER_BIAS (bits 8-62),
//     RWSEM_FLAG_READFAIL (bit 63); an owner word (the writer, or the last reader with
//     RWSEM_READER_OWNED);
//   - lock-free fast paths: a reader adds RWSEM_READER_BIAS and owns the lock unless a writer,
//     a waiter, a handoff or a reader overflow shows in the old value; a writer cmpxchg's
//     0 -> RWSEM_WRITER_LOCKED; the releases subtract and only take the slow path when
//     RWSEM_FLAG_WAITERS is set;
//   - the wait list (under wait_lock) only when contended; a waiting writer blocks later readers
//     (RWSEM_FLAG_WAITERS fails their fast path, and the slow path queues a reader behind any
//     waiter when other readers hold the lock: the scenario of seed 000, one slow reader, one
//     waiting writer, everyone else stalls);
//   - a release to a reader at the head of the queue grants every queued reader at once (up to
//     MAX_READERS_WAKEUP), writers between them keep their place;
//   - woken writers take the lock themselves and may be overtaken (a reader taking a free lock
//     when it would be the only reader, a new writer in the slow path); a waiter queued longer
//     than RWSEM_WAIT_TIMEOUT jiffies sets RWSEM_FLAG_HANDOFF, after which only the first
//     waiter can get the lock;
//   - down_read_trylock / down_write_trylock never sleep; the killable variants return -EINTR
//     on a fatal signal.
// Emulation: no optimistic spinning on the owner (CONFIG_RWSEM_SPIN_ON_OWNER off), so no
//   RWSEM_NONSPINNABLE bit and no osq; wait_lock is an internal std::mutex (raw_spinlock_t in
//   the kernel) never held across a sleep; no preempt_disable() around the fast paths.
// Statistics per lock (lockstat-like; on unless emu::set_rwsem_lock_stat(false), as the kernel's
//   lock_stat switch): max hold time and max wait time, readers and writers apart, plus
//   acquisition and contention counts. Times come from rwsem_clock_ns():
//   the virtual clock in simulated mode, the calibrated TSC in native mode. A reader's start
//   time is kept in its task (like lockdep's held_locks), so any number of concurrent readers
//   is timed correctly.
// Hook points (shim/hooks.h), fentry/fexit style, argument 0 = the rwsem's address: "down_read",
//   "up_read", "down_write", "up_write", "down_read_trylock", "down_write_trylock",
//   "down_read_killable", "down_write_killable", "downgrade_write" (exit: the return value for
//   the trylock and killable ones).
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>
#include <mutex>

#include "shim/thread_annotations.h"

namespace umemcg {

struct task_struct;
struct rwsem_waiter;

// The count word (kernel values and names).
inline constexpr long RWSEM_WRITER_LOCKED = 1L << 0;
inline constexpr long RWSEM_FLAG_WAITERS = 1L << 1;
inline constexpr long RWSEM_FLAG_HANDOFF = 1L << 2;
inline constexpr long RWSEM_FLAG_READFAIL = LONG_MIN;  // bit 63
inline constexpr int RWSEM_READER_SHIFT = 8;
inline constexpr long RWSEM_READER_BIAS = 1L << RWSEM_READER_SHIFT;
inline constexpr long RWSEM_READER_MASK = ~(RWSEM_READER_BIAS - 1);
inline constexpr long RWSEM_WRITER_MASK = RWSEM_WRITER_LOCKED;
inline constexpr long RWSEM_LOCK_MASK = RWSEM_WRITER_MASK | RWSEM_READER_MASK;
inline constexpr long RWSEM_READ_FAILED_MASK =
    RWSEM_WRITER_MASK | RWSEM_FLAG_WAITERS | RWSEM_FLAG_HANDOFF | RWSEM_FLAG_READFAIL;
inline constexpr long RWSEM_UNLOCKED_VALUE = 0;
// The owner word's flag (kernel value): the lock is (or was last) owned by readers.
inline constexpr std::uintptr_t RWSEM_READER_OWNED = 1UL << 0;

inline constexpr int MAX_READERS_WAKEUP = 0x100;

// Snapshot of a lock's statistics (times in nanoseconds of rwsem_clock_ns()).
struct rwsem_stats {
  std::uint64_t read_acquired = 0, write_acquired = 0;
  std::uint64_t read_contended = 0, write_contended = 0;
  std::uint64_t max_read_hold_ns = 0, max_write_hold_ns = 0;
  std::uint64_t max_read_wait_ns = 0, max_write_wait_ns = 0;
};

namespace emu {
// The live statistics. Counts: in native mode concurrent readers may (rarely) lose an increment
// (relaxed load+store, no locked instruction on the fast path); exact in simulated mode and for
// writers (who are exclusive). Maxima: exact in both modes (compare-and-swap on a new maximum).
struct RwsemStatWords {
  std::atomic<std::uint64_t> read_acquired{0}, write_acquired{0};
  std::atomic<std::uint64_t> read_contended{0}, write_contended{0};
  std::atomic<std::uint64_t> max_read_hold_ns{0}, max_write_hold_ns{0};
  std::atomic<std::uint64_t> max_read_wait_ns{0}, max_write_wait_ns{0};
};

// The FIFO of waiters (the kernel's list_head wait_list), guarded by wait_lock.
struct RwsemWaitList {
  rwsem_waiter *first = nullptr;
  rwsem_waiter *last = nullptr;
  unsigned long nr = 0;
};
}  // namespace emu

struct CAPABILITY("rw_semaphore") rw_semaphore {
  // The count word and the owner word share the first cache line, as in the kernel.
  std::atomic<long> count{RWSEM_UNLOCKED_VALUE};
  // Writer: its task_struct. Readers: the last reader's task_struct | RWSEM_READER_OWNED
  // (a hint, "may be stale", as in the kernel). 0: free or never owned.
  std::atomic<std::uintptr_t> owner{0};
  const char *name = "rwsem";
  // Emulation: the write hold's start, written and read by the writing owner only.
  std::uint64_t write_acquired_ns = 0;
  bool write_timed = false;
  std::mutex wait_lock;             // emulator-internal raw lock: guards wait_list
  emu::RwsemWaitList wait_list;
  emu::RwsemStatWords stats;
  rw_semaphore() = default;
  explicit rw_semaphore(const char *n) : name(n) {}
  rw_semaphore(const rw_semaphore &) = delete;
  rw_semaphore &operator=(const rw_semaphore &) = delete;
};

#define DECLARE_RWSEM(x) ::umemcg::rw_semaphore x{#x}
// Re-initialises an unused lock (no holder, no waiter); statistics are kept.
void init_rwsem(rw_semaphore *sem);

void down_read(rw_semaphore *sem) ACQUIRE_SHARED(sem);
[[nodiscard]] int down_read_killable(rw_semaphore *sem) TRY_ACQUIRE_SHARED(0, sem);
// Returns 1 on success, 0 on contention.
[[nodiscard]] int down_read_trylock(rw_semaphore *sem) TRY_ACQUIRE_SHARED(1, sem);
void up_read(rw_semaphore *sem) RELEASE_SHARED(sem);
void down_write(rw_semaphore *sem) ACQUIRE(sem);
[[nodiscard]] int down_write_killable(rw_semaphore *sem) TRY_ACQUIRE(0, sem);
[[nodiscard]] int down_write_trylock(rw_semaphore *sem) TRY_ACQUIRE(1, sem);
void up_write(rw_semaphore *sem) RELEASE(sem);
// Turns a held write lock into a read lock, waking the readers queued at the head.
void downgrade_write(rw_semaphore *sem) RELEASE(sem) ACQUIRE_SHARED(sem);

// Lockless reads of the state, as the kernel's (a snapshot that may change at once).
inline bool rwsem_is_locked(const rw_semaphore *sem) {
  return sem->count.load(std::memory_order_relaxed) != RWSEM_UNLOCKED_VALUE;
}
bool rwsem_is_contended(rw_semaphore *sem);
rwsem_stats rwsem_get_stats(const rw_semaphore *sem);
void rwsem_reset_stats(rw_semaphore *sem);

namespace emu {
// The lock statistics' clock in nanoseconds: the machine's virtual clock in simulated mode (the
// time scenarios measure; deterministic), the TSC calibrated once per process in native mode
// (or the steady clock where no invariant TSC exists). Only differences are meaningful.
std::uint64_t rwsem_clock_ns();
// The lock_stat switch (the kernel's /proc/sys/kernel/lock_stat), on by default: off, the fast
// paths read no clock and record no hold, and no statistic changes. Returns the previous value.
bool set_rwsem_lock_stat(bool on);
// Number of queued waiters (under wait_lock): for tests and diagnostics.
unsigned long rwsem_nr_waiters(rw_semaphore *sem);
// Nanoseconds per TSC tick as calibrated (0 if the steady clock is used): for diagnostics.
double rwsem_tsc_ns_per_tick();
}  // namespace emu

}  // namespace umemcg
