// SPDX-License-Identifier: GPL-2.0-only
// tools/scenario/trace.h: a scenario's trace in the Chrome trace-event JSON format, which
// Perfetto (ui.perfetto.dev) and chrome://tracing load.
//
// Each variant of a scenario is a trace process (its own emulated machine); each emulated task a
// thread of it. Events: complete events ("ph":"X") for lock holds and waits, throttling sleeps,
// reclaim passes; instant events ("ph":"i") for policy decisions; counters ("ph":"C").
// Timestamps are the machine clock (virtual time in simulated mode), written in microseconds as
// the format wants, with nanosecond precision kept as a fraction.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace umemcg::scenario {

class TraceWriter {
 public:
  // Starts a trace process for a variant ("baseline"); later events belong to it.
  void begin_process(const std::string &name);
  // Names a thread (an emulated task: its pid and comm) of the current process.
  void thread_name(int tid, const std::string &name);
  // A span [ts_ns, ts_ns + dur_ns) on thread tid.
  void complete(int tid, const std::string &name, const std::string &cat, std::uint64_t ts_ns,
                std::uint64_t dur_ns, nlohmann::json args = nlohmann::json::object());
  // A point event on thread tid.
  void instant(int tid, const std::string &name, const std::string &cat, std::uint64_t ts_ns,
               nlohmann::json args = nlohmann::json::object());
  // A counter sample of the current process.
  void counter(const std::string &name, std::uint64_t ts_ns, double value);

  // Appends the events of another trace document (to_json() of a writer, e.g. from a seed's
  // child process) as processes after the ones already here. False when @trace has another shape.
  bool merge_json(const nlohmann::json &trace);

  size_t size() const { return events_.size(); }
  // {"traceEvents": [...], "displayTimeUnit": "ns"}
  nlohmann::json to_json() const;
  // Writes to_json() to path; false (errno set) when the file cannot be written.
  bool write(const std::string &path) const;

 private:
  nlohmann::json events_ = nlohmann::json::array();
  int pid_ = 0;
};

}  // namespace umemcg::scenario
