// SPDX-License-Identifier: GPL-2.0-only
// test/tools/calibrate_test.cc: `umemcg calibrate` and `umemcg sh --costs`, run as a user runs
// them: the calibration's output is a cost table (every cost one `NAME NS  # how` line, the
// anon fault and zap measured on any host, the rest measured or saying why not) that `sh
// --costs` reads back; bad options; --costs with a bad table naming the line, a missing file,
// and a good table.
#include <catch2/catch.hpp>

#include "test/tools/run_command.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "mm/cost_model.h"

#ifndef UMEMCG_PATH
#error "UMEMCG_PATH must name the built umemcg"
#endif

namespace {

using umemcg::test::line_starting;
using umemcg::test::run_command;

// A temporary file holding @text; the caller unlinks it.
std::string temp_file(const std::string &text) {
  char path[] = "/tmp/umemcg-costs-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  close(fd);
  return path;
}

std::string cmd(const std::string &args) { return std::string(UMEMCG_PATH) + " " + args; }

}  // namespace

TEST_CASE("umemcg calibrate --quick prints a cost table that sh --costs reads",
          "[tools][calibrate]") {
  const auto r = run_command(cmd("calibrate --quick"));
  INFO(r.out);
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind("# umemcg calibrate: ", 0) == 0);
  CHECK(r.out.find("one warm-up round, then the median of 3 rounds") != std::string::npos);
  for (const auto &n : umemcg::emu::cost_names()) {
    INFO(n.name);
    const std::string line = line_starting(r.out, std::string(n.name) + " ");
    REQUIRE(!line.empty());
    // NAME NS  # what: how (or "not measured: why; the built-in figure")
    unsigned long long ns = 0;
    int used = 0;
    REQUIRE(std::sscanf(line.c_str() + std::string(n.name).size(), " %llu  # %n", &ns, &used) == 1);
    CHECK(used > 0);
    CHECK(ns >= 1);
    const bool measured = line.find("not measured: ") == std::string::npos;
    if (!measured) {
      CHECK(line.find("; the built-in figure") != std::string::npos);
      CHECK(ns == umemcg::emu::CostModel{}.*n.field);
    }
    // Any Linux host shows its anon fault and zap.
    if (n.name == std::string("anon_fault") || n.name == std::string("zap")) CHECK(measured);
    if (n.name == std::string("anon_fault"))
      CHECK(line.find("write one byte per page; per page; median of 3 rounds") != std::string::npos);
  }
  // The output is itself a table: the shell boots with it.
  umemcg::emu::CostModel c;
  std::string err;
  CHECK(umemcg::emu::parse_cost_table(r.out, &c, &err));
  CHECK(err.empty());
  const std::string path = temp_file(r.out);
  const auto sh = run_command("printf 'echo ok\\n' | " + cmd("sh --costs " + path));
  unlink(path.c_str());
  CHECK(sh.status == 0);
  CHECK(sh.out == "ok\n");
}

TEST_CASE("umemcg calibrate --no-cgroup skips the reclaim figure and says so",
          "[tools][calibrate]") {
  const auto r = run_command(cmd("calibrate --quick --rounds 1 --no-cgroup"));
  INFO(r.out);
  REQUIRE(r.status == 0);
  CHECK(line_starting(r.out, "reclaim_scan ") ==
        "reclaim_scan 60  # one page scanned by reclaim: not measured: --no-cgroup; the built-in "
        "figure");
  CHECK(line_starting(r.out, "anon_fault ").find("median of 1 rounds") != std::string::npos);
}

TEST_CASE("umemcg calibrate: bad options", "[tools][calibrate]") {
  auto r = run_command(cmd("calibrate --rounds 4"));
  CHECK(r.status == 2);
  CHECK(r.out.rfind("umemcg calibrate: --rounds '4': not an odd number in 1..101\nusage: ", 0) == 0);
  r = run_command(cmd("calibrate --rounds"));
  CHECK(r.status == 2);
  CHECK(r.out.rfind("umemcg calibrate: --rounds: needs a value\n", 0) == 0);
  r = run_command(cmd("calibrate --fast"));
  CHECK(r.status == 2);
  CHECK(r.out.rfind("umemcg calibrate: --fast: unknown option\n", 0) == 0);
  r = run_command(cmd("calibrate --help"));
  CHECK(r.status == 0);
  CHECK(r.out.find("--quick") != std::string::npos);
}

TEST_CASE("umemcg sh --costs: a bad table is an option error naming the line",
          "[tools][calibrate][sh]") {
  const std::string path = temp_file("# costs\nanon_fault 2400\nzap fast\n");
  auto r = run_command("printf 'echo ok\\n' | " + cmd("sh --costs " + path));
  CHECK(r.status == 2);
  CHECK(r.out.rfind("umemcg sh: --costs '" + path +
                        "': line 3: zap: 'fast' is not a number of nanoseconds in 1..1000000000\n",
                    0) == 0);
  std::ofstream(path) << "anon_fault 2400\nminor_fault 100\n";
  r = run_command("printf 'echo ok\\n' | " + cmd("sh --costs=" + path));
  CHECK(r.status == 2);
  CHECK(r.out.find("': line 2: unknown cost 'minor_fault' (known: anon_fault, ") !=
        std::string::npos);
  unlink(path.c_str());
  r = run_command("printf 'echo ok\\n' | " + cmd("sh --costs " + path));
  CHECK(r.status == 2);
  CHECK(r.out.find("--costs '" + path + "': cannot open: No such file or directory\n") !=
        std::string::npos);
  r = run_command("printf 'echo ok\\n' | " + cmd("sh --costs /"));
  CHECK(r.status == 2);
  CHECK(r.out.find("--costs '/': cannot read: Is a directory\n") != std::string::npos);
  r = run_command(cmd("sh --costs"));
  CHECK(r.status == 2);
  CHECK(r.out.rfind("umemcg sh: --costs: needs a value\n", 0) == 0);
}

TEST_CASE("umemcg sh --costs: a good table boots; the same table and seed give the same bytes",
          "[tools][calibrate][sh]") {
  const std::string path = temp_file("anon_fault 2400\nreclaim_scan 120\n");
  const std::string script =
      "printf 'echo +memory > cgroup.subtree_control\\nmkdir a\\necho 4M > a/memory.max\\n"
      "run a anon 16M\\necho $?\\ncat a/memory.events\\n' | ";
  const auto a = run_command(script + cmd("sh --costs " + path));
  const auto b = run_command(script + cmd("sh --costs " + path));
  unlink(path.c_str());
  INFO(a.out);
  CHECK(a.status == 0);
  CHECK(a.out.rfind("137\n", 0) == 0);
  CHECK(a.out == b.out);
}
