// SPDX-License-Identifier: GPL-2.0-only
// tools/scenario/scenario_main.cc: `umemcg scenario list|run` (scenario_main.h): options,
// seeds in-process or in forked children, summary, Markdown, JSON, trace and plot output.
//
// Mirrors: nothing of the kernel.
#include "tools/scenario/scenario_main.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <optional>

#include "tools/scenario/plot.h"
#include "tools/scenario/report.h"
#include "tools/scenario/trace.h"

namespace umemcg::scenario {

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitUsage = 2;
constexpr int kMaxSeeds = 10000, kMaxJobs = 256;

struct Options {
  std::string name;
  std::uint64_t seed = 1;
  int seeds = 0;  // 0: the scenario's default
  int jobs = 1;
  bool quick = false;
  std::string json, trace, plot;
};

// A whole decimal number in [lo, hi].
bool parse_number(const std::string &s, std::uint64_t lo, std::uint64_t hi, std::uint64_t *out) {
  if (s.empty() || s.size() > 20) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

// Can @path be written? Creates (truncates) it now, so that a bad path fails before the run.
bool writable(const std::string &path, std::string *why) {
  std::FILE *f = std::fopen(path.c_str(), "w");
  if (!f) {
    *why = std::strerror(errno);
    return false;
  }
  std::fclose(f);
  return true;
}

bool write_file(const std::string &path, const std::string &text, std::ostream &err) {
  std::ofstream f(path, std::ios::out | std::ios::trunc);
  f << text;
  f.flush();
  if (!f) {
    err << "umemcg scenario: cannot write " << path << ": " << std::strerror(errno) << "\n";
    return false;
  }
  return true;
}

// Progress lines on stderr, once a scenario has run for more than a second, at most one a second.
class Progress {
 public:
  explicit Progress(std::string name) : name_(std::move(name)) {}
  void line(const std::string &what) {
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    std::fprintf(stderr, "%s: %s\n", name_.c_str(), what.c_str());
  }

 private:
  std::string name_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

struct SeedRun {
  std::optional<Metrics> metrics;
  std::string error;
  nlohmann::json trace;  // the first seed's trace document when traced, else null
};

SeedRun run_here(const Scenario &s, std::uint64_t seed, bool quick, bool traced,
                 Progress *progress) {
  SeedRun r;
  TraceWriter tw;
  RunOptions o;
  o.seed = seed;
  o.quick = quick;
  o.trace = traced ? &tw : nullptr;
  o.progress = [progress](const std::string &l) { progress->line(l); };
  try {
    r.metrics = s.run(o);
  } catch (const std::exception &e) {
    r.error = e.what();
    return r;
  }
  if (traced) r.trace = tw.to_json();
  return r;
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  size_t index = 0;
  std::string data;
};

// The child's side: run the seed, write {"metrics":..., "trace":...} or {"error":...}, exit.
[[noreturn]] void child_main(int fd, const Scenario &s, std::uint64_t seed, bool quick,
                             bool traced, Progress *progress) {
  SeedRun r = run_here(s, seed, quick, traced, progress);
  nlohmann::json j;
  if (r.metrics) {
    j["metrics"] = metrics_to_json(*r.metrics);
    if (traced) j["trace"] = std::move(r.trace);
  } else {
    j["error"] = r.error;
  }
  const std::string text = j.dump();
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  std::fflush(stderr);
  _exit(0);
}

void finish_child(Child &c, std::vector<SeedRun> *runs) {
  ::close(c.fd);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  SeedRun &r = (*runs)[c.index];
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    r.error = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                  : "exited with status " + std::to_string(WEXITSTATUS(status));
    return;
  }
  nlohmann::json j = nlohmann::json::parse(c.data, nullptr, false);
  Metrics m;
  if (j.is_object() && j.contains("metrics") && metrics_from_json(j["metrics"], &m)) {
    r.metrics = std::move(m);
    if (j.contains("trace")) r.trace = std::move(j["trace"]);
  } else if (j.is_object() && j.contains("error") && j["error"].is_string()) {
    r.error = j["error"].get<std::string>();
  } else {
    r.error = "sent no result";
  }
}

// Runs every seed in forked children, at most @jobs at a time; results in seed order.
std::vector<SeedRun> run_forked(const Scenario &s, const std::vector<std::uint64_t> &seeds,
                                bool quick, bool traced, int jobs, Progress *progress,
                                std::ostream &out) {
  std::vector<SeedRun> runs(seeds.size());
  std::vector<Child> running;
  size_t next = 0, done = 0;
  while (done < seeds.size()) {
    while (next < seeds.size() && static_cast<int>(running.size()) < jobs) {
      int p[2];
      if (::pipe(p) < 0) {
        runs[next].error = std::string("pipe: ") + std::strerror(errno);
        ++next, ++done;
        continue;
      }
      out.flush();
      std::fflush(stdout);
      std::fflush(stderr);
      const pid_t pid = ::fork();
      if (pid < 0) {
        ::close(p[0]);
        ::close(p[1]);
        runs[next].error = std::string("fork: ") + std::strerror(errno);
        ++next, ++done;
        continue;
      }
      if (pid == 0) {
        ::close(p[0]);
        for (const Child &c : running) ::close(c.fd);
        child_main(p[1], s, seeds[next], quick, traced && next == 0, progress);
      }
      ::close(p[1]);
      running.push_back({pid, p[0], next, {}});
      ++next;
    }
    if (running.empty()) continue;
    std::vector<pollfd> fds;
    for (const Child &c : running) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      // poll itself failed: read each pipe in turn (blocking reads still end at EOF).
      for (pollfd &p : fds) p.revents = POLLIN;
    }
    for (size_t i = fds.size(); i-- > 0;) {
      if (!fds[i].revents) continue;
      Child &c = running[i];
      char buf[65536];
      ssize_t n = ::read(c.fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        c.data.append(buf, static_cast<size_t>(n));
        continue;
      }
      finish_child(c, &runs);
      ++done;
      progress->line("seed " + std::to_string(done) + "/" + std::to_string(seeds.size()) +
                     " done");
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return runs;
}

void print_list(const std::vector<Scenario> &registry, std::ostream &out) {
  for (const Scenario &s : registry) {
    char head[64];
    std::snprintf(head, sizeof(head), "%-16s seed %-4s %2d seed%s", s.name.c_str(),
                  s.seed.c_str(), s.default_seeds, s.default_seeds == 1 ? " " : "s");
    out << head << "  " << s.summary << "\n";
  }
}

int usage_error(std::ostream &err, const std::string &msg) {
  err << "umemcg scenario: " << msg << "\n" << scenario_usage();
  return kExitUsage;
}

// The options of `run`; false with *error on a bad one.
bool parse_run_options(const std::vector<std::string> &args, Options *o, std::string *error) {
  bool have_name = false;
  for (size_t i = 0; i < args.size(); i++) {
    std::string a = args[i], value;
    const bool takes_value = a == "--seed" || a == "--seeds" || a == "--jobs" || a == "--json" ||
                             a == "--trace" || a == "--plot";
    const size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      if (a == "--quick") return *error = "--quick takes no value", false;
    } else if (takes_value) {
      if (i + 1 >= args.size()) return *error = a + " needs a value", false;
      value = args[++i];
    }
    std::uint64_t v = 0;
    if (a == "--seed") {
      if (!parse_number(value, 0, UINT64_MAX - kMaxSeeds, &v))
        return *error = "--seed: not a number (or too large): '" + value + "'", false;
      o->seed = v;
    } else if (a == "--seeds") {
      if (!parse_number(value, 1, kMaxSeeds, &v))
        return *error = "--seeds: want 1.." + std::to_string(kMaxSeeds) + ", got '" + value +
                        "'",
               false;
      o->seeds = static_cast<int>(v);
    } else if (a == "--jobs") {
      if (!parse_number(value, 1, kMaxJobs, &v))
        return *error = "--jobs: want 1.." + std::to_string(kMaxJobs) + ", got '" + value + "'",
               false;
      o->jobs = static_cast<int>(v);
    } else if (a == "--json" || a == "--trace" || a == "--plot") {
      if (value.empty()) return *error = a + ": empty file name", false;
      (a == "--json" ? o->json : a == "--trace" ? o->trace : o->plot) = value;
    } else if (a == "--quick") {
      o->quick = true;
    } else if (a.rfind("-", 0) == 0) {
      return *error = "unknown option '" + a + "'", false;
    } else if (!have_name) {
      o->name = a;
      have_name = true;
    } else {
      return *error = "one scenario name (or all), got '" + a + "' too", false;
    }
  }
  if (!have_name)
    return *error = "run: which scenario? (a name from `umemcg scenario list`, or all)", false;
  return true;
}

// Runs every seed of @s, prints its Markdown and adds the first seed's trace to @trace. Returns
// the result, or nothing when a seed's run or the report failed (said on @err).
std::optional<ScenarioResult> run_scenario(const Scenario &s, const Options &o,
                                           TraceWriter *trace, std::ostream &out,
                                           std::ostream &err) {
  const int k = o.seeds ? o.seeds : std::max(1, s.default_seeds);
  std::vector<std::uint64_t> seeds;
  for (int i = 0; i < k; i++) seeds.push_back(o.seed + static_cast<std::uint64_t>(i));
  Progress progress(s.name);
  const bool traced = !o.trace.empty();
  std::vector<SeedRun> runs;
  if (o.jobs > 1) {
    runs = run_forked(s, seeds, o.quick, traced, o.jobs, &progress, out);
  } else {
    for (size_t i = 0; i < seeds.size(); i++) {
      progress.line("seed " + std::to_string(i + 1) + "/" + std::to_string(seeds.size()) +
                    " ...");
      runs.push_back(run_here(s, seeds[i], o.quick, traced && i == 0, &progress));
    }
  }
  std::vector<Metrics> per_seed;
  bool failed = false;
  for (size_t i = 0; i < runs.size(); i++) {
    if (!runs[i].metrics) {
      err << "umemcg scenario: " << s.name << " seed " << seeds[i] << " failed: " << runs[i].error
          << "\n";
      failed = true;
      continue;
    }
    per_seed.push_back(std::move(*runs[i].metrics));
    if (!runs[i].trace.is_null() && !trace->merge_json(runs[i].trace))
      err << "umemcg scenario: " << s.name << ": the trace of seed " << seeds[i]
          << " is malformed; left out\n";
  }
  if (failed) return std::nullopt;
  ScenarioResult r;
  r.scenario = &s;
  r.seeds = seeds;
  r.quick = o.quick;
  r.summary = summarize(per_seed);
  try {
    r.report = s.report(r.summary);
  } catch (const std::exception &e) {
    err << "umemcg scenario: " << s.name << ": report failed: " << e.what() << "\n";
    return std::nullopt;
  }
  out << render_markdown(r);
  out.flush();
  return r;
}

int cmd_run(const std::vector<Scenario> &registry, const std::vector<std::string> &args,
            std::ostream &out, std::ostream &err) {
  Options o;
  std::string error;
  if (!parse_run_options(args, &o, &error)) return usage_error(err, error);
  std::vector<const Scenario *> chosen;
  for (const Scenario &s : registry)
    if (o.name == "all" || s.name == o.name) chosen.push_back(&s);
  if (chosen.empty()) {
    err << "umemcg scenario: unknown scenario '" << o.name << "'; known:";
    for (const Scenario &s : registry) err << " " << s.name;
    err << " (or all)\n";
    return kExitUsage;
  }
  for (const std::string *path : {&o.json, &o.trace, &o.plot}) {
    std::string why;
    if (!path->empty() && !writable(*path, &why)) {
      err << "umemcg scenario: cannot write " << *path << ": " << why << "\n";
      return kExitUsage;
    }
  }

  std::vector<ScenarioResult> results;
  TraceWriter trace;
  int status = kExitOk;
  for (const Scenario *s : chosen) {
    std::optional<ScenarioResult> r = run_scenario(*s, o, &trace, out, err);
    if (!r) {
      status = kExitFailed;
      continue;
    }
    for (const Verdict &v : r->report.verdicts)
      if (!v.met && !v.host_timed) status = kExitFailed;
    results.push_back(std::move(*r));
  }
  if (!o.json.empty() && !write_file(o.json, render_json(results).dump(2) + "\n", err))
    status = kExitUsage;
  if (!o.trace.empty() && !trace.write(o.trace)) {
    err << "umemcg scenario: cannot write " << o.trace << ": " << std::strerror(errno) << "\n";
    status = kExitUsage;
  }
  if (!o.plot.empty() && !write_file(o.plot, render_svg(results), err)) status = kExitUsage;
  return status;
}

}  // namespace

const char *scenario_usage() {
  return "usage: umemcg scenario list\n"
         "       umemcg scenario run NAME|all [--seed N] [--seeds K] [--jobs J] [--json FILE]\n"
         "                               [--trace FILE] [--plot FILE] [--quick]\n"
         "\n"
         "  --seed N     first seed (default 1); seeds N..N+K-1 are run\n"
         "  --seeds K    number of seeds (default: the scenario's own)\n"
         "  --jobs J     run seeds in J processes at once (output does not depend on J)\n"
         "  --json FILE  the tables, verdicts and metric summaries as JSON\n"
         "  --trace FILE Chrome trace-event JSON of the first seed (open in ui.perfetto.dev)\n"
         "  --plot FILE  SVG bar charts of the main metrics (min-max whiskers, seed dots)\n"
         "  --quick      a shorter run with the same shape\n"
         "Exit status: 0; 1 when a verdict is not met (verdicts on host time are informative)\n"
         "or a run failed; 2 on usage errors.\n";
}

int scenario_command(const std::vector<Scenario> &registry, const std::vector<std::string> &args,
                     std::ostream &out, std::ostream &err) {
  if (args.empty()) {
    err << scenario_usage();
    return kExitUsage;
  }
  const std::string &verb = args[0];
  if (verb == "--help" || verb == "-h" || verb == "help") {
    out << scenario_usage();
    return kExitOk;
  }
  if (verb == "list") {
    if (args.size() > 1) return usage_error(err, "list takes no arguments");
    print_list(registry, out);
    return kExitOk;
  }
  if (verb == "run") {
    for (size_t i = 1; i < args.size(); i++)
      if (args[i] == "--help" || args[i] == "-h") {
        out << scenario_usage();
        return kExitOk;
      }
    return cmd_run(registry, std::vector<std::string>(args.begin() + 1, args.end()), out, err);
  }
  return usage_error(err, "unknown command '" + verb + "'");
}

}  // namespace umemcg::scenario
