// SPDX-License-Identifier: GPL-2.0-only
// test/mm/bpf_memcontrol_test.cc: memcg's BPF surface: the kfuncs' semantics on a booted
// memory controller (kernel-semantics.md 5.1, 5.5), and a clang-compiled policy object
// (test/progs/memcg_policy.bpf.c) verified against the registered types and run: the
// lock-holder policy's fexit/fentry bookkeeping, high_policy's DEFER_INLINE, the over-high
// violation counter, and bpf_proactive_reclaim from a SYSCALL program.
#include <catch2/catch.hpp>

#include <cstring>

#undef WARN
#include "bpfvm/kernel_env.h"
#include "bpfvm/map.h"
#include "bpfvm/map_local_storage.h"
#include "bpfvm/runtime.h"
#include "mm/bpf_memcontrol.h"
#include "shim/rwsem.h"
#include "test/mm/bpf_test_util.h"
#include "test/support/memcg_env.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

struct ReclaimLog {
  int calls = 0;
  unsigned long nr_pages = 0;
  unsigned int options = 0;
  bool swappiness_given = false;
  int swappiness = 0;
} g_reclaim;

// Stand-in page reclaim: reports the request as reclaimed without touching the counters.
unsigned long record_reclaim(mem_cgroup *, unsigned long nr_pages, gfp_t, unsigned int options,
                             int *swappiness) {
  g_reclaim.calls++;
  g_reclaim.nr_pages = nr_pages;
  g_reclaim.options = options;
  g_reclaim.swappiness_given = swappiness != nullptr;
  g_reclaim.swappiness = swappiness ? *swappiness : 0;
  return nr_pages;
}
bool no_oom(mem_cgroup *, gfp_t, int) { return false; }
const memcg_reclaim_ops record_ops = {record_reclaim, no_oom};

memcg_boot_params params() {
  memcg_boot_params p = v2_params();
  p.ops = &record_ops;
  return p;
}

}  // namespace

TEST_CASE("bpf_memcontrol: a removed cgroup's BPF cgroup storage is freed with it",
          "[mm][bpf]") {
  // A later cgroup may get the same address, the storage's key: it must not find the values.
  WarnCheck wc;
  MemcgEnv env(v2_params());
  auto map = bpf_map_create({BPF_MAP_TYPE_CGRP_STORAGE_, 4, 8, 0, BPF_F_NO_PREALLOC, "cs", -1});
  REQUIRE(map.ok());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mem_cgroup *b = env.mkdir(nullptr, "b");
  const u64 va = 7, vb = 9;
  env.run([&] {
    REQUIRE(sys_cgrp_storage_update(map->get(), reinterpret_cast<u64>(a->css.cgroup), &va) == 0);
    REQUIRE(sys_cgrp_storage_update(map->get(), reinterpret_cast<u64>(b->css.cgroup), &vb) == 0);
  });
  const u64 key_a = reinterpret_cast<u64>(a->css.cgroup);
  CHECK(bpf_local_storage_count(map->get()) == 2);
  REQUIRE(env.rmdir(a) == 0);
  env.run([] { emu::cgroup_flush_releases(); });
  env.run([&] {
    u64 v = 0;
    CHECK(sys_cgrp_storage_lookup(map->get(), key_a, &v) == -ENOENT);
    CHECK(sys_cgrp_storage_lookup(map->get(), reinterpret_cast<u64>(b->css.cgroup), &v) == 0);
    CHECK(v == 9);
  });
  CHECK(bpf_local_storage_count(map->get()) == 1);
  env.run([&] { map->reset(); });
  env.finish();
}

TEST_CASE("bpf_memcontrol: kfuncs on a booted memory controller", "[mm][bpf]") {
  g_reclaim = {};
  MemcgEnv env(params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mem_cgroup *b = env.mkdir(a, "b");
  env.run([&] {
    // Any css of the cgroup leads to its memcg, with a reference.
    const long ref0 = atomic_long_read(&a->css.refcnt);
    mem_cgroup *m = bpf_get_mem_cgroup(&a->css.cgroup->self);
    CHECK(m == a);
    CHECK(atomic_long_read(&a->css.refcnt) == ref0 + 1);
    CHECK(bpf_get_mem_cgroup(&a->css) == a);
    CHECK(atomic_long_read(&a->css.refcnt) == ref0 + 2);
    bpf_put_mem_cgroup(m);
    bpf_put_mem_cgroup(m);
    CHECK(atomic_long_read(&a->css.refcnt) == ref0);
    CHECK(bpf_get_mem_cgroup(nullptr) == nullptr);
    // The root needs no reference; a put is harmless.
    CHECK(bpf_get_root_mem_cgroup() == root_mem_cgroup);
    bpf_put_mem_cgroup(bpf_get_root_mem_cgroup());

    // Usage in bytes: the page counter, stock included.
    REQUIRE(env.charge(a, 10) == 0);
    CHECK(bpf_mem_cgroup_usage(a) == page_counter_read(&a->memory) * PAGE_SIZE);
    CHECK(bpf_mem_cgroup_usage(a) >= 10 * PAGE_SIZE);
    env.uncharge(a, 10);

    // memory.events (hierarchical: counted up to, not including, the root); out-of-range
    // ids give -1, negative ones too.
    memcg_memory_event(b, MEMCG_HIGH);
    CHECK(bpf_mem_cgroup_memory_events(b, MEMCG_HIGH) == 1);
    CHECK(bpf_mem_cgroup_memory_events(a, MEMCG_HIGH) == 1);
    CHECK(bpf_mem_cgroup_memory_events(a, MEMCG_MAX) == 0);
    CHECK(bpf_mem_cgroup_memory_events(root_mem_cgroup, MEMCG_HIGH) == 0);
    CHECK(bpf_mem_cgroup_memory_events(a, MEMCG_NR_MEMORY_EVENTS) == (unsigned long)-1);
    CHECK(bpf_mem_cgroup_memory_events(a, -1) == (unsigned long)-1);

    // bpf_proactive_reclaim: argument checks, then one pass of at most a charge batch.
    CHECK(bpf_proactive_reclaim(a, PAGE_SIZE, 202) == -EINVAL);
    CHECK(bpf_proactive_reclaim(a, PAGE_SIZE, -2) == -EINVAL);
    CHECK(bpf_proactive_reclaim(a, PAGE_SIZE - 1, 60) == -EINVAL);
    CHECK(g_reclaim.calls == 0);
    CHECK(bpf_proactive_reclaim(a, 1 << 20, 201) == (long)(MEMCG_CHARGE_BATCH * PAGE_SIZE));
    CHECK(g_reclaim.nr_pages == MEMCG_CHARGE_BATCH);
    CHECK(g_reclaim.options == (MEMCG_RECLAIM_MAY_SWAP | MEMCG_RECLAIM_PROACTIVE));
    CHECK((g_reclaim.swappiness_given && g_reclaim.swappiness == 201));
    CHECK(bpf_proactive_reclaim(a, 3 * PAGE_SIZE + 1, -1) == (long)(3 * PAGE_SIZE));
    CHECK(g_reclaim.nr_pages == 3);
    CHECK_FALSE(g_reclaim.swappiness_given);  // -1: the memcg's own swappiness
  });
  env.finish();
}

TEST_CASE("bpf_memcontrol: a lock-holder policy object verifies and runs", "[mm][bpf]") {
  g_reclaim = {};
  bpf_memcontrol_init();
  MemcgEnv env(params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    auto lo = emu::BpfLoadedObject::open(bpf_prog_path("memcg_policy.bpf.o"),
                                         emu::bpf_kernel_load_options());
    INFO(lo.status().message());
    REQUIRE(lo.ok());
    for (emu::BpfLoadedProg &p : (*lo)->programs()) {
      INFO(p.name() << ": " << p.verdict().error << "\n" << p.verdict().log);
      CHECK(p.fast());  // every program verified: the fast interpreter runs them
    }
    auto run = [&](const char *name, u64 arg0, u64 arg1 = 0) {
      emu::BpfLoadedProg *p = (*lo)->find_program(name);
      REQUIRE(p);
      u64 args[2] = {arg0, arg1};
      emu::BpfProgRunResult r = p->run(args, sizeof(args), /*ctx_rdonly=*/true);
      REQUIRE(r.ok);
      return r.r0;
    };
    rw_semaphore sem("test_sem");
    bpf_memcg_ctx mctx{};
    mctx.memcg = a;
    mctx.task = current;
    mctx.nr_pages_over_high = 70;
    const u64 sem_arg = (u64)(uintptr_t)&sem, ctx_arg = (u64)(uintptr_t)&mctx;

    // No lock held: no opinion, and over-high handling is no violation.
    CHECK(run("high_policy", ctx_arg) == BPF_MEMCG_HIGH_NO_OPINION);
    CHECK(run("on_handle_over_high", GFP_KERNEL) == 0);
    // down_read returned: the task holds a lock; the policy defers inline handling.
    CHECK(run("after_down_read", sem_arg) == 0);
    CHECK(run("high_policy", ctx_arg) == BPF_MEMCG_HIGH_DEFER_INLINE);
    CHECK(run("on_handle_over_high", GFP_KERNEL) == 0);  // counted: handled while holding
    // A failed trylock holds nothing more; a successful one does.
    CHECK(run("after_down_read_trylock", sem_arg, 0) == 0);
    CHECK(run("after_down_read_trylock", sem_arg, 1) == 0);
    CHECK(run("before_up_read", sem_arg) == 0);
    CHECK(run("high_policy", ctx_arg) == BPF_MEMCG_HIGH_DEFER_INLINE);
    CHECK(run("before_up_read", sem_arg) == 0);
    CHECK(run("high_policy", ctx_arg) == BPF_MEMCG_HIGH_NO_OPINION);
    // An unbalanced up does not underflow.
    CHECK(run("before_up_write", sem_arg) == 0);
    CHECK(run("high_policy", ctx_arg) == BPF_MEMCG_HIGH_NO_OPINION);

    // The cgroup iterator: usage and memory.high events through the kfuncs, the final NULL call.
    memcg_memory_event(a, MEMCG_HIGH);
    struct {
      bpf_iter_meta *meta;
      cgroup *cgrp;
    } it_ctx;
    bpf_iter_meta meta{};
    it_ctx = {&meta, a->css.cgroup};
    emu::BpfLoadedProg *iter = (*lo)->find_program("cgroup_usage");
    REQUIRE(iter);
    CHECK(iter->run(&it_ctx, sizeof(it_ctx), true).r0 == 0);
    it_ctx.cgrp = nullptr;
    CHECK(iter->run(&it_ctx, sizeof(it_ctx), true).r0 == 0);

    // bpf_proactive_reclaim from the SYSCALL program: 16 pages asked, one pass.
    emu::BpfTestRunOpts o;
    emu::BpfTestRunResult tr = emu::bpf_prog_test_run(*(*lo)->find_program("reclaim_root"), o);
    INFO(tr.error);
    CHECK(tr.err == 0);
    CHECK(tr.retval == 16);
    CHECK(g_reclaim.nr_pages == 16);

    const policy_stats s = bpf_map_struct<policy_stats>(**lo, ".bss");
    CHECK(s.deferred == 2);
    CHECK(s.violations == 1);
    CHECK(s.high_events == 1);
    CHECK(s.reclaimed == 16 * (s64)PAGE_SIZE);
  });
  env.finish();
}

TEST_CASE("bpf_memcontrol: the loader's test object is refused where the kernel refuses it",
          "[mm][bpf]") {
  bpf_memcontrol_init();
  MemcgEnv env(params());
  env.run([&] {
    auto lo = emu::BpfLoadedObject::open(bpf_prog_path("memcg_ops.bpf.o"),
                                         emu::bpf_kernel_load_options());
    INFO(lo.status().message());
    REQUIRE(lo.ok());
    auto verdict = [&](const char *name) {
      emu::BpfLoadedProg *p = (*lo)->find_program(name);
      REQUIRE(p);
      return p->verdict();
    };
    CHECK(verdict("high_policy").accepted);
    CHECK(verdict("charged").error == "struct_ops type bpf_memcg_ops has no function member charged");
    CHECK(verdict("over_high").error == "__mem_cgroup_handle_over_high is not sleepable");
    CHECK_FALSE(verdict("reclaim").accepted);
    CHECK(verdict("dump_cgroup").accepted);
    // A refused program is not run.
    emu::BpfLoadedProg *charged = (*lo)->find_program("charged");
    u64 args[2] = {0, 0};
    CHECK_FALSE(charged->runnable());
    CHECK_FALSE(charged->run(args, sizeof(args), true).ok);
  });
  env.finish();
}

TEST_CASE("bpf_memcontrol: a program built with CO-RE against other layouts reads the "
          "emulator's fields", "[mm][bpf][core]") {
  bpf_memcontrol_init();
  MemcgEnv env(params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    auto lo = emu::BpfLoadedObject::open(bpf_prog_path("memcg_core.bpf.o"),
                                         emu::bpf_kernel_load_options());
    INFO(lo.status().message());
    REQUIRE(lo.ok());
    emu::BpfLoadedProg *p = (*lo)->find_program("core_high_policy");
    REQUIRE(p);
    INFO(p->verdict().error << "\n" << p->verdict().log);
    REQUIRE(p->fast());
    std::strncpy(current->comm, "corecheck", TASK_COMM_LEN - 1);
    bpf_memcg_ctx mctx{};
    mctx.memcg = a;
    mctx.task = current;
    mctx.cgroup_id = 4242;
    mctx.nr_pages_over_high = 65;
    u64 args[1] = {(u64)(uintptr_t)&mctx};
    emu::BpfProgRunResult r = p->run(args, sizeof(args), true);
    REQUIRE(r.ok);
    CHECK(r.r0 == 1);  // 65 > 64
    bpf_map *bss = (*lo)->find_map(".bss");
    REQUIRE(bss);
    std::vector<u8> v(bss->value_size);
    u32 zero = 0;
    REQUIRE(sys_map_lookup_elem(bss, &zero, v.data()) == 0);
    u64 seen[7];
    REQUIRE(v.size() >= sizeof(seen));
    std::memcpy(seen, v.data(), sizeof(seen));
    CHECK(seen[0] == (u64)current->pid);
    CHECK(seen[1] == (u64)current->tgid);
    CHECK(seen[2] == 65);
    CHECK(seen[3] == 4242);
    CHECK(seen[4] == 0);  // the emulator's mem_cgroup has no such field
    CHECK(seen[5] == 0);
    CHECK(seen[6] == (u64)'c');
  });
  env.finish();
}
