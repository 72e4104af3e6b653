// SPDX-License-Identifier: GPL-2.0-only
// shim/cpuhotplug.cc: remove_cpu()/add_cpu() and the hotplug state callbacks (see cpuhotplug.h).
//
// Mirrors: kernel/cpu.c (Linux 6.19): cpuhp_setup_state*, cpuhp_remove_state_nocalls,
//   remove_cpu, add_cpu, cpus_read_lock
#include "shim/cpuhotplug.h"

#include <array>

#include "shim/bug.h"
#include "shim/emu/machine_impl.h"
#include "shim/errno.h"
#include "shim/mutex.h"
#include "shim/preempt.h"
#include "shim/rwsem.h"
#include "shim/sched.h"
#include "shim/thread_annotations.h"

namespace umemcg {

namespace {

struct cpuhp_step {
  const char *name = nullptr;
  int (*startup)(unsigned int cpu) = nullptr;
  int (*teardown)(unsigned int cpu) = nullptr;
  bool used = false;
};

// Registrations, indexed by state. Written under cpuhp_state_mutex.
std::array<cpuhp_step, CPUHP_ONLINE + 1> cpuhp_steps;
// Serialises registrations and hotplug operations (the kernel's cpuhp_state_mutex and
// cpu_add_remove_lock in one).
DEFINE_MUTEX(cpuhp_state_mutex);
// The hotplug lock: readers keep the set of online CPUs stable.
rw_semaphore cpu_hotplug_lock("cpu_hotplug_lock");

bool state_valid(int state) { return state > CPUHP_OFFLINE && state < CPUHP_ONLINE; }

// Simulated mode: takes the calling task off its vCPU and back onto an online one (a
// scheduling point, as cond_resched()).
void sim_reschedule_current() {
  emu::TaskImpl *t = emu::task_impl(current);
  t->m->sim_release_cpu(t);
  t->m->record("hotplug_yield", t);
  t->m->sim_switch_out();
}

// The vCPU numbered @cpu, or nullptr when the running machine has no such CPU.
emu::Vcpu *hotplug_vcpu(unsigned int cpu) {
  emu::Machine::Impl *m = emu::g_machine;
  return m && cpu < m->vcpus.size() ? m->vcpus[cpu].get() : nullptr;
}

// The teardown callbacks of the states below @from, highest first. Teardowns cannot fail.
void run_teardowns(unsigned int cpu, int from) {
  for (int s = from - 1; s > CPUHP_OFFLINE; s--) {
    const cpuhp_step &st = cpuhp_steps[s];
    if (st.used && st.teardown) WARN_ON(st.teardown(cpu) != 0);
  }
}

}  // namespace

int cpuhp_setup_state_nocalls(enum cpuhp_state state, const char *name,
                              int (*startup)(unsigned int cpu),
                              int (*teardown)(unsigned int cpu)) {
  mutex_lock(&cpuhp_state_mutex);
  int ret = 0;
  int s = state;
  if (state == CPUHP_BP_PREPARE_DYN) {
    s = -1;
    for (int i = CPUHP_BP_PREPARE_DYN; i < CPUHP_BP_PREPARE_DYN_END; i++)
      if (!cpuhp_steps[i].used) {
        s = i;
        break;
      }
    if (s < 0) ret = -ENOSPC;
    else ret = s;
  } else if (!state_valid(state) || state >= CPUHP_BP_PREPARE_DYN) {
    ret = -EINVAL;
  } else if (cpuhp_steps[s].used) {
    ret = -EBUSY;
  }
  if (ret >= 0) cpuhp_steps[s] = {name, startup, teardown, true};
  mutex_unlock(&cpuhp_state_mutex);
  return ret;
}

int cpuhp_setup_state(enum cpuhp_state state, const char *name, int (*startup)(unsigned int cpu),
                      int (*teardown)(unsigned int cpu)) {
  cpus_read_lock();  // the set of online CPUs stays as it is while the callbacks run
  int ret = cpuhp_setup_state_nocalls(state, name, startup, teardown);
  const int s = state == CPUHP_BP_PREPARE_DYN ? ret : static_cast<int>(state);
  if (ret >= 0 && startup) {
    int cpu;
    int failed_cpu = -1;
    int err = 0;
    for_each_online_cpu(cpu) {
      err = startup(static_cast<unsigned int>(cpu));
      if (err) {
        failed_cpu = cpu;
        break;
      }
    }
    if (failed_cpu >= 0) {
      // Roll back the CPUs that succeeded, then the registration.
      for_each_online_cpu(cpu) {
        if (cpu == failed_cpu) break;
        if (teardown) teardown(static_cast<unsigned int>(cpu));
      }
      cpuhp_remove_state_nocalls(static_cast<cpuhp_state>(s));
      ret = err;
    }
  }
  cpus_read_unlock();
  return ret;
}

void cpuhp_remove_state_nocalls(enum cpuhp_state state) {
  if (WARN_ON(!state_valid(state))) return;
  mutex_lock(&cpuhp_state_mutex);
  cpuhp_steps[state] = {};
  mutex_unlock(&cpuhp_state_mutex);
}

// The lock is internal to this file, so the callers' pairing is outside the analysis (the
// kernel checks it with lockdep).
void cpus_read_lock() NO_THREAD_SAFETY_ANALYSIS { down_read(&cpu_hotplug_lock); }
void cpus_read_unlock() NO_THREAD_SAFETY_ANALYSIS { up_read(&cpu_hotplug_lock); }

int remove_cpu(unsigned int cpu) {
  emu::Vcpu *v = hotplug_vcpu(cpu);
  if (!v) return -EINVAL;
  might_sleep();
  emu::Machine::Impl *m = emu::g_machine;

  mutex_lock(&cpuhp_state_mutex);
  down_write(&cpu_hotplug_lock);
  int ret = 0;
  if (!v->online) {
    ret = 1;
  } else if (num_online_cpus() == 1) {
    ret = -EBUSY;
  } else {
    // From here no task acquires the vCPU, and bindings to it are broken.
    v->online.store(false);
    // Wait for the task holding it (this one included) to leave at a scheduling point.
    // Simulated mode: only the running task holds a vCPU (every other one gave its vCPU up at
    // the scheduling point where it stopped), so this is at most this task moving away.
    // Native mode: the holder releases the run lock at its next scheduling point and nobody
    // takes it after; this task waits for that off its own vCPU, as a sleeping cpu_down().
    emu::TaskImpl *t = emu::task_impl(current);
    if (m->sim()) {
      while (v->curr) sim_reschedule_current();
    } else {
      m->native_release_cpu(t);
      v->run_lock.lock();
      v->run_lock.unlock();
      m->native_acquire_cpu(t);
    }
    // The PREPARE-section teardowns ("dead" callbacks), on this CPU.
    run_teardowns(cpu, CPUHP_ONLINE);
  }
  up_write(&cpu_hotplug_lock);
  mutex_unlock(&cpuhp_state_mutex);
  return ret;
}

int add_cpu(unsigned int cpu) {
  emu::Vcpu *v = hotplug_vcpu(cpu);
  if (!v) return -EINVAL;
  might_sleep();

  mutex_lock(&cpuhp_state_mutex);
  down_write(&cpu_hotplug_lock);
  int ret = 0;
  if (v->online) {
    ret = 1;
  } else {
    int s;
    for (s = CPUHP_OFFLINE + 1; s < CPUHP_ONLINE; s++) {
      const cpuhp_step &st = cpuhp_steps[s];
      if (st.used && st.startup && (ret = st.startup(cpu)) != 0) break;
    }
    if (ret) {
      run_teardowns(cpu, s);  // undo the states brought up; the CPU stays offline
    } else {
      v->online.store(true);
    }
  }
  up_write(&cpu_hotplug_lock);
  mutex_unlock(&cpuhp_state_mutex);
  return ret;
}

void emu::cpuhp_reset() { cpuhp_steps = {}; }

}  // namespace umemcg
