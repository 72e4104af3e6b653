// SPDX-License-Identifier: GPL-2.0-only
// test/tools/fuzz_test.cc: `umemcg fuzz`, run as a user would: a deliberately broken policy
// (test/progs/fuzz_broken.bpf.c) trips its author's assertion, the case is minimized to a short
// script that replays the failure with `umemcg sh --seed N`; a sound policy runs clean; bad
// input gets status 2 and a clear message. The generator gives the same case for the same seed.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "tools/fuzz/fuzz_case.h"
#include "test/tools/run_command.h"

#ifndef UMEMCG_PATH
#error "UMEMCG_PATH must name the built umemcg"
#endif

namespace {

using Run = umemcg::test::CommandResult;

Run run_umemcg(const std::string &args) {
  return umemcg::test::run_command(std::string(UMEMCG_PATH) + " " + args);
}

std::string prog(const char *name) { return std::string(UMEMCG_BPF_PROGS_DIR) + "/" + name; }

std::string tmpdir() {
  char tmpl[] = "/tmp/umemcg-fuzz-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

bool has(const std::string &s, const std::string &what) { return s.find(what) != std::string::npos; }

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
  const size_t at = r.out.find("replay: umemcg sh ");
  REQUIRE(at != std::string::npos);
  const std::string replay_args = r.out.substr(at + 18, r.out.find('\n', at) - at - 18);
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
