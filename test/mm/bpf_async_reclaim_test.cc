// SPDX-License-Identifier: GPL-2.0-only
// test/mm/bpf_async_reclaim_test.cc: the asynchronous reclaimer of seed 001
// (test/progs/memcg_async_reclaim.bpf.c) on a booted memory controller: bpf_cgroup_from_id,
// a periodic bpf_timer reading the high cgroup's file refaults, a bpf_wq reclaiming from the
// low cgroup with bpf_proactive_reclaim, the outcomes in the ring buffer; the low cgroup removed
// while the reclaimer runs gives TARGET_GONE and nothing crashes or leaks.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#undef WARN
#include "bpfvm/ringbuf.h"
#include "bpfvm/runtime.h"
#include "mm/bpf_memcontrol.h"
#include "mm/filemap.h"
#include "mm/memcontrol_stat.h"
#include "mm/vmscan.h"
#include "shim/jiffies.h"
#include "shim/workqueue.h"
#include "test/mm/bpf_test_util.h"
#include "test/mm/mm_test_util.h"
#include "test/progs/memcg_async_reclaim_user.h"
#include "test/support/memcg_env.h"

using namespace umemcg;
using namespace umemcg::test;
using namespace umemcg::progs::memcg_async_reclaim;

namespace {

// The sample hard-codes the kernel's value.
static_assert(WORKINGSET_REFAULT_FILE == 11);

u64 cgid(mem_cgroup *m) { return m->css.cgroup->id; }

void run_syscall(emu::BpfLoadedObject &lo, const char *name, std::vector<u8> *ctx) {
  emu::BpfLoadedProg *p = lo.find_program(name);
  REQUIRE(p);
  INFO(p->verdict().error);
  REQUIRE(p->fast());
  emu::BpfTestRunOpts o;
  o.ctx_in = *ctx;
  emu::BpfTestRunResult r = emu::bpf_prog_test_run(*p, o);
  INFO(r.error);
  REQUIRE(r.err == 0);
  *ctx = o.ctx_in;
}

start_args run_start(emu::BpfLoadedObject &lo, start_args a) {
  std::vector<u8> ctx(sizeof(a));
  std::memcpy(ctx.data(), &a, sizeof(a));
  run_syscall(lo, "start", &ctx);
  std::memcpy(&a, ctx.data(), sizeof(a));
  return a;
}

void stop_and_settle(emu::BpfLoadedObject &lo) {
  std::vector<u8> ctx(8);
  run_syscall(lo, "stop", &ctx);
  msleep(50);  // the last tick sees `stopped`
  flush_workqueue(system_unbound_wq);
  flush_workqueue(system_wq);
}

std::vector<event> drain_events(emu::BpfLoadedObject &lo) {
  std::vector<event> ev;
  emu::RingBuffer rb;
  REQUIRE(rb.add(lo.find_map("events"), [&](const void *d, size_t n) {
    REQUIRE(n == sizeof(event));
    ev.push_back(*static_cast<const event *>(d));
    return 0;
  }) == 0);
  CHECK(rb.consume() >= 0);
  return ev;
}

}  // namespace

TEST_CASE("memcg_async_reclaim: ticks reclaim from the low cgroup through bpf_wq",
          "[mm][bpf][async]") {
  MemcgEnv env(v2_params());
  mem_cgroup *high = env.mkdir(nullptr, "high");
  mem_cgroup *low = env.mkdir(nullptr, "low");
  inode *ino = emu::file_create();
  env.run([&] {
    REQUIRE(read_into(low, ino, 0, 1000) == 0);
    lru_add_drain_all();
    const unsigned long before =
        lru_pages(low, LRU_INACTIVE_FILE) + lru_pages(low, LRU_ACTIVE_FILE);
    REQUIRE(before >= 1000);
    auto lo = open_bpf_object("memcg_async_reclaim.bpf.o");
    start_args a{cgid(high), cgid(low), 10 * NSEC_PER_MSEC, 1 << 20, 0};
    a = run_start(*lo, a);
    REQUIRE(a.ret == 0);
    msleep(105);
    stop_and_settle(*lo);
    const stats s = bpf_map_struct<stats>(*lo, ".bss");
    CHECK(s.ticks >= 10);
    CHECK(s.timer_failures == 0);
    CHECK(s.wq_starts >= 5);
    CHECK(s.reclaims >= 5);
    CHECK(s.target_gone == 0);
    const std::vector<event> ev = drain_events(*lo);
    CHECK(ev.size() == s.reclaims);
    u64 bytes = 0;
    for (const event &e : ev) {
      CHECK(e.kind == RECLAIMED);
      CHECK(e.bytes % PAGE_SIZE == 0);
      bytes += e.bytes;
    }
    CHECK(bytes == s.reclaimed_bytes);
    CHECK(bytes > 0);
    const unsigned long after = lru_pages(low, LRU_INACTIVE_FILE) + lru_pages(low, LRU_ACTIVE_FILE);
    CHECK(after + bytes / PAGE_SIZE <= before);
    lo.reset();
    emu::iput(ino);
  });
  env.finish();
}

TEST_CASE("memcg_async_reclaim: only refaults of the high cgroup start a reclaim",
          "[mm][bpf][async]") {
  MemcgEnv env(v2_params());
  mem_cgroup *high = env.mkdir(nullptr, "high");
  mem_cgroup *low = env.mkdir(nullptr, "low");
  inode *hi_file = emu::file_create();
  inode *lo_file = emu::file_create();
  env.run([&] {
    REQUIRE(read_into(low, lo_file, 0, 500) == 0);
    REQUIRE(read_into(high, hi_file, 0, 200) == 0);
    lru_add_drain_all();
    auto lo = open_bpf_object("memcg_async_reclaim.bpf.o");
    start_args a{cgid(high), cgid(low), 10 * NSEC_PER_MSEC, 1 << 20, 1};
    a = run_start(*lo, a);
    REQUIRE(a.ret == 0);
    msleep(50);
    stats s = bpf_map_struct<stats>(*lo, ".bss");
    CHECK(s.ticks >= 4);
    CHECK(s.wq_starts == 0);  // no refaults yet
    // The high cgroup's page cache is reclaimed and read again: refaults.
    unsigned long got = 0, r;
    while ((r = try_to_free_mem_cgroup_pages(high, 1024, GFP_KERNEL, MEMCG_RECLAIM_MAY_SWAP,
                                             nullptr)) != 0)
      got += r;
    REQUIRE(got > 0);
    REQUIRE(read_into(high, hi_file, 0, 200) == 0);
    msleep(50);
    stop_and_settle(*lo);
    s = bpf_map_struct<stats>(*lo, ".bss");
    CHECK(s.wq_starts >= 1);
    const std::vector<event> ev = drain_events(*lo);
    REQUIRE(!ev.empty());
    CHECK(ev[0].kind == RECLAIMED);
    CHECK(ev[0].refault_delta > 0);
    CHECK(ev[0].bytes > 0);
    lo.reset();
    emu::iput(hi_file);
    emu::iput(lo_file);
  });
  env.finish();
}

TEST_CASE("memcg_async_reclaim: the low cgroup removed while the reclaimer runs",
          "[mm][bpf][async]") {
  for (emu::Mode mode : kBothModes) {
    SECTION(mode_name(mode)) {
      MemcgEnv env(v2_params(), mode, 2);
      mem_cgroup *high = env.mkdir(nullptr, "high");
      mem_cgroup *low = env.mkdir(nullptr, "low");
      inode *ino = emu::file_create();
      const u64 low_id = cgid(low);
      std::unique_ptr<emu::BpfLoadedObject> lo;
      env.run([&] {
        REQUIRE(read_into(low, ino, 0, 300) == 0);
        lo = open_bpf_object("memcg_async_reclaim.bpf.o");
        start_args a{cgid(high), low_id, 5 * NSEC_PER_MSEC, 1 << 20, 0};
        a = run_start(*lo, a);
        REQUIRE(a.ret == 0);
        msleep(30);
        emu::iput(ino);  // the page cache goes with the file: nothing pins the cgroup
      });
      REQUIRE(env.rmdir(low) == 0);
      env.run([&] {
        // After the removal every lookup fails: TARGET_GONE, and the reclaimer keeps ticking.
        CHECK(bpf_cgroup_from_id(low_id) == nullptr);
        // Waits for two ticks that find the cgroup gone, reading their events as they come:
        // in native mode a fixed sleep would miss ticks that a loaded host delays (the wait is
        // bounded at 10 s; the ticks come every 5 ms of machine time).
        std::vector<event> ev;
        int gone = 0;
        for (int waited = 0; gone < 2 && waited < 10000; waited += 5) {
          msleep(5);
          for (const event &e : drain_events(*lo)) {
            ev.push_back(e);
            gone += e.kind == TARGET_GONE;
          }
        }
        stop_and_settle(*lo);
        for (const event &e : drain_events(*lo)) ev.push_back(e);
        const stats s = bpf_map_struct<stats>(*lo, ".bss");
        CHECK(s.target_gone >= 2);
        CHECK(s.timer_failures == 0);
        REQUIRE(!ev.empty());
        CHECK(ev.back().kind == TARGET_GONE);
        CHECK(ev.back().err == -ENOENT);
        lo.reset();
      });
      env.finish();
    }
  }
}
