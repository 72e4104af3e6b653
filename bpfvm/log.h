// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/log.h: the trace log bpf_trace_printk() writes to (the kernel's trace_pipe, as seen
// through the bpf_trace_printk trace event).
//
// Each entry records the task (comm, pid), the vCPU, the machine time and the formatted message.
// text() renders the entries the way trace_pipe shows them:
//   "<comm>-<pid> [<cpu>] <sec>.<usec>: bpf_trace_printk: <message>"
//
// Mirrors: kernel/trace/bpf_trace.c (trace_bpf_trace_printk event), the trace_pipe line format
//          (Linux 6.19)
// Emulation: one process-wide log (the kernel's trace buffer is system-wide too), unbounded
//   until cleared; reading does not consume it (trace_pipe does).
#pragma once

#include <string>
#include <vector>

#include "shim/types.h"

namespace umemcg::emu {

struct BpfTraceEntry {
  std::string comm;
  int pid = 0;
  int cpu = -1;
  u64 time_ns = 0;
  std::string msg;  // without the trailing newline the format may carry
};

// Appends an entry for the current context.
void bpf_trace_log_append(const std::string &msg);
// A copy of the entries so far.
std::vector<BpfTraceEntry> bpf_trace_log_entries();
// The messages only, one per line.
std::string bpf_trace_log_messages();
// trace_pipe-style lines.
std::string bpf_trace_log_text();
void bpf_trace_log_clear();

}  // namespace umemcg::emu
