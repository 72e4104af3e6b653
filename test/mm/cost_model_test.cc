// SPDX-License-Identifier: GPL-2.0-only
// Tests of the simulated-mode cost table (mm/cost_model.h): the parser (a good table, partial
// tables, comments, each kind of bad line named by its number, unknown names), the format read
// back, and the table reaching the model: a machine booted with one cost doubled takes more
// machine time for the same workload, for every cost.
#include "test/mm/mm_test_util.h"

#include "mm/cost_model.h"
#include "mm/filemap.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

std::string parse_error(const std::string &text) {
  emu::CostModel c;
  std::string err;
  CHECK_FALSE(emu::parse_cost_table(text, &c, &err));
  CHECK(c == emu::CostModel{});  // unchanged on failure
  return err;
}

}  // namespace

TEST_CASE("cost table: a full table with comments sets every cost", "[mm][cost_model]") {
  emu::CostModel c;
  std::string err;
  REQUIRE(emu::parse_cost_table("# a host's figures\n"
                                "anon_fault 1500  # per page\n"
                                "\n"
                                "zap\t400\n"
                                "  read_miss 3000\r\n"
                                "read_hit 300\n"
                                "reclaim_scan 90\n"
                                "reclaim_visit 250\n"
                                "swap_out 12000\n"
                                "swap_in 30000",  // no final newline
                                &c, &err));
  CHECK(c.anon_fault == 1500);
  CHECK(c.zap == 400);
  CHECK(c.read_miss == 3000);
  CHECK(c.read_hit == 300);
  CHECK(c.reclaim_scan == 90);
  CHECK(c.reclaim_visit == 250);
  CHECK(c.swap_out == 12000);
  CHECK(c.swap_in == 30000);
  // What format_cost_table() prints reads back to the same table.
  emu::CostModel back;
  REQUIRE(emu::parse_cost_table(emu::format_cost_table(c), &back, &err));
  CHECK(back == c);
  CHECK(emu::format_cost_table(emu::CostModel{}).rfind("anon_fault 1200\nzap 350\n", 0) == 0);
}

TEST_CASE("cost table: names not given keep the base table; an empty table is the base",
          "[mm][cost_model]") {
  emu::CostModel c;
  std::string err;
  REQUIRE(emu::parse_cost_table("anon_fault 2400\n", &c, &err));
  emu::CostModel want;
  want.anon_fault = 2400;
  CHECK(c == want);
  REQUIRE(emu::parse_cost_table("", &c, &err));
  REQUIRE(emu::parse_cost_table("# nothing\n\n   \n", &c, &err));
  CHECK(c == want);
  CHECK(emu::cost_names().size() == 8);
}

TEST_CASE("cost table: a bad line is an error naming it", "[mm][cost_model]") {
  CHECK(parse_error("anon_fault 1\nfault 1200\n") ==
        "line 2: unknown cost 'fault' (known: anon_fault, zap, read_miss, read_hit, "
        "reclaim_scan, reclaim_visit, swap_out, swap_in)");
  CHECK(parse_error("\n\nzap\n") == "line 3: expected 'NAME NS', one cost a line");
  CHECK(parse_error("zap 350 ns\n") == "line 1: expected 'NAME NS', one cost a line");
  CHECK(parse_error("zap 350 400\n") == "line 1: expected 'NAME NS', one cost a line");
  CHECK(parse_error("zap 3.5\n") ==
        "line 1: zap: '3.5' is not a number of nanoseconds in 1..1000000000");
  CHECK(parse_error("zap -1\n") ==
        "line 1: zap: '-1' is not a number of nanoseconds in 1..1000000000");
  CHECK(parse_error("zap 0\n") ==
        "line 1: zap: '0' is not a number of nanoseconds in 1..1000000000");
  CHECK(parse_error("zap 1000000001\n") ==
        "line 1: zap: '1000000001' is not a number of nanoseconds in 1..1000000000");
  CHECK(parse_error("zap 99999999999999999999999\n") ==
        "line 1: zap: '99999999999999999999999' is not a number of nanoseconds in 1..1000000000");
  CHECK(parse_error("zap 1e3\n") ==
        "line 1: zap: '1e3' is not a number of nanoseconds in 1..1000000000");
  CHECK(parse_error("zap 1\n# again\nzap 2\n") == "line 3: zap given twice");
  CHECK(parse_error("ZAP 1\n").rfind("line 1: unknown cost 'ZAP'", 0) == 0);
  CHECK(parse_error("zap=1\n").rfind("line 1: unknown cost 'zap=1'", 0) == 0);
  // The largest cost is accepted.
  emu::CostModel c;
  std::string err;
  CHECK(emu::parse_cost_table("swap_in 1000000000\n", &c, &err));
  CHECK(c.swap_in == emu::kCostMaxNs);
}

namespace {

// Machine time of a workload that takes every step the cost table prices, on a machine booted
// with @costs: a process faults 128 anon pages under memory.max = 64 pages with swap (faults,
// reclaim walks and scans, swap-outs), writes them all again (swap-ins), exits (zaps); then
// 32 page-cache pages are read twice (misses, then hits).
std::uint64_t workload_machine_ns(const emu::CostModel &costs) {
  WarnCheck wc;
  memcg_boot_params p = v2_params();
  p.swap_pages = 1024;
  p.costs = costs;
  MemcgEnv env(p);
  mem_cgroup *a = env.mkdir(nullptr, "a");
  inode *ino = emu::file_create();
  std::uint64_t elapsed = 0;
  env.run([&] {
    CHECK(emu::cost_model() == costs);
    page_counter_set_max(&a->memory, 64);
    const std::uint64_t t0 = emu::Machine::get()->now_ns();
    emu::ProcessOptions o;
    o.memcg = a;
    emu::Process *proc = emu::process_start(o, [] {
      unsigned long addr;
      bool alive = emu::sys_mmap_anon(128, 0, &addr);
      for (int pass = 0; pass < 2; pass++)
        for (unsigned long i = 0; alive && i < 128; i++) alive = emu::user_write(addr + i);
      return alive ? 0 : 1;
    });
    CHECK(emu::process_wait(proc) == 0);
    page_counter_set_max(&a->memory, PAGE_COUNTER_MAX);
    CHECK(read_into(a, ino, 0, 32) == 0);
    CHECK(read_into(a, ino, 0, 32) == 0);
    elapsed = emu::Machine::get()->now_ns() - t0;
    CHECK(emu::memcg_events_local_sum(a, PSWPOUT) > 0);
    CHECK(emu::memcg_events_local_sum(a, PSWPIN) > 0);
    CHECK(emu::memcg_events_local_sum(a, PGSCAN_DIRECT) > 0);
    emu::iput(ino);
    env.check();
  });
  CHECK(env.rmdir(a) == 0);
  env.finish();
  return elapsed;
}

}  // namespace

TEST_CASE("the boot's cost table reaches the model: each cost doubled takes more machine time",
          "[mm][cost_model]") {
  const std::uint64_t base = workload_machine_ns(emu::CostModel{});
  // Deterministic for a table: the same table, the same machine time.
  CHECK(workload_machine_ns(emu::CostModel{}) == base);
  for (const emu::CostName &n : emu::cost_names()) {
    INFO(n.name);
    emu::CostModel doubled;
    doubled.*n.field *= 2;
    const std::uint64_t t = workload_machine_ns(doubled);
    CHECK(t > base);
    if (n.field == &emu::CostModel::anon_fault) {
      // At least one more fault cost per fault: 128 first touches, and the second pass's.
      CHECK(t - base >= 128 * emu::CostModel{}.anon_fault);
    }
  }
  // The next boot without a table is back to the built-in one.
  CHECK(workload_machine_ns(emu::CostModel{}) == base);
}
