// SPDX-License-Identifier: GPL-2.0-only
// shim/local_lock.h: local_lock_t and local_trylock_t, the per-CPU locks of the charge stock.
//
// Mirrors: include/linux/local_lock.h, include/linux/local_lock_internal.h (Linux 6.19, !RT)
// A local lock protects one CPU's copy of per-CPU data against other contexts on the SAME CPU:
// the task (by disabling preemption) and interrupts nested on top of it (local_trylock() in an
// interrupt fails while the interrupted context holds the lock). Other CPUs never touch this
// copy, so no atomic instruction is needed: that is the point of the design, and why it is
// faithfully reproduced here rather than collapsed into a mutex.
// Usage: the lock lives in per-CPU data; take the CPU's copy first and name the lock through it,
//   which also lets clang's -Wthread-safety match lock and unlock:
//     stock = this_cpu_ptr(&memcg_stock);
//     if (!local_trylock(&stock->lock)) return false;
//     ... stock->nr_pages[i] ...            (fields are GUARDED_BY(lock))
//     local_unlock(&stock->lock);
// Emulation: the kernel takes this_cpu_ptr() after disabling preemption; here the task cannot
//   migrate between the two calls anyway (migration happens only at scheduling points).
// Emulation: local_lock_t has an `acquired` byte but never sets it (see
//   __local_lock_tracks_holder()): local_lock() of a local_lock_t is preempt_disable() alone.
#pragma once

#include "shim/bug.h"
#include "shim/preempt.h"
#include "shim/thread_annotations.h"
#include "shim/types.h"

#include <type_traits>

namespace umemcg {

// Emulation: `acquired` is a bool where the kernel has a u8. Same size and meaning, but a store
// to a character type may alias anything for the compiler, which would force values such as
// the vCPU pointer to be reloaded after every lock and unlock; a bool does not.
struct CAPABILITY("local_lock") local_lock_t {
  bool acquired = false;
};
struct CAPABILITY("local_lock") local_trylock_t {
  bool acquired = false;
};

#define INIT_LOCAL_LOCK(name) {0}
#define INIT_LOCAL_TRYLOCK(name) {0}
template <typename L>
inline void local_lock_init(L *l) { l->acquired = false; }
template <typename L>
inline void local_trylock_init(L *l) { l->acquired = false; }

// Does this lock keep `acquired` up to date? A local_trylock_t does (its trylock reads it, and a
// nested non-try acquisition of it is a WARN); a local_lock_t does not: in the kernel's !LOCKDEP
// build it is empty and local_lock() is preempt_disable() alone.
// Emulation: no lockdep, so a local_lock() of a local_lock_t from an interrupt nested on its
//   holder (a deadlock on PREEMPT_RT) goes unnoticed, as in a !LOCKDEP kernel. Tracking it at
//   run time cost a third of the lock's time (a flag test, or the byte stores).
template <typename L>
constexpr bool __local_lock_tracks_holder() {
  return std::is_same_v<L, local_trylock_t>;
}

// Emulation: the `acquired` test comes before preempt_disable(), not after as in the kernel.
// Nothing can run on this vCPU between the two here (interrupts are nested calls), and the order
// leaves the critical section free of calls.
template <typename L>
inline void __local_lock_check(L *l) {
  // A second acquisition on the same CPU means an interrupt took a lock its task holds
  // (a deadlock on PREEMPT_RT, a lockdep splat otherwise): callers in interrupt context must
  // use local_trylock().
  WARN_ON_ONCE(l->acquired);
}

template <typename L>
inline void local_lock(L *l) ACQUIRE(l) NO_THREAD_SAFETY_ANALYSIS {
  constexpr bool track = __local_lock_tracks_holder<L>();
  if constexpr (track) __local_lock_check(l);
  preempt_disable();
  if constexpr (track) l->acquired = true;
}
template <typename L>
inline void local_unlock(L *l) RELEASE(l) NO_THREAD_SAFETY_ANALYSIS {
  if constexpr (__local_lock_tracks_holder<L>()) l->acquired = false;
  preempt_enable();
}
// Fails (returns false) when a context below on this CPU holds the lock. Never spins.
template <typename L>
[[nodiscard]] inline bool local_trylock(L *l) TRY_ACQUIRE(true, l) NO_THREAD_SAFETY_ANALYSIS {
  if (unlikely(l->acquired)) return false;
  preempt_disable();
  l->acquired = true;
  return true;
}

template <typename L>
inline void local_lock_irqsave_impl(L *l, unsigned long *flags) ACQUIRE(l)
    NO_THREAD_SAFETY_ANALYSIS {
  constexpr bool track = __local_lock_tracks_holder<L>();
  if constexpr (track) __local_lock_check(l);
  *flags = emu::irq_save();
  if constexpr (track) l->acquired = true;
}
template <typename L>
inline void local_unlock_irqrestore(L *l, unsigned long flags) RELEASE(l)
    NO_THREAD_SAFETY_ANALYSIS {
  if constexpr (__local_lock_tracks_holder<L>()) l->acquired = false;
  emu::irq_restore(flags);
}
template <typename L>
[[nodiscard]] inline bool local_trylock_irqsave_impl(L *l, unsigned long *flags)
    TRY_ACQUIRE(true, l) NO_THREAD_SAFETY_ANALYSIS {
  if (unlikely(l->acquired)) return false;
  *flags = emu::irq_save();
  l->acquired = true;
  return true;
}
#define local_lock_irqsave(l, flags) ::umemcg::local_lock_irqsave_impl((l), &(flags))
#define local_trylock_irqsave(l, flags) ::umemcg::local_trylock_irqsave_impl((l), &(flags))

// lockdep_assert_held() for local locks: the lock is held by this CPU's context.
template <typename L>
inline void lockdep_assert_local_held(L *l) ASSERT_CAPABILITY(l) {
  if constexpr (__local_lock_tracks_holder<L>()) WARN_ON_ONCE(!l->acquired);
}

}  // namespace umemcg
