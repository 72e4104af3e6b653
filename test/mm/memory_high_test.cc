// SPDX-License-Identifier: GPL-2.0-only
// Tests of memory.high (sections 2.5, 2.6; checklist item 7) and memory events (2.7, item 8).
#include "test/support/memcg_env.h"

#include <chrono>

#include "mm/memcontrol_internal.h"
#include "mm/mm_types.h"
#include "shim/errno.h"
#include "shim/jiffies.h"
#include "shim/preempt.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

struct HighScript {
  int reclaim_calls = 0;
  int progress_calls = 0;
  unsigned long first_nr = 0, last_nr = 0;
  mem_cgroup *targets[64] = {};
  bool in_worker = false;
};
HighScript h;

unsigned long high_reclaim(mem_cgroup *memcg, unsigned long nr, gfp_t, unsigned int, int *) {
  if (h.reclaim_calls < 64) h.targets[h.reclaim_calls] = memcg;
  if (!h.reclaim_calls) h.first_nr = nr;
  h.last_nr = nr;
  h.in_worker = current_work() != nullptr;
  h.reclaim_calls++;
  return h.reclaim_calls <= h.progress_calls ? 1 : 0;
}
bool no_oom(mem_cgroup *, gfp_t, int) { return false; }
const memcg_reclaim_ops high_ops = {high_reclaim, no_oom};

memcg_boot_params params(bool pcstock) {
  memcg_boot_params p = v2_params(pcstock);
  p.ops = &high_ops;
  return p;
}

constexpr unsigned long MiB = 256;  // pages

// The current task pays a debt of @nr pages over high (the return-to-user work of
// mem_cgroup_handle_over_high); returns the machine time that took.
std::uint64_t pay_over_high(unsigned int nr) {
  current->memcg_nr_pages_over_high = nr;
  std::uint64_t t0 = ktime_get_ns();
  __mem_cgroup_handle_over_high(GFP_KERNEL);
  return ktime_get_ns() - t0;
}

}  // namespace

TEST_CASE("memory.high: calculate_high_delay reproduces the kernel comment's table",
          "[mm][memcg][high]") {
  const unsigned long high = 100 * MiB;
  const unsigned long expect[] = {6,   25,  57,  102, 159,  230,  313,  409,  518,
                                  639, 774, 921, 1081, 1254, 1439, 1638, 1849};
  for (int i = 0; i < 17; i++) {
    unsigned long usage = (101 + i) * MiB;
    u64 overage = calculate_overage(usage, high);
    CHECK(calculate_high_delay(nullptr, MEMCG_CHARGE_BATCH, overage) == expect[i]);
  }
  CHECK(calculate_overage(101 * MiB, high) == 10485);
  for (unsigned long m : {118UL, 130UL, 200UL}) {
    unsigned long d = calculate_high_delay(nullptr, 64, calculate_overage(m * MiB, high));
    CHECK(std::min(d, MEMCG_MAX_HIGH_DELAY_JIFFIES) == 2000);
  }
  CHECK(calculate_overage(100 * MiB, high) == 0);  // usage == high is not over
  CHECK(calculate_high_delay(nullptr, 64, 0) == 0);
  CHECK(calculate_overage(2, 0) == (1u << 20));  // high 0 counts as one page
  CHECK(calculate_overage(1, 0) == 0);
  // The penalty scales with the debt in batches.
  CHECK(calculate_high_delay(nullptr, 128, calculate_overage(110 * MiB, high)) == 1278);
}

TEST_CASE("memory.high: a batch charge over high adds the batch to the task's debt",
          "[mm][memcg][high]") {
  for (bool pc : {false, true}) {
    h = HighScript{};
    WarnCheck wc;
    MemcgEnv env(params(pc));
    mem_cgroup *p = env.mkdir(nullptr, "p");
    mem_cgroup *c = env.mkdir(p, "c");
    env.run([&] {
      page_counter_set_high(&p->memory, 10);
      current->memcg_nr_pages_over_high = 0;
      REQUIRE(env.charge(c, 1) == 0);
      CHECK(current->memcg_nr_pages_over_high == 64);  // the batch, once (first level only)
      CHECK(test_bit(TIF_NOTIFY_RESUME, &current->thread_flags));
      CHECK(h.reclaim_calls == 0);  // 64 is not above a batch: nothing synchronous
      REQUIRE(env.charge(c, 5) == 0);  // stock hit: no high check at all
      CHECK(current->memcg_nr_pages_over_high == 64);
      current->memcg_nr_pages_over_high = 0;
      clear_bit(TIF_NOTIFY_RESUME, &current->thread_flags);
    });
    env.release_all();
    env.finish();
  }
}

TEST_CASE("memory.high: a debt above a batch is paid synchronously; throttle on the virtual "
          "clock; a 2 s throttle takes milliseconds", "[mm][memcg][high]") {
  for (bool pc : {false, true}) {
    h = HighScript{};
    WarnCheck wc;
    MemcgEnv env(params(pc));
    mem_cgroup *a = env.mkdir(nullptr, "a");
    mm_struct mm;
    std::uint64_t slept_ns = 0;
    auto wall0 = std::chrono::steady_clock::now();
    env.run([&] {
      emu::mm_attach(&mm, a);
      env.ledger.css_refs[a] += 1;
      current->mm = &mm;
      page_counter_set_high(&a->memory, 10);
      REQUIRE(env.charge(a, 64) == 0);  // debt 64: deferred
      CHECK(h.reclaim_calls == 0);
      std::uint64_t t0 = ktime_get_ns();
      REQUIRE(env.charge(a, 64) == 0);  // debt 128 > 64: synchronous
      slept_ns = ktime_get_ns() - t0;
      CHECK(current->memcg_nr_pages_over_high == 0);  // paid
      current->mm = nullptr;
      clear_bit(TIF_NOTIFY_RESUME, &current->thread_flags);
    });
    auto wall = std::chrono::steady_clock::now() - wall0;
    // 17 reclaim rounds without progress (first with the debt, then 32 each), then the sleep.
    CHECK(h.reclaim_calls == 17);
    CHECK(h.first_nr == 128);
    CHECK(h.last_nr == 32);
    CHECK(memory_events_local_read(a, MEMCG_HIGH) == 17);
    CHECK(slept_ns >= 2000 * NSEC_PER_MSEC);
    CHECK(slept_ns < 2100 * NSEC_PER_MSEC);
    CHECK(std::chrono::duration_cast<std::chrono::milliseconds>(wall).count() < 1000);
    env.run([&] { emu::mm_attach(&mm, nullptr); });
    env.ledger.css_refs[a] -= 1;
    env.release_all();
    env.finish();
  }
}

TEST_CASE("memory.high: reclaim progress keeps reclaiming without counting retries; no sleep "
          "at or under 10 ms; a dying task does not pay", "[mm][memcg][high]") {
  h = HighScript{};
  WarnCheck wc;
  MemcgEnv env(params(false));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mm_struct mm;
  env.run([&] {
    emu::mm_attach(&mm, a);
    current->mm = &mm;
    page_counter_set_high(&a->memory, 10);
    REQUIRE(env.charge(a, 1) == 0);  // usage 64
    h.progress_calls = 5;
    pay_over_high(64);
    CHECK(h.reclaim_calls == 5 + 17);

    // A small overage: penalty <= 10 jiffies, one reclaim round, no sleep.
    h = HighScript{};
    page_counter_charge(&a->memory, 64);  // usage 128
    env.ledger.user_pages[a] += 64;
    page_counter_set_high(&a->memory, 127);  // overage (1<<20)/127 -> 3 ms
    std::uint64_t took = pay_over_high(64);
    CHECK(h.reclaim_calls == 1);
    CHECK(took < NSEC_PER_MSEC);

    // Dying: no reclaim, no sleep, debt cleared.
    h = HighScript{};
    page_counter_set_high(&a->memory, 10);
    current->flags |= PF_EXITING;
    pay_over_high(640);
    current->flags &= ~PF_EXITING;
    CHECK(h.reclaim_calls == 0);
    CHECK(current->memcg_nr_pages_over_high == 0);
    current->mm = nullptr;
    emu::mm_attach(&mm, nullptr);
    clear_bit(TIF_NOTIFY_RESUME, &current->thread_flags);
  });
  env.release_all();
  env.finish();
}

TEST_CASE("memory.high: memory and swap penalties are summed before the 2 s clamp",
          "[mm][memcg][high]") {
  h = HighScript{};
  WarnCheck wc;
  MemcgEnv env(params(false));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  mm_struct mm;
  std::uint64_t slept = 0;
  env.run([&] {
    emu::mm_attach(&mm, a);
    current->mm = &mm;
    // memory: 112M over 100M high -> 921 ms; swap: the same -> 921; sum 1842 (no clamp).
    page_counter_set_high(&a->memory, 100 * MiB);
    page_counter_set_high(&a->swap, 100 * MiB);
    page_counter_charge(&a->memory, 112 * MiB);
    env.ledger.user_pages[a] += 112 * MiB;
    page_counter_charge(&a->swap, 112 * MiB);
    mod_memcg_state(a, MEMCG_SWAP, 112 * MiB);
    CHECK(mem_find_max_overage(a) == calculate_overage(112 * MiB, 100 * MiB));
    slept = pay_over_high(64);
    CHECK(memory_events_local_read(a, MEMCG_SWAP_HIGH) == 17);  // once per round
    CHECK(slept >= 1842 * NSEC_PER_MSEC);
    CHECK(slept < 1850 * NSEC_PER_MSEC);
    // 118M each: 2 x >2000 -> clamped to 2000 total.
    page_counter_charge(&a->memory, 6 * MiB);
    env.ledger.user_pages[a] += 6 * MiB;
    slept = pay_over_high(64);
    CHECK(slept >= 2000 * NSEC_PER_MSEC);
    CHECK(slept < 2010 * NSEC_PER_MSEC);
    page_counter_uncharge(&a->swap, 112 * MiB);
    mod_memcg_state(a, MEMCG_SWAP, -112 * static_cast<long>(MiB));
    current->mm = nullptr;
    emu::mm_attach(&mm, nullptr);
  });
  env.release_all();
  env.finish();
}

TEST_CASE("memory.high: outside a task only memory.high counts and high_work reclaims a batch",
          "[mm][memcg][high]") {
  h = HighScript{};
  WarnCheck wc;
  MemcgEnv env(params(false));
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] {
    page_counter_set_high(&a->memory, 10);
    bool ran = emu::run_in_softirq([&] {
      CHECK(env.charge(a, 1, GFP_ATOMIC) == 0);
      CHECK(current->memcg_nr_pages_over_high == 0);  // the interrupted task does not pay
    });
    CHECK(ran);
    flush_work(&a->high_work);
  });
  CHECK(h.reclaim_calls == 1);
  CHECK(h.first_nr == 64);
  CHECK(h.in_worker);
  CHECK(memory_events_local_read(a, MEMCG_HIGH) == 1);
  env.release_all();
  env.finish();
}

namespace {
int g_policy_calls = 0;
mem_cgroup *g_policy_over = nullptr;
u32 defer_policy(mem_cgroup *, mem_cgroup *over, gfp_t) {
  g_policy_calls++;
  g_policy_over = over;
  return BPF_MEMCG_HIGH_DEFER_INLINE | 0x80;  // bits outside the mask are dropped
}
}  // namespace

TEST_CASE("memory.high: DEFER_INLINE from the high policy hook postpones the debt to the return "
          "to user mode", "[mm][memcg][high]") {
  h = HighScript{};
  WarnCheck wc;
  MemcgEnv env(params(false));
  mem_cgroup *p = env.mkdir(nullptr, "p");
  mem_cgroup *a = env.mkdir(p, "a");
  mm_struct mm;
  env.run([&] { emu::mm_attach(&mm, a); });
  g_policy_calls = 0;
  memcg_set_high_policy(defer_policy);
  unsigned int debt_before_return = 0;
  env.machine().spawn("user", [&] {
    current->mm = &mm;
    {
      emu::KernelEntry k;
      page_counter_set_high(&p->memory, 10);
      REQUIRE(env.charge(a, 64) == 0);
      REQUIRE(env.charge(a, 64) == 0);  // debt 128: the policy defers
      debt_before_return = current->memcg_nr_pages_over_high;
      CHECK(h.reclaim_calls == 0);
    }  // return to user mode: the debt is paid here
    CHECK(current->memcg_nr_pages_over_high == 0);
    current->mm = nullptr;
  }, {.cpu = 1});
  env.machine().run();
  memcg_set_high_policy(nullptr);
  CHECK(g_policy_calls == 1);
  CHECK(g_policy_over == p);  // the first level over high
  CHECK(debt_before_return == 128);
  CHECK(h.reclaim_calls == 17);
  env.run([&] { emu::mm_attach(&mm, nullptr); });
  env.release_all();
  env.finish();
}

TEST_CASE("memory events: hierarchical below the root, local, memory_localevents, v1",
          "[mm][memcg][events]") {
  for (int mode = 0; mode < 3; mode++) {
    WarnCheck wc;
    memcg_boot_params prm = mode == 2 ? v1_params() : v2_params();
    prm.memory_localevents = mode == 1;
    MemcgEnv env(prm);
    mem_cgroup *a = env.mkdir(nullptr, "a");
    mem_cgroup *b = env.mkdir(a, "b");
    mem_cgroup *c = env.mkdir(b, "c");
    env.run([&] {
      memcg_memory_event(c, MEMCG_OOM);
      memcg_memory_event(b, MEMCG_OOM);
      memcg_memory_event(c, MEMCG_SWAP_FAIL);
    });
    CHECK(memory_events_local_read(c, MEMCG_OOM) == 1);
    CHECK(memory_events_local_read(b, MEMCG_OOM) == 1);
    CHECK(memory_events_local_read(a, MEMCG_OOM) == 0);
    CHECK(memory_events_read(root_mem_cgroup, MEMCG_OOM) == 0);  // never counted on the root
    if (mode == 0) {
      CHECK(memory_events_read(c, MEMCG_OOM) == 1);
      CHECK(memory_events_read(b, MEMCG_OOM) == 2);
      CHECK(memory_events_read(a, MEMCG_OOM) == 2);
      CHECK(memory_events_read(a, MEMCG_SWAP_FAIL) == 1);
      // swap events notify memory.swap.events, not events.local
      CHECK(atomic_long_read(&c->events_local_file.notified) == 1);
      CHECK(atomic_long_read(&c->swap_events_file.notified) == 1);
      CHECK(atomic_long_read(&a->events_file.notified) == 2);
    } else {
      CHECK(memory_events_read(c, MEMCG_OOM) == 1);
      CHECK(memory_events_read(b, MEMCG_OOM) == 1);
      CHECK(memory_events_read(a, MEMCG_OOM) == 0);
    }
    env.finish();
  }
}
