// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_high.cc: memory.high: the over-high check after a batch charge, the debt on the
// task, reclaim_high, the throttling penalty and the return-to-user handler.
//
// Mirrors: mm/memcontrol.c (Linux 6.19): the memory.high part of try_charge_memcg,
//   high_work_func, reclaim_high, calculate_overage, mem_find_max_overage,
//   swap_find_max_overage, calculate_high_delay, __mem_cgroup_handle_over_high
// The policy hook before the synchronous handling is bpf_memcg_high_policy() of the posted
// bpf_memcg_ops series (not upstream): see memcg_set_high_policy().
// Emulation: psi_memstall_enter/leave are not modelled.
// Emulation: a boot option warns once when a high_policy defers a debt above a limit
//   (memcg_boot_params::high_debt_limit).
// Emulation: the over-high check evaluates in_task() only at a level over its memory or swap
//   high limit, not once per level, and keeps its rare branches (the debt, high_work, the
//   synchronous payment) out of line.
// Emulation: the throttle sleep is schedule_timeout_killable() on the machine clock: real time
//   in native mode, virtual time in simulated mode.
#include <algorithm>
#include <atomic>

#include "mm/memcontrol_internal.h"
#include "mm/mm_types.h"
#include "shim/bug.h"
#include "shim/hooks.h"
#include "shim/jiffies.h"
#include "shim/preempt.h"

namespace umemcg {

namespace memcg_internal {
unsigned long g_high_debt_limit = 0;
}  // namespace memcg_internal

namespace {
std::atomic<memcg_high_policy_fn> g_high_policy{nullptr};
emu::HookPoint hp_high_policy("memcg_high_policy", 3);
emu::HookPoint hp_handle_over_high("__mem_cgroup_handle_over_high", 1);
}  // namespace

memcg_high_policy_fn memcg_set_high_policy(memcg_high_policy_fn fn) {
  return g_high_policy.exchange(fn, std::memory_order_acq_rel);
}

namespace {

// The synchronous part of memcg_check_high(): the debt exceeds a batch and the context may
// reclaim. Out of line: it is rare, and the walk before it then needs no stack frame.
[[gnu::noinline]] void memcg_high_pay(mem_cgroup *charged, mem_cgroup *over_limit,
                                      gfp_t gfp_mask) {
  // bpf_memcg_ops.high_policy: DEFER_INLINE keeps the debt for the return to user mode.
  UMEMCG_FENTRY(hp_high_policy, reinterpret_cast<std::uint64_t>(charged),
                reinterpret_cast<std::uint64_t>(over_limit), gfp_mask);
  if (memcg_high_policy_fn fn = g_high_policy.load(std::memory_order_acquire)) {
    u32 req = fn(charged, over_limit, gfp_mask) & BPF_MEMCG_HIGH_VALID_MASK;
    UMEMCG_FEXIT(hp_high_policy, req, reinterpret_cast<std::uint64_t>(charged),
                 reinterpret_cast<std::uint64_t>(over_limit), gfp_mask);
    if (req & BPF_MEMCG_HIGH_DEFER_INLINE) {
      const unsigned long limit = memcg_internal::g_high_debt_limit;
      WARN_ONCE(limit && current->memcg_nr_pages_over_high > limit,
                "memcg: a high_policy deferred a memory.high debt of more than %lu pages", limit);
      return;
    }
  }
  __mem_cgroup_handle_over_high(gfp_mask);
}

// Reclaim also inside the kernel to keep the overrun small (the return path rechecks): when
// the debt exceeds a batch and the context may reclaim.
inline bool memcg_high_debt_due(gfp_t gfp_mask) {
  return current->memcg_nr_pages_over_high > MEMCG_CHARGE_BATCH &&
         !(current->flags & PF_MEMALLOC) && gfpflags_allow_blocking(gfp_mask);
}

// A level over its high limit: in a task the batch becomes debt on current; outside a task
// (memory.high only) the level's high_work reclaims. Then the debt check. Out of line for the
// same reason.
[[gnu::noinline]] void memcg_high_exceeded(mem_cgroup *charged, mem_cgroup *memcg, bool task,
                                           gfp_t gfp_mask, unsigned int batch) {
  mem_cgroup *over_limit = nullptr;
  if (task) {
    // The whole batch: the pages stocked with it will be used by this cgroup soon.
    current->memcg_nr_pages_over_high += batch;
    set_notify_resume(current);
    over_limit = memcg;
  } else {
    schedule_work(&memcg->high_work);
  }
  if (memcg_high_debt_due(gfp_mask)) memcg_high_pay(charged, over_limit, gfp_mask);
}

}  // namespace

/**
 * memcg_check_high - the memory.high check after a batch was charged to @memcg
 * @memcg: the charged memcg
 * @gfp_mask: the charge's context
 * @batch: pages actually charged (the batch, not the request)
 *
 * Finds the first level, from @memcg up to the root, whose memory or swap usage is above its
 * high limit. In a task, the whole batch becomes debt on current, paid on return to user mode,
 * or at once if the debt exceeds a batch and the context may block. Outside a task (softirq
 * socket receive) only memory.high counts, and the level's high_work reclaims instead.
 */
void memcg_check_high(mem_cgroup *memcg, gfp_t gfp_mask, unsigned int batch) {
  mem_cgroup *charged = memcg;

  do {
    bool mem_high = page_counter_read(&memcg->memory) > READ_ONCE(memcg->memory.high);
    bool swap_high = page_counter_read(&memcg->swap) > READ_ONCE(memcg->swap.high);

    if (unlikely(mem_high || swap_high)) {
      // Do not make a random interrupted task pay: outside a task only memory.high counts.
      // Emulation: in_task() is read only for a level over one of its limits (the context
      //   cannot change during the walk, and the shim's in_task() reads two depths); the
      //   levels it decides for are the kernel's.
      const bool task = in_task();
      if (mem_high || task) {
        memcg_high_exceeded(charged, memcg, task, gfp_mask, batch);
        return;
      }
    }
  } while ((memcg = parent_mem_cgroup(memcg)));

  // No level is over high; a debt left from earlier charges is still paid when due.
  if (unlikely(memcg_high_debt_due(gfp_mask))) memcg_high_pay(charged, nullptr, gfp_mask);
}

/*
 * Reclaims @nr_pages from every level above its high limit, from @memcg up to (excluding) the
 * root, raising a MEMCG_HIGH event on each such level. Returns the total reclaimed.
 */
unsigned long reclaim_high(mem_cgroup *memcg, unsigned int nr_pages, gfp_t gfp_mask) {
  unsigned long nr_reclaimed = 0;

  do {
    if (page_counter_read(&memcg->memory) <= READ_ONCE(memcg->memory.high)) continue;
    memcg_memory_event(memcg, MEMCG_HIGH);
    nr_reclaimed += try_to_free_mem_cgroup_pages(memcg, nr_pages, gfp_mask,
                                                 MEMCG_RECLAIM_MAY_SWAP, nullptr);
  } while ((memcg = parent_mem_cgroup(memcg)) && !mem_cgroup_is_root(memcg));
  return nr_reclaimed;
}

// high_work: reclaim one batch for an over-high memcg charged from interrupt context. No
// throttling: a worker has no task to slow down.
void high_work_func(work_struct *work) {
  mem_cgroup *memcg = container_of(work, mem_cgroup, high_work);
  reclaim_high(memcg, MEMCG_CHARGE_BATCH, GFP_KERNEL);
}

/*
 * How far usage is above high, as a fixed-point fraction of high (2^20 == 100%). A high of 0
 * is treated as one page so that the division is defined.
 */
u64 calculate_overage(unsigned long usage, unsigned long high) {
  if (usage <= high) return 0;
  high = std::max(high, 1UL);
  u64 overage = usage - high;
  overage <<= MEMCG_DELAY_PRECISION_SHIFT;
  return overage / high;
}

// The largest memory overage of @memcg and its ancestors, the root excluded.
u64 mem_find_max_overage(mem_cgroup *memcg) {
  u64 max_overage = 0;
  do {
    u64 overage =
        calculate_overage(page_counter_read(&memcg->memory), READ_ONCE(memcg->memory.high));
    max_overage = std::max(overage, max_overage);
  } while ((memcg = parent_mem_cgroup(memcg)) && !mem_cgroup_is_root(memcg));
  return max_overage;
}

// The same for swap; each level above swap.high raises MEMCG_SWAP_HIGH.
u64 swap_find_max_overage(mem_cgroup *memcg) {
  u64 max_overage = 0;
  do {
    u64 overage = calculate_overage(page_counter_read(&memcg->swap), READ_ONCE(memcg->swap.high));
    if (overage) memcg_memory_event(memcg, MEMCG_SWAP_HIGH);
    max_overage = std::max(overage, max_overage);
  } while ((memcg = parent_mem_cgroup(memcg)) && !mem_cgroup_is_root(memcg));
  return max_overage;
}

/*
 * The throttle in jiffies for @nr_pages of debt: quadratic in the overage, so a small overrun
 * is barely felt and a large one is stopped hard; scaled linearly by the debt in batches.
 */
unsigned long calculate_high_delay(mem_cgroup *, unsigned int nr_pages, u64 max_overage) {
  if (!max_overage) return 0;
  u64 penalty_jiffies = max_overage * max_overage * HZ;
  penalty_jiffies >>= MEMCG_DELAY_PRECISION_SHIFT;
  penalty_jiffies >>= MEMCG_DELAY_SCALING_SHIFT;
  // Scale by how much the task allocated over high, in batches.
  return static_cast<unsigned long>(penalty_jiffies * nr_pages / MEMCG_CHARGE_BATCH);
}

/**
 * __mem_cgroup_handle_over_high - pay current's memory.high debt
 * @gfp_mask: reclaim context
 *
 * Reclaims from the task's own memcg hierarchy (not necessarily the one charged), then
 * throttles by the penalty. Reclaim repeats while it makes progress and the penalty is above
 * 10 ms; the task sleeps only after 16 rounds without progress in total. A dying task does not
 * pay. A fatal signal ends the sleep.
 */
void __mem_cgroup_handle_over_high(gfp_t gfp_mask) {
  unsigned int nr_pages = current->memcg_nr_pages_over_high;
  int nr_retries = MAX_RECLAIM_RETRIES;
  bool in_retry = false;

  UMEMCG_FENTRY(hp_handle_over_high, gfp_mask);
  mem_cgroup *memcg = get_mem_cgroup_from_mm(current->mm);
  current->memcg_nr_pages_over_high = 0;

retry_reclaim:
  // An exiting task will free its memory soon; do not make it wait.
  if (task_is_dying()) goto out;

  {
    // Only a small batch per retry: progress is checked between rounds.
    unsigned long nr_reclaimed =
        reclaim_high(memcg, in_retry ? static_cast<unsigned int>(SWAP_CLUSTER_MAX) : nr_pages,
                     gfp_mask);

    // Memory and swap penalties add up, and the sum is clamped.
    unsigned long penalty_jiffies = calculate_high_delay(memcg, nr_pages,
                                                         mem_find_max_overage(memcg));
    penalty_jiffies += calculate_high_delay(memcg, nr_pages, swap_find_max_overage(memcg));
    penalty_jiffies = std::min(penalty_jiffies, MEMCG_MAX_HIGH_DELAY_JIFFIES);

    // Under 10 ms is not worth a sleep.
    if (penalty_jiffies <= HZ / 100) goto out;

    // Progress: keep reclaiming without counting a retry.
    if (nr_reclaimed || nr_retries--) {
      in_retry = true;
      goto retry_reclaim;
    }

    schedule_timeout_killable(static_cast<long>(penalty_jiffies));
  }
out:
  css_put(&memcg->css);
  UMEMCG_FEXIT(hp_handle_over_high, 0, gfp_mask);
}

}  // namespace umemcg
