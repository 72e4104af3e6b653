// SPDX-License-Identifier: GPL-2.0-only
// test/mm/bpf_memcg_ops_test.cc: cgroup-attached bpf_memcg_ops and fentry/fexit programs on
// the emulator's hook points, end to end with the clang-compiled lock-holder policy
// (test/progs/memcg_policy.bpf.c): a task holding an rwsem charges over memory.high; with the
// policy attached the synchronous over-high handling is deferred to the return to user mode
// (no "violation": handling entered while a lock is held); without it, it is not. Also: the
// dispatcher's OR over the effective array, the re-entrancy guard, attach errors, and a dying
// cgroup.
#include <catch2/catch.hpp>

#include <cstring>

#undef WARN
#include "bpfvm/attach_tracing.h"
#include "bpfvm/kernel_env.h"
#include "bpfvm/map.h"
#include "bpfvm/runtime.h"
#include "mm/bpf_memcg_ops.h"
#include "mm/bpf_memcontrol.h"
#include "mm/memcontrol_internal.h"
#include "mm/mm_types.h"
#include "shim/hooks.h"
#include "shim/rwsem.h"
#include "test/mm/bpf_test_util.h"
#include "test/support/memcg_env.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

int g_reclaims = 0;
unsigned long count_reclaim(mem_cgroup *, unsigned long, gfp_t, unsigned int, int *) {
  g_reclaims++;
  return 0;
}
bool no_oom(mem_cgroup *, gfp_t, int) { return false; }
const memcg_reclaim_ops ops = {count_reclaim, no_oom};

memcg_boot_params params() {
  memcg_boot_params p = v2_params();
  p.ops = &ops;
  return p;
}

std::unique_ptr<emu::BpfLoadedObject> open_policy() { return open_bpf_object("memcg_policy.bpf.o"); }
policy_stats read_stats(emu::BpfLoadedObject &lo) {
  return bpf_map_struct<policy_stats>(lo, ".bss");
}

// Charges 128 pages to a (memory.high 10) while holding a read lock: the second batch makes the
// debt 128 > 64, where the synchronous handling would run; then releases the lock and returns
// to user mode (the deferred debt is paid there).
void charge_under_lock(MemcgEnv &env, mem_cgroup *a, rw_semaphore *sem) {
  down_read(sem);
  REQUIRE(env.charge(a, 64) == 0);
  REQUIRE(env.charge(a, 64) == 0);
  up_read(sem);
  mem_cgroup_handle_over_high(GFP_KERNEL);  // resume_user_mode_work()
  CHECK(current->memcg_nr_pages_over_high == 0);
  clear_bit(TIF_NOTIFY_RESUME, &current->thread_flags);
}

}  // namespace

TEST_CASE("bpf_memcg_ops: the lock-holder policy defers over-high handling out of the lock",
          "[mm][bpf][struct_ops]") {
  MemcgEnv env(params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mm_struct mm;
  auto lo = open_policy();
  rw_semaphore sem("kernfs_rwsem");
  env.run([&] {
    emu::mm_attach(&mm, a);
    env.ledger.css_refs[a] += 1;
    current->mm = &mm;
    page_counter_set_high(&a->memory, 10);
    auto tracing = attach_tracing(*lo);
    CHECK(tracing.size() == 6);

    // Without the policy: the handling runs inside the lock.
    g_reclaims = 0;
    charge_under_lock(env, a, &sem);
    policy_stats s = read_stats(*lo);
    CHECK(s.violations == 1);
    CHECK(s.deferred == 0);
    env.uncharge(a, 128);

    // With the policy attached to a: deferred, paid on return to user mode, no violation.
    auto link = BpfMemcgOpsLink::attach(*lo, "lockholder", a, 0);
    INFO(link.status().message());
    REQUIRE(link.ok());
    CHECK((*link)->attached());
    const int before = g_reclaims;
    charge_under_lock(env, a, &sem);
    s = read_stats(*lo);
    CHECK(s.violations == 1);  // unchanged
    CHECK(s.deferred == 1);
    CHECK(g_reclaims > before);  // the debt was still paid (at the resume)
    // The fentry on the handler saw the lock count drop to 0 before the resume.
    for (auto &t : tracing) CHECK(t->faults() == 0);
    env.uncharge(a, 128);

    // Detached: the handling is inline again.
    (*link)->detach();
    CHECK_FALSE((*link)->attached());
    charge_under_lock(env, a, &sem);
    CHECK(read_stats(*lo).violations == 2);
    env.uncharge(a, 128);

    tracing.clear();  // detach the fentry/fexit programs
    current->mm = nullptr;
    emu::mm_attach(&mm, nullptr);
  });
  env.ledger.css_refs[a] -= 1;
  env.release_all();
  env.finish();
}

TEST_CASE("bpf_memcg_ops: the dispatcher ORs the effective array; guard; dying cgroup",
          "[mm][bpf][struct_ops]") {
  MemcgEnv env(params());
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *c = env.mkdir(p, "c");
  auto lo = open_policy();
  auto lo2 = open_policy();
  std::unique_ptr<BpfMemcgOpsLink> keep;
  env.run([&] {
    auto tracing = attach_tracing(*lo);  // the lock counts live in lo's map
    // Policies on p (MULTI) and c (MULTI): c's effective array runs both.
    auto lp = BpfMemcgOpsLink::attach(*lo, "lockholder", p, CGROUP_BPF_F_ALLOW_MULTI);
    auto lc = BpfMemcgOpsLink::attach(*lo2, "lockholder", c, CGROUP_BPF_F_ALLOW_MULTI);
    REQUIRE((lp.ok() && lc.ok()));
    rw_semaphore sem("s");
    CHECK(bpf_memcg_high_policy(c, c, GFP_KERNEL) == BPF_MEMCG_HIGH_NO_OPINION);
    down_write(&sem);  // only lo's programs count the lock: only p's policy defers
    CHECK(bpf_memcg_high_policy(c, c, GFP_KERNEL) == BPF_MEMCG_HIGH_DEFER_INLINE);
    CHECK(read_stats(*lo).deferred == 1);
    CHECK(read_stats(*lo2).deferred == 0);
    // The re-entrancy guard: a nested call gives no opinion.
    current->in_bpf_memcg = true;
    CHECK(bpf_memcg_high_policy(c, c, GFP_KERNEL) == BPF_MEMCG_HIGH_NO_OPINION);
    current->in_bpf_memcg = false;
    // p's policy is not in the root's effective array.
    CHECK(bpf_memcg_high_policy(root_mem_cgroup, nullptr, GFP_KERNEL) ==
          BPF_MEMCG_HIGH_NO_OPINION);
    up_write(&sem);
    // Attach errors are clear: other flags next to MULTI attachments (-EPERM), no such map,
    // a map that is not a bpf_memcg_ops.
    auto other_flags = BpfMemcgOpsLink::attach(*lo2, "lockholder", c, 0);
    CHECK_THAT(std::string(other_flags.status().message()), Catch::Contains("(-1)"));
    auto nomap = BpfMemcgOpsLink::attach(*lo, "nope", c, 0);
    CHECK(nomap.status().code() == absl::StatusCode::kNotFound);
    auto notops = BpfMemcgOpsLink::attach(*lo, "held", c, 0);
    CHECK_THAT(std::string(notops.status().message()), Catch::Contains("is not a bpf_memcg_ops"));
    tracing.clear();
    lp->reset();
    keep = std::move(*lc);
    css_get(&c->css);  // c stays addressable after its rmdir
  });
  env.ledger.css_refs[c] += 1;
  // Removing c: its attachment becomes defunct; the dispatcher skips the dying cgroup.
  CHECK(env.rmdir(c) == 0);
  env.run([&] {
    CHECK_FALSE(keep->attached());
    CHECK(bpf_memcg_high_policy(c, c, GFP_KERNEL) == BPF_MEMCG_HIGH_NO_OPINION);
    keep.reset();  // detaching a defunct link is harmless
    css_put(&c->css);
  });
  env.ledger.css_refs[c] -= 1;
  env.release_all();
  env.finish();
}

TEST_CASE("bpf_memcg_ops: maps the kernel would refuse do not attach", "[mm][bpf][struct_ops]") {
  MemcgEnv env(params());
  mem_cgroup *a = env.mkdir(nullptr, "a");
  bpf_memcontrol_init();
  env.run([&] {
    auto lo = emu::BpfLoadedObject::open(std::string(UMEMCG_BPF_PROGS_DIR) + "/memcg_ops.bpf.o",
                                         emu::bpf_kernel_load_options());
    INFO(lo.status().message());
    REQUIRE(lo.ok());
    // A plain .struct_ops map has nowhere to register.
    auto plain = BpfMemcgOpsLink::attach(**lo, "memcg_policy", a, 0);
    CHECK(plain.status().code() == absl::StatusCode::kUnimplemented);
    CHECK_THAT(std::string(plain.status().message()), Catch::Contains(".struct_ops.link"));
    // The link map's program verifies: it attaches, and detaches with the link.
    auto linked = BpfMemcgOpsLink::attach(**lo, "memcg_policy_link", a, 0);
    INFO(linked.status().message());
    CHECK(linked.ok());
  });
  env.release_all();
  env.finish();
}

TEST_CASE("bpf_memcontrol: every registered fentry/fexit target has a hook point",
          "[mm][bpf]") {
  bpf_memcontrol_init();
  const auto targets = emu::bpf_kernel_env().tracing_targets();
  CHECK(targets.size() >= 10);
  for (const auto &[name, nargs] : targets) {
    INFO(name);
    emu::HookPoint *hp = emu::HookPoint::find(name.c_str());
    REQUIRE(hp);
    CHECK(hp->nargs() == nargs);
  }
}
