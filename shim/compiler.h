// SPDX-License-Identifier: GPL-2.0-only
// shim/compiler.h: the kernel's compiler helpers (READ_ONCE, data_race, likely, container_of, ...).
//
// Mirrors: include/linux/compiler.h, include/asm-generic/rwonce.h, include/linux/cache.h (Linux 6.19)
// Emulation: READ_ONCE/WRITE_ONCE are relaxed std::atomic_ref accesses, which is what the kernel's
//   volatile accesses give on x86-64 and what the C++ memory model needs to call the access
//   race-free (TSan then sees them as atomic, as KCSAN does for the kernel's marked accesses).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace umemcg {

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

// Cache-line size of the emulated machine (x86-64).
inline constexpr std::size_t SMP_CACHE_BYTES = 64;
#define ____cacheline_aligned alignas(::umemcg::SMP_CACHE_BYTES)
#define ____cacheline_aligned_in_smp ____cacheline_aligned

template <typename T>
inline T read_once_impl(const T &x) noexcept {
  static_assert(std::is_trivially_copyable_v<T>);
  return std::atomic_ref<T>(const_cast<T &>(x)).load(std::memory_order_relaxed);
}
template <typename T, typename V>
inline void write_once_impl(T &x, V v) noexcept {
  static_assert(std::is_trivially_copyable_v<T>);
  std::atomic_ref<T>(x).store(static_cast<T>(v), std::memory_order_relaxed);
}

#define READ_ONCE(x) ::umemcg::read_once_impl(x)
#define WRITE_ONCE(x, v) ::umemcg::write_once_impl((x), (v))

// data_race(expr): a deliberately racy plain read whose result is only used for statistics or
// heuristics. Emulation: evaluated as a relaxed atomic load when it names an lvalue is not
// expressible generically, so callers use READ_ONCE where TSan must stay quiet.
#define data_race(expr) (expr)

// OPTIMIZER_HIDE_VAR(var): the compiler forgets how var's value was computed, so it keeps the
// value in a register instead of computing it again at each use (an empty asm that "changes"
// var). No instruction is emitted.
#define OPTIMIZER_HIDE_VAR(var) __asm__("" : "+r"(var))

#define barrier() std::atomic_signal_fence(std::memory_order_seq_cst)
#define smp_mb() std::atomic_thread_fence(std::memory_order_seq_cst)
#define smp_rmb() std::atomic_thread_fence(std::memory_order_acquire)
#define smp_wmb() std::atomic_thread_fence(std::memory_order_release)
#define smp_mb__after_atomic() std::atomic_thread_fence(std::memory_order_seq_cst)
#define smp_mb__before_atomic() std::atomic_thread_fence(std::memory_order_seq_cst)

#define container_of(ptr, type, member) \
  reinterpret_cast<type *>(reinterpret_cast<char *>(ptr) - offsetof(type, member))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

}  // namespace umemcg
