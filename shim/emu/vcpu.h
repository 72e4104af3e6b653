// SPDX-License-Identifier: GPL-2.0-only
// shim/emu/vcpu.h: one virtual CPU of the emulated machine.
//
// A vCPU is "held" by at most one task at a time: the task whose kernel code runs on it. Holding
// is exclusive, so per-CPU data of a vCPU is only touched by its holder and by contexts nested on
// top of the holder (emulated interrupts), which is what makes local_lock work without an atomic
// instruction, as in the kernel. The counters below belong to the context running on the vCPU
// and are only written by it.
#pragma once

#include <atomic>
#include <mutex>

#include "shim/compiler.h"

namespace umemcg {
struct task_struct;
}

namespace umemcg::emu {

struct ____cacheline_aligned Vcpu {
  int id = 0;
  // Emulation: the preemption count is not here but in emu::tls_preempt_count (preempt.h).
  // Nested interrupt-like contexts currently running on this vCPU (see run_in_irq()).
  int hardirq_depth = 0;
  int softirq_depth = 0;
  // local_irq_disable() depth; an emulated interrupt is not delivered while it is non-zero.
  int irqs_disabled = 0;
  // Cleared by remove_cpu() (shim/cpuhotplug.h): no task acquires an offline vCPU. Atomic:
  // native tasks read it without a lock while choosing a vCPU.
  std::atomic<bool> online{true};
  // The task holding this vCPU, or nullptr. Written by the holder (native: under run_lock).
  task_struct *curr = nullptr;

  // Native mode: the per-vCPU run lock. Taken on kernel entry, released at scheduling points.
  std::mutex run_lock;
  std::atomic<int> run_waiters{0};
};

}  // namespace umemcg::emu
