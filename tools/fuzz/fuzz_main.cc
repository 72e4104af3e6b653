// SPDX-License-Identifier: GPL-2.0-only
// tools/fuzz/fuzz_main.cc: `umemcg fuzz`: a campaign of generated cases against a policy object,
// a failing case minimized to a short script that replays it (see fuzz.h).
#include "tools/fuzz/fuzz.h"

#include <bpf/btf.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bpfvm/kernel_env.h"
#include "bpfvm/loader.h"
#include "mm/memcontrol.h"
#include "tools/fuzz/fuzz_case.h"
#include "tools/fuzz/fuzz_corpus.h"
#include "tools/fuzz/fuzz_run.h"
#include "tools/sh/sh_options.h"

namespace umemcg::fuzz {

namespace {

constexpr int kExitFound = 1, kExitUsage = 2;

bool parse_u64(const char *s, std::uint64_t *v) {
  if (!s || !*s) return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(s, &end, 10);
  if (errno || *end || s[0] == '-') return false;
  *v = x;
  return true;
}

}  // namespace

bool fuzz_find_assert_var(const emu::BpfObject &obj, const std::string &var, FuzzTarget *t,
                          int *off, int *size, std::string *why) {
  const btf *b = obj.btf.get();
  if (!b) {
    *why = "the object has no BTF";
    return false;
  }
  for (const char *sec : {".bss", ".data"}) {
    const int id = btf__find_by_name_kind(b, sec, BTF_KIND_DATASEC);
    if (id <= 0) continue;
    const btf_type *ds = btf__type_by_id(b, static_cast<__u32>(id));
    const btf_var_secinfo *vs = btf_var_secinfos(ds);
    for (unsigned i = 0; i < btf_vlen(ds); i++, vs++) {
      const btf_type *v = btf__type_by_id(b, vs->type);
      if (!v || var != btf__name_by_offset(b, v->name_off)) continue;
      if (vs->size == 0 || vs->size > 8) {
        *why = "--assert " + var + ": a variable of 1 to 8 bytes is needed (it has " +
               std::to_string(vs->size) + ")";
        return false;
      }
      t->assert_var = var;
      t->assert_section = sec;
      *off = static_cast<int>(vs->offset);
      *size = static_cast<int>(vs->size);
      return true;
    }
  }
  *why = "--assert " + var + ": no such variable in the object's .bss or .data";
  return false;
}

namespace {

// Drops lines of one part of the case (body, then setup) while the failure stays the same:
// chunks of halving size, then single lines, within a budget of runs.
void minimize_part(FuzzCase *c, std::vector<std::string> FuzzCase::*part, const FuzzOutcome &fail,
                   const FuzzRunOptions &ro, int *runs, int budget) {
  for (size_t chunk = std::max<size_t>(1, ((*c).*part).size() / 2); *runs < budget; chunk /= 2) {
    for (size_t at = 0; at < ((*c).*part).size() && *runs < budget;) {
      FuzzCase trial = *c;
      std::vector<std::string> &v = trial.*part;
      v.erase(v.begin() + static_cast<long>(at),
              v.begin() + static_cast<long>(std::min(at + chunk, v.size())));
      ++*runs;
      if (fuzz_same_failure(fuzz_run_case(trial, ro), fail))
        *c = std::move(trial);  // keep the smaller case; retry at the same place
      else
        at += chunk;
    }
    if (chunk <= 1) break;
  }
}

// The kill lines of processes the body no longer starts are dropped.
void drop_dead_kills(FuzzCase *c) {
  std::erase_if(c->tail, [&](const std::string &l) {
    if (l.rfind("kill -9 $", 0) != 0) return false;
    const std::string var = l.substr(9) + "=$!";
    for (const std::string &b : c->body)
      if (b.find(var) != std::string::npos) return false;
    return true;
  });
}

// The campaign's coverage: per program, the OR of every case's (bpfvm/coverage.h). Returns
// whether o added anything.
using CoverageMap = std::map<std::string, std::vector<u8>>;
bool merge_coverage(CoverageMap *m, const FuzzOutcome &o) {
  bool added = false;
  for (const emu::BpfCoverageProg &p : o.coverage) {
    std::vector<u8> &acc = (*m)[p.name];
    const std::vector<u8> before = acc;
    emu::bpf_coverage_merge(&acc, p.state);
    added = added || acc != before;
  }
  return added;
}

void print_coverage(const CoverageMap &m) {
  for (const auto &[name, state] : m) {
    const emu::BpfCoverageCounts c = emu::bpf_coverage_count(state);
    std::printf("coverage: prog %s %zu/%zu insns, %zu/%zu branch directions\n", name.c_str(),
                c.insns_hit, c.insns, c.dirs_hit, c.dirs);
  }
}

FuzzCase minimize(FuzzCase c, const FuzzOutcome &fail, const FuzzRunOptions &ro, int *runs) {
  minimize_part(&c, &FuzzCase::body, fail, ro, runs, 150);
  minimize_part(&c, &FuzzCase::setup, fail, ro, runs, 250);
  FuzzCase trimmed = c;
  drop_dead_kills(&trimmed);
  ++*runs;
  if (fuzz_same_failure(fuzz_run_case(trimmed, ro), fail)) c = std::move(trimmed);
  return c;
}

}  // namespace

absl::StatusOr<emu::BpfObject> fuzz_open_target(FuzzTarget *t) {
  emu::LoadOptions lo = emu::bpf_kernel_load_options();
  auto obj = emu::load_object_file(t->object, lo);
  if (!obj.ok()) return obj.status();
  for (const emu::MapSpec &m : obj->maps)
    if (m.origin == emu::MapOrigin::kStructOps || m.origin == emu::MapOrigin::kStructOpsLink)
      t->struct_ops_maps.push_back(m.name);
  for (const emu::BpfProgram &p : obj->progs)
    if (p.kind == emu::ProgKind::kFentry || p.kind == emu::ProgKind::kFexit)
      t->tracing_progs.push_back(p.name);
  return obj;
}

const char *fuzz_usage() {
  return "usage: umemcg fuzz OBJ.bpf.o [--attach MAP@CGROUP ...] [--runs N | --time SECONDS]\n"
         "                  [--seed N] [--jobs J] [--assert VAR] [--debt-limit PAGES]\n"
         "                  [--stall-limit SECONDS]\n"
         "                  [--corpus DIR] [--out DIR] [--timeout SECONDS]\n"
         "       umemcg fuzz OBJ.bpf.o [--seed N] --show CASE   (print case CASE's script)\n"
         "\n"
         "Runs generated cases against a policy object on simulated machines: random cgroup\n"
         "trees with limits and protections, the object loaded and attached (tracing programs\n"
         "to their hook points, struct_ops maps to a cgroup of the tree or where --attach says),\n"
         "workloads, control-file writes, memory.reclaim, detach and attach again, kills and\n"
         "removals. A case fails on a crash, a hang (--timeout, default 60 s), a kernel warning\n"
         "(charge-path checks, leaks at teardown, the LRU check), a process that can never\n"
         "finish, a non-zero --assert variable (.bss/.data), or a high_policy that deferred a\n"
         "task's memory.high debt past --debt-limit pages (default 128: two charge batches,\n"
         "the most the kernel lets a task carry without a policy; 0: no limit), or a task\n"
         "that stayed blocked in the kernel past --stall-limit seconds of machine time (the\n"
         "machine's hung-task check; default 120, the kernel's hung_task_timeout_secs; 0: off).\n"
         "The first failure is minimized and written to DIR (default fuzz-out) as a script:\n"
         "umemcg sh --seed N [--high-debt-limit N] [--hung-task-timeout S] DIR/case.sh\n"
         "replays it.\n"
         "The summary gives each program's coverage: instructions executed and conditional-jump\n"
         "directions taken, over every case. --corpus DIR: the *.sh cases there run first, and a\n"
         "new case that adds coverage is saved there (as a script that umemcg sh replays).\n"
         "The corpus's cases and the generated cases that add coverage are the pool: once it is\n"
         "not empty, every odd generated case is a mutation of a pool case (its seed, a body\n"
         "line dropped, a new step inserted or replacing one), decided in rounds of 16 cases.\n"
         "--jobs J runs J cases at once (each in its own process); the finding reported is still\n"
         "the lowest-numbered failing case, so a campaign finds the same case at any --jobs.\n"
         "Defaults: --runs 100, --seed 1, --jobs 1. Exit status: 0 nothing found, 1 a finding,\n"
         "2 bad input.\n";
}

int fuzz_main(const std::vector<std::string> &args) {
  FuzzTarget t;
  std::uint64_t runs = 100, seed = 1, time_s = 0, timeout_s = 60, show = 0, jobs = 1;
  std::uint64_t debt_limit = 2 * MEMCG_CHARGE_BATCH;
  // The kernel's default hung_task_timeout_secs (CONFIG_DEFAULT_HUNG_TASK_TIMEOUT).
  std::uint64_t stall_limit_ns = 120ull * 1000000000ull;
  bool show_case = false;
  std::string assert_var, out_dir = "fuzz-out", corpus_dir;
  auto bad = [](const std::string &msg) {
    std::fprintf(stderr, "umemcg fuzz: %s\n%s", msg.c_str(), fuzz_usage());
    return kExitUsage;
  };
  for (size_t i = 0; i < args.size(); i++) {
    const std::string &a = args[i];
    auto value = [&](const char *what) -> const char * {
      if (i + 1 >= args.size()) return nullptr;
      (void)what;
      return args[++i].c_str();
    };
    if (a == "--help" || a == "-h") {
      std::fputs(fuzz_usage(), stdout);
      return 0;
    } else if (a == "--runs") {
      if (!parse_u64(value("--runs"), &runs) || !runs) return bad("--runs needs a positive number");
    } else if (a == "--time") {
      if (!parse_u64(value("--time"), &time_s) || !time_s) return bad("--time needs a positive number of seconds");
    } else if (a == "--jobs") {
      if (!parse_u64(value("--jobs"), &jobs) || !jobs || jobs > 256)
        return bad("--jobs needs 1..256");
    } else if (a == "--debt-limit") {
      if (!parse_u64(value("--debt-limit"), &debt_limit) || debt_limit > (1ull << 40))
        return bad("--debt-limit needs a number of pages (0: no limit)");
    } else if (a == "--stall-limit") {
      const char *v = value("--stall-limit");
      if (!v || !sh::parse_seconds(v, &stall_limit_ns))
        return bad("--stall-limit needs a number of seconds (0: no limit)");
    } else if (a == "--seed") {
      if (!parse_u64(value("--seed"), &seed)) return bad("--seed needs a number");
    } else if (a == "--timeout") {
      if (!parse_u64(value("--timeout"), &timeout_s) || !timeout_s || timeout_s > 3600)
        return bad("--timeout needs 1..3600 seconds");
    } else if (a == "--show") {
      if (!parse_u64(value("--show"), &show)) return bad("--show needs a case number");
      show_case = true;
    } else if (a == "--out") {
      const char *v = value("--out");
      if (!v || !*v) return bad("--out needs a directory");
      out_dir = v;
    } else if (a == "--corpus") {
      const char *v = value("--corpus");
      if (!v || !*v) return bad("--corpus needs a directory");
      corpus_dir = v;
    } else if (a == "--assert") {
      const char *v = value("--assert");
      if (!v || !*v) return bad("--assert needs a variable name");
      assert_var = v;
    } else if (a == "--attach") {
      const char *v = value("--attach");
      const char *at = v ? std::strchr(v, '@') : nullptr;
      if (!at || at == v || !at[1]) return bad("--attach needs MAP@CGROUP");
      t.attach.emplace_back(std::string(v, at), std::string(at + 1));
    } else if (!a.empty() && a[0] == '-') {
      return bad("unknown option " + a);
    } else if (t.object.empty()) {
      t.object = a;
    } else {
      return bad("one object only (" + a + ")");
    }
  }
  if (t.object.empty()) return bad("no object");
  t.debt_limit = static_cast<unsigned long>(debt_limit);
  t.stall_limit_ns = stall_limit_ns;
  // The scripts name the object by its absolute path, so that they replay from anywhere.
  if (char *abs = ::realpath(t.object.c_str(), nullptr)) {
    t.object = abs;
    std::free(abs);
  }

  // Open the object as the shell will: what does it offer?
  auto obj = fuzz_open_target(&t);
  if (!obj.ok()) {
    std::fprintf(stderr, "umemcg fuzz: %s: %s\n", t.object.c_str(),
                 std::string(obj.status().message()).c_str());
    return kExitUsage;
  }
  for (const auto &[map, cg] : t.attach) {
    bool found = false;
    for (const std::string &m : t.struct_ops_maps) found = found || m == map;
    if (!found) return bad("--attach " + map + ": the object has no struct_ops map of that name");
  }
  FuzzRunOptions ro;
  ro.timeout_s = static_cast<int>(timeout_s);
  if (!assert_var.empty()) {
    std::string why;
    if (!fuzz_find_assert_var(*obj, assert_var, &t, &ro.assert_offset, &ro.assert_size, &why)) return bad(why);
  }
  if (show_case) {
    std::fputs(fuzz_case_script(fuzz_generate_case(t, seed, show)).c_str(), stdout);
    return 0;
  }
  std::vector<CorpusEntry> corpus;
  if (!corpus_dir.empty()) {
    auto loaded = fuzz_corpus_load(corpus_dir, t);
    if (!loaded.ok()) {
      std::fprintf(stderr, "umemcg fuzz: %s\n", std::string(loaded.status().message()).c_str());
      return kExitUsage;
    }
    corpus = std::move(*loaded);
  }
  const std::uint64_t ncorpus = corpus.size();
  std::printf("umemcg fuzz: %s: %zu struct_ops map(s), %zu tracing program(s)%s\n",
              t.object.c_str(), t.struct_ops_maps.size(), t.tracing_progs.size(),
              assert_var.empty() ? "" : (", asserting " + assert_var + " == 0").c_str());

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // Workers take case numbers in increasing order; a failure stops the taking of new ones, and
  // the cases in flight finish. Every case below a failing one was taken before it and has
  // finished when the workers are joined, so the lowest failure is the campaign's first.
  // Numbers below ncorpus are the corpus's cases; number ncorpus + n is generated case n.
  //
  // Rounds: the corpus's cases are round 0, generated case n is in round 1 + n / kRound. A round
  // closes when all its cases have finished: their coverage is merged in case order, and the
  // cases that added some join the pool of parents (with every corpus case), and the corpus
  // directory when there is one. Once the pool is not empty every odd generated case is a
  // mutation of a pool case (fuzz_mutate_pool_case()); a case waits for the rounds before its
  // own to close, so that the campaign (its cases, its coverage, its corpus) is the same at
  // any --jobs.
  constexpr std::uint64_t kRound = 16;
  auto round_of = [&](std::uint64_t k) { return k < ncorpus ? 0 : 1 + (k - ncorpus) / kRound; };
  auto round_begin = [&](std::uint64_t r) { return r == 0 ? 0 : ncorpus + (r - 1) * kRound; };
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  std::uint64_t done = 0;  // under mu
  int running = static_cast<int>(jobs);  // under mu
  std::map<std::uint64_t, std::pair<FuzzCase, FuzzOutcome>> failures;  // under mu
  CoverageMap coverage;  // under mu
  std::uint64_t saved = 0;  // under mu
  std::string save_error;   // under mu
  // Finished cases of rounds not closed yet, by number: the case and its coverage.
  std::map<std::uint64_t, std::pair<FuzzCase, FuzzOutcome>> finished;  // under mu
  std::uint64_t closed = 0;  // under mu: rounds 0 .. closed - 1 are closed
  std::vector<std::pair<FuzzCase, std::string>> pool;  // under mu: parents and their names
  std::map<std::uint64_t, std::string> parent_of;  // under mu: a mutated case's parent
  auto case_name = [&](std::uint64_t k) {
    return k < ncorpus ? "corpus case " + corpus[k].file : "case " + std::to_string(k - ncorpus);
  };
  // Merges finished case k (under mu, in case order); a case that adds coverage joins the pool.
  auto merge_case = [&](std::uint64_t k, std::pair<FuzzCase, FuzzOutcome> &f) {
    const bool added = merge_coverage(&coverage, f.second);
    if (added && k >= ncorpus && !corpus_dir.empty()) {
      const std::string name = "s" + std::to_string(seed) + "-c" + std::to_string(k - ncorpus) + ".sh";
      if (fuzz_corpus_save(corpus_dir, name, f.first, &save_error)) saved++;
    }
    if (added || k < ncorpus) pool.emplace_back(std::move(f.first), case_name(k));
  };
  // Closes every round whose cases have all finished (under mu).
  auto close_rounds = [&] {
    for (;;) {
      const std::uint64_t b = round_begin(closed), e = round_begin(closed + 1);
      auto it = finished.lower_bound(b);
      std::uint64_t have = 0;
      for (auto j = it; j != finished.end() && j->first < e; ++j) have++;
      if (have != e - b) return;
      for (; it != finished.end() && it->first < e; it = finished.erase(it))
        merge_case(it->first, it->second);
      closed++;
      cv.notify_all();
    }
  };
  {
    std::lock_guard<std::mutex> g(mu);
    close_rounds();  // an empty corpus: round 0 is closed at once
  }
  auto worker = [&] {
    while (!stop.load()) {
      const std::uint64_t k = next.fetch_add(1);
      if (k >= ncorpus &&
          (time_s ? elapsed() >= static_cast<double>(time_s) : k - ncorpus >= runs))
        break;
      FuzzCase c;
      std::string parent;
      if (k < ncorpus) {
        c = corpus[k].c;
      } else {
        const std::uint64_t n = k - ncorpus;
        std::unique_lock<std::mutex> g(mu);
        cv.wait(g, [&] { return closed >= round_of(k) || stop.load(); });
        if (stop.load()) break;
        if (n % 2 == 1 && !pool.empty()) {
          std::vector<const FuzzCase *> parents;
          for (const auto &p : pool) parents.push_back(&p.first);
          std::size_t i = 0;
          c = fuzz_mutate_pool_case(t, parents, seed, n, &i);
          parent = pool[i].second;
        } else {
          g.unlock();
          c = fuzz_generate_case(t, seed, n);
        }
      }
      FuzzOutcome o = fuzz_run_case(c, ro);
      std::lock_guard<std::mutex> g(mu);
      done++;
      if (!parent.empty()) parent_of[k] = parent;
      if (o.failed()) {
        failures.emplace(k, std::make_pair(c, o));
        stop.store(true);
      }
      finished.emplace(k, std::make_pair(std::move(c), std::move(o)));
      close_rounds();
    }
    std::lock_guard<std::mutex> g(mu);
    running--;
    cv.notify_all();
  };
  std::vector<std::thread> workers;
  for (std::uint64_t j = 0; j < jobs; j++) workers.emplace_back(worker);
  {
    // Progress, once a second, from this thread only.
    std::unique_lock<std::mutex> g(mu);
    while (running > 0) {
      if (!cv.wait_for(g, std::chrono::seconds(1), [&] { return running == 0; }))
        std::fprintf(stderr, "umemcg fuzz: %llu cases, %.0f s\n",
                     static_cast<unsigned long long>(done), elapsed());
    }
  }
  for (std::thread &w : workers) w.join();
  // The cases of rounds left open (the last one, or those after a failure), in case order.
  for (auto &[k, f] : finished) merge_case(k, f);
  const std::uint64_t n = done;
  const std::uint64_t mutated = parent_of.size();
  auto print_corpus = [&] {
    std::printf("mutations: %llu of the generated cases, of a pool of %zu case(s) that added "
                "coverage\n", static_cast<unsigned long long>(mutated), pool.size());
    if (corpus_dir.empty()) return;
    std::printf("corpus %s: %llu case(s) run first, %llu new case(s) saved\n", corpus_dir.c_str(),
                static_cast<unsigned long long>(ncorpus), static_cast<unsigned long long>(saved));
    if (!save_error.empty()) std::fprintf(stderr, "umemcg fuzz: %s\n", save_error.c_str());
  };
  if (!failures.empty()) {
    const std::uint64_t k = failures.begin()->first;
    const FuzzCase &c = failures.begin()->second.first;
    const FuzzOutcome &o = failures.begin()->second.second;
    // The case's name: "case N" (generated or mutated) or "corpus case FILE".
    std::string what = case_name(k);
    if (auto p = parent_of.find(k); p != parent_of.end()) what += " (a mutation of " + p->second + ")";
    std::printf("%s (seed %llu): %s: %s\n", what.c_str(),
                static_cast<unsigned long long>(c.seed), fuzz_kind_name(o.kind), o.detail.c_str());
    int tries = 0;
    const FuzzCase small = minimize(c, o, ro, &tries);
    const FuzzOutcome again = fuzz_run_case(small, ro);
    ::mkdir(out_dir.c_str(), 0755);
    const std::string path = out_dir + "/case.sh";
    std::ofstream f(path);
    f << "# umemcg fuzz finding: " << fuzz_kind_name(o.kind) << ": " << o.detail << "\n"
      << "# object " << t.object << ", campaign seed " << seed << ", " << what << "\n";
    f << fuzz_case_script(small);
    f.close();
    if (!f) {
      std::fprintf(stderr, "umemcg fuzz: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
      return kExitUsage;
    }
    std::printf("minimized in %d runs: %zu of %zu lines; %s\n", tries,
                small.setup.size() + small.body.size() + small.tail.size(),
                c.setup.size() + c.body.size() + c.tail.size(),
                fuzz_same_failure(again, o) ? "the minimized case fails the same way"
                                            : "the minimized case no longer fails (flaky)");
    std::printf("replay: umemcg sh %s %s\n", fuzz_case_sh_options(small).c_str(),
                path.c_str());
    std::printf("%llu cases run, %zu failing; the first is %s\n",
                static_cast<unsigned long long>(n), failures.size(), what.c_str());
    print_corpus();
    print_coverage(coverage);
    return kExitFound;
  }
  std::printf("%llu cases run in %.1f s, no failure\n", static_cast<unsigned long long>(n), elapsed());
  print_corpus();
  print_coverage(coverage);
  return 0;
}

}  // namespace umemcg::fuzz
