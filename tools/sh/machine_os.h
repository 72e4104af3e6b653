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
// cgroup removed) when the shell exits. machine_run() is the same machine for another body than
// the shell (`umemcg bpf run` test-runs a program in that process).
//
// Files: /sys/fs/cgroup and below (the cgroup filesystem), /proc/meminfo, /proc/zoneinfo,
// /proc/vmstat and /proc/swaps (read-only), and the sysctls of /proc/sys/vm (read and write).
// /proc/swaps: the kernel's header line and one line per swap device (--swap SIZE gives the
// machine one device of SIZE rounded down to whole pages, mm/swapfile.h; --swap 0, the
// default, none).
// /proc/meminfo: MemTotal, MemFree, MemAvailable, Buffers, Cached, SwapCached, Active, Inactive,
// Active(anon), Inactive(anon), Active(file), Inactive(file), Unevictable, SwapTotal, SwapFree,
// AnonPages, Mapped and Shmem, in the kernel's format and order (the other lines of a real
// meminfo are absent): MemTotal is --memory (the machine's RAM, rounded down to whole pages,
// mm/page_alloc.h), MemFree the pages no folio holds, the others the node statistics (the exact
// sums of every memcg's own counts: what the root's memory.stat shows once flushed).
// MemAvailable is si_mem_available() (free pages less the reserve of the high watermark, plus
// the page cache less what must stay: half of it or the low watermark, whichever is less).
// /proc/zoneinfo: the one zone's "Node 0, zone   Normal" header and its page lines (pages free,
// boost, min, low, high, promo, spanned, present, managed, cma) in zoneinfo_show_print's format;
// its statistics, protection and pageset lines are absent.
// /proc/vmstat: vmstat_text() (mm/vmstat.h), every line of the emulated kernel's config in the
// kernel's order. /proc/sys/vm/min_free_kbytes, watermark_scale_factor and swappiness: the
// registered sysctl tables (kernel/sysctl.h, mm/page_alloc.h, mm/vmscan.h), opened for reading
// and/or writing as their mode allows; a write is parsed at the descriptor's position (one
// write(2) per `echo`), a bad number fails with EINVAL. /proc, /proc/sys and /proc/sys/vm are
// directories (ls lists them).
// Emulation: MemAvailable counts no reclaimable slab (slab memory here is unreclaimable).
// --memory bounds every folio of the machine and the slab pages charged to cgroups: below the
// low watermark kswapd reclaims, below the min one the allocation reclaims globally and then
// runs the global OOM killer (mm/page_alloc.h, mm/oom_kill.h).
#pragma once

#include <functional>
#include <istream>
#include <ostream>

#include "tools/sh/sh_options.h"
#include "tools/sh/sh_os.h"

namespace umemcg::sh {

/**
 * machine_sh_main - `umemcg sh`: boot a machine from @opts and run the shell on it
 * Returns the shell's exit status (2 when the options ask for what the machine does not model,
 * with a line on @err).
 */
int machine_sh_main(const ShOptions &opts, std::istream &in, std::ostream &out, std::ostream &err);

/**
 * machine_run - boot a machine from @opts and run @body on it, as `umemcg sh` runs the shell
 * @opts: the machine's options (the shell's own options, script and -e, are not read)
 * @body: called in the task of a process of the root cgroup, with that process's ShellOs (the
 *        BPF kernel environment is registered); a kernel entry (emu::KernelEntry) is the
 *        caller's to make around kernel calls of its own
 * @err: where a machine that cannot boot is reported
 * @who: the command those lines start with ("umemcg sh")
 *
 * The machine stops when @body returns: every process it started is killed and reaped, every
 * object unloaded, every cgroup removed. Returns @body's status; 2 when @opts ask for what the
 * machine does not model, 1 when it fails to boot (a line on @err each).
 */
int machine_run(const ShOptions &opts, const std::function<int(ShellOs &os)> &body,
                std::ostream &err, const char *who);

}  // namespace umemcg::sh
