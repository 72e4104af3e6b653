// SPDX-License-Identifier: GPL-2.0-only
// shim/percpu.h: per-CPU data: DEFINE_PER_CPU, alloc_percpu, this_cpu_ptr, per_cpu_ptr.
//
// Mirrors: include/linux/percpu-defs.h, include/linux/percpu.h (Linux 6.19)
// Every CPU's copy sits in its own cache line(s), so CPUs never share a line through per-CPU
// data, as in the kernel's per-CPU areas.
// Emulation: a static per-CPU variable (DEFINE_PER_CPU) has NR_CPUS copies in one array; a
//   dynamic one (alloc_percpu) has nr_cpu_ids copies of the running machine. this_cpu_ptr() is
//   "the copy of the vCPU the caller runs on" and costs one thread-local load and an index.
// Emulation: the this_cpu_{read,write,add,inc,dec} operations are plain accesses to this CPU's
//   copy; callers keep the kernel's rule of touching them only with preemption disabled or under
//   the owning local lock (or where a racy read is fine, see READ_ONCE).
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>

#include "shim/compiler.h"
#include "shim/smp.h"

namespace umemcg {

template <typename T>
struct ____cacheline_aligned percpu_slot {
  T v{};
};

// A static per-CPU variable.
template <typename T>
struct percpu_var {
  percpu_slot<T> slot[NR_CPUS];
};

#define DEFINE_PER_CPU(type, name) ::umemcg::percpu_var<type> name
#define DECLARE_PER_CPU(type, name) extern ::umemcg::percpu_var<type> name
#define DEFINE_PER_CPU_ALIGNED(type, name) DEFINE_PER_CPU(type, name)

// A dynamically allocated per-CPU object (`T __percpu *` in the kernel).
template <typename T>
struct percpu {
  percpu_slot<T> *slot;
  unsigned int nr;
};

template <typename T>
inline T *this_cpu_ptr(percpu_var<T> *p) {
  return &p->slot[smp_processor_id()].v;
}
template <typename T>
inline T *per_cpu_ptr(percpu_var<T> *p, int cpu) {
  return &p->slot[cpu].v;
}
template <typename T>
inline T *this_cpu_ptr(percpu<T> *p) {
  return &p->slot[smp_processor_id()].v;
}
template <typename T>
inline T *per_cpu_ptr(percpu<T> *p, int cpu) {
  return &p->slot[cpu].v;
}

// alloc_percpu(type): zero-initialised (value-initialised) copies for every possible CPU of the
// running machine. Returns nullptr when no machine runs.
template <typename T>
percpu<T> *alloc_percpu() {
  if (nr_cpu_ids == 0) return nullptr;
  auto *p = new percpu<T>;
  p->nr = nr_cpu_ids;
  p->slot = new percpu_slot<T>[p->nr];
  return p;
}
template <typename T>
void free_percpu(percpu<T> *p) {
  if (!p) return;
  delete[] p->slot;
  delete p;
}

#define this_cpu_read(pcp) (*this_cpu_ptr(&(pcp)))
#define this_cpu_write(pcp, val) (*this_cpu_ptr(&(pcp)) = (val))
#define __this_cpu_read(pcp) this_cpu_read(pcp)
#define __this_cpu_write(pcp, val) this_cpu_write(pcp, val)

}  // namespace umemcg
