// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/runtime_test_run_test.cc: linking clang-compiled objects (test/progs/rt_*.bpf.c)
// and test-running their SYSCALL programs: maps and ring buffer, bpf_loop, task storage, spin
// locks, global data, the test-run attribute checks, and checked-mode faults.
#include "shim/bug.h"
#undef WARN
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "bpfvm/helpers_impl.h"
#include "bpfvm/log.h"
#include "bpfvm/map_local_storage.h"
#include "bpfvm/ringbuf.h"
#include "bpfvm/runtime.h"
#include "shim/errno.h"
#include "shim/machine.h"
#include "shim/rcupdate.h"
#include "test/bpfvm/runtime_test_util.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using namespace umemcg::emu;
using umemcg::test::config;

namespace {

std::string prog_path(const char *name) { return std::string(UMEMCG_BPF_PROGS_DIR) + "/" + name; }

// The rt_* objects also hold programs the verifier rejects on purpose (an unreleased ring-buffer
// record) to show the checked interpreter stopping them: these tests opt in to running
// unverified programs (checked). The others verify and run fast.
std::unique_ptr<BpfLoadedObject> open_obj(const char *name) {
  BpfLinkOptions lopts;
  lopts.run_unverified = true;
  return testing::open_progs_object(name, LoadOptions{}, lopts);
}

using testing::test_run_ctx;

struct args {
  u32 key;
  u32 flags;
  u64 value;
  u64 out;
};
struct event {
  u32 key;
  u32 kind;
  u64 value;
};

}  // namespace

TEST_CASE("runtime: link creates the maps and global data", "[bpfvm][runtime]") {
  emu::Machine mach(config(emu::Mode::simulated, 2));
  mach.exec([] {
    auto lo = open_obj("rt_globals.bpf.o");
    bpf_map *ro = lo->find_map(".rodata");
    bpf_map *data = lo->find_map(".data");
    REQUIRE(ro);
    REQUIRE(data);
    CHECK(lo->find_map(".bss"));
    CHECK(lo->find_map("nope") == nullptr);
    CHECK(ro->frozen);
    CHECK(ro->rdonly_prog());
    // .rodata also holds the format strings: the value is the whole section.
    u32 zero = 0;
    std::vector<u8> rov(ro->value_size), datav(data->value_size);
    CHECK(ro->value_size > 4);
    CHECK(sys_map_lookup_elem(ro, &zero, rov.data()) == 0);
    u32 factor = 0, base = 0;
    std::memcpy(&factor, rov.data(), 4);
    CHECK(factor == 3);
    CHECK(sys_map_lookup_elem(data, &zero, datav.data()) == 0);
    std::memcpy(&base, datav.data(), 4);
    CHECK(base == 100);
    CHECK(sys_map_update_elem(ro, &zero, rov.data()) == -EPERM);
    CHECK(lo->find_program("use_globals"));
    CHECK(lo->find_program("nope") == nullptr);
    CHECK(lo->warnings().empty());
    CHECK(lo->find_program("use_globals")->fast());  // verified: fast mode

    // Objects with map types the emulator lacks still link, with a warning.
    auto maps = open_obj("maps.bpf.o");
    REQUIRE(maps->warnings().size() == 1);
    CHECK(maps->warnings()[0].find("'outer'") != std::string::npos);
    // Non-weak kfuncs need a registry.
    auto memcg = BpfLoadedObject::open(prog_path("memcg_ops.bpf.o"), nullptr);
    REQUIRE_FALSE(memcg.ok());
    CHECK(std::string(memcg.status().message()).find("kfunc") != std::string::npos);
  });
}

TEST_CASE("runtime: hash map and ring buffer from a SYSCALL program", "[bpfvm][runtime]") {
  emu::Machine mach(config(emu::Mode::simulated, 2));
  mach.exec([] {
    auto lo = open_obj("rt_maps.bpf.o");
    bpf_map *hash = lo->find_map("hash");
    bpf_map *rb = lo->find_map("rb");
    REQUIRE((hash && rb));
    std::vector<event> events;
    RingBuffer cons;
    cons.add(rb, [&](const void *d, u32 sz) {
      REQUIRE(sz == sizeof(event));
      events.push_back(*static_cast<const event *>(d));
      return 0;
    });

    args a{7, BPF_NOEXIST, 1234, 0};
    BpfTestRunResult r = test_run_ctx(*lo, "update_and_emit", &a);
    CHECK(r.err == 0);
    CHECK(r.retval == 0);
    CHECK(a.out == 1234);
    u64 v = 0;
    CHECK(sys_map_lookup_elem(hash, &a.key, &v) == 0);
    CHECK(v == 1234);
    a.value = 99;
    r = test_run_ctx(*lo, "update_and_emit", &a);
    CHECK(r.retval == (u32)-EEXIST);  // BPF_NOEXIST on an existing key
    CHECK(a.out == 1234);
    CHECK(cons.consume() == 2);
    REQUIRE(events.size() == 2);
    CHECK(events[0].key == 7);
    CHECK(events[0].kind == 1);
    CHECK(events[1].kind == 2);
    // Accepted by the verifier: it ran in the fast interpreter.
    CHECK(lo->find_program("update_and_emit")->fast());

    // The per-CPU counter was bumped twice on this vCPU.
    u64 pc[2] = {};
    u32 zero = 0;
    CHECK(sys_map_lookup_elem(lo->find_map("calls"), &zero, pc) == 0);
    CHECK(pc[0] + pc[1] == 2);

    // max_entries: 4 keys fit, the fifth gets -E2BIG.
    for (u32 k = 100; k < 104; k++) {
      args b{k, BPF_ANY, k, 0};
      CHECK(test_run_ctx(*lo, "update_and_emit", &b).retval == (k < 103 ? 0u : (u32)-E2BIG));
    }
    args d{7, 0, 0, 0};
    CHECK(test_run_ctx(*lo, "delete_key", &d).retval == 0);
    CHECK(test_run_ctx(*lo, "delete_key", &d).retval == (u32)-ENOENT);

    // ringbuf_output + reserve/discard + query.
    CHECK(cons.consume() == 4);
    events.clear();
    args o{5, 0, 55, 0};
    r = test_run_ctx(*lo, "output_discard", &o);
    CHECK(r.retval == 0);
    CHECK(o.out == 2 * bpf_ringbuf_record_len(sizeof(event)));
    CHECK(cons.consume() == 1);  // the discarded record is skipped
    REQUIRE(events.size() == 1);
    CHECK(events[0].kind == 3);
    CHECK(events[0].value == 55);
  });
}

TEST_CASE("runtime: BPF_PROG_TEST_RUN attribute checks", "[bpfvm][runtime]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  auto lo = std::unique_ptr<BpfLoadedObject>();
  mach.exec([&] { lo = open_obj("rt_maps.bpf.o"); });
  BpfLoadedProg *p = lo->find_program("delete_key");
  REQUIRE(p);
  auto run = [&](BpfTestRunOpts o) {
    BpfTestRunResult r;
    mach.exec([&] { r = bpf_prog_test_run(*p, o); });
    return r;
  };
  BpfTestRunOpts ok;
  ok.ctx_in.resize(sizeof(args));
  CHECK(run(ok).err == 0);
  BpfTestRunOpts big;
  big.ctx_in.resize(65536);
  CHECK(run(big).err == -EINVAL);
  big.ctx_in.resize(65535);
  CHECK(run(big).err == 0);
  for (int field = 0; field < 7; field++) {
    BpfTestRunOpts o = ok;
    switch (field) {
      case 0: o.data_in = {1}; break;
      case 1: o.data_out = true; break;
      case 2: o.ctx_out = true; break;
      case 3: o.repeat = 2; break;
      case 4: o.duration = 1; break;
      case 5: o.flags = 1; break;
      case 6: o.batch_size = 1; break;
    }
    INFO("field " << field);
    CHECK(run(o).err == -EINVAL);
  }
  // Not in a task: the kernel always runs it in the caller's task.
  BpfTestRunOpts o = ok;
  CHECK(bpf_prog_test_run(*p, o).err == -EINVAL);
  // Other program types have no test run.
  std::unique_ptr<BpfLoadedObject> maps;
  mach.exec([&] { maps = open_obj("maps.bpf.o"); });
  BpfLoadedProg *tp = maps->find_program("use_storage");
  REQUIRE(tp);
  BpfTestRunResult r;
  mach.exec([&] { r = bpf_prog_test_run(*tp, o); });
  CHECK(r.err == -ENOTSUPP);
  mach.exec([&] {
    lo.reset();
    maps.reset();
  });
}

TEST_CASE("runtime: the verifier finds the bpf_spin_lock in a BTF map value",
          "[bpfvm][runtime]") {
  // Without run_unverified: only what the verifier accepts runs, in the fast mode.
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto lo = BpfLoadedObject::open(prog_path("rt_spin_lock.bpf.o"), nullptr, {});
    INFO(lo.status().message());
    REQUIRE(lo.ok());
    BpfLoadedProg *add = (*lo)->find_program("locked_add");
    BpfLoadedProg *leak = (*lo)->find_program("lock_leak");
    REQUIRE(add);
    REQUIRE(leak);
    INFO(add->verdict().error);
    CHECK(add->fast());  // lock and unlock at the value's lock offset: accepted
    CHECK_FALSE(leak->fast());
    CHECK(leak->verdict().error ==
          "BPF_EXIT instruction in main prog cannot be used inside bpf_spin_lock-ed region");
    CHECK_FALSE(leak->runnable());
    struct { u64 n, a, b; } la{4, 0, 0};
    CHECK(test_run_ctx(**lo, "locked_add", &la).err == 0);
    CHECK(la.a == 4);
    CHECK(la.b == 8);
  });
}

TEST_CASE("runtime: checked runs stop bad programs and clean up", "[bpfvm][runtime]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto lo = open_obj("rt_maps.bpf.o");
    args a{};
    // The verifier accepts the read (a SYSCALL ctx may be up to 64 KiB); test-run refuses a
    // ctx_in smaller than the highest byte the program reads, as the kernel does.
    BpfTestRunResult r = test_run_ctx(*lo, "bad_ctx_read", &a);
    CHECK(r.err == -EINVAL);
    CHECK(r.error.find("smaller than the program reads") != std::string::npos);
    r = test_run_ctx(*lo, "leak_record", &a);
    CHECK(r.err == -EFAULT);
    CHECK(r.error.find("neither submitted nor discarded") != std::string::npos);
    // The leaked record was discarded: the ring is not stuck behind it.
    RingBuffer cons;
    int n = 0;
    cons.add(lo->find_map("rb"), [&](const void *, u32) { return ++n, 0; });
    args e{1, BPF_ANY, 1, 0};
    CHECK(test_run_ctx(*lo, "update_and_emit", &e).err == 0);
    CHECK(cons.consume() == 1);

    auto sl = open_obj("rt_spin_lock.bpf.o");
    struct { u64 n, a, b; } la{3, 0, 0};
    r = test_run_ctx(*sl, "locked_add", &la);
    INFO(r.error);
    CHECK(r.err == 0);
    CHECK(la.a == 3);
    CHECK(la.b == 6);
    u64 dummy = 0;
    r = test_run_ctx(*sl, "lock_leak", &dummy);
    CHECK(r.err == -EFAULT);
    CHECK(r.error.find("still held") != std::string::npos);
    la.n = 1;
    CHECK(test_run_ctx(*sl, "locked_add", &la).err == 0);  // the lock was released
    CHECK(la.a == 5);

    auto gl = open_obj("rt_globals.bpf.o");
    r = test_run_ctx(*gl, "write_rodata", &dummy);
    CHECK(r.err == -EFAULT);
    CHECK(r.error.find("invalid memory write") != std::string::npos);
  });
}

TEST_CASE("runtime: bpf_loop with nested callbacks", "[bpfvm][runtime][helpers]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto lo = open_obj("rt_loop.bpf.o");
    struct { u32 outer, inner; u64 sum, iters; s64 bad; } a{20, 4, 0, 0, 0};
    BpfTestRunResult r = test_run_ctx(*lo, "loops", &a);
    REQUIRE(r.err == 0);
    CHECK(a.iters == 10);        // outer_cb returns 1 at i == 9
    CHECK(a.sum == 10 * 6);      // each inner loop adds 0+1+2+3
    CHECK(a.bad == -EINVAL);     // flags != 0
    a = {3, 0, 0, 0, 0};
    REQUIRE(test_run_ctx(*lo, "loops", &a).err == 0);
    CHECK(a.iters == 3);
    CHECK(a.sum == 0);
    a = {(u32)(BPF_MAX_LOOPS + 1), 1, 0, 0, 0};
    REQUIRE(test_run_ctx(*lo, "loops", &a).err == 0);
    CHECK((s64)a.iters == -E2BIG);
  });
}

TEST_CASE("runtime: task storage and current-task helpers", "[bpfvm][runtime][helpers]") {
  emu::Machine mach(config(emu::Mode::simulated, 2));
  std::unique_ptr<BpfLoadedObject> lo;
  struct targs { u64 count, pid_tgid; char comm[16]; u32 del; s32 del_ret; };
  mach.exec([&] { lo = open_obj("rt_task_storage.bpf.o"); });
  task_struct *first = nullptr;
  mach.exec([&] {
    first = current;
    targs a{};
    REQUIRE(test_run_ctx(*lo, "count_task", &a).err == 0);
    CHECK(a.count == 1);
    REQUIRE(test_run_ctx(*lo, "count_task", &a).err == 0);
    CHECK(a.count == 2);
    CHECK(a.pid_tgid == ((u64)(u32)current->tgid << 32 | (u32)current->pid));
    CHECK(std::string(a.comm) == current->comm);
    a.del = 1;
    REQUIRE(test_run_ctx(*lo, "count_task", &a).err == 0);
    CHECK(a.count == 3);
    CHECK(a.del_ret == 0);
    a.del = 0;
    REQUIRE(test_run_ctx(*lo, "peek_task", &a).err == 0);
    CHECK(a.count == 0xffff);  // deleted, and peek does not create
  }, 0, "first");
  mach.exec([&] {
    targs a{};
    REQUIRE(test_run_ctx(*lo, "count_task", &a).err == 0);
    CHECK(a.count == 1);  // another task, another value
    CHECK(std::string(a.comm) == "second");
    u64 v = 0;
    CHECK(sys_task_storage_lookup(lo->find_map("task_cnt"), current, &v) == 0);
    CHECK(v == 1);
    CHECK(sys_task_storage_lookup(lo->find_map("task_cnt"), first, &v) == -ENOENT);
    lo.reset();
  }, 1, "second");
}

TEST_CASE("runtime: globals, time, CPU, random and trace_printk", "[bpfvm][runtime][helpers]") {
  struct gargs { u32 in, cpu; u64 out, calls, now; u32 rnd, pad; };
  auto run_once = [](u64 seed, gargs *a, std::string *log) {
    emu::Machine mach(config(emu::Mode::simulated, 2, seed));
    mach.exec([&] {
      bpf_trace_log_clear();
      auto lo = open_obj("rt_globals.bpf.o");
      for (int i = 0; i < 2; i++) REQUIRE(test_run_ctx(*lo, "use_globals", a).err == 0);
      u32 zero = 0;
      u64 calls = 0;
      CHECK(sys_map_lookup_elem(lo->find_map(".bss"), &zero, &calls) == 0);
      CHECK(calls == 2);
      *log = bpf_trace_log_messages();
    }, 1);
  };
  gargs a{5, 0, 0, 0, 0, 0, 0};
  std::string log;
  run_once(42, &a, &log);
  CHECK(a.out == 115);
  CHECK(a.calls == 2);
  CHECK(a.cpu == 1);
  CHECK(log == "in=5 out=115 calls=1\nstr abc chr z hex ff\nin=5 out=115 calls=2\n"
               "str abc chr z hex ff\n");
  gargs b{5, 0, 0, 0, 0, 0, 0};
  run_once(42, &b, &log);
  CHECK(b.rnd == a.rnd);  // simulated mode: random numbers follow the machine's seed
  gargs c{5, 0, 0, 0, 0, 0, 0};
  run_once(43, &c, &log);
  CHECK(c.rnd != a.rnd);
}

TEST_CASE("runtime: a program the verifier rejects is refused unless the link opts in",
          "[bpfvm][runtime]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto lo = BpfLoadedObject::open(prog_path("rt_maps.bpf.o"), nullptr);  // default options
    REQUIRE(lo.ok());
    // The programs the kernel accepts verify and run; leak_record (a ring-buffer record never
    // submitted) does not.
    BpfLoadedProg *ok = (*lo)->find_program("update_and_emit");
    REQUIRE(ok);
    CHECK(ok->verdict().accepted);
    CHECK(ok->runnable());
    BpfLoadedProg *p = (*lo)->find_program("leak_record");
    REQUIRE(p);
    REQUIRE_FALSE(p->verdict().accepted);
    CHECK_FALSE(p->runnable());
    args a{7, BPF_NOEXIST, 1234, 0};
    BpfTestRunOpts o;
    o.ctx_in.assign(reinterpret_cast<const u8 *>(&a), reinterpret_cast<const u8 *>(&a + 1));
    BpfTestRunResult r = bpf_prog_test_run(*p, o);
    CHECK(r.err == p->verdict().err);
    CHECK(r.err < 0);
    CHECK_THAT(r.error, Catch::StartsWith("the verifier rejected program 'leak_record': ") &&
                            Catch::Contains(p->verdict().error));
    CHECK(r.executed == 0);  // never ran
    BpfProgRunResult rr = p->run(&a, sizeof(a));
    CHECK_FALSE(rr.ok);
    CHECK(rr.fault == r.error);

    // Not verified at all: refused with -EACCES unless opted in.
    BpfLinkOptions nov;
    nov.verify = false;
    auto lo2 = BpfLoadedObject::open(prog_path("rt_globals.bpf.o"), nullptr, nov);
    REQUIRE(lo2.ok());
    BpfLoadedProg *g = (*lo2)->programs().empty() ? nullptr : &(*lo2)->programs().front();
    REQUIRE(g);
    BpfTestRunOpts o2;
    o2.ctx_in.resize(64);
    BpfTestRunResult r2 = bpf_prog_test_run(*g, o2);
    CHECK(r2.err == -EACCES);
    CHECK_THAT(r2.error, Catch::Contains("was not verified"));
  });
}

TEST_CASE("runtime: a bpf_wq in a BTF map value is a special field", "[bpfvm][runtime][wq]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto lo = BpfLoadedObject::open(prog_path("rt_wq_field.bpf.o"), nullptr, {});
    INFO(lo.status().message());
    REQUIRE(lo.ok());
    bpf_map *arr = (*lo)->find_map("warr");
    bpf_map *hash = (*lo)->find_map("whash");
    REQUIRE((arr && hash));
    CHECK(arr->wq_off == 8);  // { u64 a; struct bpf_wq wq; u64 b; }
    CHECK(hash->wq_off == 8);
    CHECK(arr->spin_lock_off == -1);
    // The verifier knows the field: the other fields are accessible, the bpf_wq is not.
    BpfLoadedProg *touch = (*lo)->find_program("touch_fields");
    REQUIRE(touch);
    INFO(touch->verdict().error);
    CHECK(touch->fast());
    for (const char *bad : {"store_wq", "load_wq"}) {
      BpfLoadedProg *p = (*lo)->find_program(bad);
      REQUIRE(p);
      CHECK_FALSE(p->runnable());
      CHECK(p->verdict().error == "bpf_wq cannot be accessed directly by load/store");
    }
    u64 x = 3;
    CHECK(test_run_ctx(**lo, "touch_fields", &x).err == 0);
    CHECK(x == 9);
    // User-space copies leave the bpf_wq alone: an update does not write it, a lookup reads it
    // as zero, in both map types.
    struct elem {
      u64 a, w0, w1, b;
    };
    for (bpf_map *m : {arr, hash}) {
      INFO(m->name);
      const u32 k = 1;
      const elem in{1, 0xaa, 0xbb, 2};
      REQUIRE(sys_map_update_elem(m, &k, &in) == 0);
      {
        rcu_read_guard g;
        const auto *raw = static_cast<const elem *>(m->map_lookup_elem(&k));
        REQUIRE(raw);
        CHECK(raw->a == 1);
        CHECK(raw->b == 2);
        CHECK(raw->w0 == 0);
        CHECK(raw->w1 == 0);
      }
      elem out{9, 9, 9, 9};
      REQUIRE(sys_map_lookup_elem(m, &k, &out) == 0);
      CHECK(out.a == 1);
      CHECK(out.b == 2);
      CHECK(out.w0 == 0);
      CHECK(out.w1 == 0);
      CHECK(sys_map_freeze(m) == -ENOTSUPP);  // a map with special fields
    }
    // A per-CPU array may not hold one (map_check_btf: -EOPNOTSUPP).
    auto pc = BpfLoadedObject::open(prog_path("rt_wq_percpu.bpf.o"), nullptr, {});
    REQUIRE_FALSE(pc.ok());
    CHECK_THAT(std::string(pc.status().message()), Catch::Contains("bpf_wq"));
  });
}

// test/progs/verifier_map_elem_cb.bpf.c: bpf_for_each_map_elem over an array, a hash map and a
// per-CPU array, in the fast run of verified programs and in the checked run of the same
// programs unverified (the helper hands the key and value to the checked interpreter).
TEST_CASE("runtime: bpf_for_each_map_elem visits each element and stops on 1",
          "[bpfvm][runtime][helpers][for_each]") {
  struct fargs {
    u32 stop_at, visits;
    u64 sum, keys;
    s64 ret;
  };
  for (const bool checked : {false, true}) {
    emu::Machine mach(config(emu::Mode::simulated, 1));
    mach.exec([checked] {
      CAPTURE(checked);
      BpfLinkOptions lopts;
      lopts.verify = !checked;
      lopts.run_unverified = checked;
      auto opened = BpfLoadedObject::open(prog_path("verifier_map_elem_cb.bpf.o"), nullptr, lopts);
      INFO(opened.status().message());
      REQUIRE(opened.ok());
      BpfLoadedObject &lo = **opened;
      bpf_map *arr = lo.find_map("arr");
      bpf_map *hash = lo.find_map("hash");
      bpf_map *pcpu = lo.find_map("pcpu");
      REQUIRE((arr && hash && pcpu));
      auto set_array = [&] {
        for (u32 k = 0; k < 4; k++) {
          const u64 v = 10 * (k + 1);
          REQUIRE(sys_map_update_elem(arr, &k, &v) == 0);
        }
      };
      auto value_of = [](bpf_map *m, u32 k) {
        u64 v = 0;
        REQUIRE(sys_map_lookup_elem(m, &k, &v) == 0);
        return v;
      };

      // Every element of the array in index order; the callback writes each value.
      set_array();
      fargs a{};
      BpfTestRunResult r = test_run_ctx(lo, "sum_array", &a);
      REQUIRE(r.err == 0);
      CHECK(a.ret == 4);
      CHECK(a.visits == 4);
      CHECK(a.sum == 10 + 20 + 30 + 40);
      CHECK(a.keys == 0 + 1 + 2 + 3);
      CHECK(value_of(arr, 0) == 11);
      CHECK(value_of(arr, 3) == 41);
      // The second visit returns 1: the walk stops there, and the count includes it.
      set_array();
      a = {2, 0, 0, 0, 0};
      REQUIRE(test_run_ctx(lo, "sum_array", &a).err == 0);
      CHECK(a.ret == 2);
      CHECK(a.visits == 2);
      CHECK(a.sum == 10 + 20);
      CHECK(value_of(arr, 1) == 21);
      CHECK(value_of(arr, 2) == 30);  // not visited

      // A hash map: nothing in it, then five elements, then the walk stopped at the third.
      a = {};
      REQUIRE(test_run_ctx(lo, "sum_hash", &a).err == 0);
      CHECK(a.ret == 0);
      CHECK(a.visits == 0);
      for (u32 k = 1; k <= 5; k++) {
        const u64 v = 100 * k;
        REQUIRE(sys_map_update_elem(hash, &k, &v) == 0);
      }
      a = {};
      REQUIRE(test_run_ctx(lo, "sum_hash", &a).err == 0);
      CHECK(a.ret == 5);
      CHECK(a.visits == 5);
      CHECK(a.sum == 1500);
      CHECK(a.keys == 15);
      CHECK(value_of(hash, 4) == 401);
      a = {3, 0, 0, 0, 0};
      REQUIRE(test_run_ctx(lo, "sum_hash", &a).err == 0);
      CHECK(a.ret == 3);
      CHECK(a.visits == 3);

      // A per-CPU array: this vCPU's values (one vCPU here).
      for (u32 k = 0; k < 2; k++) {
        std::vector<u64> v(pcpu->sys_value_size() / 8, 7 + k);
        REQUIRE(sys_map_update_elem(pcpu, &k, v.data()) == 0);
      }
      a = {};
      REQUIRE(test_run_ctx(lo, "sum_percpu", &a).err == 0);
      CHECK(a.ret == 2);
      CHECK(a.sum == 7 + 8);

      // Non-zero flags: -EINVAL before any visit.
      a = {};
      REQUIRE(test_run_ctx(lo, "bad_flags", &a).err == 0);
      CHECK(a.ret == -EINVAL);
      CHECK(a.visits == 0);

      // A NULL context; the callback stops at key 2 (the third visit).
      a = {};
      REQUIRE(test_run_ctx(lo, "null_ctx", &a).err == 0);
      CHECK(a.ret == 3);

      // A callback that reserves and submits its own ring-buffer record on each visit.
      a = {};
      REQUIRE(test_run_ctx(lo, "cb_own_ref", &a).err == 0);
      CHECK(a.ret == 4);
    });
  }
}

// test/progs/verifier_find_vma.bpf.c: bpf_find_vma finds no VMA here (docs/bpfvm.md): -ENOENT
// with the callback never run, -EINVAL for non-zero flags.
TEST_CASE("runtime: bpf_find_vma finds no VMA", "[bpfvm][runtime][helpers]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    auto lo = open_obj("verifier_find_vma.bpf.o");
    struct { u64 addr, flags; s64 ret; u32 found, pad; } a{0x1000, 0, 0, 0, 0};
    REQUIRE(test_run_ctx(*lo, "find_current", &a).err == 0);
    CHECK(a.ret == -ENOENT);
    CHECK(a.found == 0);
    a = {0x1000, 1, 0, 0, 0};
    REQUIRE(test_run_ctx(*lo, "find_current", &a).err == 0);
    CHECK(a.ret == -EINVAL);
  });
}

// test/progs/verifier_parity.bpf.c: bpf_get_stack finds no call chain (-EFAULT) and clears the
// buffer; a size that is not a multiple of an entry is -EINVAL. A program the verifier accepts
// for a privileged loader with reads of struct bpf_map fields through a map pointer is not
// linked: the emulator's maps are not laid out as the kernel's.
TEST_CASE("runtime: bpf_get_stack, and map field reads are not linked", "[bpfvm][runtime][helpers]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    BpfLinkOptions lopts;
    lopts.allow_ptr_leaks = true;
    auto lo = BpfLoadedObject::open(prog_path("verifier_parity.bpf.o"), nullptr, lopts);
    INFO(lo.status().message());
    REQUIRE(lo.ok());
    struct {
      s64 ret;
      s64 bad_size;
      u64 first;
    } a = {1, 1, 7};
    BpfTestRunResult r = test_run_ctx(**lo, "get_stack_call", &a);
    CHECK(r.err == 0);
    CHECK(a.ret == -EFAULT);
    CHECK(a.first == 0);
    CHECK(a.bad_size == -EINVAL);

    BpfLoadedProg *p = (*lo)->find_program("map_max_entries");
    REQUIRE(p);
    CHECK(p->verdict().accepted);
    CHECK(p->verdict().map_field_reads);
    CHECK_FALSE(p->runnable());
    CHECK_THAT(p->link_error(), Catch::Contains("reads struct bpf_map fields through a map pointer"));
    BpfTestRunOpts o;
    o.ctx_in.resize(8);
    r = bpf_prog_test_run(*p, o);
    CHECK(r.err < 0);
    CHECK_THAT(r.error, Catch::Contains("reads struct bpf_map fields"));
  });
}
