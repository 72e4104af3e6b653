// SPDX-License-Identifier: GPL-2.0-only
// shim/rcu.cc: RCU in both modes (see rcupdate.h).
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UMEMCG_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define UMEMCG_TSAN 1
#endif
// _LGPL_SOURCE: liburcu's read-side fast path is inlined here (LGPL-2.1 allows it) instead of
// a call into the shared library. Not under ThreadSanitizer: the inlined fast path reads and
// writes the grace-period futex and the reader's counter with volatile accesses that liburcu
// treats as atomic, which TSan instruments as plain ones and reports as races between readers
// (urcu_common_wake_up_gp). Called in the uninstrumented library, the same code is invisible to
// TSan, and the annotations below carry the ordering it gives.
#ifndef UMEMCG_TSAN
#define _LGPL_SOURCE 1
#endif
#include <urcu/urcu-memb.h>
// liburcu's pointer macros share the kernel's names; this file uses neither set.
#undef rcu_dereference
#undef rcu_assign_pointer
#undef rcu_read_lock
#undef rcu_read_unlock
#undef synchronize_rcu
#undef call_rcu
#undef rcu_barrier

#include "shim/bug.h"
#include "shim/emu/machine_impl.h"
#include "shim/preempt.h"
#include "shim/rcupdate.h"

#ifdef UMEMCG_TSAN
extern "C" void __tsan_acquire(void *addr);
extern "C" void __tsan_release(void *addr);
#endif

namespace umemcg {
namespace {
[[maybe_unused]] char g_rcu_tsan_sync;  // the sync object of the TSan annotations (rcupdate.h)
inline void tsan_reader_done() {
#ifdef UMEMCG_TSAN
  __tsan_release(&g_rcu_tsan_sync);
#endif
}
inline void tsan_grace_period_end() {
#ifdef UMEMCG_TSAN
  __tsan_acquire(&g_rcu_tsan_sync);
#endif
}
// call_rcu() hands the rcu_head (and what the caller wrote before) to liburcu's call_rcu thread
// through liburcu's lock-free queue, which TSan cannot see: the caller releases on the head, the
// callback acquires on it before reading it.
inline void tsan_handoff_release([[maybe_unused]] void *head) {
#ifdef UMEMCG_TSAN
  __tsan_release(head);
#endif
}
inline void tsan_handoff_acquire([[maybe_unused]] void *head) {
#ifdef UMEMCG_TSAN
  __tsan_acquire(head);
#endif
}
bool sim_mode() { return emu::g_machine && emu::g_machine->sim(); }

static_assert(sizeof(::rcu_head) <= sizeof(rcu_head::urcu_storage), "liburcu rcu_head size");

void urcu_trampoline(::rcu_head *h) {
  auto *head = reinterpret_cast<rcu_head *>(reinterpret_cast<char *>(h) -
                                            offsetof(rcu_head, urcu_storage));
  tsan_handoff_acquire(head);
  tsan_grace_period_end();
  head->func(head);
}
}  // namespace

void rcu_read_lock() {
  if (emu::tls_vcpu) preempt_disable();
  if (current) current->rcu_read_lock_nesting++;
  if (!sim_mode()) urcu_memb_read_lock();
}

void rcu_read_unlock() {
  if (!sim_mode()) {
    tsan_reader_done();
    urcu_memb_read_unlock();
  }
  if (current) current->rcu_read_lock_nesting--;
  if (emu::tls_vcpu) preempt_enable();
}

bool rcu_read_lock_held() { return current && current->rcu_read_lock_nesting > 0; }

void synchronize_rcu() {
  emu::check_may_sleep("synchronize_rcu");
  if (sim_mode()) {
    // Every other task is switched out at a scheduling point, hence outside any read-side
    // section: the grace period is over once this task has passed a scheduling point itself.
    cond_resched();
    return;
  }
  emu::TaskImpl *t = emu::task_impl(current);
  const bool had_cpu = t->vcpu != nullptr;
  t->m->native_release_cpu(t);
  urcu_memb_synchronize_rcu();
  tsan_grace_period_end();
  if (had_cpu) t->m->native_acquire_cpu(t);
}

void call_rcu(rcu_head *head, rcu_callback_t func) {
  head->func = func;
  if (sim_mode()) {
    emu::g_machine->sim_rcu_pending.push_back(head);
    return;
  }
  tsan_handoff_release(head);
  urcu_memb_call_rcu(reinterpret_cast<::rcu_head *>(head->urcu_storage), urcu_trampoline);
}

void rcu_barrier() {
  if (sim_mode()) {
    // The scheduler runs every queued callback before its next decision.
    cond_resched();
    return;
  }
  emu::TaskImpl *t = emu::task_impl(current);
  const bool had_cpu = t && t->vcpu;
  if (had_cpu) t->m->native_release_cpu(t);
  urcu_memb_barrier();
  if (had_cpu) t->m->native_acquire_cpu(t);
}

namespace emu {

void Machine::Impl::sim_run_rcu_callbacks() {
  // Callbacks queued by a callback wait for the next round, as a new grace period would.
  std::vector<rcu_head *> batch;
  batch.swap(sim_rcu_pending);
  for (rcu_head *h : batch) {
    record("rcu_cb", nullptr);
    h->func(h);
    sim_rcu_completed++;
  }
}

void rcu_boot(Machine::Impl *) {}

void rcu_shutdown(Machine::Impl *m) {
  if (m->sim()) {
    while (!m->sim_rcu_pending.empty()) m->sim_run_rcu_callbacks();
    return;
  }
  urcu_memb_register_thread();
  urcu_memb_barrier();
  urcu_memb_unregister_thread();
}

}  // namespace emu
}  // namespace umemcg
