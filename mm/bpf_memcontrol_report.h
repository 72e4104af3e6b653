// SPDX-License-Identifier: GPL-2.0-only
// mm/bpf_memcontrol_report.h: what the memcg kfuncs (mm/bpf_memcontrol.h) did for one task's
// BPF program run, and, for each call that returned NULL, nothing or an error, why: what the
// machine lacks (no cgroup with that id, no memory css, nothing the reclaim could take) or
// which argument the kfunc refused.
//
// `umemcg bpf run` arms the report for its own task around a test run; the kfuncs' BPF entry
// points (bpf_memcontrol.cc) record each call of that task. Each reason is decided by the same
// conditions the kfunc tested, evaluated right after the call in the calling task, never
// guessed from the return value alone.
//
// Mirrors: nothing in the kernel (a debugging aid around mm/bpf_memcontrol.c's kfuncs).
// Emulation: the kernel has no such record; the kfuncs' results are the same whether the
//   report is armed or not. When it is not armed, a kfunc call pays one relaxed load of a
//   global pointer.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "shim/compiler.h"
#include "shim/sched.h"
#include "shim/types.h"

namespace umemcg {

struct mem_cgroup;
struct cgroup;
struct cgroup_subsys_state;

enum class bpf_memcg_report_kind {
  ok,       // the call did what it was asked
  lacks,    // the machine lacks what the call needs (note says what)
  bad_arg,  // the kfunc refused an argument (note says which)
};

struct bpf_memcg_kfunc_record {
  const char *kfunc = "";  // the kfunc's name
  std::string call;        // "bpf_cgroup_from_id(7)": memcg and cgroup arguments by path
  std::string result;      // "NULL", a cgroup path, a number, "-EINVAL"
  bpf_memcg_report_kind kind = bpf_memcg_report_kind::ok;
  std::string note;        // for lacks and bad_arg: one line, no trailing newline
};

// The task whose kfunc calls are recorded, or nullptr (bpf_memcontrol_report.cc).
extern std::atomic<task_struct *> bpf_memcg_report_task;

// Whether the running task's memcg kfunc calls are recorded.
inline bool bpf_memcg_report_armed() {
  // Relaxed: only the armed task itself compares equal, and it stored the pointer.
  task_struct *t = bpf_memcg_report_task.load(std::memory_order_relaxed);
  return unlikely(t != nullptr) && t == current;
}

/**
 * bpf_memcg_report_start - record the memcg kfunc calls of the current task
 *
 * Clears any earlier records. One task at a time: a second start replaces the first task.
 * Context: task context.
 */
void bpf_memcg_report_start();

/**
 * bpf_memcg_report_stop - stop recording and return the calls made since the start
 *
 * At most BPF_MEMCG_REPORT_MAX_CALLS calls are kept; bpf_memcg_report_dropped() counts the
 * rest. Context: the task that called bpf_memcg_report_start().
 */
std::vector<bpf_memcg_kfunc_record> bpf_memcg_report_stop();
inline constexpr size_t BPF_MEMCG_REPORT_MAX_CALLS = 4096;
// Calls left out of the last report (past BPF_MEMCG_REPORT_MAX_CALLS).
unsigned long bpf_memcg_report_dropped();

// "/sys/fs/cgroup/a/b": the path of @memcg's (@cgrp's) cgroup under the mount point, or
// "NULL".
std::string bpf_memcg_report_path(mem_cgroup *memcg);
std::string bpf_cgroup_report_path(cgroup *cgrp);

// The recording of each kfunc, called by its BPF entry point after the call when
// bpf_memcg_report_armed(): arguments and result as the kfunc saw them.
void bpf_memcg_report_root(mem_cgroup *ret);
void bpf_memcg_report_get(cgroup_subsys_state *css, mem_cgroup *ret);
void bpf_memcg_report_cgroup_from_id(u64 cgid, cgroup *ret);
void bpf_memcg_report_reclaim(mem_cgroup *memcg, unsigned long size, int swappiness, long ret);
// The kfuncs that cannot fail for lack of anything (usage, events, stats, puts, releases):
// @args as the call's text between its parentheses.
void bpf_memcg_report_plain(const char *kfunc, const std::string &args, const std::string &result);

}  // namespace umemcg
