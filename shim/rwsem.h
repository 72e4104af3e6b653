// SPDX-License-Identifier: GPL-2.0-only
// shim/rwsem.h: struct rw_semaphore with the kernel's semantics, statistics and hook points.
//
// Mirrors: include/linux/rwsem.h, kernel/locking/rwsem.c (Linux 6.19)
// Semantics reproduced:
//   - many readers or one writer;
//   - waiters queue in FIFO order, and a reader that finds any waiter queued goes to the back of
//     the queue even if only readers hold the lock: a waiting writer blocks every later reader
//     (the scenario of seed 000: one slow reader, one waiting writer, everyone else stalls);
//   - when the lock is released to a reader at the head of the queue, every reader in the queue
//     is woken (up to MAX_READERS_WAKEUP = 256), writers queued between them stay queued;
//   - down_read_trylock / down_write_trylock never sleep; the killable variants return -EINTR
//     on a fatal signal.
// Emulation: release hands the lock straight to the woken waiters (no optimistic spinning, no
//   lock stealing by running readers or writers, no handoff bit).
// Statistics per lock (machine clock): max hold time and max wait time, readers and writers
//   apart, plus acquisition and contention counts.
// Hook points (shim/hooks.h), fentry/fexit style, argument 0 = the rwsem's address: "down_read",
//   "up_read", "down_write", "up_write", "down_read_trylock", "down_write_trylock",
//   "down_read_killable", "down_write_killable" (exit: the return value for the last four).
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>

#include "shim/emu/waitlist.h"
#include "shim/thread_annotations.h"

namespace umemcg {

struct rwsem_stats {
  std::uint64_t read_acquired = 0, write_acquired = 0;
  std::uint64_t read_contended = 0, write_contended = 0;
  std::uint64_t max_read_hold_ns = 0, max_write_hold_ns = 0;
  std::uint64_t max_read_wait_ns = 0, max_write_wait_ns = 0;
};

struct CAPABILITY("rw_semaphore") rw_semaphore {
  const char *name = "rwsem";
  std::mutex wait_lock;  // emulator-internal: guards everything below
  long readers = 0;      // readers holding the lock
  task_struct *owner = nullptr;  // the writer holding it
  std::deque<emu::Waiter *> wait_list;
  std::uint64_t write_acquired_ns = 0;
  rwsem_stats stats;
  rw_semaphore() = default;
  explicit rw_semaphore(const char *n) : name(n) {}
};

#define DECLARE_RWSEM(x) ::umemcg::rw_semaphore x{#x}
inline void init_rwsem(rw_semaphore *s) { s->readers = 0; s->owner = nullptr; }

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

bool rwsem_is_locked(rw_semaphore *sem);
bool rwsem_is_contended(rw_semaphore *sem);
rwsem_stats rwsem_get_stats(rw_semaphore *sem);
void rwsem_reset_stats(rw_semaphore *sem);

inline constexpr int MAX_READERS_WAKEUP = 0x100;

}  // namespace umemcg
