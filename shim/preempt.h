// SPDX-License-Identifier: GPL-2.0-only
// shim/preempt.h: preemption and migration control, interrupt state, context tests.
//
// Mirrors: include/linux/preempt.h, include/linux/irqflags.h (Linux 6.19)
// Emulation: the machine is a non-preemptible (CONFIG_PREEMPT_NONE) kernel: a task only leaves
//   its vCPU at scheduling points (sleeping, cond_resched(), return to user mode).
//   preempt_count makes those points illegal (BUG "scheduling while atomic") and stops
//   cond_resched() from switching; preempt_enable() never reschedules by itself.
// Emulation: hardirq/softirq contexts are nested calls on the vCPU's current context
//   (emu::run_in_irq / run_in_softirq), as an interrupt runs on top of the interrupted task;
//   local_irq_disable() defers them.
#pragma once

#include "shim/sched.h"
#include "shim/smp.h"

namespace umemcg {

inline emu::Vcpu *this_vcpu_or_die(const char *what) {
  emu::Vcpu *v = emu::tls_vcpu;
  if (unlikely(!v)) emu::no_cpu_context(what);
  return v;
}

namespace emu {
// The preemption count of the context running on this thread's vCPU: preempt_disable() depth
// (spinlocks, local locks, rcu_read_lock and explicit calls) plus one per nested interrupt.
// Emulation: a thread-local, as x86 keeps __preempt_count in a per-CPU variable reached
//   through %gs and changed with one incl/decl. It can be per thread rather than per vCPU
//   because a task leaves its vCPU only at a scheduling point, where the count must be 0 (BUG
//   otherwise; a task that dies of a BUG has its count reset), and nested interrupts run on the
//   interrupted thread. So the vCPU's count is always its holder thread's count; in simulated
//   mode all fibers share the scheduler thread's count, which is 0 at every switch. Contexts
//   without a vCPU (timer and RCU callbacks) count on their own thread, where nothing reads it.
extern __thread int tls_preempt_count __attribute__((tls_model("local-exec")));
}  // namespace emu

// Emulation: no compiler barrier around the count. The kernel needs barrier() because an
// interrupt may arrive between any two instructions; here interrupts are nested calls
// (emu::run_in_irq) and scheduling points are calls too, both already compiler barriers, and no
// other thread reads this count. The update is one read-modify-write instruction on x86-64, as
// in the kernel (volatile, so it is neither split into a load and a store nor dropped; the
// compiler stays free to keep everything else in registers across it).
inline void preempt_disable() {
#if defined(__x86_64__)
  asm volatile("incl %0" : "+m"(emu::tls_preempt_count));
#else
  emu::tls_preempt_count++;
#endif
}
inline void preempt_enable() {
#if defined(__x86_64__)
  asm volatile("decl %0" : "+m"(emu::tls_preempt_count));
#else
  emu::tls_preempt_count--;
#endif
}
inline int preempt_count() { return emu::tls_preempt_count; }

inline void migrate_disable() { current->migration_disabled++; }
inline void migrate_enable() { current->migration_disabled--; }

inline bool in_hardirq() { return emu::tls_vcpu && emu::tls_vcpu->hardirq_depth > 0; }
inline bool in_softirq() { return emu::tls_vcpu && emu::tls_vcpu->softirq_depth > 0; }
inline bool in_interrupt() { return in_hardirq() || in_softirq(); }
inline bool in_task() { return !in_interrupt(); }
inline bool irqs_disabled() { return emu::tls_vcpu && emu::tls_vcpu->irqs_disabled > 0; }
// May the caller be preempted (sleep)? Not with preemption or interrupts disabled, nor in an
// interrupt.
inline bool preemptible() { return preempt_count() == 0 && !irqs_disabled() && in_task(); }

void local_irq_disable();
void local_irq_enable();
#define local_irq_save(flags)  \
  do {                         \
    (flags) = ::umemcg::emu::irq_save(); \
  } while (0)
#define local_irq_restore(flags) ::umemcg::emu::irq_restore(flags)

namespace emu {
unsigned long irq_save();
void irq_restore(unsigned long flags);

// Runs fn as a hard interrupt (or softirq) on the calling context's vCPU, nested on top of what
// runs there: `current` stays the interrupted task, in_task() is false, local_trylock() of a
// lock held by the interrupted context fails. If interrupts are disabled on the vCPU the interrupt
// is not delivered: nothing runs and false is returned.
bool run_in_irq(void (*fn)(void *), void *arg);
bool run_in_softirq(void (*fn)(void *), void *arg);
template <typename F>
bool run_in_irq(F &&f) {
  return run_in_irq([](void *a) { (*static_cast<F *>(a))(); }, &f);
}
template <typename F>
bool run_in_softirq(F &&f) {
  return run_in_softirq([](void *a) { (*static_cast<F *>(a))(); }, &f);
}
}  // namespace emu

}  // namespace umemcg
