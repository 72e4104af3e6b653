// SPDX-License-Identifier: GPL-2.0-only
// shim/hung_task.h: the hung-task check of the simulated machine, and its bound.
//
// With a bound set, the simulated scheduler reports a user task asleep in an uninterruptible or
// killable sleep inside a kernel entry (emu::KernelEntry) that began more than the bound ago,
// once per task, as a warning "INFO: task COMM:PID blocked for more than N seconds (WAIT
// REASON)". Sleeps of schedule_unless_idle() (a parent waiting for its child) do not count. The
// check runs each time the machine's clock jumps to its next timer.
//
// Mirrors: kernel/hung_task.c (sysctl_hung_task_timeout_secs, check_hung_uninterruptible_tasks,
//          check_hung_task; Linux 6.19)
// Emulation: the kernel's khungtaskd wakes every timeout and reports uninterruptible,
//   non-killable sleepers not switched in since its last look. Here killable sleeps (the
//   memory.high throttle's) count too, and what is measured is the task's stay in the kernel:
//   a task throttled again and again within one kernel entry is stalled though each sleep is
//   short. Kernel threads are not checked: here they are the machine's workers (daemons) and
//   the tasks that run a test's or the shell's body (Machine::exec), which wait for the
//   processes they started as a parent would. Native mode has no check.
// Emulation: the bound is in nanoseconds of machine time (the sysctl is in seconds).
#pragma once

#include <cstdint>

namespace umemcg::emu {

// The bound for machines run from now on (process-wide, like the sysctl); 0: off (the default).
void set_hung_task_timeout_ns(std::uint64_t ns);
std::uint64_t hung_task_timeout_ns();

}  // namespace umemcg::emu
