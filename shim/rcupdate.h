// SPDX-License-Identifier: GPL-2.0-only
// shim/rcupdate.h: RCU: read-side sections, pointer publication, grace periods and callbacks.
//
// Mirrors: include/linux/rcupdate.h (Linux 6.19; the non-preemptible RCU flavour)
// Native mode runs on liburcu's "memb" flavour (membarrier-based readers): rcu_read_lock() is a
// liburcu reader section, synchronize_rcu() and call_rcu() are liburcu's. Every OS thread the
// machine runs tasks on is a registered liburcu reader.
// Simulated mode needs no liburcu: a read-side section disables preemption, as in a
// non-preemptible kernel, so no task is ever switched out inside one; at any scheduling point
// every other task is therefore quiescent. synchronize_rcu() is a scheduling point, and
// callbacks queued by call_rcu() run in the scheduler between two task switches, deterministically.
// Emulation: call_rcu() callbacks run without a vCPU (native: on liburcu's callback thread;
//   simulated: in the scheduler). Like the kernel's softirq-context callbacks they may free
//   memory, queue work and wake tasks, but may not sleep or touch per-CPU data.
// ThreadSanitizer: liburcu's grace-period barriers are invisible to TSan, so the shim annotates
//   them: each rcu_read_unlock() releases, and the end of each grace period (synchronize_rcu()
//   returning, a callback starting) acquires, one sync object. This tells TSan what RCU
//   guarantees: every reader that could see the old pointer finished before the free.
#pragma once

#include <atomic>

#include "shim/compiler.h"

namespace umemcg {

struct rcu_head {
  // Emulation: room for liburcu's own struct rcu_head (a wait-free queue node and a function
  // pointer), which native mode hands to urcu_memb_call_rcu().
  void *urcu_storage[2] = {nullptr, nullptr};
  void (*func)(rcu_head *) = nullptr;
};
using rcu_callback_t = void (*)(rcu_head *);

void rcu_read_lock();
void rcu_read_unlock();
bool rcu_read_lock_held();
void synchronize_rcu();
void call_rcu(rcu_head *head, rcu_callback_t func);
void rcu_barrier();

// Pointer publication (release) and read-side access (acquire: stronger than the kernel's
// address dependency, which C++ cannot express portably).
template <typename T>
inline T *rcu_dereference_impl(T *const &p) {
  return std::atomic_ref<T *>(const_cast<T *&>(p)).load(std::memory_order_acquire);
}
template <typename T, typename V>
inline void rcu_assign_pointer_impl(T *&p, V v) {
  std::atomic_ref<T *>(p).store(v, std::memory_order_release);
}
#define rcu_dereference(p) ::umemcg::rcu_dereference_impl(p)
#define rcu_dereference_check(p, c) ::umemcg::rcu_dereference_impl(p)
#define rcu_dereference_protected(p, c) (p)
#define rcu_dereference_raw(p) ::umemcg::rcu_dereference_impl(p)
#define rcu_access_pointer(p) READ_ONCE(p)
#define rcu_assign_pointer(p, v) ::umemcg::rcu_assign_pointer_impl((p), (v))
#define RCU_INIT_POINTER(p, v) WRITE_ONCE(p, v)

// RAII guard for a read-side section.
class rcu_read_guard {
 public:
  rcu_read_guard() { rcu_read_lock(); }
  ~rcu_read_guard() { rcu_read_unlock(); }
  rcu_read_guard(const rcu_read_guard &) = delete;
  rcu_read_guard &operator=(const rcu_read_guard &) = delete;
};

}  // namespace umemcg
