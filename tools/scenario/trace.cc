// SPDX-License-Identifier: GPL-2.0-only
// tools/scenario/trace.cc: the Chrome trace-event writer of trace.h.
//
// Mirrors: nothing of the kernel; the format is Chrome's trace-event JSON ("traceEvents" of
//   objects with name, cat, ph, ts, pid, tid; "dur" on complete events, "s" on instant ones).
#include "tools/scenario/trace.h"

#include <algorithm>
#include <cerrno>
#include <fstream>

namespace umemcg::scenario {

namespace {
// Trace-event timestamps are microseconds; nanosecond precision stays in the fraction.
double to_us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }
}  // namespace

void TraceWriter::begin_process(const std::string &name) {
  ++pid_;
  events_.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid_}, {"tid", 0},
                     {"ts", 0}, {"args", {{"name", name}}}});
  // Perfetto lists processes by this index: variants stay in the order they were run.
  events_.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid_}, {"tid", 0},
                     {"ts", 0}, {"args", {{"sort_index", pid_}}}});
}

void TraceWriter::thread_name(int tid, const std::string &name) {
  events_.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid_}, {"tid", tid},
                     {"ts", 0}, {"args", {{"name", name}}}});
}

void TraceWriter::complete(int tid, const std::string &name, const std::string &cat,
                           std::uint64_t ts_ns, std::uint64_t dur_ns, nlohmann::json args) {
  events_.push_back({{"name", name}, {"cat", cat}, {"ph", "X"}, {"pid", pid_}, {"tid", tid},
                     {"ts", to_us(ts_ns)}, {"dur", to_us(dur_ns)}, {"args", std::move(args)}});
}

void TraceWriter::instant(int tid, const std::string &name, const std::string &cat,
                          std::uint64_t ts_ns, nlohmann::json args) {
  events_.push_back({{"name", name}, {"cat", cat}, {"ph", "i"}, {"s", "t"}, {"pid", pid_},
                     {"tid", tid}, {"ts", to_us(ts_ns)}, {"args", std::move(args)}});
}

void TraceWriter::counter(const std::string &name, std::uint64_t ts_ns, double value) {
  events_.push_back({{"name", name}, {"ph", "C"}, {"pid", pid_}, {"tid", 0},
                     {"ts", to_us(ts_ns)}, {"args", {{"value", value}}}});
}

bool TraceWriter::merge_json(const nlohmann::json &trace) {
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
    return false;
  int top = 0;
  for (const nlohmann::json &e : trace["traceEvents"])
    if (!e.is_object() || !e.contains("pid") || !e["pid"].is_number_integer()) return false;
  for (nlohmann::json e : trace["traceEvents"]) {
    const int pid = e["pid"].get<int>();
    top = std::max(top, pid);
    e["pid"] = pid + pid_;
    // The sort index follows the process number, so merged variants keep their order.
    if (e.value("name", "") == "process_sort_index") e["args"]["sort_index"] = pid + pid_;
    events_.push_back(std::move(e));
  }
  pid_ += top;
  return true;
}

nlohmann::json TraceWriter::to_json() const {
  return {{"traceEvents", events_}, {"displayTimeUnit", "ns"}};
}

bool TraceWriter::write(const std::string &path) const {
  std::ofstream f(path, std::ios::out | std::ios::trunc);
  if (!f) {
    if (!errno) errno = EIO;
    return false;
  }
  f << to_json().dump() << '\n';
  f.flush();
  if (!f) {
    if (!errno) errno = EIO;
    return false;
  }
  return true;
}

}  // namespace umemcg::scenario
