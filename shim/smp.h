// SPDX-License-Identifier: GPL-2.0-only
// shim/smp.h: CPU numbering of the emulated machine: smp_processor_id(), nr_cpu_ids,
// for_each_possible_cpu / for_each_online_cpu.
//
// Mirrors: include/linux/smp.h, include/linux/cpumask.h (Linux 6.19)
// Emulation: CPUs are the machine's virtual CPUs (emu::Machine), numbered 0..nr_cpu_ids-1, all
//   possible CPUs are online unless a test takes one offline; NR_CPUS (the compile-time bound,
//   the kernel's CONFIG_NR_CPUS) is 64.
#pragma once

#include "shim/compiler.h"
#include "shim/emu/vcpu.h"

namespace umemcg {

inline constexpr int NR_CPUS = 64;

namespace emu {
struct Vcpu;
// The vCPU the calling context runs on (nullptr outside any machine context).
// Emulation: a thread-local, switched with the running task in simulated mode.
extern __thread Vcpu *tls_vcpu __attribute__((tls_model("initial-exec")));
// Its number, or -1: smp_processor_id() and this_cpu_ptr() read it without going through the
// Vcpu, as the kernel reads its CPU number from a per-CPU variable.
// Emulation: local-exec TLS (one %fs-relative instruction, like the kernel's %gs per-CPU
//   accesses) holds because the project's code is only ever linked into executables; a shared
//   library build would need initial-exec here and for tls_preempt_count.
extern __thread int tls_cpu __attribute__((tls_model("local-exec")));
// Sets both (the only writer of either).
inline void set_tls_vcpu(Vcpu *v);
[[noreturn]] void no_cpu_context(const char *what);
}  // namespace emu

// Number of possible CPUs of the running machine (0 before boot).
extern unsigned int nr_cpu_ids;

// The emulated CPU the caller runs on. Only meaningful in task, irq or work context.
inline int smp_processor_id() {
  int cpu = emu::tls_cpu;
  if (unlikely(cpu < 0)) emu::no_cpu_context("smp_processor_id");
  return cpu;
}

inline void emu::set_tls_vcpu(Vcpu *v) {
  tls_vcpu = v;
  tls_cpu = v ? v->id : -1;
}
inline int raw_smp_processor_id() { return smp_processor_id(); }

bool cpu_online(int cpu);
unsigned int num_online_cpus();

#define for_each_possible_cpu(cpu) \
  for ((cpu) = 0; (cpu) < static_cast<int>(::umemcg::nr_cpu_ids); (cpu)++)
#define for_each_online_cpu(cpu) \
  for_each_possible_cpu(cpu) if (!::umemcg::cpu_online(cpu)) {} else

}  // namespace umemcg
