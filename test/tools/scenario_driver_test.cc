// SPDX-License-Identifier: GPL-2.0-only
// test/tools/scenario_driver_test.cc: `umemcg scenario` (tools/scenario/scenario_main.h) on a
// tiny fake scenario: seeds, --jobs (forked children, same output), median/min/max, the JSON
// document's shape, the exit status on an unmet verdict and on a failing run, bad arguments;
// the trace format (trace.h) and the SVG plot (well-formed XML, checked by python3's parser).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "tools/scenario/plot.h"
#include "tools/scenario/report.h"
#include "tools/scenario/scenario_main.h"
#include "tools/scenario/trace.h"

using namespace umemcg::scenario;

namespace {

// The fake's verdict holds when the median of a.x is at least this.
double g_need = 0;
// A seed that throws.
std::uint64_t g_bad_seed = ~0ull;

Scenario fake() {
  Scenario s;
  s.name = "fake";
  s.seed = "999";
  s.summary = "a test scenario";
  s.default_seeds = 3;
  s.run = [](const RunOptions &o) {
    if (o.seed == g_bad_seed) throw std::runtime_error("bad seed");
    if (o.trace) {
      o.trace->begin_process("variant a");
      o.trace->thread_name(7, "worker");
      o.trace->complete(7, "span", "test", 1500, 2500, {{"k", 1}});
      o.trace->instant(7, "decision", "test", 3000);
      o.trace->counter("pages", 4000, 12);
    }
    Metrics m;
    m["a"]["x"] = static_cast<double>(o.seed);
    m["a"]["y_host_ns"] = o.quick ? 1 : 2;
    m["b"]["x"] = static_cast<double>(o.seed * 2);
    return m;
  };
  s.report = [](const Summary &sum) {
    Report r;
    Table t;
    t.title = "Fake table";
    t.header = {"variant", "x"};
    for (const auto &[v, ms] : sum) t.rows.push_back({v, fmt_stat(ms.at("x"), 0)});
    t.notes.push_back("a note");
    r.tables.push_back(t);
    r.verdicts.push_back({"x big enough", sum.at("a").at("x").median >= g_need});
    return r;
  };
  return s;
}

const std::vector<Scenario> &registry() {
  static const std::vector<Scenario> r = {fake()};
  return r;
}

struct Out {
  int status;
  std::string out, err;
};

Out run(const std::vector<std::string> &args) {
  std::ostringstream o, e;
  int st = scenario_command(registry(), args, o, e);
  return {st, o.str(), e.str()};
}

std::string tmp_path(const std::string &suffix) {
  char path[] = "/tmp/umemcg-scen-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  std::string p = std::string(path) + suffix;
  std::rename(path, p.c_str());
  return p;
}

std::string slurp(const std::string &path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

bool has(const std::string &s, const std::string &what) {
  return s.find(what) != std::string::npos;
}

}  // namespace

TEST_CASE("scenario driver: list and the Markdown of a run", "[tools][scenario]") {
  Out l = run({"list"});
  CHECK(l.status == 0);
  CHECK(has(l.out, "fake"));
  CHECK(has(l.out, "a test scenario"));
  g_need = 0;
  Out r = run({"run", "fake", "--seed", "3", "--seeds", "5"});
  CHECK(r.status == 0);
  CHECK(has(r.out, "## fake (seed document 999)"));
  CHECK(has(r.out, "Seeds: 3..7 (5 runs)"));
  CHECK(has(r.out, "### Fake table"));
  CHECK(has(r.out, "| variant | x |"));
  CHECK(has(r.out, "| a | 5 [3..7] |"));
  CHECK(has(r.out, "| b | 10 [6..14] |"));
  CHECK(has(r.out, "a note"));
  CHECK(has(r.out, "- met: x big enough"));
}

TEST_CASE("scenario driver: JSON summary over the seeds, the same with --jobs",
          "[tools][scenario]") {
  g_need = 0;
  const std::string j1 = tmp_path(".json"), j3 = tmp_path(".json");
  Out r1 = run({"run", "fake", "--seed=10", "--seeds=4", "--json", j1});
  Out r3 = run({"run", "all", "--seed", "10", "--seeds", "4", "--jobs", "3", "--json", j3});
  REQUIRE(r1.status == 0);
  REQUIRE(r3.status == 0);
  CHECK(r1.out == r3.out);
  const nlohmann::json a = nlohmann::json::parse(slurp(j1));
  const nlohmann::json b = nlohmann::json::parse(slurp(j3));
  CHECK(a == b);
  CHECK(a["schema"] == "umemcg-scenario/1");
  CHECK(a["all_met"] == true);
  REQUIRE(a["scenarios"].size() == 1);
  const nlohmann::json &s = a["scenarios"][0];
  CHECK(s["scenario"] == "fake");
  CHECK(s["seed_doc"] == "999");
  CHECK(s["seeds"] == nlohmann::json({10, 11, 12, 13}));
  const nlohmann::json &x = s["metrics"]["a"]["x"];
  CHECK(x["median"] == 11.5);  // even count: the mean of the middle two
  CHECK(x["min"] == 10);
  CHECK(x["max"] == 13);
  CHECK(x["n"] == 4);
  CHECK(x["values"] == nlohmann::json({10, 11, 12, 13}));
  CHECK(s["metrics"]["b"]["x"]["median"] == 23);
  CHECK(s["tables"][0]["title"] == "Fake table");
  CHECK(s["tables"][0]["header"] == nlohmann::json({"variant", "x"}));
  CHECK(s["tables"][0]["rows"].size() == 2);
  CHECK(s["verdicts"][0]["met"] == true);
  // The default seed count is the scenario's own.
  Out d = run({"run", "fake", "--json", j1});
  CHECK(nlohmann::json::parse(slurp(j1))["scenarios"][0]["seeds"] == nlohmann::json({1, 2, 3}));
  CHECK(d.status == 0);
  std::remove(j1.c_str());
  std::remove(j3.c_str());
}

TEST_CASE("scenario driver: an unmet verdict or a failing seed is exit 1 after the output",
          "[tools][scenario]") {
  g_need = 100;
  const std::string j = tmp_path(".json");
  Out r = run({"run", "fake", "--json", j});
  CHECK(r.status == 1);
  CHECK(has(r.out, "- NOT met: x big enough"));
  CHECK(nlohmann::json::parse(slurp(j))["all_met"] == false);
  g_need = 0;
  for (const char *jobs : {"1", "2"}) {
    g_bad_seed = 2;
    Out f = run({"run", "fake", "--jobs", jobs});
    g_bad_seed = ~0ull;
    CHECK(f.status == 1);
    CHECK(has(f.err, "fake seed 2 failed: bad seed"));
  }
  std::remove(j.c_str());
}

TEST_CASE("scenario driver: bad arguments are exit 2 with a message", "[tools][scenario]") {
  const struct {
    std::vector<std::string> args;
    const char *msg;
  } cases[] = {
      {{}, "usage"},
      {{"frob"}, "unknown command 'frob'"},
      {{"run"}, "which scenario"},
      {{"run", "nosuch"}, "unknown scenario 'nosuch'"},
      {{"run", "fake", "--seeds", "0"}, "--seeds"},
      {{"run", "fake", "--seeds", "abc"}, "--seeds"},
      {{"run", "fake", "--seed", "-1"}, "--seed"},
      {{"run", "fake", "--seed", "99999999999999999999999"}, "--seed"},
      {{"run", "fake", "--jobs", "0"}, "--jobs"},
      {{"run", "fake", "--jobs"}, "needs a value"},
      {{"run", "fake", "--frob"}, "unknown option '--frob'"},
      {{"run", "fake", "other"}, "one scenario name"},
      {{"run", "fake", "--json", "/nonexistent-dir/x.json"}, "cannot write /nonexistent-dir"},
      {{"run", "fake", "--plot", "/nonexistent-dir/x.svg"}, "cannot write"},
      {{"run", "fake", "--trace", ""}, "empty file name"},
      {{"list", "x"}, "list takes no arguments"},
  };
  for (const auto &c : cases) {
    Out r = run(c.args);
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(has(r.err, c.msg));
    CHECK(r.out.empty());
  }
  CHECK(run({"--help"}).status == 0);
  CHECK(run({"run", "--help"}).status == 0);
}

TEST_CASE("scenario trace: Chrome trace-event JSON, microsecond timestamps", "[tools][scenario]") {
  for (const char *jobs : {"1", "2"}) {
    const std::string t = tmp_path(".json");
    Out r = run({"run", "fake", "--seeds", "2", "--jobs", jobs, "--trace", t});
    REQUIRE(r.status == 0);
    const nlohmann::json j = nlohmann::json::parse(slurp(t));
    REQUIRE(j["traceEvents"].is_array());
    int x = 0, spans = 0;
    for (const nlohmann::json &e : j["traceEvents"]) {
      CHECK(e.contains("ph"));
      CHECK(e["ts"].is_number());
      CHECK(e["pid"].is_number_integer());
      CHECK(e["tid"].is_number_integer());
      CHECK(e["name"].is_string());
      if (e["ph"] == "X") {
        x++;
        REQUIRE(e.contains("dur"));
        CHECK(e["ts"] == 1.5);  // 1500 ns
        CHECK(e["dur"] == 2.5);
        CHECK(e["args"]["k"] == 1);
      }
      if (e["ph"] == "i") CHECK(e["ts"] == 3.0);
      if (e["ph"] == "C") CHECK(e["args"]["value"] == 12);
      if (e["ph"] == "M" && e["name"] == "process_name") spans++;
    }
    CHECK(x == 1);      // only the first seed is traced
    CHECK(spans == 1);  // one process: variant a
    std::remove(t.c_str());
  }
}

TEST_CASE("scenario trace: merged documents renumber processes", "[tools][scenario]") {
  TraceWriter a, b;
  a.begin_process("one");
  a.complete(1, "s", "c", 0, 10);
  b.begin_process("two");
  b.begin_process("three");
  b.complete(1, "s", "c", 0, 10);
  REQUIRE(a.merge_json(b.to_json()));
  CHECK_FALSE(a.merge_json(nlohmann::json::object()));
  std::set<int> pids;
  const nlohmann::json doc = a.to_json();
  for (const auto &e : doc["traceEvents"]) pids.insert(e["pid"].get<int>());
  CHECK(pids == std::set<int>{1, 2, 3});
  a.begin_process("four");
  a.counter("n", 0, 1);
  CHECK(a.to_json()["traceEvents"].back()["pid"] == 4);
}

TEST_CASE("scenario plot: a well-formed SVG with bars, whiskers and seed dots",
          "[tools][scenario]") {
  const std::string p = tmp_path(".svg");
  Out r = run({"run", "fake", "--seeds", "3", "--plot", p});
  REQUIRE(r.status == 0);
  const std::string svg = slurp(p);
  CHECK(has(svg, "<svg"));
  CHECK(has(svg, "<rect"));
  CHECK(has(svg, "<line"));
  CHECK(has(svg, "<circle"));  // K > 1: the per-seed values
  CHECK(has(svg, ">x<"));      // a panel per metric
  const std::string cmd =
      "python3 -c 'import sys, xml.dom.minidom; d = xml.dom.minidom.parse(sys.argv[1]); "
      "sys.exit(0 if d.documentElement.tagName == \"svg\" else 1)' " + p;
  CHECK(std::system(cmd.c_str()) == 0);
  // A hostile name is escaped.
  Scenario s = fake();
  s.name = "a<b&\"c\"";
  ScenarioResult res;
  res.scenario = &s;
  res.seeds = {1};
  res.summary = summarize({s.run(RunOptions{})});
  const std::string svg2 = render_svg({res});
  CHECK_FALSE(has(svg2, "a<b"));
  CHECK(has(svg2, "a&lt;b&amp;&quot;c&quot;"));
  std::remove(p.c_str());
}
