// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/machine_os.h: MachineOs, the emulated machine behind `umemcg sh`: the ShellOs system
// calls (sh_os.h) served by the cgroup filesystem (kernel/cgroupfs.h), emulated processes
// (mm/process.h) and the BPF commands (sh_bpf_machine.h).
//
// MachineOs::run() boots a machine as the options say (vCPUs, mode, seed, cgroup v2 or v1 with
// the mount options, the stock design), then runs the shell on it as a task: the shell is a
// process of the root cgroup, and every ShellOs call it makes is a system call of that task
// (a kernel entry on a vCPU, sleeping in machine time). Workloads are processes started as its
// children; the machine stops (every process killed and reaped, every object unloaded, every
// cgroup removed) when the shell exits.
//
// Files: /sys/fs/cgroup and below (the cgroup filesystem), and /proc/swaps (the kernel's header
// line and one line per swap device: --swap SIZE gives the machine one device of SIZE rounded
// down to whole pages, mm/swapfile.h; --swap 0, the default, none).
// Emulation: --memory does not bound the root: the machine models no global memory pressure
//   (no global reclaim, no global OOM killer); memcg limits are the only limits.
#pragma once

#include <istream>
#include <ostream>

#include "tools/sh/sh_options.h"

namespace umemcg::sh {

/**
 * machine_sh_main - `umemcg sh`: boot a machine from @opts and run the shell on it
 * Returns the shell's exit status (2 when the options ask for what the machine does not model,
 * with a line on @err).
 */
int machine_sh_main(const ShOptions &opts, std::istream &in, std::ostream &out, std::ostream &err);

}  // namespace umemcg::sh
