// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/runtime_timer_test.cc: struct bpf_timer at run time (test/progs/rt_timer.bpf.c):
// the helpers' results and errors, expiry on the machine clock (relative and BPF_F_TIMER_ABS),
// a periodic callback re-arming itself, bpf_timer_cancel (from a program and from its own
// callback), cancellation by element delete and object release, and the verifier's refusals.
#include "shim/bug.h"
#undef WARN
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "bpfvm/bpf_async.h"
#include "bpfvm/kernel_env.h"
#include "bpfvm/map.h"
#include "bpfvm/runtime.h"
#include "shim/errno.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/workqueue.h"
#include "test/bpfvm/runtime_test_util.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using namespace umemcg::emu;
using umemcg::test::config;
using umemcg::test::kBothModes;
using umemcg::test::mode_name;

namespace {

constexpr u32 kMonotonic = 1;

// struct args of rt_timer.bpf.c.
struct args {
  u32 key = 0;
  u32 init_flags = kMonotonic;
  u32 start_flags = 0;
  u32 skip = 0;  // 1: no init, 2: no set_callback, 4: no start, 8: cancel
  u64 nsecs = 0;
  u64 rearm = 0;
  s32 init_ret = 1, cb_ret = 1, start_ret = 1, cancel_ret = 1;
};

// struct elem of rt_timer.bpf.c (the bpf_timer reads as zero).
struct elem {
  u64 runs, t0, t1, key_seen, rearm, period, ran_at;
  s64 cancel_self;
};

std::unique_ptr<BpfLoadedObject> open_timer() {
  return testing::open_progs_object("rt_timer.bpf.o", bpf_kernel_load_options());
}

void setup(BpfLoadedObject &lo, const char *prog, args *a) {
  const BpfTestRunResult r = testing::test_run_ctx(lo, prog, a, /*verified=*/true);
  INFO(r.error);
  REQUIRE(r.err == 0);
  CHECK(r.retval == 0);
}

elem read_elem(bpf_map *m, u32 key) { return testing::lookup_value<elem>(m, key); }

// Lets the machine clock pass `ms` and the callbacks the expiries queued finish.
void wait_ms(unsigned int ms) {
  msleep(ms);
  flush_workqueue(system_unbound_wq);
}

}  // namespace

TEST_CASE("bpf_timer: the callback runs at expiry with (map, key, value)",
          "[bpfvm][runtime][timer]") {
  for (Mode mode : kBothModes) {
    SECTION(mode_name(mode)) {
      emu::Machine mach(config(mode, 2));
      mach.exec([mode] {
        auto lo = open_timer();
        bpf_map *arr = lo->find_map("tarr");
        bpf_map *hash = lo->find_map("thash");
        REQUIRE((arr && hash));
        CHECK(arr->timer_off == 8);
        const u64 t0 = ktime_get_ns();
        args a;
        a.key = 1;
        a.nsecs = 5 * NSEC_PER_MSEC;
        setup(*lo, "timer_setup_array", &a);
        CHECK((a.init_ret == 0 && a.cb_ret == 0 && a.start_ret == 0));
        args h;
        h.key = 6;
        h.nsecs = 2 * NSEC_PER_MSEC;
        setup(*lo, "timer_setup_hash", &h);
        CHECK((h.init_ret == 0 && h.cb_ret == 0 && h.start_ret == 0));
        if (mode == Mode::simulated) CHECK(read_elem(arr, 1).runs == 0);  // not before expiry
        wait_ms(50);
        const elem ea = read_elem(arr, 1);
        CHECK(ea.runs == 1);
        CHECK(ea.key_seen == 1);
        CHECK(ea.ran_at >= t0 + 5 * NSEC_PER_MSEC);
        // The callback cancelled its own timer: refused.
        CHECK(ea.cancel_self == -EDEADLK);
        const elem eh = read_elem(hash, 6);
        CHECK(eh.runs == 1);
        CHECK(eh.key_seen == 6);
        CHECK(eh.ran_at >= t0 + 2 * NSEC_PER_MSEC);
        if (mode == Mode::simulated) {
          // Virtual time: each fires on the first jiffy at or after its expiry.
          CHECK(ea.ran_at < t0 + 7 * NSEC_PER_MSEC);
          CHECK(eh.ran_at < t0 + 4 * NSEC_PER_MSEC);
        }
        // BPF_F_TIMER_ABS: an expiry on the clock.
        args abs;
        abs.key = 1;
        abs.skip = 1 | 2;
        abs.start_flags = 1;
        abs.nsecs = ktime_get_ns() + 3 * NSEC_PER_MSEC;
        setup(*lo, "timer_setup_array", &abs);
        CHECK(abs.start_ret == 0);
        wait_ms(20);
        const elem e2 = read_elem(arr, 1);
        CHECK(e2.runs == 2);
        CHECK(e2.ran_at >= abs.nsecs);
      });
    }
  }
}

TEST_CASE("bpf_timer: a periodic callback re-arms its timer", "[bpfvm][runtime][timer]") {
  for (Mode mode : kBothModes) {
    SECTION(mode_name(mode)) {
      emu::Machine mach(config(mode, 2));
      mach.exec([] {
        auto lo = open_timer();
        args a;
        a.key = 2;
        a.nsecs = 2 * NSEC_PER_MSEC;
        a.rearm = 3;
        setup(*lo, "timer_setup_array", &a);
        REQUIRE(a.start_ret == 0);
        wait_ms(100);
        const elem e = read_elem(lo->find_map("tarr"), 2);
        CHECK(e.runs == 4);
        CHECK(e.rearm == 0);
        CHECK(e.cancel_self == -EDEADLK);
      });
    }
  }
}

TEST_CASE("bpf_timer: the helpers' errors are the kernel's", "[bpfvm][runtime][timer]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto lo = open_timer();
    bpf_map *arr = lo->find_map("tarr");
    // Not initialised: set_callback, start and cancel fail.
    args n;
    n.key = 0;
    n.skip = 1 | 8;
    setup(*lo, "timer_setup_array", &n);
    CHECK(n.cb_ret == -EINVAL);
    CHECK(n.start_ret == -EINVAL);
    CHECK(n.cancel_ret == -EINVAL);
    // Clocks: CLOCK_PROCESS_CPUTIME_ID (2) and anything >= MAX_CLOCKS are refused.
    for (u32 bad : {2u, 16u, 17u}) {
      args c;
      c.key = 0;
      c.init_flags = bad;
      c.skip = 2 | 4;
      setup(*lo, "timer_setup_array", &c);
      CHECK(c.init_ret == -EINVAL);
    }
    // Initialised without a callback: start fails; a second init is -EBUSY; bad start flags.
    args s;
    s.key = 0;
    s.init_flags = 7;  // CLOCK_BOOTTIME
    s.skip = 2;
    setup(*lo, "timer_setup_array", &s);
    CHECK(s.init_ret == 0);
    CHECK(s.start_ret == -EINVAL);
    args f;
    f.key = 0;
    f.start_flags = 4;
    f.nsecs = NSEC_PER_MSEC;
    setup(*lo, "timer_setup_array", &f);
    CHECK(f.init_ret == -EBUSY);
    CHECK(f.cb_ret == 0);
    CHECK(f.start_ret == -EINVAL);
    // Armed, then cancelled before its expiry: 1, no run, and the callback is dropped.
    args c;
    c.key = 0;
    c.skip = 1 | 2 | 8;
    c.nsecs = 10 * NSEC_PER_MSEC;
    setup(*lo, "timer_setup_array", &c);
    CHECK(c.start_ret == 0);
    CHECK(c.cancel_ret == 1);
    wait_ms(30);
    CHECK(read_elem(arr, 0).runs == 0);
    args again;
    again.key = 0;
    again.skip = 1 | 2 | 8;
    again.nsecs = NSEC_PER_MSEC;
    setup(*lo, "timer_setup_array", &again);
    CHECK(again.start_ret == -EINVAL);
    CHECK(again.cancel_ret == 0);  // not armed
  });
}

TEST_CASE("bpf_timer: deleting the element or releasing the object cancels the timer",
          "[bpfvm][runtime][timer]") {
  for (Mode mode : kBothModes) {
    SECTION(mode_name(mode)) {
      emu::Machine mach(config(mode, 2));
      mach.exec([] {
        auto lo = open_timer();
        bpf_map *hash = lo->find_map("thash");
        args h;
        h.key = 3;
        h.nsecs = 5 * NSEC_PER_MSEC;
        setup(*lo, "timer_setup_hash", &h);
        REQUIRE(h.start_ret == 0);
        CHECK(hash->async_live.load() == 1);
        CHECK(sys_map_delete_elem(hash, &h.key) == 0);
        wait_ms(20);
        flush_workqueue(system_wq);  // the delete work
        CHECK(hash->async_live.load() == 0);
        bpf_map *bss = lo->find_map(".bss");
        REQUIRE(bss);
        CHECK(testing::lookup_value<u64>(bss, 0) == 0);
        // A periodic timer running when the object goes: released without a crash.
        args p;
        p.key = 1;
        p.nsecs = NSEC_PER_MSEC;
        p.rearm = 1000000;
        setup(*lo, "timer_setup_array", &p);
        REQUIRE(p.start_ret == 0);
        msleep(5);
        lo.reset();
        wait_ms(5);
      });
    }
  }
}

TEST_CASE("bpf_timer: the verifier checks the callback and the map",
          "[bpfvm][runtime][timer][verifier]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto lo = open_timer();
    auto refused = [&](const char *prog) {
      BpfLoadedProg *p = lo->find_program(prog);
      REQUIRE(p);
      CHECK_FALSE(p->runnable());
      return p->verdict().error;
    };
    CHECK(refused("bad_timer_callback_ret") ==
          "At async callback return the register R0 has smin=2 smax=2 should have been in [0, 0]");
    CHECK(refused("timer_map_mismatch") ==
          "timer pointer in R1 map_uid=0 doesn't match map pointer in R2 map_uid=0");
  });
}
