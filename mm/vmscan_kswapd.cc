// SPDX-License-Identifier: GPL-2.0-only
// mm/vmscan_kswapd.cc: the node's kswapd thread: its sleep, its wake-up by allocations that find
// the free pages at or below the low watermark, its start and its stop (see vmscan.h).
//
// kswapd() loops: kswapd_try_to_sleep() (once the node is balanced, a nap of HZ/10; if it is
// still balanced after it, a sleep until woken), then balance_pgdat() (mm/vmscan.cc), which
// reclaims until the free pages are above the high watermark or the priority loop ends. An
// allocation in the slow path calls wakeup_kswapd(), which wakes kswapd only when it is asleep
// on kswapd_wait, the node is not hopeless (kswapd_failures below MAX_RECLAIM_RETRIES) and not
// balanced. kswapd runs with PF_MEMALLOC | PF_KSWAPD: its own allocations ignore the
// watermarks, and reclaim counts its pages as PGSCAN_KSWAPD/PGSTEAL_KSWAPD.
//
// Mirrors: mm/vmscan.c (kswapd, kswapd_try_to_sleep, prepare_kswapd_sleep, wakeup_kswapd,
//   kswapd_run, kswapd_stop) (Linux 6.19)
// Emulation: the thread is started by the first wakeup_kswapd() instead of at boot
//   (kswapd_init() does not start it): a machine whose free pages never reach the low
//   watermark runs no kswapd, so its task ids and its simulated schedule are those it had
//   before kswapd was modelled. It is a daemon kthread (shim/kthread.h): the machine's run()
//   does not wait for it, and memcg's shutdown stops it (kswapd_stop).
// kswapd_try_to_sleep() counts KSWAPD_LOW_WMARK_HIT_QUICKLY when an allocation woke it during
// its nap and KSWAPD_HIGH_WMARK_HIT_QUICKLY when the node is not balanced after it (or before
// it); balance_pgdat() counts PAGEOUTRUN (mm/vmstat.h).
// Emulation: no freezer, kcompactd, pfmemalloc_wait or per-CPU vmstat thresholds; the only
//   order is 0 and the only zone is ZONE_NORMAL, so kswapd_highest_zoneidx is not kept.
#include <atomic>

#include "mm/page_alloc.h"
#include "mm/vmscan.h"
#include "mm/vmstat.h"
#include "shim/kthread.h"
#include "shim/wait.h"

namespace umemcg {

namespace {

pglist_data g_node;

// The thread's life: not started, being started by one wakeup_kswapd(), running, stopped.
enum kswapd_state : int { KSWAPD_NONE, KSWAPD_STARTING, KSWAPD_RUNNING, KSWAPD_STOPPED };
std::atomic<int> g_kswapd_state{KSWAPD_NONE};
// Emulation: kswapd is in its sleep until woken (not its nap): emu::kswapd_wait_idle() waits
// for it, woken on g_kswapd_idle_wait.
std::atomic<bool> g_kswapd_sleeping{false};
DECLARE_WAIT_QUEUE_HEAD(g_kswapd_idle_wait);

// prepare_kswapd_sleep(): kswapd may sleep when the node is hopeless or balanced.
bool prepare_kswapd_sleep(pglist_data *pgdat, int order) {
  if (READ_ONCE(pgdat->kswapd_failures) >= MAX_RECLAIM_RETRIES) return true;
  return pgdat_balanced(pgdat, order);
}

// @start: the thread's first call, at the wake-up that started it (see the banner).
void kswapd_try_to_sleep(pglist_data *pgdat, int reclaim_order, bool start) {
  long remaining = 0;
  wait_queue_entry wait;

  if (kthread_should_stop()) return;
  prepare_to_wait(&pgdat->kswapd_wait, &wait, TASK_INTERRUPTIBLE);
  // A short nap first: a wake-up within it means the node went below the low watermark again
  // soon after it was balanced.
  if (prepare_kswapd_sleep(pgdat, reclaim_order)) {
    emu::set_wait_reason("kswapd_wait");
    remaining = schedule_timeout(static_cast<long>(HZ / 10));
    // Woken early: the order to reclaim for is at least the one just done.
    if (remaining && READ_ONCE(pgdat->kswapd_order) < reclaim_order)
      WRITE_ONCE(pgdat->kswapd_order, reclaim_order);
    finish_wait(&pgdat->kswapd_wait, &wait);
    prepare_to_wait(&pgdat->kswapd_wait, &wait, TASK_INTERRUPTIBLE);
  }
  // Still balanced after the nap: sleep until an allocation wakes kswapd.
  if (!remaining && prepare_kswapd_sleep(pgdat, reclaim_order)) {
    if (!kthread_should_stop()) {
      g_kswapd_sleeping.store(true);
      wake_up_all(&g_kswapd_idle_wait);
      emu::set_wait_reason("kswapd_wait");
      schedule();
      g_kswapd_sleeping.store(false);
    }
  } else if (remaining) {
    // Woken during the nap: the low watermark was hit soon after balancing.
    count_vm_event(KSWAPD_LOW_WMARK_HIT_QUICKLY);
  } else if (!start) {
    // Not balanced at the high watermark after the nap (or before it).
    // Emulation: not at the thread's start, which stands for the kernel's kswapd being woken
    // from the sleep it went to at boot (no event there).
    count_vm_event(KSWAPD_HIGH_WMARK_HIT_QUICKLY);
  }
  finish_wait(&pgdat->kswapd_wait, &wait);
}

int kswapd(void *p) {
  auto *pgdat = static_cast<pglist_data *>(p);
  current->flags |= PF_MEMALLOC | PF_KSWAPD;
  // The kernel clears kswapd_order here, before any wake-up; this thread starts at its first
  // wake-up, whose order stays (see the banner).
  bool start = true;
  for (;;) {
    int alloc_order, reclaim_order;
    alloc_order = reclaim_order = READ_ONCE(pgdat->kswapd_order);
  kswapd_try_sleep:
    kswapd_try_to_sleep(pgdat, reclaim_order, start);
    start = false;
    // The order of the allocations that woke it.
    alloc_order = READ_ONCE(pgdat->kswapd_order);
    WRITE_ONCE(pgdat->kswapd_order, 0);
    if (kthread_should_stop()) break;

    reclaim_order = balance_pgdat(pgdat, alloc_order);
    if (reclaim_order < alloc_order) goto kswapd_try_sleep;
  }
  current->flags &= ~(PF_MEMALLOC | PF_KSWAPD);
  return 0;
}

// kswapd_run(): starts the thread, once per boot of the node.
void kswapd_run(pglist_data *pgdat) {
  int expected = KSWAPD_NONE;
  if (!g_kswapd_state.compare_exchange_strong(expected, KSWAPD_STARTING)) return;
  task_struct *t = kthread_run_daemon(kswapd, pgdat, "kswapd0");
  WRITE_ONCE(pgdat->kswapd, t);
  expected = KSWAPD_STARTING;
  // kswapd_stop() ran meanwhile: it saw no thread to stop, so stop it here.
  if (!g_kswapd_state.compare_exchange_strong(expected, KSWAPD_RUNNING)) {
    kthread_stop(t);
    WRITE_ONCE(pgdat->kswapd, nullptr);
  }
}

}  // namespace

pglist_data *node_data() { return &g_node; }

void kswapd_init() {
  // A machine abandoned with kswapd asleep (a failed test) leaves its entry behind.
  init_waitqueue_head(&g_node.kswapd_wait);
  init_waitqueue_head(&g_kswapd_idle_wait);
  g_node.kswapd_order = 0;
  g_node.kswapd_failures = 0;
  g_node.kswapd = nullptr;
  g_kswapd_sleeping.store(false);
  g_kswapd_state.store(KSWAPD_NONE);
  vmscan_sysctl_init();
}

void kswapd_stop() {
  int old = g_kswapd_state.exchange(KSWAPD_STOPPED);
  if (old != KSWAPD_RUNNING) return;
  kthread_stop(READ_ONCE(g_node.kswapd));
  WRITE_ONCE(g_node.kswapd, nullptr);
  wake_up_all(&g_kswapd_idle_wait);
}

void wakeup_kswapd(gfp_t gfp_flags, int order) {
  (void)gfp_flags;  // no cpuset restricts the one zone; no kcompactd to wake for it
  pglist_data *pgdat = &g_node;
  if (!zone_managed_pages()) return;
  if (READ_ONCE(pgdat->kswapd_order) < order) WRITE_ONCE(pgdat->kswapd_order, order);
  if (g_kswapd_state.load() == KSWAPD_NONE) {
    // The first wake-up starts the thread, which checks the node itself (see the banner).
    if (READ_ONCE(pgdat->kswapd_failures) >= MAX_RECLAIM_RETRIES || pgdat_balanced(pgdat, order))
      return;
    kswapd_run(pgdat);
    return;
  }
  // Awake already (reclaiming, or about to).
  if (!waitqueue_active(&pgdat->kswapd_wait)) return;
  // Hopeless node, left to direct reclaim; or nothing to do.
  if (READ_ONCE(pgdat->kswapd_failures) >= MAX_RECLAIM_RETRIES || pgdat_balanced(pgdat, order))
    return;
  wake_up_interruptible(&pgdat->kswapd_wait);
}

namespace emu {
void kswapd_wait_idle() {
  auto idle = [] {
    return g_kswapd_state.load() != KSWAPD_RUNNING || g_kswapd_sleeping.load();
  };
  if (idle()) return;
  wait_event(g_kswapd_idle_wait, idle());
}
}  // namespace emu

}  // namespace umemcg
