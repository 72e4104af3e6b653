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

// Emulation: timer and RCU callbacks run without a vCPU (see timer.h); preemption control is a
// no-op there.
// Emulation: no compiler barrier around the count. The kernel needs barrier() because an
// interrupt may arrive between any two instructions; here interrupts are nested calls
// (emu::run_in_irq) and scheduling points are calls too, both already compiler barriers, and no
// other thread reads this vCPU's count. So the compiler may keep the count in a register, or
// fold an increment and its decrement away when nothing in between can observe them.
inline void preempt_disable() {
  if (emu::Vcpu *v = emu::tls_vcpu) v->preempt_count++;
}
inline void preempt_enable() {
  if (emu::Vcpu *v = emu::tls_vcpu) v->preempt_count--;
}
inline int preempt_count() { return emu::tls_vcpu ? emu::tls_vcpu->preempt_count : 0; }

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
