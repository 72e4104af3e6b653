// SPDX-License-Identifier: GPL-2.0-only
// test/tools/bench_ratios_test.cc: tools/bench_ratios.py, the benchmark summary, run on a
// recorded umemcg-bench JSON (test/tools/data/bench-sample.json: a short run of the charge,
// floor, interpreter, dispatch and verifier rows, recorded on a loaded 2-core machine, so its
// figures say nothing about speed; the test checks the printer's arithmetic and wording), and
// test/tools/data/bench-s6s7-sample.json (the S6 and S7 rows and BM_interp_alu_fast, 15
// repetitions each with random interleaving, as the main job runs them),
// test/tools/data/bench-s2-sample.json (the S2 rows, 7 repetitions each, interleaved), and
// test/tools/data/bench-s9s13-sample.json (the S9 rows of one run, the S13 rows of another).
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

std::string summary(bool with_repetitions = false, const char *file = "bench-sample.json") {
  const std::string data = std::string(UMEMCG_SOURCE_DIR) + "/test/tools/data/";
  std::string cmd = std::string("python3 ") + UMEMCG_SOURCE_DIR + "/tools/bench_ratios.py " +
                    data + file;
  if (with_repetitions) cmd += " " + data + "bench-s6s7-sample.json";
  umemcg::test::CommandResult r = umemcg::test::run_command(cmd);
  REQUIRE(r.status == 0);
  return r.out;
}

}  // namespace

TEST_CASE("bench summary: S3 is the one-thread real time over the two-thread real time") {
  std::string out = summary();
  // Recorded: threads:1 real_time 4.196 ns, threads:2 12.562 ns (per item over both threads),
  // so two threads gave 0.33x the one-thread throughput; the former formula (2 * t1 / t2)
  // printed twice that.
  CHECK(line_starting(out, "S3 two threads on two vCPUs, one memcg, stock hits (memcg stock)") ==
        "S3 two threads on two vCPUs, one memcg, stock hits (memcg stock): 0.33x the one-thread "
        "throughput (target >= 1.8x: MISSED)");
  // threads:1 12.553 ns, threads:2 19.319 ns.
  CHECK(line_starting(out, "S3 two threads on two vCPUs, one memcg, stock hits (page_counter") ==
        "S3 two threads on two vCPUs, one memcg, stock hits (page_counter stock): 0.65x the "
        "one-thread throughput (target >= 1.8x: MISSED)");
}

TEST_CASE("bench summary: one line per target, with its meaning and verdict") {
  std::string out = summary();
  for (const char *id : {"S1 ", "S2 ", "S3 ", "S5 ", "S7 ", "S10 "}) {
    std::string l = line_starting(out, id);
    INFO(id);
    REQUIRE(!l.empty());
    bool judged = l.find("holds") != std::string::npos || l.find("MISSED") != std::string::npos ||
                  l.find("judged by callgrind") != std::string::npos;
    CHECK(judged);
  }
  // S6 asks for the median of interleaved repetitions: one run of each is shown, not judged.
  // Recorded: /3 3.731 ns, /0 3.648 ns.
  CHECK(line_starting(out, "S6 ") ==
        "S6 stock hit with 3 high_policy programs attached against none, median of 1 "
        "repetitions: 3.73 ns against 3.65 ns, +2.3% (target <= +3% as the median of "
        "interleaved repetitions: not judged on 1)");
  // S2 at depth 1: miss 113.82 ns (manual time) over BM_floor_atomic_chain/2 11.78 ns.
  CHECK(line_starting(out, "S2 ").find("worst 9.66x at depth 1 (target <= 2x: MISSED)") !=
        std::string::npos);
}

TEST_CASE("bench summary: 'x atomic' only where an atomic add is the unit") {
  std::string out = summary();
  std::string interp = line_starting(out, "BM_interp_alu_fast ");
  std::string hit = line_starting(out, "BM_try_charge_memcg_stock_hit/3 ");
  REQUIRE(!interp.empty());
  REQUIRE(!hit.empty());
  // The interpreter row ends with its time and blanks; the charge row with a ratio.
  CHECK(interp.find_last_not_of(' ') < interp.size() - 9);
  CHECK(hit.substr(hit.size() - 4) == "0.44");
}

TEST_CASE("bench summary: S6 and S7 from interleaved repetitions, as medians") {
  std::string out = summary(true);
  // The repetitions file's rows replace the single rows of the full run: BM_bpf_policy_stock_hit
  // /0 is 3.648 ns there, and the median of its 15 repetitions (2.655 ns) here.
  CHECK(line_starting(out, "S6 ") ==
        "S6 stock hit with 3 high_policy programs attached against none, median of 15 "
        "repetitions: 2.63 ns against 2.66 ns, -0.9% (target <= +3%: holds)");
  // Medians: /3 39.9 ns, /1 27.7 ns; 2 instructions per program at 0.61 ns each (the ALU
  // loop's median), so 3 programs 3.7 ns and one 1.2 ns.
  CHECK(line_starting(out, "S7 over-high") ==
        "S7 over-high charge dispatching 3 policies, median of 15 repetitions: 39.9 ns, of which "
        "the programs' own instructions 3.7 ns; added 36.2 ns (target <= 30 ns: MISSED)");
  CHECK(line_starting(out, "S7 each further") ==
        "S7 each further policy (1 -> 3 policies: 27.7 -> 39.9 ns, halved), beyond its own "
        "instructions (1.2 ns): 4.9 ns (target <= 8 ns: holds)");
  // The rows of the full run that the repetitions do not cover are unchanged.
  CHECK(line_starting(out, "S2 ").find("worst 9.66x at depth 1") != std::string::npos);
}

TEST_CASE("bench summary: S2 from interleaved repetitions is judged on the medians and says "
          "how many") {
  // test/tools/data/bench-s2-sample.json: the S2 rows (floors, both designs' misses), 7
  // repetitions each, interleaved, as the main job runs them after the full run. Medians at
  // depth 1: the floor 11.46 ns, the memcg-stock miss 19.87 ns, the page_counter-stock miss
  // 19.44 ns; the full run's own rows (9.66x) are replaced.
  const std::string data = std::string(UMEMCG_SOURCE_DIR) + "/test/tools/data/";
  umemcg::test::CommandResult r = umemcg::test::run_command(
      std::string("python3 ") + UMEMCG_SOURCE_DIR + "/tools/bench_ratios.py " + data +
      "bench-sample.json " + data + "bench-s2-sample.json");
  REQUIRE(r.status == 0);
  CHECK(line_starting(r.out, "S2 stock miss against its d+1 locked adds, d = 1..8 (memcg") ==
        "S2 stock miss against its d+1 locked adds, d = 1..8 (memcg stock, medians of 7 "
        "repetitions): worst 1.73x at depth 1 (target <= 2x: holds)");
  CHECK(line_starting(r.out, "S2 stock miss against its d+1 locked adds, d = 1..8 (page") ==
        "S2 stock miss against its d+1 locked adds, d = 1..8 (page_counter stock, medians of 7 "
        "repetitions): worst 1.70x at depth 1 (target <= 2x: holds)");
}

TEST_CASE("bench summary: S9 (cgroup creation and removal, bytes per memcg and per cgroup "
          "directory) and S13 (swap in simulated mode) against their targets") {
  const std::string out = summary(false, "bench-s9s13-sample.json");
  INFO(out);
  // 15715 ms for the 10,000 pairs (a run on a loaded 2-core machine).
  CHECK(line_starting(out, "S9 10,000 cgroups created and removed") ==
        "S9 10,000 cgroups created and removed through /sys/fs/cgroup: 15.71 s (target <= 1 s: "
        "MISSED)");
  // The memcg itself carries the target; the directory's figure has none.
  CHECK(line_starting(out, "S9 heap bytes per memcg") ==
        "S9 heap bytes per memcg (what the memory controller's css_alloc and css_online "
        "allocate; statistics come with the first update): 5254 B + 1865 B per vCPU (target "
        "<= 4096 B + 256 B per vCPU: MISSED)");
  // What the statistics add once the memcg is updated on every vCPU, and the sum of both.
  CHECK(line_starting(out, "S9 what a memcg's statistics add") ==
        "S9 what a memcg's statistics add once it is updated on every vCPU: 2563 B + 1794 B per "
        "vCPU (a memcg in use on every vCPU: 7817 B + 3659 B per vCPU; no target of its own)");
  const std::string dir = line_starting(out, "S9 heap bytes per cgroup directory");
  CHECK(dir.find("13101 B + 1859 B per vCPU (no target of its own)") != std::string::npos);
  CHECK(dir.find("the memory.* files 4304 B") != std::string::npos);
  const std::string swap = line_starting(out, "S13 ");
  CHECK(swap.find("17947 pages swapped out): 0.042 s of wall time (target <= 1 s: holds)") !=
        std::string::npos);
}

TEST_CASE("bench summary: S12 (an emulated anon fault and its unmap against the host's, per "
          "page) against its target") {
  // One recorded run of bench/fault_bench.cc's two rows; items are pages.
  const std::string out = summary(false, "bench-s12-sample.json");
  INFO(out);
  CHECK(line_starting(out, "S12 ") ==
        "S12 anon fault + unmap per page, emulated (native mode) against the host kernel's "
        "fault + MADV_DONTNEED: 214 ns against 12964 ns = 0.016x (target <= 0.2x: holds)");
}
