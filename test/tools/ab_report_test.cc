// SPDX-License-Identifier: GPL-2.0-only
// test/tools/ab_report_test.cc: tools/ab_report.py, the comparison tools/ab.sh prints, run with
// Debian's /usr/bin/python3 (scipy, and Google Benchmark's comparison library from
// libbenchmark-tools) on recorded runs: test/tools/data/ab-{base,work}.json are 9 interleaved
// umemcg-bench runs of each build of the worked example in docs/benchmarking.md (a one-line
// change to try_charge_memcg()), trimmed to a few rows, plus the BM_cgroupfs_mkdir_rmdir rows of
// 9 interleaved runs before and after shim/malloc_conf.cc; ab-insn-{base,work}.json are the
// first example's instruction counts. Recorded on a 2-core machine; the test checks the
// printer's arithmetic and verdicts, not speed.
#include <catch2/catch.hpp>

#include "test/tools/run_command.h"

#include <sys/wait.h>

#include <cstdio>
#include <sstream>
#include <string>

#ifndef UMEMCG_SOURCE_DIR
#error "UMEMCG_SOURCE_DIR must name the source tree"
#endif

namespace {

using umemcg::test::line_starting;

const std::string kData = std::string(UMEMCG_SOURCE_DIR) + "/test/tools/data/";

// Runs ab_report.py with @args; returns its output (stdout and stderr) and sets @status.
std::string ab_report(const std::string &args, int *status) {
  umemcg::test::CommandResult r = umemcg::test::run_command(
      std::string("/usr/bin/python3 ") + UMEMCG_SOURCE_DIR + "/tools/ab_report.py " + args);
  REQUIRE(r.status >= 0);
  *status = r.status;
  return r.out;
}

}  // namespace

TEST_CASE("ab report: medians, change and the U test's verdict per benchmark") {
  int st = -1;
  std::string out = ab_report("--base " + kData + "ab-base.json --work " + kData +
                                  "ab-work.json --title 'HEAD -> the working tree'",
                              &st);
  INFO(out);
  REQUIRE(st == 0);
  CHECK(line_starting(out, "== time: ") ==
        "== time: HEAD -> the working tree; the U test says whether a change is real");
  // The one-line change is on this path: 9 runs each, p = 0.0027 < 0.05.
  CHECK(line_starting(out, "BM_bpf_policy_stock_hit/0 ") ==
        "BM_bpf_policy_stock_hit/0                                  2.71ns     3.76ns   +38.6%  "
        "0.0027  real: slower");
  // A 7 % change of the medians that the runs cannot tell from their spread.
  CHECK(line_starting(out, "BM_try_charge_memcg_stock_hit/3 ") ==
        "BM_try_charge_memcg_stock_hit/3                            3.08ns     3.30ns    +7.1%  "
        "1.0000  no difference the runs can tell");
  // A manual-time row is compared on its real time (the timed operation), not on CPU time.
  CHECK(line_starting(out, "BM_try_charge_memcg_stock_miss/1/manual_time ") ==
        "BM_try_charge_memcg_stock_miss/1/manual_time             208.52ns   168.41ns   -19.2%  "
        "0.1577  no difference the runs can tell");
  // So is a real-time row (UseRealTime: S9's mkdir+rmdir loop, whose work runs on the
  // machine's threads, not on the benchmark's): 9 runs of each build around shim/malloc_conf.cc.
  CHECK(line_starting(out, "BM_cgroupfs_mkdir_rmdir/10000/real_time ") ==
        "BM_cgroupfs_mkdir_rmdir/10000/real_time                  855.68ms   534.93ms   -37.5%  "
        "0.0637  no difference the runs can tell");
  CHECK(line_starting(out, "(6 benchmarks tested at p < 0.05: about 0.3 of them") != "");
  // No instruction counts given: no instruction table.
  CHECK(line_starting(out, "== instructions") == "");
}

TEST_CASE("ab report: the instruction counts of both builds and their difference") {
  int st = -1;
  std::string out = ab_report("--base " + kData + "ab-base.json --work " + kData +
                                  "ab-work.json --insn-base " + kData + "ab-insn-base.json " +
                                  "--insn-work " + kData + "ab-insn-work.json",
                              &st);
  INFO(out);
  REQUIRE(st == 0);
  CHECK(line_starting(out, "S1 stock hit, 1 page, depth 3 (memcg stock) ") ==
        "S1 stock hit, 1 page, depth 3 (memcg stock)                                       "
        "37.0    43.0    +6.0");
  CHECK(line_starting(out, "S2 slow path") ==
        "S2 slow path of a depth-1 stock miss (memcg stock, try_charge_memcg_slow)        "
        "253.0   253.0    +0.0");
}

TEST_CASE("ab report: an unreadable run is a clear error") {
  int st = -1;
  std::string out =
      ab_report("--base " + kData + "no-such-run.json --work " + kData + "ab-work.json", &st);
  CHECK(st == 2);
  CHECK(out.rfind("ab_report: cannot read the runs: ", 0) == 0);
  // A file that is not JSON (this test's source).
  out = ab_report("--base " + kData + "../ab_report_test.cc --work " + kData + "ab-work.json",
                  &st);
  CHECK(st == 2);
  CHECK(out.rfind("ab_report: cannot read the runs: ", 0) == 0);
}
