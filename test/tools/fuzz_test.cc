// SPDX-License-Identifier: GPL-2.0-only
// test/tools/fuzz_test.cc: `umemcg fuzz`, run as a user would: a deliberately broken policy
// (test/progs/fuzz_broken.bpf.c) trips its author's assertion, the case is minimized to a short
// script that replays the failure with `umemcg sh --seed N`; a sound policy runs clean; bad
// input gets status 2 and a clear message. The generator gives the same case for the same seed.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bpfvm/coverage.h"
#include "tools/fuzz/fuzz_case.h"
#include "tools/fuzz/fuzz_corpus.h"
#include "tools/fuzz/fuzz_run.h"
#include "test/tools/umemcg_cli.h"

namespace {

using Run = umemcg::test::CommandResult;
using umemcg::test::prog;
using umemcg::test::run_umemcg;

std::string tmpdir() {
  char tmpl[] = "/tmp/umemcg-fuzz-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

bool has(const std::string &s, const std::string &what) { return s.find(what) != std::string::npos; }

// The arguments of the "replay: umemcg sh ARGS" line a failing fuzz run prints.
std::string replay_sh_args(const std::string &out) {
  const std::string head = "replay: umemcg sh ";
  const size_t at = out.find(head);
  REQUIRE(at != std::string::npos);
  const size_t from = at + head.size();
  return out.substr(from, out.find('\n', from) - from);
}

}  // namespace

TEST_CASE("umemcg fuzz: a broken policy's assertion is caught, minimized and replays",
          "[tools][fuzz]") {
  const std::string dir = tmpdir();
  // --debt-limit 0: the debt check (the next test) would report the same case first.
  Run r = run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") +
                     " --assert violated --debt-limit 0 --runs 100 --out " + dir);
  INFO(r.out);
  REQUIRE(r.status == 1);
  CHECK(has(r.out, "assert: the assertion variable is"));
  CHECK(has(r.out, "the minimized case fails the same way"));
  std::ifstream f(dir + "/case.sh");
  REQUIRE(f);
  const std::string script((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  INFO(script);
  // Short: the header, the tree, the object, a few workload lines and the teardown.
  CHECK(std::count(script.begin(), script.end(), '\n') <= 24);
  const size_t at = script.find("--seed ");
  REQUIRE(at != std::string::npos);
  const std::string seed = script.substr(at + 7, script.find(' ', at + 7) - at - 7);
  // The replay: the .bss dump after the marker shows the variable set (value bytes not all 0).
  Run replay = run_umemcg("sh --seed " + seed + " " + dir + "/case.sh");
  INFO(replay.out);
  const size_t m = replay.out.find(umemcg::fuzz::kAssertMarker);
  REQUIRE(m != std::string::npos);
  const std::string dump = replay.out.substr(m, replay.out.find("Found", m) - m);
  const std::string value = dump.substr(dump.find("value:") + 6);
  // deferred (8 bytes) then violated (8 bytes): the second word is non-zero.
  std::string bytes;
  for (char ch : value)
    if (std::isxdigit(static_cast<unsigned char>(ch))) bytes += ch;
  REQUIRE(bytes.size() >= 32);
  CHECK(bytes.substr(16, 16) != std::string(16, '0'));
  std::remove((dir + "/case.sh").c_str());

  // Three cases at a time: the same first failing case, and the same minimized script.
  Run par = run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") +
                       " --assert violated --debt-limit 0 --runs 100 --jobs 3 --out " + dir);
  INFO(par.out);
  REQUIRE(par.status == 1);
  CHECK(!umemcg::test::line_starting(r.out, "case ").empty());
  CHECK(umemcg::test::line_starting(par.out, "case ") ==
        umemcg::test::line_starting(r.out, "case "));
  std::ifstream f3(dir + "/case.sh");
  const std::string script3((std::istreambuf_iterator<char>(f3)), std::istreambuf_iterator<char>());
  CHECK(script3 == script);
  std::remove((dir + "/case.sh").c_str());
  rmdir(dir.c_str());
}

// The fuzzer's own check, no --assert: the policy that defers every over-high handling lets an
// mlock populate (one kernel entry) run up a debt of more than two charge batches, which the
// kernel without a policy pays inline; the finding replays with the shell's --high-debt-limit.
TEST_CASE("umemcg fuzz: a policy deferring a memory.high debt past two batches is a finding; "
          "umemcg sh --high-debt-limit warns on the replay and not without it", "[tools][fuzz]") {
  const std::string dir = tmpdir();
  Run r = run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") + " --runs 100 --jobs 2 --out " + dir);
  INFO(r.out);
  REQUIRE(r.status == 1);
  CHECK(has(r.out, "warning: "));
  CHECK(has(r.out, "a high_policy deferred a memory.high debt of more than 128 pages"));
  CHECK(has(r.out, "the minimized case fails the same way"));
  const std::string replay_args = replay_sh_args(r.out);
  CHECK(has(replay_args, "--high-debt-limit 128 "));
  Run replay = run_umemcg("sh " + replay_args);
  INFO(replay.out);
  CHECK(has(replay.out, "WARNING: "));
  CHECK(has(replay.out, "deferred a memory.high debt of more than 128 pages"));
  // The same script and seed without the limit: no warning.
  std::string no_limit = replay_args;
  no_limit.erase(no_limit.find("--high-debt-limit 128 "), 22);
  Run quiet = run_umemcg("sh " + no_limit);
  INFO(quiet.out);
  CHECK_FALSE(has(quiet.out, "WARNING: "));
  // --debt-limit 0 turns the check off: the same campaign finds nothing in its first 10 cases.
  Run off = run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") + " --runs 10 --debt-limit 0 --out " + dir);
  INFO(off.out);
  CHECK(off.status == 0);
  std::remove((dir + "/case.sh").c_str());
  rmdir(dir.c_str());
}

TEST_CASE("umemcg fuzz: the lock-holder sample runs clean; bad input is refused",
          "[tools][fuzz]") {
  Run r = run_umemcg("fuzz " + prog("kernfs_lockholder.bpf.o") + " --runs 25 --out /nonexistent");
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK(has(r.out, "25 cases run"));
  CHECK(has(r.out, "no failure"));

  CHECK(run_umemcg("fuzz").status == 2);
  Run missing = run_umemcg("fuzz /nonexistent.bpf.o");
  CHECK(missing.status == 2);
  CHECK(has(missing.out, "/nonexistent.bpf.o"));
  Run var = run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") + " --assert nosuch");
  CHECK(var.status == 2);
  CHECK(has(var.out, "no such variable"));
  CHECK(run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") + " --attach nosuch@a").status == 2);
  CHECK(run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") + " --attach defer_all").status == 2);
  CHECK(run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") + " --runs 0").status == 2);
  CHECK(run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") + " --bogus").status == 2);
  CHECK(run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") + " --debt-limit -3").status == 2);
  CHECK(run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") + " --jobs 0").status == 2);
}

TEST_CASE("fuzz cases: the same seed gives the same case; cases differ", "[tools][fuzz]") {
  umemcg::fuzz::FuzzTarget t;
  t.object = "/x.bpf.o";
  t.struct_ops_maps = {"ops"};
  t.tracing_progs = {"after_down_read"};
  const auto a = umemcg::fuzz::fuzz_case_script(umemcg::fuzz::fuzz_generate_case(t, 3, 7));
  CHECK(a == umemcg::fuzz::fuzz_case_script(umemcg::fuzz::fuzz_generate_case(t, 3, 7)));
  CHECK(a != umemcg::fuzz::fuzz_case_script(umemcg::fuzz::fuzz_generate_case(t, 3, 8)));
  CHECK(has(a, "bpf load /x.bpf.o p\n"));
  CHECK(has(a, "bpf attach p/after_down_read\n"));
  CHECK(has(a, "bpf attach p/ops "));
  t.attach = {{"ops", "zz"}};
  CHECK(has(umemcg::fuzz::fuzz_case_script(umemcg::fuzz::fuzz_generate_case(t, 3, 7)),
            "bpf attach p/ops zz\n"));
}

namespace {

// The cgroup a generated body line names ("" for a line that names none).
std::string named_cgroup(const std::string &l) {
  if (l.rfind("spawn ", 0) == 0) return l.substr(6, l.find(' ', 6) - 6);
  if (l.rfind("bpf attach p/", 0) == 0 || l.rfind("bpf detach p/", 0) == 0)
    return l.substr(l.rfind(' ') + 1);
  const size_t gt = l.find(" > ");
  if (gt != std::string::npos) return l.substr(gt + 3, l.rfind('/') - gt - 3);
  if (l.rfind("cat ", 0) == 0) return l.substr(4, l.rfind('/') - 4);
  return "";
}

std::vector<std::string> without_kills(const std::vector<std::string> &v) {
  std::vector<std::string> out;
  for (const std::string &l : v)
    if (l.rfind("kill -9 $P", 0) != 0) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("fuzz mutations: a mutated case keeps its parent's setup, names only the parent's "
          "cgroups, kills what it starts, and is the same for the same numbers", "[tools][fuzz]") {
  umemcg::fuzz::FuzzTarget t;
  t.object = "/x.bpf.o";
  t.struct_ops_maps = {"ops"};
  int new_seed = 0, shorter = 0, longer = 0;
  for (std::uint64_t n = 0; n < 200; n++) {
    const umemcg::fuzz::FuzzCase parent = umemcg::fuzz::fuzz_generate_case(t, 3, n);
    const umemcg::fuzz::FuzzCase other = umemcg::fuzz::fuzz_generate_case(t, 4, n);
    std::size_t i = 9;
    const umemcg::fuzz::FuzzCase m = umemcg::fuzz::fuzz_mutate_pool_case(t, {&other, &parent}, 5, n, &i);
    REQUIRE(i < 2);
    const umemcg::fuzz::FuzzCase &p = i == 0 ? other : parent;
    std::size_t j = 9;
    CHECK(umemcg::fuzz::fuzz_case_script(m) ==
          umemcg::fuzz::fuzz_case_script(umemcg::fuzz::fuzz_mutate_pool_case(t, {&other, &parent}, 5, n, &j)));
    CHECK(j == i);
    CHECK(m.setup == p.setup);
    CHECK(without_kills(m.tail) == without_kills(p.tail));
    // Every cgroup a body line names is one of the parent's tree.
    for (const std::string &l : m.body) {
      const std::string cg = named_cgroup(l);
      if (cg.empty()) continue;
      INFO(l);
      CHECK(std::find(p.setup.begin(), p.setup.end(), "mkdir " + cg) != p.setup.end());
    }
    // The tail kills exactly the processes the body starts.
    std::vector<std::string> spawned, killed;
    for (const std::string &l : m.body)
      if (l.rfind("spawn ", 0) == 0) spawned.push_back("kill -9 $" + l.substr(l.rfind("; ") + 2, l.size() - l.rfind("; ") - 5));
    for (const std::string &l : m.tail)
      if (l.rfind("kill -9 $P", 0) == 0) killed.push_back(l);
    std::sort(spawned.begin(), spawned.end());
    spawned.erase(std::unique(spawned.begin(), spawned.end()), spawned.end());
    std::sort(killed.begin(), killed.end());
    CHECK(spawned == killed);
    new_seed += m.seed != p.seed;
    shorter += m.body.size() < p.body.size();
    longer += m.body.size() > p.body.size();
  }
  // Each kind of change happens.
  CHECK(new_seed > 20);
  CHECK(shorter > 20);
  CHECK(longer > 20);
  // A parent without a tree (a hand-written corpus case) only gets a new seed.
  umemcg::fuzz::FuzzCase bare;
  bare.seed = 1;
  bare.body = {"sleep 0.1"};
  bare.tail = {"wait"};
  std::size_t i = 0;
  const umemcg::fuzz::FuzzCase m = umemcg::fuzz::fuzz_mutate_pool_case(t, {&bare}, 1, 1, &i);
  CHECK(m.body == bare.body);
  CHECK(m.tail == bare.tail);
}

TEST_CASE("fuzz cases from bytes: each choice takes the bytes that hold it; every input is a "
          "case", "[tools][fuzz]") {
  const std::uint8_t bytes[] = {0x05, 0x34, 0x12, 0xff};
  umemcg::fuzz::FuzzByteChooser ch(bytes, sizeof bytes);
  CHECK(ch.below(1) == 0);               // no byte
  CHECK(ch.below(256) == 5);             // one byte
  CHECK(ch.below(65536) == 0x1234);      // two, little-endian
  CHECK(ch.below(10) == 0xff % 10);      // modulo n
  CHECK(ch.below(1000) == 0);            // past the end: 0
  umemcg::fuzz::FuzzTarget t;
  t.object = "/x.bpf.o";
  t.struct_ops_maps = {"ops"};
  auto from = [&](const std::vector<std::uint8_t> &in) {
    umemcg::fuzz::FuzzByteChooser c(in.data(), in.size());
    return umemcg::fuzz::fuzz_case_script(umemcg::fuzz::fuzz_generate_case_from(t, c));
  };
  const std::string empty = from({});
  CHECK(has(empty, "bpf load /x.bpf.o p\n"));
  CHECK(has(empty, "mkdir a\n"));
  CHECK(from({1, 2, 3, 4, 5, 6, 7, 8, 9}) == from({1, 2, 3, 4, 5, 6, 7, 8, 9}));
  // The first choice is the scheduler's seed (three bytes): one of them changed, another case.
  CHECK(from({1, 2, 3, 4, 5, 6, 7, 8, 9}) != from({1, 9, 3, 4, 5, 6, 7, 8, 9}));
}

namespace {

std::vector<std::string> sh_files(const std::string &dir) {
  std::vector<std::string> v;
  if (DIR *d = opendir(dir.c_str())) {
    while (const dirent *e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 3 && n.substr(n.size() - 3) == ".sh") v.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(v.begin(), v.end());
  return v;
}

std::string read_all(const std::string &path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string coverage_lines(const std::string &out) {
  std::string s;
  size_t at = 0;
  while ((at = out.find("coverage: prog ", at)) != std::string::npos) {
    const size_t end = out.find('\n', at);
    s += out.substr(at, end - at) + "\n";
    at = end;
  }
  return s;
}

}  // namespace

namespace {

// A hand-made case on fuzz_broken.bpf.o: cgroup a with memory.high 2M, the policy attached
// there, then the body.
umemcg::fuzz::FuzzCase broken_case(std::vector<std::string> body) {
  umemcg::fuzz::FuzzCase c;
  c.seed = 7;
  c.setup = {"echo +memory > cgroup.subtree_control", "mkdir a", "echo 2M > a/memory.high",
             "bpf load " + prog("fuzz_broken.bpf.o") + " p", "bpf attach p/defer_all a"};
  c.body = std::move(body);
  c.tail = {"kill -9 $P1", "wait", "bpf unload p", "rmdir a"};
  return c;
}

umemcg::emu::BpfCoverageCounts coverage_of(const umemcg::fuzz::FuzzOutcome &o,
                                           const std::string &name) {
  for (const auto &p : o.coverage)
    if (p.name == name) return umemcg::emu::bpf_coverage_count(p.state);
  FAIL("no coverage record for " << name);
  return {};
}

}  // namespace

// high_policy is "deferred++; if (debt > 128) violated = debt; return 1": it runs only when a
// kernel entry's debt passes one batch (64 pages), so an anonymous workload (one fault per
// kernel entry, its debt paid on each return to user mode) never reaches it, and an 8 MiB mlock
// populate over a 2 MiB memory.high (one kernel entry) reaches it at 128 pages of debt (the
// branch falls through) and again past 128 (the branch is taken): every instruction.
TEST_CASE("fuzz coverage: a case reaches a known subset of the policy's instructions and "
          "branch directions", "[tools][fuzz][coverage]") {
  umemcg::fuzz::FuzzRunOptions ro;
  const umemcg::fuzz::FuzzOutcome none = umemcg::fuzz::fuzz_run_case(
      broken_case({"spawn a anon 4M; P1=$!", "sleep 0.5"}), ro);
  INFO(none.out << none.err);
  CHECK_FALSE(none.failed());
  const umemcg::emu::BpfCoverageCounts n = coverage_of(none, "high_policy");
  CHECK(n.insns > 5);
  CHECK(n.insns_hit == 0);
  CHECK(n.dirs == 2);
  CHECK(n.dirs_hit == 0);

  const umemcg::fuzz::FuzzOutcome all = umemcg::fuzz::fuzz_run_case(
      broken_case({"spawn a mlock 8M; P1=$!", "sleep 0.5"}), ro);
  INFO(all.out << all.err);
  const umemcg::emu::BpfCoverageCounts a = coverage_of(all, "high_policy");
  CHECK(a.insns == n.insns);
  CHECK(a.insns_hit == a.insns);
  CHECK(a.dirs_hit == 2);
}

TEST_CASE("umemcg fuzz: the summary gives each program's coverage, the same at any --jobs",
          "[tools][fuzz][coverage]") {
  Run one = run_umemcg("fuzz " + prog("kernfs_lockholder.bpf.o") + " --runs 6 --out /nonexistent");
  INFO(one.out);
  REQUIRE(one.status == 0);
  const std::string line = umemcg::test::line_starting(one.out, "coverage: prog high_policy ");
  REQUIRE(!line.empty());
  CHECK(has(line, " insns, "));
  CHECK(has(line, " branch directions"));
  CHECK(!umemcg::test::line_starting(one.out, "coverage: prog resolve_locks ").empty());
  Run two = run_umemcg("fuzz " + prog("kernfs_lockholder.bpf.o") +
                       " --runs 6 --jobs 2 --out /nonexistent");
  INFO(two.out);
  REQUIRE(two.status == 0);
  CHECK(coverage_lines(one.out) == coverage_lines(two.out));
  // A finding's summary has it too.
  const std::string dir = tmpdir();
  Run found = run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") + " --runs 100 --out " + dir);
  INFO(found.out);
  CHECK(found.status == 1);
  CHECK(!umemcg::test::line_starting(found.out, "coverage: prog high_policy ").empty());
  std::remove((dir + "/case.sh").c_str());
  rmdir(dir.c_str());
}

TEST_CASE("umemcg fuzz: cases that added coverage are mutated, and the campaign is the same at "
          "any --jobs", "[tools][fuzz][coverage]") {
  const std::string args = "fuzz " + prog("kernfs_lockholder.bpf.o") + " --runs 40 --out /nonexistent";
  Run one = run_umemcg(args);
  INFO(one.out);
  REQUIRE(one.status == 0);
  const std::string mut = umemcg::test::line_starting(one.out, "mutations: ");
  // Rounds 2 and 3 (cases 16..39): every odd case is a mutation once a case added coverage.
  CHECK(mut.rfind("mutations: 12 of the generated cases, of a pool of ", 0) == 0);
  Run two = run_umemcg(args + " --jobs 2");
  INFO(two.out);
  REQUIRE(two.status == 0);
  CHECK(umemcg::test::line_starting(two.out, "mutations: ") == mut);
  CHECK(coverage_lines(one.out) == coverage_lines(two.out));
}

TEST_CASE("umemcg fuzz --corpus: cases that add coverage are saved, replay, and run first",
          "[tools][fuzz][corpus]") {
  const std::string dir = tmpdir();
  const std::string corpus = dir + "/corpus";  // created by the campaign
  Run first = run_umemcg("fuzz " + prog("kernfs_lockholder.bpf.o") + " --runs 6 --corpus " +
                         corpus + " --out " + dir);
  INFO(first.out);
  REQUIRE(first.status == 0);
  const std::vector<std::string> files = sh_files(corpus);
  REQUIRE(!files.empty());  // case 0 adds coverage, at least
  CHECK(has(first.out, "corpus " + corpus + ": 0 case(s) run first, " +
                           std::to_string(files.size()) + " new case(s) saved"));
  // Each file is a script with its seed in the header: umemcg sh replays it.
  const std::string text = read_all(files[0]);
  CHECK(has(text, umemcg::fuzz::kBodyMarker));
  const size_t at = text.find("--seed ");
  REQUIRE(at != std::string::npos);
  const std::string seed = text.substr(at + 7, text.find(' ', at + 7) - at - 7);
  Run replay = run_umemcg("sh --seed " + seed + " " + files[0]);
  INFO(replay.out);
  CHECK(replay.status == 0);

  // Again, one new case (case 0, already in the corpus): the corpus runs first and gives back
  // the whole coverage of the first campaign; nothing new is saved.
  Run again = run_umemcg("fuzz " + prog("kernfs_lockholder.bpf.o") + " --runs 1 --corpus " +
                         corpus + " --out " + dir);
  INFO(again.out);
  REQUIRE(again.status == 0);
  CHECK(has(again.out, std::to_string(files.size() + 1) + " cases run"));
  CHECK(has(again.out, "corpus " + corpus + ": " + std::to_string(files.size()) +
                           " case(s) run first, 0 new case(s) saved"));
  CHECK(coverage_lines(again.out) == coverage_lines(first.out));
  for (const std::string &f : files) std::remove(f.c_str());

  // A corpus case that fails is reported by its file, minimized and replayed like any other.
  umemcg::fuzz::FuzzCase c;
  c.seed = 11;
  c.setup = {"echo +memory > cgroup.subtree_control", "mkdir a", "echo 2M > a/memory.high",
             "bpf load /elsewhere/old.bpf.o p", "bpf attach p/defer_all a"};
  c.body = {"cat a/memory.stat", "spawn a mlock 8M; P1=$!", "sleep 0.5"};
  c.tail = {"kill -9 $P1", "wait", "bpf unload p", "rmdir a"};
  std::string err;
  REQUIRE(umemcg::fuzz::fuzz_corpus_save(corpus, "mlock.sh", c, &err));
  Run bad = run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") + " --runs 1 --assert violated " +
                       "--debt-limit 0 --corpus " + corpus + " --out " + dir);
  INFO(bad.out);
  CHECK(bad.status == 1);
  CHECK(has(bad.out, "corpus case mlock.sh (seed 11): assert: "));
  CHECK(has(bad.out, "the minimized case fails the same way"));
  CHECK(has(read_all(dir + "/case.sh"), "bpf load " + prog("fuzz_broken.bpf.o") + " p\n"));

  // A file that is not a corpus case: bad input.
  std::remove((corpus + "/mlock.sh").c_str());
  { std::ofstream(corpus + "/junk.sh") << "mkdir a\n"; }
  Run junk = run_umemcg("fuzz " + prog("fuzz_broken.bpf.o") + " --runs 1 --corpus " + corpus);
  CHECK(junk.status == 2);
  CHECK(has(junk.out, "junk.sh: not a corpus file"));
  std::remove((corpus + "/junk.sh").c_str());
  for (const std::string &f : sh_files(corpus)) std::remove(f.c_str());
  rmdir(corpus.c_str());
  std::remove((dir + "/case.sh").c_str());
  rmdir(dir.c_str());
}

// Liveness: the case states a bound (FuzzCase::hung_task_timeout_ns, the shell's
// --hung-task-timeout) and the machine's hung-task check reports a task that stays blocked in
// the kernel past it. An 8 MiB mlock populate over a 2 MiB memory.high pays its debt inline,
// batch after batch, each payment failing to reclaim (the pages are mlocked) and sleeping the
// penalty: without a deferring policy the task spends tens of seconds in that one kernel entry.
// A policy cannot make one throttle endless (the kernel clamps each sleep to
// MEMCG_MAX_HIGH_DELAY_JIFFIES, and DEFER_INLINE moves the payment to the return to user mode,
// where it is one clamped sleep): with fuzz_broken's defer-all policy the same case is no stall.
TEST_CASE("fuzz liveness: a task blocked in the kernel past the case's bound is a stall; a "
          "deferring policy moves the payment out of the kernel entry", "[tools][fuzz][liveness]") {
  umemcg::fuzz::FuzzRunOptions ro;
  // The teardown kills the workload (a killable sleep ends): the body sleeps 8 s first.
  umemcg::fuzz::FuzzCase c = broken_case({"spawn a mlock 8M; P1=$!", "sleep 8"});
  c.hung_task_timeout_ns = 5ull * 1000000000ull;
  const umemcg::fuzz::FuzzOutcome deferred = umemcg::fuzz::fuzz_run_case(c, ro);
  INFO(deferred.out << deferred.err << deferred.detail);
  CHECK(deferred.kind == umemcg::fuzz::FuzzOutcome::Kind::kOk);
  // The same case without the policy: stalled.
  umemcg::fuzz::FuzzCase inline_pay = c;
  std::erase_if(inline_pay.setup, [](const std::string &l) { return l.rfind("bpf ", 0) == 0; });
  std::erase_if(inline_pay.tail, [](const std::string &l) { return l.rfind("bpf ", 0) == 0; });
  const umemcg::fuzz::FuzzOutcome stalled = umemcg::fuzz::fuzz_run_case(inline_pay, ro);
  INFO(stalled.out << stalled.err);
  CHECK(stalled.kind == umemcg::fuzz::FuzzOutcome::Kind::kStall);
  CHECK(has(stalled.detail, "INFO: task "));
  CHECK(has(stalled.detail, "blocked for more than 5 seconds"));
  CHECK(has(umemcg::fuzz::fuzz_case_sh_options(inline_pay), "--hung-task-timeout 5"));
  // Without a bound: no finding.
  inline_pay.hung_task_timeout_ns = 0;
  CHECK_FALSE(umemcg::fuzz::fuzz_run_case(inline_pay, ro).failed());
}

// The campaign: the lock-holder sample defers only for kernfs lock holders, so the mlock
// populate of a corpus case over memory.high pays inline; with a 5 s bound that is a finding,
// minimized, and its replay line carries the bound.
TEST_CASE("umemcg fuzz --stall-limit: a stall is found, minimized and replays",
          "[tools][fuzz][liveness]") {
  const std::string dir = tmpdir();
  const std::string corpus = dir + "/corpus";
  umemcg::fuzz::FuzzCase c;
  c.seed = 5;
  c.setup = {"echo +memory > cgroup.subtree_control", "mkdir a", "mkdir b",
             "echo 2M > a/memory.high", "bpf load /elsewhere/old.bpf.o p",
             "bpf attach p/kernfs_lockholder a"};
  c.body = {"spawn b anon 4M; P1=$!", "cat a/memory.stat", "spawn a mlock 8M; P2=$!",
            "sleep 8", "echo 1M > b/memory.reclaim"};
  c.tail = {"kill -9 $P1", "kill -9 $P2", "wait", "bpf unload p", "rmdir b", "rmdir a"};
  std::string err;
  REQUIRE(umemcg::fuzz::fuzz_corpus_save(corpus, "mlock.sh", c, &err));
  // Without the bound the corpus case passes.
  Run clean = run_umemcg("fuzz " + prog("kernfs_lockholder.bpf.o") +
                         " --stall-limit 0 --runs 1 --corpus " + corpus + " --out " + dir);
  INFO(clean.out);
  CHECK(clean.status == 0);
  Run r = run_umemcg("fuzz " + prog("kernfs_lockholder.bpf.o") + " --stall-limit 5 --runs 1 --corpus " +
                     corpus + " --out " + dir);
  INFO(r.out);
  REQUIRE(r.status == 1);
  CHECK(has(r.out, "corpus case mlock.sh (seed 5): stall: INFO: task mlock:"));
  CHECK(has(r.out, "blocked for more than 5 seconds (killable sleep)"));
  CHECK(has(r.out, "the minimized case fails the same way"));
  const std::string replay_args = replay_sh_args(r.out);
  CHECK(has(replay_args, "--hung-task-timeout 5 "));
  const std::string script = read_all(dir + "/case.sh");
  INFO(script);
  CHECK_FALSE(has(script, "spawn b anon"));  // minimized away
  Run replay = run_umemcg("sh " + replay_args);
  INFO(replay.out);
  CHECK(has(replay.out, "INFO: task mlock:"));
  CHECK(has(replay.out, "blocked for more than 5 seconds"));
  CHECK(run_umemcg("fuzz " + prog("kernfs_lockholder.bpf.o") + " --stall-limit x").status == 2);
  for (const std::string &f : sh_files(corpus)) std::remove(f.c_str());
  rmdir(corpus.c_str());
  std::remove((dir + "/case.sh").c_str());
  rmdir(dir.c_str());
}
