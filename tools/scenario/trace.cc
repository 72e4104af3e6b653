// SPDX-License-Identifier: GPL-2.0-only
// tools/scenario/trace.cc: the Chrome trace-event writer (see trace.h).
#include "tools/scenario/trace.h"

#include <fstream>

namespace umemcg::scenario {

namespace {
// Trace-event timestamps are microseconds; the fraction keeps nanoseconds.
double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }
}  // namespace

void TraceWriter::begin_process(const std::string &name) {
  pid_++;
  events_.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid_}, {"tid", 0},
                     {"args", {{"name", name}}}});
}

void TraceWriter::thread_name(int tid, const std::string &name) {
  events_.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid_}, {"tid", tid},
                     {"args", {{"name", name}}}});
}

void TraceWriter::complete(int tid, const std::string &name, const std::string &cat,
                           std::uint64_t ts_ns, std::uint64_t dur_ns, nlohmann::json args) {
  events_.push_back({{"ph", "X"}, {"name", name}, {"cat", cat}, {"pid", pid_}, {"tid", tid},
                     {"ts", us(ts_ns)}, {"dur", us(dur_ns)}, {"args", std::move(args)}});
}

void TraceWriter::instant(int tid, const std::string &name, const std::string &cat,
                          std::uint64_t ts_ns, nlohmann::json args) {
  events_.push_back({{"ph", "i"}, {"s", "t"}, {"name", name}, {"cat", cat}, {"pid", pid_},
                     {"tid", tid}, {"ts", us(ts_ns)}, {"args", std::move(args)}});
}

void TraceWriter::counter(const std::string &name, std::uint64_t ts_ns, double value) {
  events_.push_back({{"ph", "C"}, {"name", name}, {"pid", pid_}, {"tid", 0}, {"ts", us(ts_ns)},
                     {"args", {{"value", value}}}});
}

nlohmann::json TraceWriter::to_json() const {
  return {{"traceEvents", events_}, {"displayTimeUnit", "ns"}};
}

bool TraceWriter::write(const std::string &path) const {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return false;
  f << to_json().dump() << '\n';
  return static_cast<bool>(f.flush());
}

}  // namespace umemcg::scenario
