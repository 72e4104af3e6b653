// SPDX-License-Identifier: GPL-2.0-only
// shim/cpuhotplug.h: CPU hotplug of the emulated machine: taking a vCPU offline and back, the
// hotplug state machine's callbacks, the hotplug lock.
//
// Mirrors: include/linux/cpuhotplug.h, include/linux/cpuhplock.h, kernel/cpu.c (Linux 6.19)
// remove_cpu() takes a vCPU offline: it stops accepting tasks, the task on it leaves at its next
// scheduling point, tasks bound to it run elsewhere (the kernel breaks their affinity and
// unbinds per-CPU workqueue workers), and then the teardown callbacks of the registered states
// run, highest state first, on the CPU doing the hotplug, with the dead CPU's number: that is
// where the kernel's PREPARE-section "dead" callbacks run (memcg drains the dead CPU's stocks
// there). add_cpu() runs the startup callbacks, lowest state first, then brings the vCPU online.
// Emulation: only the PREPARE section (states below CPUHP_BP_PREPARE_DYN_END, callbacks run on
//   the controlling CPU) is modelled; there is no AP section (callbacks on the hotplugged CPU
//   itself) and no stop_machine: remove_cpu() waits for the vCPU's holder to reach a scheduling
//   point instead of forcing it off. A task with migration disabled on the dying vCPU is moved
//   too (the kernel would make the hotplug wait for it).
// Emulation: cpus_read_lock() is a plain rw_semaphore (the kernel's is a percpu_rw_semaphore).
#pragma once

namespace umemcg {

enum cpuhp_state {
  CPUHP_INVALID = -1,
  CPUHP_OFFLINE = 0,
  CPUHP_MM_MEMCQ_DEAD,
  CPUHP_BP_PREPARE_DYN,
  CPUHP_BP_PREPARE_DYN_END = CPUHP_BP_PREPARE_DYN + 20,
  CPUHP_ONLINE,
};

// Registers the callbacks of @state without calling them for the CPUs already online. Either
// callback may be null. For CPUHP_BP_PREPARE_DYN a free dynamic state is allocated and returned
// (> 0); otherwise returns 0. -EBUSY when the state is taken, -ENOSPC when no dynamic state is
// left, -EINVAL for a state outside the modelled range.
int cpuhp_setup_state_nocalls(enum cpuhp_state state, const char *name,
                              int (*startup)(unsigned int cpu), int (*teardown)(unsigned int cpu));
// The same, then calls @startup for every online CPU; if one fails, the CPUs done so far get
// @teardown and the registration is undone (the error is returned).
int cpuhp_setup_state(enum cpuhp_state state, const char *name, int (*startup)(unsigned int cpu),
                      int (*teardown)(unsigned int cpu));
void cpuhp_remove_state_nocalls(enum cpuhp_state state);

// Take @cpu offline / bring it back. Sleep (task context, preemptible). 0 on success; 1 when it
// already was in the requested state (as device_offline()/device_online()); -EINVAL for a CPU
// that does not exist; -EBUSY for the last online CPU; a startup callback's error.
int remove_cpu(unsigned int cpu);
int add_cpu(unsigned int cpu);

// The CPU hotplug lock: held for reading, no CPU goes offline or online.
void cpus_read_lock();
void cpus_read_unlock();

namespace emu {
// Forgets every registration (a new machine boots with none).
void cpuhp_reset();
}  // namespace emu

}  // namespace umemcg
