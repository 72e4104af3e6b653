// SPDX-License-Identifier: GPL-2.0-only
// mm/process.h: emulated user processes: a machine task with its own address space, started
// in a memcg, running a workload, killed by signals or the OOM killer, and reaped.
//
// A process is a user-mode task of the machine (emu::Machine::spawn) whose task_struct has an
// mm_struct attached to a memcg before it first runs (emu::mm_attach, as a cgroup.procs write
// does). Its workload runs in user mode and enters the kernel for each system call and page
// fault (emu::KernelEntry). A fatal signal makes it exit at its next return to user mode; exit
// unmaps everything (every page uncharged through the batched uncharge), drops the mm's memcg
// reference and records the exit status: the workload's, or 128 + 9 after SIGKILL.
//
// Mirrors: kernel/exit.c (do_exit, exit_mm), kernel/fork.c (mm lifetime), kernel/signal.c
//   (SIGKILL delivery on return to user mode), kernel/sys.c (nanosleep, pause), the kernel
//   selftests' memcg workload helpers (tools/testing/selftests/cgroup) (Linux 6.19)
// Emulation: single-threaded processes only (a thread group of one); no fork: processes are
//   started directly in their memcg. Pids are the machine's task pids.
// Emulation: the mm_struct is freed one RCU grace period after exit_mmap (see mm/rmap.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "mm/memcontrol.h"
#include "mm/mm_types.h"

namespace umemcg::emu {

struct Process;

struct ProcessOptions {
  std::string comm = "proc";
  // The memcg to attach the process to directly (a test shortcut: it then joins no cgroup), or
  // nullptr: the process is forked into the starting task's cgroup and may be placed.
  mem_cgroup *memcg = nullptr;
  short oom_score_adj = 0;      // -1000..1000
  int cpu = -1;                 // vCPU to pin to, or -1
  // With memcg == nullptr: called with the child's pid after it joined the starting task's
  // cgroup and before it runs (a cgroup.procs write, e.g.); a negative errno refuses the start.
  std::function<int(int pid)> place;
};

// The workload: runs in user mode in the new process and returns its exit status.
using ProcessBody = std::function<int()>;

/**
 * process_start - start a process running @body
 * @opts: with a memcg, the process is attached to it directly; without, it is forked into the
 *   current task's cgroup (cgroup_post_fork) and @opts.place may move it before it runs
 * @place_err: where a refused placement's errno goes
 * Context: task context (mm, cgroup and placement are set up before the task first runs).
 * Returns the process, valid until process_wait() reaps it; nullptr when the placement was
 * refused (the child then exited without running @body and is reaped).
 */
Process *process_start(const ProcessOptions &opts, ProcessBody body, int *place_err = nullptr);
// Waits until @p has exited, reaps it and returns its exit status. Task context, may sleep.
int process_wait(Process *p);
// True once @p has exited (its status is then in *status when non-null).
bool process_exited(Process *p, int *status);
// Sends SIGKILL (a no-op once the process has exited).
void process_kill(Process *p);
// Sends a signal with the default action "terminate" (SIGKILL, SIGTERM, ...): the process dies
// at its next return to user mode with 128 + @sig, the first signal sent deciding. Emulation:
// workloads install no handlers, so every signal sent is fatal.
void process_signal(Process *p, int sig);
// process_wait(), unless the machine goes idle first (simulated mode: nothing else can run and
// no timer is pending, so the process can never exit): then -EDEADLK, and @p is not reaped.
// Otherwise 0, with the exit status in *code (128 + signal when killed) and the signal in *sig
// (0 when it exited by itself).
int process_wait_unless_idle(Process *p, int *code, int *sig);
int process_pid(const Process *p);
mm_struct *process_mm(Process *p);

// Inside a process: its own Process (nullptr in other tasks).
Process *current_process();

// --- what a process's workload calls (user mode) ---------------------------------------------
// Each returns false when the process must stop because a fatal signal is pending.

// mmap(MAP_PRIVATE|MAP_ANONYMOUS [|MAP_POPULATE|MAP_LOCKED]) of @nr_pages: one kernel entry.
bool sys_mmap_anon(unsigned long nr_pages, unsigned long flags, unsigned long *addr);
bool sys_munmap(unsigned long addr, unsigned long nr_pages);
bool sys_madvise_dontneed(unsigned long addr, unsigned long nr_pages);
// A write to page @addr: a page fault (one kernel entry) when it is not mapped.
bool user_write(unsigned long addr);
// nanosleep(): interruptible sleep of @ns (machine time); a freeze and thaw in between restart
// it to the same deadline.
bool sys_nanosleep(std::uint64_t ns);
// pause(): sleeps until a fatal signal arrives (no handler exists here, so nothing else ends
// it); returns false.
bool sys_pause();

// --- the shell's workloads (tools/sh) ----------------------------------------------------------
// Each returns the exit status (0) when it completes; killed processes exit 137 regardless.
// anon SIZE [--hold]: fault @bytes of private anonymous memory a page at a time, then munmap
// (or with @hold keep it mapped until killed).
int workload_anon(unsigned long bytes, bool hold);
// mlock SIZE: MAP_POPULATE|MAP_LOCKED of @bytes (one kernel entry), then exit.
int workload_mlock(unsigned long bytes);
// pagecache SIZE [--file NAME] [--hold]: grow a file by @bytes and read the new range through
// the page cache; a private file (@name empty) is deleted at exit, a named one lives on.
int workload_pagecache(unsigned long bytes, const std::string &name, bool hold);
// sleep SECONDS: sleep @ns of machine time.
int workload_sleep(std::uint64_t ns);

// Live (not yet exited) processes whose mm is in @memcg's subtree are passed to @fn, memcg by
// memcg in pre-order, in start order within one memcg, until @fn returns non-zero (its value is
// returned). mem_cgroup_scan_tasks() for the OOM killer.
// Each process passed to @fn is pinned for the call (it cannot be reaped meanwhile).
int scan_processes(mem_cgroup *memcg, const std::function<int(Process *)> &fn);
// Every live process in start order (for_each_process() for the global OOM killer), with the
// same pinning and early stop as scan_processes().
int for_each_process(const std::function<int(Process *)> &fn);
// Model bookkeeping for the invariant checker: the css references the live processes' mms hold
// on @memcg.
long process_css_refs(mem_cgroup *memcg);

// Extra references keeping a process from being freed by its reaper.
void process_pin(Process *p);
void process_unpin(Process *p);
// The process's oom_score_adj (fixed at start).
short process_oom_score_adj(const Process *p);
// SIGKILL sent or exit under way (fatal_signal_pending || PF_EXITING of its task).
bool process_dying(Process *p);
// OOM victim state of a process (mm/oom_kill.cc).
bool process_is_oom_victim(Process *p);
void process_mark_oom_victim(Process *p);

}  // namespace umemcg::emu
