// SPDX-License-Identifier: GPL-2.0-only
// tools/scenario/report.cc: summary, Markdown and JSON output of `umemcg scenario run`
// (report.h).
//
// Mirrors: nothing of the kernel.
#include "tools/scenario/report.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace umemcg::scenario {

bool is_host_metric(const std::string &metric) {
  static const std::string kSuffix = "_host_ns";
  return metric.size() >= kSuffix.size() &&
         metric.compare(metric.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::uint64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

Summary summarize(const std::vector<Metrics> &per_seed) {
  Summary out;
  for (const Metrics &m : per_seed)
    for (const auto &[variant, metrics] : m)
      for (const auto &[name, value] : metrics) out[variant][name].values.push_back(value);
  for (auto &[variant, metrics] : out) {
    for (auto &[name, s] : metrics) {
      const auto [lo, hi] = std::minmax_element(s.values.begin(), s.values.end());
      s.n = static_cast<int>(s.values.size());
      s.min = *lo;
      s.max = *hi;
      s.median = median_of(s.values);
    }
  }
  return out;
}

nlohmann::json metrics_to_json(const Metrics &m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto &[variant, metrics] : m) {
    nlohmann::json v = nlohmann::json::object();
    for (const auto &[name, value] : metrics) v[name] = value;
    j[variant] = std::move(v);
  }
  return j;
}

bool metrics_from_json(const nlohmann::json &j, Metrics *out) {
  if (!j.is_object()) return false;
  Metrics m;
  for (const auto &[variant, metrics] : j.items()) {
    if (!metrics.is_object()) return false;
    for (const auto &[name, value] : metrics.items()) {
      if (!value.is_number()) return false;
      m[variant][name] = value.get<double>();
    }
  }
  *out = std::move(m);
  return true;
}

std::string fmt(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string fmt_pct(double frac, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%+.*f%%", digits, frac * 100.0);
  return buf;
}

std::string fmt_stat(const Stat &s, int digits) {
  if (s.n <= 1 || s.min == s.max) return fmt(s.median, digits);
  return fmt(s.median, digits) + " [" + fmt(s.min, digits) + ".." + fmt(s.max, digits) + "]";
}

namespace {

// A table cell: '|' would end the cell early.
std::string cell(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string seed_range(const std::vector<std::uint64_t> &seeds) {
  if (seeds.empty()) return "none";
  if (seeds.size() == 1) return std::to_string(seeds.front());
  return std::to_string(seeds.front()) + ".." + std::to_string(seeds.back());
}

}  // namespace

std::string render_markdown(const ScenarioResult &r) {
  std::ostringstream o;
  o << "## " << r.scenario->name << " (seed document " << r.scenario->seed << ")\n\n";
  o << r.scenario->summary << "  \n";
  o << "Seeds: " << seed_range(r.seeds) << " (" << r.seeds.size() << " run"
    << (r.seeds.size() == 1 ? "" : "s") << (r.quick ? ", quick" : "") << ")\n\n";
  for (const Table &t : r.report.tables) {
    o << "### " << t.title << "\n\n";
    if (!t.header.empty()) {
      o << "|";
      for (const std::string &h : t.header) o << " " << cell(h) << " |";
      o << "\n|";
      for (size_t i = 0; i < t.header.size(); i++) o << "---|";
      o << "\n";
      for (const auto &row : t.rows) {
        o << "|";
        for (size_t i = 0; i < t.header.size(); i++)
          o << " " << (i < row.size() ? cell(row[i]) : std::string()) << " |";
        o << "\n";
      }
      o << "\n";
    }
    for (const std::string &n : t.notes) o << n << "  \n";
    if (!t.notes.empty()) o << "\n";
  }
  if (!r.report.verdicts.empty()) {
    o << "Verdicts:\n";
    for (const Verdict &v : r.report.verdicts)
      o << "- " << (v.met ? "met" : "NOT met") << (v.host_timed ? " (host time, informative)" : "")
        << ": " << v.what << "\n";
    o << "\n";
  }
  return o.str();
}

nlohmann::json render_json(const std::vector<ScenarioResult> &results) {
  nlohmann::json all = nlohmann::json::array();
  bool all_met = true;
  for (const ScenarioResult &r : results) {
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto &[variant, ms] : r.summary) {
      nlohmann::json v = nlohmann::json::object();
      for (const auto &[name, s] : ms)
        v[name] = {{"median", s.median}, {"min", s.min}, {"max", s.max}, {"n", s.n},
                   {"values", s.values}};
      metrics[variant] = std::move(v);
    }
    nlohmann::json tables = nlohmann::json::array();
    for (const Table &t : r.report.tables)
      tables.push_back(
          {{"title", t.title}, {"header", t.header}, {"rows", t.rows}, {"notes", t.notes}});
    nlohmann::json verdicts = nlohmann::json::array();
    for (const Verdict &v : r.report.verdicts) {
      verdicts.push_back({{"what", v.what}, {"met", v.met}, {"host_timed", v.host_timed}});
      all_met = all_met && (v.met || v.host_timed);
    }
    all.push_back({{"scenario", r.scenario->name},
                   {"seed_doc", r.scenario->seed},
                   {"quick", r.quick},
                   {"seeds", r.seeds},
                   {"metrics", std::move(metrics)},
                   {"tables", std::move(tables)},
                   {"verdicts", std::move(verdicts)}});
  }
  return {{"schema", "umemcg-scenario/1"}, {"all_met", all_met}, {"scenarios", std::move(all)}};
}

}  // namespace umemcg::scenario
