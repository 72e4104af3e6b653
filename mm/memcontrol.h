// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol.h: struct mem_cgroup, memcg boot, the charge and uncharge entry points.
//
// A mem_cgroup is the memory controller's css of one cgroup: its page counters (memory, swap on
// v2, memsw and kmem on v1), memory events, the high_work item and its obj_cgroup. Pages are
// charged by try_charge_memcg(), which batches through a per-CPU stock; two stock designs exist
// side by side (chosen at boot): the 6.19 memcg stock (mm/memcontrol_stock.cc) and the
// page_counter stock of seed 003 (mm/page_counter_stock.cc). See docs/charge-path.md.
//
// Mirrors: include/linux/memcontrol.h, mm/memcontrol.c, mm/memcontrol-v1.h (Linux 6.19)
// Emulation: swap and memsw are two separate counters (the kernel overlays them in a union; on
//   v1 the swap counter is simply unused and always 0, so every test of swap.high stays false).
// Statistics (memory.stat: per-CPU updates, rstat flushing, hierarchical and local readers)
//   are declared in mm/memcontrol_stat.h, which this header includes; see its banner for the
//   emulated kernel config and the one-node lruvec.
// Emulation: a task's memcg is its mm's memcg (mm_struct::memcg, set by emu::mm_attach); the
//   kernel finds it through mm->owner's css_set. Tasks without an mm belong to the root.
// Emulation: page/LRU reclaim and the OOM killer are reached through memcg_reclaim_ops (set at
//   boot). The defaults are the reclaim model (mm/vmscan.cc: the per-memcg LRU of the folios
//   that emulated processes and the page cache hold) and the OOM killer (mm/oom_kill.cc).
//   Tests may install stand-ins to drive the charge path's branches directly.
#pragma once

#include <cstdint>

#include "kernel/cgroup.h"
#include "mm/cost_model.h"
#include "mm/memcontrol_stat.h"
#include "mm/mmzone.h"
#include "mm/page_counter.h"
#include "mm/vmpressure.h"
#include "shim/atomic.h"
#include "shim/bug.h"
#include "shim/gfp.h"
#include "shim/list.h"
#include "shim/sched.h"
#include "shim/spinlock.h"
#include "shim/thread_annotations.h"
#include "shim/types.h"
#include "shim/workqueue.h"

namespace umemcg {

inline constexpr unsigned int MEMCG_CHARGE_BATCH = 64;
inline constexpr int MAX_RECLAIM_RETRIES = 16;
inline constexpr unsigned long SWAP_CLUSTER_MAX = 32;
inline constexpr int PAGE_ALLOC_COSTLY_ORDER = 3;
inline constexpr unsigned int MEMCG_RECLAIM_MAY_SWAP = 1u << 1;
inline constexpr unsigned int MEMCG_RECLAIM_PROACTIVE = 1u << 2;
inline constexpr unsigned long MEMCG_MAX_HIGH_DELAY_JIFFIES = 2 * 1000;  // 2 * HZ
inline constexpr int MEMCG_DELAY_PRECISION_SHIFT = 20;
inline constexpr int MEMCG_DELAY_SCALING_SHIFT = 14;
inline constexpr int MEM_CGROUP_ID_MAX = 65535;
static_assert(MEMCG_CHARGE_BATCH <= S8_MAX, "stock slot counts are u8");

enum memcg_memory_event {
  MEMCG_LOW,
  MEMCG_HIGH,
  MEMCG_MAX,
  MEMCG_OOM,
  MEMCG_OOM_KILL,
  MEMCG_OOM_GROUP_KILL,
  MEMCG_SWAP_HIGH,
  MEMCG_SWAP_MAX,
  MEMCG_SWAP_FAIL,
  MEMCG_SOCK_THROTTLED,
  MEMCG_NR_MEMORY_EVENTS,
};

struct obj_cgroup;
struct memcg_stats;
struct memcg_stats_pcpu;

// The per-open-file state of memory.peak and memory.swap.peak (the kernel's cgroup_of_peak):
// OFP_PEAK_UNSET until the file's first write, then the usage at its last reset, raised by
// other files' resets. Linked on its memcg's peak list from the first write to release.
// Emulation: a two-pointer intrusive list instead of list_head.
inline constexpr unsigned long OFP_PEAK_UNSET = ~0UL;
struct cgroup_of_peak {
  unsigned long value = OFP_PEAK_UNSET;
  cgroup_of_peak *prev = nullptr;
  cgroup_of_peak *next = nullptr;
};

// Guards every memcg's objcg_list and every objcg's list and emu_node (mm/memcontrol_kmem.cc).
extern spinlock_t objcg_lock;

struct mem_cgroup {
  cgroup_subsys_state css;

  // Private id (swap records, 1..65535) and the references on it: one while online, one per
  // swapped-out page. The id reference set holds one css reference.
  int id = 0;
  atomic_long_t id_ref;

  // Accounted resources.
  page_counter memory;  // both hierarchies
  page_counter swap;    // v2 only
  page_counter memsw;   // v1 only: memory + swap
  page_counter kmem;    // v1 only: kernel memory (never limited in 6.19)
  page_counter tcpmem;  // v1 only: socket buffers

  // memory.high reclaim from interrupt context (socket receive).
  work_struct high_work;

  // Reclaim efficiency and its listeners (mm/vmpressure.h).
  struct vmpressure vmpressure;

  // memory.events (hierarchical) and memory.events.local.
  atomic_long_t memory_events[MEMCG_NR_MEMORY_EVENTS];
  atomic_long_t memory_events_local[MEMCG_NR_MEMORY_EVENTS];
  cgroup_file events_file;
  cgroup_file events_local_file;
  cgroup_file swap_events_file;

  // Statistics (mm/memcontrol_stat.h): the aggregates (memcg_vmstats and the lruvec's
  // lruvec_stats) and one pointer per CPU to this memcg's running totals on that CPU.
  // Emulation: both are allocated on the memcg's first statistics update (on the CPU that makes
  // it: see memcontrol_stat.cc), not at css_alloc; nullptr reads as all zeros. Only mm/
  // memcontrol_stat.cc touches them.
  memcg_stats *stats = nullptr;
  memcg_stats_pcpu **stats_pcpu = nullptr;  // nr_cpu_ids entries, allocated at css_alloc

  // kmem: the current objcg (nullptr once offline), the objcgs of offline descendants
  // reparented to this memcg (linked through obj_cgroup::list), and the objcg this memcg got
  // at online.
  obj_cgroup *objcg = nullptr;
  list_head objcg_list GUARDED_BY(objcg_lock);
  obj_cgroup *orig_objcg = nullptr;

  // Emulation: pages freed descendants left in this memcg's counters (memory, memsw, swap);
  // bookkeeping for the invariant checker only.
  atomic_long_t emu_orphaned[3];

  // The LRU of the machine's one node, the reclaim iterator and the all-memcg tree links
  // (mm/mmzone.h, mm/vmscan.cc).
  mem_cgroup_per_node nodeinfo;

  // Control-file state (mm/memcontrol_files.cc, mm/memcontrol_v1_files.cc).
  int swappiness = 60;
  bool oom_group = false;
  unsigned long zswap_max = PAGE_COUNTER_MAX;
  // memory.peak / memory.swap.peak: the open files that have written a reset, each on the list
  // of its counter (memory_peaks, swap_peaks), under peaks_lock.
  spinlock_t peaks_lock{0, "peaks_lock"};
  cgroup_of_peak *memory_peaks GUARDED_BY(peaks_lock) = nullptr;
  cgroup_of_peak *swap_peaks GUARDED_BY(peaks_lock) = nullptr;
  // v1: memory.soft_limit_in_bytes (pages) and memory.oom_control's oom_kill_disable.
  unsigned long soft_limit = PAGE_COUNTER_MAX;
  bool oom_kill_disable = false;
  // v1: cgroup.event_control registrations, usage thresholds, OOM notification and the page
  // event ratelimit (mm/memcontrol_v1_events.h); nullptr on v2.
  struct memcg1_events *v1_events = nullptr;
};

// How page and LRU reclaim and the OOM killer are reached (see the banner).
struct memcg_reclaim_ops {
  // try_to_free_mem_cgroup_pages(): pages reclaimed from memcg's subtree.
  unsigned long (*try_to_free_mem_cgroup_pages)(mem_cgroup *memcg, unsigned long nr_pages,
                                                gfp_t gfp_mask, unsigned int reclaim_options,
                                                int *swappiness);
  // out_of_memory() constrained to memcg: true if a victim was chosen (or one is already dying).
  bool (*out_of_memory)(mem_cgroup *memcg, gfp_t gfp_mask, int order);
};

enum class memcg_stock_design { memcg_stock, page_counter_stock };

struct memcg_boot_params {
  bool v1 = false;  // cgroup v1 hierarchy (memsw accounting), else v2
  memcg_stock_design stock = memcg_stock_design::memcg_stock;
  bool memory_localevents = false;    // cgroup2 mount option
  bool memory_recursiveprot = false;  // cgroup2 mount option
  // Emulation: notifications delivered without kernfs_rwsem (the proposed upstream change;
  // CGRP_ROOT_EMU_KERNFS_NOTIFY_NO_RWSEM).
  bool kernfs_notify_no_rwsem = false;
  const memcg_reclaim_ops *ops = nullptr;  // nullptr: the defaults (see the banner)
  // Emulation: a debug check of the bpf_memcg_ops series: warn once when a high_policy defers
  // (DEFER_INLINE) a task's memory.high debt above this many pages (0: never). Without a
  // policy the charge path pays a debt once it passes MEMCG_CHARGE_BATCH (a blocking charge
  // outside reclaim), so no task carries more than two batches into its next charge.
  unsigned long high_debt_limit = 0;
  // Pages of the machine's swap device (mm/swapfile.h), swapped on at boot; 0: no swap device.
  unsigned long swap_pages = 0;
  // The machine's RAM in pages (mm/page_alloc.h): every folio of the memory model takes its
  // pages from it; running out reclaims globally and then runs the global OOM killer.
  // 0: DEFAULT_TOTALRAM_PAGES (4 GiB).
  unsigned long totalram_pages = 0;
  // The machine time the memory model charges in simulated mode (mm/cost_model.h); the
  // built-in table unless the machine boots with another (`umemcg sh --costs FILE`).
  emu::CostModel costs;
};

// --- globals ---------------------------------------------------------------------------------

extern mem_cgroup *root_mem_cgroup;
extern cgroup_subsys memory_cgrp_subsys;

namespace memcg_internal {
// Read on every charge: the v1 flag and the stock design, set once at boot.
extern bool g_v1;
extern bool g_pcstock;
// memcg_boot_params::high_debt_limit, set once at boot.
extern unsigned long g_high_debt_limit;
}  // namespace memcg_internal

/**
 * mem_cgroup_boot - mount the hierarchy and bring up the memory controller
 * @params: hierarchy version, stock design, mount options, reclaim/OOM ops, swap device size
 *
 * Creates root_mem_cgroup, the per-CPU stocks, the "memcg" workqueue, registers the
 * return-to-user hook (mem_cgroup_handle_over_high) and a machine shutdown hook that tears all
 * of it down again, swaps on the swap device of @params.swap_pages (mm/swapfile.h) and gives
 * the machine @params.totalram_pages of RAM (mm/page_alloc.h).
 * Context: task context on a running machine. Returns 0 or a negative errno.
 */
int mem_cgroup_boot(const memcg_boot_params &params);
// Drains every stock, removes every cgroup and frees the controller (run by the shutdown hook;
// idempotent).
void mem_cgroup_shutdown();
bool mem_cgroup_booted();

// Replaces the reclaim/OOM ops (nullptr: defaults). Returns the previous ones.
const memcg_reclaim_ops *memcg_set_reclaim_ops(const memcg_reclaim_ops *ops);

inline bool do_memsw_account() { return memcg_internal::g_v1; }
inline bool memcg_pcstock() { return memcg_internal::g_pcstock; }

// --- tree helpers ----------------------------------------------------------------------------

inline mem_cgroup *mem_cgroup_from_css(cgroup_subsys_state *css) {
  return css ? container_of(css, mem_cgroup, css) : nullptr;
}
inline bool mem_cgroup_is_root(const mem_cgroup *memcg) { return memcg == root_mem_cgroup; }
inline mem_cgroup *parent_mem_cgroup(mem_cgroup *memcg) {
  return mem_cgroup_from_css(memcg->css.parent);
}
inline bool mem_cgroup_is_descendant(mem_cgroup *memcg, mem_cgroup *root) {
  if (root == memcg) return true;
  for (cgroup_subsys_state *c = memcg->css.parent; c; c = c->parent)
    if (c == &root->css) return true;
  return false;
}
inline bool mem_cgroup_online(mem_cgroup *memcg) { return css_is_online(&memcg->css); }
inline unsigned short mem_cgroup_id(mem_cgroup *memcg) {
  return static_cast<unsigned short>(memcg->id);
}
// The memcg with this private id (rcu_read_lock held), or nullptr.
mem_cgroup *mem_cgroup_from_id(unsigned short id);
inline mem_cgroup *mem_cgroup_from_cgroup(cgroup *cgrp) {
  return mem_cgroup_from_css(cgrp->subsys_css);
}

// --- task association ------------------------------------------------------------------------

// The memcg of a task (its mm's memcg, or the root). Caller holds rcu_read_lock().
mem_cgroup *mem_cgroup_from_task(task_struct *p);
mem_cgroup *get_mem_cgroup_from_mm(mm_struct *mm);
mem_cgroup *get_mem_cgroup_from_current();
// set_active_memcg(): charges with no mm go to this memcg; returns the previous one.
mem_cgroup *set_active_memcg(mem_cgroup *memcg);
mem_cgroup *active_memcg();

// --- events ----------------------------------------------------------------------------------

void __memcg_memory_event(mem_cgroup *memcg, enum memcg_memory_event event, bool allow_spinning);
inline void memcg_memory_event(mem_cgroup *memcg, enum memcg_memory_event event) {
  __memcg_memory_event(memcg, event, true);
}
// The memory.events and memory.events.local counters (the kernel reads memcg->memory_events[]
// in place; these name the read). memcg_events() is the vm-event statistic
// (mm/memcontrol_stat.h): passing it a memcg_memory_event is a compile error, not a silent
// conversion to a vm_event_item number.
inline long memory_events_read(mem_cgroup *memcg, enum memcg_memory_event e) {
  return atomic_long_read(&memcg->memory_events[e]);
}
inline long memory_events_local_read(mem_cgroup *memcg, enum memcg_memory_event e) {
  return atomic_long_read(&memcg->memory_events_local[e]);
}
unsigned long memcg_events(mem_cgroup *memcg, enum memcg_memory_event e) = delete;
unsigned long memcg_events_local(mem_cgroup *memcg, enum memcg_memory_event e) = delete;

// --- charging --------------------------------------------------------------------------------

/**
 * try_charge_memcg - charge @nr_pages to @memcg (never the root) through the per-CPU stock
 * @memcg: the memcg to charge
 * @gfp_mask: allocation context (reclaim, retry and failure policy)
 * @nr_pages: pages to charge
 *
 * Section 2.3 of the semantics reference, in the design chosen at boot.
 * Returns 0 (charged, possibly forced over the limit) or -ENOMEM.
 */
int try_charge_memcg(mem_cgroup *memcg, gfp_t gfp_mask, unsigned int nr_pages);
// try_charge(): the root is never charged.
inline int try_charge(mem_cgroup *memcg, gfp_t gfp_mask, unsigned int nr_pages) {
  if (mem_cgroup_is_root(memcg)) return 0;
  return try_charge_memcg(memcg, gfp_mask, nr_pages);
}
// Uncharges pages directly from the page counters (memory, and memsw on v1).
void memcg_uncharge(mem_cgroup *memcg, unsigned int nr_pages);
// Returns pages to the per-CPU stock (uncharging directly when it cannot).
void refill_stock(mem_cgroup *memcg, unsigned int nr_pages);
// Drains the stocks of every online CPU that hold charges of @root_memcg's subtree.
void drain_all_stock(mem_cgroup *root_memcg);

// max - usage of memory (and memsw on v1), 0 when at or over the limit.
unsigned long mem_cgroup_margin(mem_cgroup *memcg);
// memory.current / v1 usage_in_bytes (swap: memsw), in pages. With the page_counter stock on
// v1 the memory value is min(memory, memsw) (seed 003).
unsigned long mem_cgroup_usage(mem_cgroup *memcg, bool swap);

// Sockets (v2).
bool mem_cgroup_sk_charge(mem_cgroup *memcg, unsigned int nr_pages, gfp_t gfp_mask);
void mem_cgroup_sk_uncharge(mem_cgroup *memcg, unsigned int nr_pages);

// --- the v1 OOM wait (mm/memcontrol_v1_events.cc) -----------------------------------------------

// A user page fault runs between these two: a v1 OOM with oom_kill_disable met inside it is
// waited out at its end instead of failing the charge for good.
inline void mem_cgroup_enter_user_fault() {
  WARN_ON(current->in_user_fault);
  current->in_user_fault = true;
}
inline void mem_cgroup_exit_user_fault() {
  WARN_ON(!current->in_user_fault);
  current->in_user_fault = false;
}
/**
 * mem_cgroup_oom_synchronize - complete the v1 OOM handling of the current page fault
 * @handle: wait for the OOM to be resolved (the fault failed with VM_FAULT_OOM); false only
 *   cleans up (the fault got its memory after all)
 *
 * With @handle the task sleeps (killable) on the memcg OOM wait queue, with under_oom marked
 * on the memcg's subtree and the OOM listeners notified by whoever takes the subtree's OOM
 * lock, until memcg1_oom_recover() (an uncharge, a limit raised, oom_kill_disable cleared)
 * wakes it. Returns true if the task was in a memcg OOM (the fault is then retried), false
 * if not. Context: task context, at the end of a user page fault; may sleep.
 */
bool mem_cgroup_oom_synchronize(bool handle);
// The task met a v1 OOM with oom_kill_disable in this page fault: its charges fail at once
// until mem_cgroup_oom_synchronize() at the end of the fault.
inline bool task_in_memcg_oom(task_struct *p) { return p->memcg_in_oom != nullptr; }

// memory.high throttling on return to user mode (resume_user_mode_work()).
void __mem_cgroup_handle_over_high(gfp_t gfp_mask);
inline void mem_cgroup_handle_over_high(gfp_t gfp_mask) {
  if (unlikely(current->memcg_nr_pages_over_high)) __mem_cgroup_handle_over_high(gfp_mask);
}

// memory.high policy hook (the bpf_memcg_ops.high_policy dispatch, mm/bpf_memcg_ops.cc):
// called just before the synchronous over-high handling in try_charge_memcg. Returns
// BPF_MEMCG_HIGH_* bits.
inline constexpr u32 BPF_MEMCG_HIGH_NO_OPINION = 0;
inline constexpr u32 BPF_MEMCG_HIGH_DEFER_INLINE = 1u << 0;
inline constexpr u32 BPF_MEMCG_HIGH_VALID_MASK = BPF_MEMCG_HIGH_DEFER_INLINE;
using memcg_high_policy_fn = u32 (*)(mem_cgroup *memcg, mem_cgroup *over_limit, gfp_t gfp);
// Installs the dispatcher (nullptr: none). Returns the previous one.
memcg_high_policy_fn memcg_set_high_policy(memcg_high_policy_fn fn);

// CPU hotplug: the "dead" callback drains the dead CPU's stocks without locking.
int memcg_hotplug_cpu_dead(unsigned int cpu);

}  // namespace umemcg

