// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/runtime_async_test.cc: struct bpf_wq at run time (test/progs/rt_wq.bpf.c): the
// kfuncs' results and errors, the callback on the system workqueue with the value's (map, key,
// value), re-arming from the callback, cancellation by element update/delete and by releasing
// the object, in simulated (deterministic) and native mode.
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
#include "shim/machine.h"
#include "shim/rcupdate.h"
#include "shim/workqueue.h"
#include "test/bpfvm/runtime_test_util.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using namespace umemcg::emu;
using umemcg::test::config;
using umemcg::test::kBothModes;
using umemcg::test::mode_name;

namespace {

// The programs' context (struct args of rt_wq.bpf.c).
struct args {
  u32 key = 0;
  u32 flags = 0;
  u32 skip = 0;  // 1: no init, 2: no set_callback, 4: no start
  s32 init_ret = 1, cb_ret = 1, start_ret = 1;
  u32 rearm = 0;
};

// struct elem of rt_wq.bpf.c as user space reads it (the bpf_wq reads as zero).
struct elem {
  u64 runs, wq0, wq1, key_seen, rearm;
};

std::unique_ptr<BpfLoadedObject> open_wq() {
  return testing::open_progs_object("rt_wq.bpf.o", bpf_kernel_load_options());
}

int setup(BpfLoadedObject &lo, const char *prog, args *a) {
  const BpfTestRunResult r = testing::test_run_ctx(lo, prog, a, /*verified=*/true);
  INFO(r.error);
  REQUIRE(r.err == 0);
  return (int)r.retval;
}

elem read_elem(bpf_map *m, u32 key) { return testing::lookup_value<elem>(m, key); }

u64 total_runs(BpfLoadedObject &lo) {
  bpf_map *bss = lo.find_map(".bss");
  REQUIRE(bss);
  return testing::lookup_value<u64>(bss, 0);
}

}  // namespace

TEST_CASE("bpf_wq: the callback runs on the system workqueue with (map, key, value)",
          "[bpfvm][runtime][wq]") {
  for (Mode mode : kBothModes) {
    SECTION(mode_name(mode)) {
      emu::Machine mach(config(mode, 2));
      mach.exec([] {
        auto lo = open_wq();
        bpf_map *arr = lo->find_map("warr");
        bpf_map *hash = lo->find_map("whash");
        REQUIRE((arr && hash));
        args a;
        a.key = 2;
        CHECK(setup(*lo, "wq_setup_array", &a) == 0);
        CHECK(a.init_ret == 0);
        CHECK(a.cb_ret == 0);
        CHECK(a.start_ret == 0);
        args h;
        h.key = 7;
        CHECK(setup(*lo, "wq_setup_hash", &h) == 0);
        CHECK((h.init_ret == 0 && h.cb_ret == 0 && h.start_ret == 0));
        flush_workqueue(system_wq);
        const elem ea = read_elem(arr, 2);
        CHECK(ea.runs == 1);
        CHECK(ea.key_seen == 2);
        const elem eh = read_elem(hash, 7);
        CHECK(eh.runs == 1);
        CHECK(eh.key_seen == 7);
        CHECK(read_elem(arr, 0).runs == 0);
        CHECK(total_runs(*lo) == 2);
        // Started again: one more run each.
        a.skip = 1 | 2;
        CHECK(setup(*lo, "wq_setup_array", &a) == 0);
        CHECK(a.start_ret == 0);
        flush_workqueue(system_wq);
        CHECK(read_elem(arr, 2).runs == 2);
        CHECK(arr->async_live.load() == 1);
        CHECK(hash->async_live.load() == 1);
      });
    }
  }
}

TEST_CASE("bpf_wq: the kfuncs' errors are the kernel's", "[bpfvm][runtime][wq]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto lo = open_wq();
    bpf_map *arr = lo->find_map("warr");
    // Not initialised: set_callback and start fail with -EINVAL.
    args a;
    a.key = 1;
    a.skip = 1;
    setup(*lo, "wq_setup_array", &a);
    CHECK(a.cb_ret == -EINVAL);
    CHECK(a.start_ret == -EINVAL);
    // Flags: -EINVAL from init and start.
    args f;
    f.key = 1;
    f.flags = 1;
    setup(*lo, "wq_setup_array", &f);
    CHECK(f.init_ret == -EINVAL);
    CHECK(f.start_ret == -EINVAL);
    // Initialised without a callback: start fails.
    args n;
    n.key = 1;
    n.skip = 2;
    setup(*lo, "wq_setup_array", &n);
    CHECK(n.init_ret == 0);
    CHECK(n.start_ret == -EINVAL);
    // A second init: -EBUSY; the callback can then be set and the work started.
    args b;
    b.key = 1;
    setup(*lo, "wq_setup_array", &b);
    CHECK(b.init_ret == -EBUSY);
    CHECK(b.cb_ret == 0);
    CHECK(b.start_ret == 0);
    flush_workqueue(system_wq);
    CHECK(read_elem(arr, 1).runs == 1);
    // set_callback's flags: a run-time -EINVAL (the verifier accepts any scalar).
    args fl;
    fl.key = 1;
    fl.flags = 2;
    setup(*lo, "set_callback_flags", &fl);
    CHECK(fl.cb_ret == -EINVAL);
    // Outside a program run there is no program to call back.
    rcu_read_lock();
    void *v = arr->map_lookup_elem(&b.key);
    rcu_read_unlock();
    REQUIRE(v);
    CHECK(bpf_wq_set_callback_impl(static_cast<u8 *>(v) + arr->wq_off, 0, 0, nullptr) == -EINVAL);
    CHECK(bpf_wq_set_callback_impl(static_cast<u8 *>(v) + arr->wq_off, 0, 1, nullptr) == -EINVAL);
  });
}

TEST_CASE("bpf_wq: a callback re-arms its own work item", "[bpfvm][runtime][wq]") {
  for (Mode mode : kBothModes) {
    SECTION(mode_name(mode)) {
      emu::Machine mach(config(mode, 2));
      mach.exec([] {
        auto lo = open_wq();
        args a;
        a.key = 3;
        a.rearm = 4;
        setup(*lo, "wq_setup_array", &a);
        REQUIRE(a.start_ret == 0);
        // Each run queues the next: flush_workqueue() waits for work queued meanwhile too.
        flush_workqueue(system_wq);
        const elem e = read_elem(lo->find_map("warr"), 3);
        CHECK(e.runs == 5);
        CHECK(e.rearm == 0);
      });
    }
  }
}

TEST_CASE("bpf_wq: updating or deleting the element cancels its work", "[bpfvm][runtime][wq]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto lo = open_wq();
    bpf_map *arr = lo->find_map("warr");
    bpf_map *hash = lo->find_map("whash");
    // Started, then deleted (hash) or overwritten (array) before a worker ran it: no run, and
    // the state is freed once its delete work ran.
    args h;
    h.key = 5;
    setup(*lo, "wq_setup_hash", &h);
    REQUIRE(h.start_ret == 0);
    CHECK(sys_map_delete_elem(hash, &h.key) == 0);
    args a;
    a.key = 0;
    setup(*lo, "wq_setup_array", &a);
    REQUIRE(a.start_ret == 0);
    const elem zero{};
    CHECK(sys_map_update_elem(arr, &a.key, &zero) == 0);
    flush_workqueue(system_wq);
    CHECK(total_runs(*lo) == 0);
    CHECK(arr->async_live.load() == 0);
    CHECK(hash->async_live.load() == 0);
    // The array value's bpf_wq is free again: a new init succeeds and works.
    a.skip = 0;
    setup(*lo, "wq_setup_array", &a);
    CHECK(a.init_ret == 0);
    CHECK(a.start_ret == 0);
    flush_workqueue(system_wq);
    CHECK(total_runs(*lo) == 1);
  });
}

TEST_CASE("bpf_wq: releasing the object cancels pending work", "[bpfvm][runtime][wq]") {
  for (Mode mode : kBothModes) {
    SECTION(mode_name(mode)) {
      emu::Machine mach(config(mode, 2));
      mach.exec([] {
        auto lo = open_wq();
        args a;
        a.key = 1;
        a.rearm = 1000000;  // re-arms until cancelled
        setup(*lo, "wq_setup_array", &a);
        REQUIRE(a.start_ret == 0);
        args h;
        h.key = 9;
        setup(*lo, "wq_setup_hash", &h);
        REQUIRE(h.start_ret == 0);
        bpf_map *arr = lo->find_map("warr");
        // The release waits for the running callback and frees both states; after it no
        // callback runs, and bpf_wq_init() on the released map fails as without user refs.
        bpf_map_release_async(arr);
        CHECK(arr->async_live.load() == 0);
        rcu_read_lock();
        void *v = arr->map_lookup_elem(&a.key);
        rcu_read_unlock();
        REQUIRE(v);
        CHECK(bpf_wq_init(static_cast<u8 *>(v) + arr->wq_off, arr, 0) == -EPERM);
        lo.reset();  // the hash's state too
        flush_workqueue(system_wq);
      });
    }
  }
}

TEST_CASE("bpf_wq: the verifier checks the callback and the map",
          "[bpfvm][runtime][wq][verifier]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto lo = open_wq();
    auto refused = [&](const char *prog) {
      BpfLoadedProg *p = lo->find_program(prog);
      REQUIRE(p);
      CHECK_FALSE(p->runnable());
      return p->verdict().error;
    };
    CHECK(refused("bad_callback_ret") ==
          "At async callback return the register R0 has smin=1 smax=1 should have been in [0, 0]");
    CHECK(refused("map_mismatch") ==
          "workqueue pointer in R1 map_uid=0 doesn't match map pointer in R2 map_uid=0");
    BpfLoadedProg *flags = lo->find_program("set_callback_flags");
    REQUIRE(flags);
    CHECK(flags->fast());
  });
}
