// SPDX-License-Identifier: GPL-2.0-only
// test/mm/kernfs_lockholder_test.cc: seed 000's lock-holder sample (test/progs/
// kernfs_lockholder.bpf.c) end to end: its SYSCALL program finds the cgroup2 kernfs root's two
// locks through the registered layouts (CO-RE), its fentry/fexit programs count the holds of
// those two locks only, in task storage, and its bpf_memcg_ops.high_policy defers over-high
// handling for a holder, with a ring buffer record per deferral. A privileged loader is needed
// (the addresses are compared and stored); without it the tracking programs are refused.
#include <catch2/catch.hpp>

#include <cstring>

#undef WARN
#include "bpfvm/attach_tracing.h"
#include "bpfvm/kernel_env.h"
#include "bpfvm/ringbuf.h"
#include "bpfvm/runtime.h"
#include "kernel/cgroup.h"
#include "kernel/kernfs/kernfs.h"
#include "mm/bpf_memcg_ops.h"
#include "mm/bpf_memcontrol.h"
#include "mm/memcontrol_internal.h"
#include "mm/mm_types.h"
#include "shim/rwsem.h"
#include "test/mm/bpf_test_util.h"
#include "test/progs/kernfs_lockholder_user.h"
#include "test/support/memcg_env.h"

using namespace umemcg;
using namespace umemcg::test;
using namespace umemcg::progs::kernfs_lockholder;

namespace {

std::unique_ptr<emu::BpfLoadedObject> open_sample(bool privileged) {
  bpf_memcontrol_init();
  emu::BpfLinkOptions lk;
  lk.allow_ptr_leaks = privileged;
  auto lo = emu::BpfLoadedObject::open(bpf_prog_path("kernfs_lockholder.bpf.o"),
                                       emu::bpf_kernel_load_options(), lk);
  INFO(lo.status().message());
  REQUIRE(lo.ok());
  return std::move(*lo);
}

int run_syscall(emu::BpfLoadedObject &lo, const char *name) {
  emu::BpfLoadedProg *p = lo.find_program(name);
  REQUIRE(p);
  emu::BpfTestRunOpts o;
  emu::BpfTestRunResult r = emu::bpf_prog_test_run(*p, o);
  INFO(r.error);
  REQUIRE(r.err == 0);
  return static_cast<int>(r.retval);
}

}  // namespace

TEST_CASE("kernfs_lockholder: only a privileged loader gets the tracking programs",
          "[mm][bpf][kernfs]") {
  auto lo = open_sample(false);
  emu::BpfLoadedProg *p = lo->find_program("before_up_read");
  REQUIRE(p);
  CHECK_FALSE(p->verdict().accepted);
  CHECK(p->verdict().error.find("pointer comparison prohibited") != std::string::npos);
  REQUIRE(lo->find_program("high_policy"));
  CHECK(lo->find_program("high_policy")->verdict().accepted);
}

TEST_CASE("kernfs_lockholder: resolves the two kernfs locks, tracks only them and defers a "
          "holder's over-high handling", "[mm][bpf][kernfs]") {
  MemcgEnv env(v2_params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mm_struct mm;
  auto lo = open_sample(true);
  for (emu::BpfLoadedProg &p : lo->programs()) {
    INFO(p.name() << ": " << p.verdict().error);
    CHECK(p.verdict().accepted);
  }
  env.run([&] {
    emu::mm_attach(&mm, a);
    env.ledger.css_refs[a] += 1;
    current->mm = &mm;
    kernfs_root *kr = root_mem_cgroup->css.cgroup->root->kf_root;
    REQUIRE(kr);
    REQUIRE(run_syscall(*lo, "resolve_locks") == 0);
    auto st = bpf_map_struct<lockholder_state>(*lo, ".bss");
    CHECK(st.kernfs_rwsem == reinterpret_cast<u64>(&kr->kernfs_rwsem));
    CHECK(st.kernfs_supers_rwsem == reinterpret_cast<u64>(&kr->kernfs_supers_rwsem));

    auto links = attach_tracing(*lo);
    CHECK(links.size() == 8);

    // Another rwsem is seen by the hooks but not tracked.
    rw_semaphore other("other");
    down_read(&other);
    up_read(&other);
    st = bpf_map_struct<lockholder_state>(*lo, ".bss");
    CHECK(st.rwsem_ops >= 2);
    CHECK(st.tracked_ops == 0);

    auto link = BpfMemcgOpsLink::attach(*lo, "kernfs_lockholder", a, 0);
    INFO(link.status().message());
    REQUIRE(link.ok());
    page_counter_set_high(&a->memory, 10);

    // Holding kernfs_rwsem: the second batch over high is deferred, with a record.
    down_read(&kr->kernfs_rwsem);
    REQUIRE(env.charge(a, 64) == 0);
    REQUIRE(env.charge(a, 64) == 0);
    up_read(&kr->kernfs_rwsem);
    st = bpf_map_struct<lockholder_state>(*lo, ".bss");
    CHECK(st.tracked_ops == 2);
    CHECK(st.deferred == 1);
    CHECK(st.depth_errors == 0);
    CHECK(current->memcg_nr_pages_over_high == 128);  // the debt is kept
    mem_cgroup_handle_over_high(GFP_KERNEL);            // paid on the way to user mode
    CHECK(current->memcg_nr_pages_over_high == 0);
    clear_bit(TIF_NOTIFY_RESUME, &current->thread_flags);

    emu::RingBuffer rb;
    std::vector<defer_event> evs;
    REQUIRE(rb.add(lo->find_map("events"), [&](const void *data, u32 size) {
      REQUIRE(size == sizeof(defer_event));
      defer_event e;
      std::memcpy(&e, data, sizeof(e));
      evs.push_back(e);
      return 0;
    }) == 0);
    CHECK(rb.consume() == 1);
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].pid == static_cast<u32>(current->pid));
    CHECK(evs[0].cgroup_id == a->css.cgroup->id);
    CHECK(evs[0].nr_pages_over_high == 128);
    env.uncharge(a, 128);

    // Not holding: the handling is inline (the policy answers 0).
    REQUIRE(env.charge(a, 64) == 0);
    REQUIRE(env.charge(a, 64) == 0);
    st = bpf_map_struct<lockholder_state>(*lo, ".bss");
    CHECK(st.deferred == 1);
    CHECK(st.not_deferred == 1);
    CHECK(current->memcg_nr_pages_over_high == 0);
    clear_bit(TIF_NOTIFY_RESUME, &current->thread_flags);
    env.uncharge(a, 128);

    (*link)->detach();
    links.clear();
    current->mm = nullptr;
    emu::mm_attach(&mm, nullptr);
  });
  env.ledger.css_refs[a] -= 1;
  env.release_all();
  env.finish();
}
