// SPDX-License-Identifier: GPL-2.0-only
// shim/hung_task.cc: the hung-task check's bound (see hung_task.h); the check itself is the
// simulated scheduler's (shim/emu/sched_sim.cc, Machine::Impl::sim_check_hung_tasks).
#include "shim/hung_task.h"

#include <atomic>

namespace umemcg::emu {

namespace {
std::atomic<std::uint64_t> g_hung_task_timeout_ns{0};
}  // namespace

void set_hung_task_timeout_ns(std::uint64_t ns) {
  g_hung_task_timeout_ns.store(ns, std::memory_order_relaxed);
}

std::uint64_t hung_task_timeout_ns() {
  return g_hung_task_timeout_ns.load(std::memory_order_relaxed);
}

}  // namespace umemcg::emu
