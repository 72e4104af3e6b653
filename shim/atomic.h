// SPDX-License-Identifier: GPL-2.0-only
// shim/atomic.h: atomic_t, atomic_long_t and the bit operations, with the kernel's orderings.
//
// Mirrors: include/linux/atomic/atomic-long.h, Documentation/atomic_t.txt,
//          include/asm-generic/bitops/atomic.h (Linux 6.19)
// The kernel's ordering rules are kept exactly, because the charge path's lockless reasoning
// (page_counter_try_charge against page_counter_set_max) depends on them:
//   - read/set, and the non-value-returning RMW ops (add, sub, inc, dec): relaxed;
//   - value-returning RMW ops (add_return, sub_return, xchg, cmpxchg, test_and_set_bit): fully
//     ordered (seq_cst here);
//   - set_bit / clear_bit: relaxed; clear_bit_unlock: release.
#pragma once

#include <atomic>

namespace umemcg {

struct atomic_t {
  std::atomic<int> counter{0};
};
struct atomic_long_t {
  std::atomic<long> counter{0};
};

#define ATOMIC_INIT(i) {i}
#define ATOMIC_LONG_INIT(i) {i}

inline int atomic_read(const atomic_t *v) { return v->counter.load(std::memory_order_relaxed); }
inline void atomic_set(atomic_t *v, int i) { v->counter.store(i, std::memory_order_relaxed); }
inline void atomic_add(int i, atomic_t *v) { v->counter.fetch_add(i, std::memory_order_relaxed); }
inline void atomic_sub(int i, atomic_t *v) { v->counter.fetch_sub(i, std::memory_order_relaxed); }
inline void atomic_inc(atomic_t *v) { atomic_add(1, v); }
inline void atomic_dec(atomic_t *v) { atomic_sub(1, v); }
inline int atomic_add_return(int i, atomic_t *v) { return v->counter.fetch_add(i) + i; }
inline int atomic_sub_return(int i, atomic_t *v) { return v->counter.fetch_sub(i) - i; }
inline int atomic_inc_return(atomic_t *v) { return atomic_add_return(1, v); }
inline int atomic_dec_return(atomic_t *v) { return atomic_sub_return(1, v); }
inline bool atomic_dec_and_test(atomic_t *v) { return atomic_sub_return(1, v) == 0; }
inline int atomic_xchg(atomic_t *v, int n) { return v->counter.exchange(n); }
inline int atomic_cmpxchg(atomic_t *v, int o, int n) {
  v->counter.compare_exchange_strong(o, n);
  return o;
}

inline long atomic_long_read(const atomic_long_t *v) {
  return v->counter.load(std::memory_order_relaxed);
}
inline void atomic_long_set(atomic_long_t *v, long i) {
  v->counter.store(i, std::memory_order_relaxed);
}
inline void atomic_long_add(long i, atomic_long_t *v) {
  v->counter.fetch_add(i, std::memory_order_relaxed);
}
inline void atomic_long_sub(long i, atomic_long_t *v) {
  v->counter.fetch_sub(i, std::memory_order_relaxed);
}
inline void atomic_long_inc(atomic_long_t *v) { atomic_long_add(1, v); }
inline void atomic_long_dec(atomic_long_t *v) { atomic_long_sub(1, v); }
inline long atomic_long_add_return(long i, atomic_long_t *v) { return v->counter.fetch_add(i) + i; }
inline long atomic_long_sub_return(long i, atomic_long_t *v) { return v->counter.fetch_sub(i) - i; }
inline long atomic_long_xchg(atomic_long_t *v, long n) { return v->counter.exchange(n); }
inline long atomic_long_cmpxchg(atomic_long_t *v, long o, long n) {
  v->counter.compare_exchange_strong(o, n);
  return o;
}
inline bool atomic_long_try_cmpxchg(atomic_long_t *v, long *o, long n) {
  return v->counter.compare_exchange_strong(*o, n);
}

// Bit operations on an unsigned long word (bit numbers < 64 only: every user here is a flags word).
inline std::atomic_ref<unsigned long> bitword(unsigned long *addr) {
  return std::atomic_ref<unsigned long>(*addr);
}
inline bool test_bit(int nr, const unsigned long *addr) {
  return (std::atomic_ref<unsigned long>(const_cast<unsigned long &>(*addr))
              .load(std::memory_order_relaxed) >> nr) & 1UL;
}
inline void set_bit(int nr, unsigned long *addr) {
  bitword(addr).fetch_or(1UL << nr, std::memory_order_relaxed);
}
inline void clear_bit(int nr, unsigned long *addr) {
  bitword(addr).fetch_and(~(1UL << nr), std::memory_order_relaxed);
}
inline void clear_bit_unlock(int nr, unsigned long *addr) {
  bitword(addr).fetch_and(~(1UL << nr), std::memory_order_release);
}
inline bool test_and_set_bit(int nr, unsigned long *addr) {
  return (bitword(addr).fetch_or(1UL << nr) >> nr) & 1UL;
}
inline bool test_and_clear_bit(int nr, unsigned long *addr) {
  return (bitword(addr).fetch_and(~(1UL << nr)) >> nr) & 1UL;
}

}  // namespace umemcg
