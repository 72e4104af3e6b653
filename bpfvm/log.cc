// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/log.cc: the bpf_trace_printk() log.
// Mirrors: kernel/trace/bpf_trace.c (Linux 6.19). Emulation: see bpfvm/log.h.
#include "bpfvm/log.h"

#include <mutex>

#include "absl/strings/str_format.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/sched.h"
#include "shim/smp.h"

namespace umemcg::emu {

namespace {
std::mutex g_mu;
std::vector<BpfTraceEntry> g_entries;  // guarded by g_mu
}  // namespace

void bpf_trace_log_append(const std::string &msg) {
  BpfTraceEntry e;
  if (current) {
    e.comm = current->comm;
    e.pid = current->pid;
  } else {
    e.comm = "<none>";
  }
  e.cpu = tls_vcpu ? smp_processor_id() : -1;
  e.time_ns = Machine::get() ? ktime_get_ns() : 0;
  e.msg = msg;
  if (!e.msg.empty() && e.msg.back() == '\n') e.msg.pop_back();
  std::lock_guard<std::mutex> g(g_mu);
  g_entries.push_back(std::move(e));
}

std::vector<BpfTraceEntry> bpf_trace_log_entries() {
  std::lock_guard<std::mutex> g(g_mu);
  return g_entries;
}

std::string bpf_trace_log_messages() {
  std::string out;
  for (const BpfTraceEntry &e : bpf_trace_log_entries()) out += e.msg + "\n";
  return out;
}

std::string bpf_trace_log_text() {
  std::string out;
  for (const BpfTraceEntry &e : bpf_trace_log_entries())
    out += absl::StrFormat("%16s-%-7d [%03d] %6u.%06u: bpf_trace_printk: %s\n", e.comm, e.pid,
                           e.cpu, (unsigned)(e.time_ns / 1000000000ull),
                           (unsigned)(e.time_ns / 1000 % 1000000), e.msg);
  return out;
}

void bpf_trace_log_clear() {
  std::lock_guard<std::mutex> g(g_mu);
  g_entries.clear();
}

}  // namespace umemcg::emu
