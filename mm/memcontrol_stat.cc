// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_stat.cc: the memcg vmstats machinery: index maps, per-CPU updates with the flush
// threshold, the rstat flush callback, the gated, ratelimited and periodic flushes, and the
// readers (see memcontrol_stat.h).
//
// Mirrors: mm/memcontrol.c (Linux 6.19): memcg_node_stat_items, memcg_stat_items,
//   memcg_vm_event_stat, init_memcg_stats/events, struct memcg_vmstats(_percpu),
//   struct lruvec_stats(_percpu), memcg_rstat_updated, memcg_vmstats_needs_flush,
//   do_flush_stats, mem_cgroup_flush_stats(_ratelimited), flush_memcg_stats_dwork,
//   memcg_page_state(_local), __mod_memcg_state, __mod_memcg_lruvec_state,
//   __count_memcg_events, memcg_events(_local), lruvec_page_state(_local),
//   mem_cgroup_css_rstat_flush, memcg_page_state_unit, memcg_page_state_output_unit
// Emulation: the index maps are built at compile time (the kernel fills them at boot).
// Emulation: there is no NMI context, so the kernel's NMI-safe atomics for MEMCG_KMEM and the
//   slab items (folded in at flush) are not needed: those items go through the per-CPU path.
// Emulation: the periodic flush work is cancelled at memcg shutdown (the kernel never stops it).
#include "mm/memcontrol_stat.h"

#include <array>
#include <iterator>
#include <cstdlib>

#include "kernel/cgroup_rstat.h"
#include "mm/memcontrol.h"
#include "shim/atomic.h"
#include "shim/bug.h"
#include "shim/compiler.h"
#include "shim/jiffies.h"
#include "shim/percpu.h"
#include "shim/preempt.h"
#include "shim/smp.h"
#include "shim/workqueue.h"

namespace umemcg {

namespace {

// --- index maps (3.1) --------------------------------------------------------------------------

constexpr unsigned int memcg_node_stat_items[] = {
    NR_INACTIVE_ANON,         NR_ACTIVE_ANON,           NR_INACTIVE_FILE,
    NR_ACTIVE_FILE,           NR_UNEVICTABLE,           NR_SLAB_RECLAIMABLE_B,
    NR_SLAB_UNRECLAIMABLE_B,  WORKINGSET_REFAULT_ANON,  WORKINGSET_REFAULT_FILE,
    WORKINGSET_ACTIVATE_ANON, WORKINGSET_ACTIVATE_FILE, WORKINGSET_RESTORE_ANON,
    WORKINGSET_RESTORE_FILE,  WORKINGSET_NODERECLAIM,   NR_ANON_MAPPED,
    NR_FILE_MAPPED,           NR_FILE_PAGES,            NR_FILE_DIRTY,
    NR_WRITEBACK,             NR_SHMEM,                 NR_SHMEM_THPS,
    NR_FILE_THPS,             NR_ANON_THPS,             NR_KERNEL_STACK_KB,
    NR_PAGETABLE,             NR_SECONDARY_PAGETABLE,   NR_SWAPCACHE,
    PGDEMOTE_KSWAPD,          PGDEMOTE_DIRECT,          PGDEMOTE_KHUGEPAGED,
    PGDEMOTE_PROACTIVE,       NR_HUGETLB,
};

constexpr unsigned int memcg_stat_items[] = {
    MEMCG_SWAP, MEMCG_SOCK, MEMCG_PERCPU_B, MEMCG_VMALLOC, MEMCG_KMEM, MEMCG_ZSWAP_B,
    MEMCG_ZSWAPPED,
};

constexpr unsigned int memcg_vm_event_stat[] = {
    PGPGIN,           PGPGOUT,           PSWPIN,           PSWPOUT,
    PGSCAN_KSWAPD,    PGSCAN_DIRECT,     PGSCAN_KHUGEPAGED, PGSCAN_PROACTIVE,
    PGSTEAL_KSWAPD,   PGSTEAL_DIRECT,    PGSTEAL_KHUGEPAGED, PGSTEAL_PROACTIVE,
    PGFAULT,          PGMAJFAULT,        PGREFILL,         PGACTIVATE,
    PGDEACTIVATE,     PGLAZYFREE,        PGLAZYFREED,      SWPIN_ZERO,
    SWPOUT_ZERO,      THP_FAULT_ALLOC,   THP_COLLAPSE_ALLOC, THP_SWPOUT,
    THP_SWPOUT_FALLBACK,
};

constexpr int NR_MEMCG_NODE_STAT_ITEMS = std::size(memcg_node_stat_items);
constexpr int MEMCG_VMSTAT_SIZE = NR_MEMCG_NODE_STAT_ITEMS + std::size(memcg_stat_items);
constexpr int NR_MEMCG_EVENTS = std::size(memcg_vm_event_stat);

// memcg's own items (MEMCG_SWAP..) of memcgs already freed: bookkeeping for the checker.
atomic_long_t g_freed_stat[MEMCG_NR_STAT - MEMCG_SWAP];

constexpr u8 BAD_INDEX = 255;  // U8_MAX: not tracked per memcg

constexpr std::array<u8, MEMCG_NR_STAT> build_stats_index() {
  std::array<u8, MEMCG_NR_STAT> a{};
  for (auto &v : a) v = BAD_INDEX;
  int j = 0;
  for (unsigned int item : memcg_node_stat_items) a[item] = static_cast<u8>(j++);
  for (unsigned int item : memcg_stat_items) a[item] = static_cast<u8>(j++);
  return a;
}
constexpr std::array<u8, NR_VM_EVENT_ITEMS> build_events_index() {
  std::array<u8, NR_VM_EVENT_ITEMS> a{};
  for (auto &v : a) v = BAD_INDEX;
  int j = 0;
  for (unsigned int item : memcg_vm_event_stat) a[item] = static_cast<u8>(j++);
  return a;
}
constexpr std::array<u8, MEMCG_NR_STAT> mem_cgroup_stats_index = build_stats_index();
constexpr std::array<u8, NR_VM_EVENT_ITEMS> mem_cgroup_events_index = build_events_index();
static_assert(MEMCG_NR_STAT < BAD_INDEX && NR_VM_EVENT_ITEMS < BAD_INDEX);

// Dense index of a stat item, or BAD_INDEX (also for out-of-range ids).
int memcg_stats_index(int idx) {
  if (static_cast<unsigned int>(idx) >= MEMCG_NR_STAT) return BAD_INDEX;
  return mem_cgroup_stats_index[idx];
}
int memcg_events_index(int idx) {
  if (static_cast<unsigned int>(idx) >= NR_VM_EVENT_ITEMS) return BAD_INDEX;
  return mem_cgroup_events_index[idx];
}

}  // namespace

// --- data structures (3.2) ---------------------------------------------------------------------

// Per memcg and CPU. The first three fields are what memcg_rstat_updated() walks up the tree
// for every update: they share the first cache line (the whole object is cache-line aligned
// by the per-CPU allocator). state/events are this CPU's running totals, written only by this
// CPU with preemption disabled and read by the flusher (WRITE_ONCE / READ_ONCE); the _prev
// snapshots belong to the flusher (rstat lock).
struct memcg_vmstats_percpu {
  // Pending update magnitude on this CPU (pages). The owner adds, the flusher zeroes: both with
  // READ_ONCE/WRITE_ONCE (the kernel's benign race: an add racing with the zeroing is lost or
  // kept, which only shifts the next flush).
  unsigned int stats_updates = 0;
  memcg_vmstats_percpu *parent_pcpu = nullptr;  // the parent memcg's copy for this CPU
  memcg_vmstats *vmstats = nullptr;             // this memcg's aggregates

  long state[MEMCG_VMSTAT_SIZE] = {};
  unsigned long events[NR_MEMCG_EVENTS] = {};
  long state_prev[MEMCG_VMSTAT_SIZE] = {};
  unsigned long events_prev[NR_MEMCG_EVENTS] = {};
};

// Per memcg: the aggregates, written under the rstat lock and read locklessly (READ_ONCE).
struct memcg_vmstats {
  long state[MEMCG_VMSTAT_SIZE] = {};           // hierarchical, all CPUs
  unsigned long events[NR_MEMCG_EVENTS] = {};
  long state_local[MEMCG_VMSTAT_SIZE] = {};     // this memcg only, all CPUs
  unsigned long events_local[NR_MEMCG_EVENTS] = {};
  long state_pending[MEMCG_VMSTAT_SIZE] = {};   // pushed up by children, not yet absorbed
  unsigned long events_pending[NR_MEMCG_EVENTS] = {};
  // Pending update magnitude of the subtree (threshold of mem_cgroup_flush_stats).
  atomic_long_t stats_updates;
};

// The lruvec (node 0) of a memcg: node items only.
struct lruvec_stats_percpu {
  long state[NR_MEMCG_NODE_STAT_ITEMS] = {};
  long state_prev[NR_MEMCG_NODE_STAT_ITEMS] = {};
};
struct lruvec_stats {
  long state[NR_MEMCG_NODE_STAT_ITEMS] = {};
  long state_local[NR_MEMCG_NODE_STAT_ITEMS] = {};
  long state_pending[NR_MEMCG_NODE_STAT_ITEMS] = {};
};

namespace {

// --- flushing state (3.4) ----------------------------------------------------------------------

delayed_work stats_flush_dwork;
u64 flush_last_time = 0;  // jiffies of the last root flush (READ_ONCE/WRITE_ONCE)
bool stats_flush_stopping = false;  // shutdown: the periodic work no longer re-arms

bool memcg_vmstats_needs_flush(memcg_vmstats *vmstats) {
  return atomic_long_read(&vmstats->stats_updates) >
         static_cast<long>(MEMCG_CHARGE_BATCH * num_online_cpus());
}

/*
 * memcg_rstat_updated - account @val pages of updates on this CPU to @memcg and its ancestors
 *
 * Each level keeps a per-CPU count; once it reaches MEMCG_CHARGE_BATCH it moves into the
 * level's atomic stats_updates. A level already over the flush threshold stops the walk: its
 * ancestors are over it too (each of them received at least as much).
 * Context: preemption disabled.
 */
void memcg_rstat_updated(mem_cgroup *memcg, int val, int cpu) {
  if (!val) return;
  css_rstat_updated(&memcg->css, cpu);
  for (memcg_vmstats_percpu *statc = per_cpu_ptr(memcg->vmstats_percpu, cpu); statc;
       statc = statc->parent_pcpu) {
    if (memcg_vmstats_needs_flush(statc->vmstats)) break;
    unsigned int stats_updates = READ_ONCE(statc->stats_updates) + std::abs(val);
    WRITE_ONCE(statc->stats_updates, stats_updates);
    if (stats_updates < MEMCG_CHARGE_BATCH) continue;
    WRITE_ONCE(statc->stats_updates, 0u);
    atomic_long_add(stats_updates, &statc->vmstats->stats_updates);
  }
}

// The update's size in pages for the threshold: sub-page updates of byte/KiB items count as 1.
int memcg_state_val_in_pages(int idx, int val) {
  int unit = memcg_page_state_unit(idx);
  if (!val || unit == static_cast<int>(PAGE_SIZE)) return val;
  long pages = static_cast<long>(val) * unit / static_cast<long>(PAGE_SIZE);
  // Emulation: the kernel's max(val * unit / PAGE_SIZE, 1UL) mixes signed and unsigned; here a
  // decrease counts as its magnitude, at least 1 page (kernel-semantics.md 3.3).
  if (pages < 0) pages = -pages;
  return static_cast<int>(pages < 1 ? 1 : pages);
}

void do_flush_stats(mem_cgroup *memcg) {
  if (mem_cgroup_is_root(memcg)) WRITE_ONCE(flush_last_time, get_jiffies_64());
  css_rstat_flush(&memcg->css);
}

void flush_memcg_stats_dwork(work_struct *) {
  // The threshold is ignored on purpose: the periodic flush bounds the staleness in time.
  mem_cgroup *root = READ_ONCE(root_mem_cgroup);
  if (root) do_flush_stats(root);
  if (!READ_ONCE(stats_flush_stopping))
    queue_delayed_work(system_unbound_wq, &stats_flush_dwork, FLUSH_TIME);
}

long clamp_smp(long x) { return x < 0 ? 0 : x; }

// Adds delta to a per-CPU running total of this CPU (the owner is the only writer).
inline void pcpu_add(long *p, long delta) { WRITE_ONCE(*p, *p + delta); }
inline void pcpu_add(unsigned long *p, unsigned long delta) { WRITE_ONCE(*p, *p + delta); }

// Folds one counter: the children's pending delta and this CPU's change since the last flush
// into the aggregates, and pushes the sum to the parent's pending delta.
template <typename T>
void flush_one(T *aggr, T *local, T *pending, T *parent_pending, const T *pcpu, T *prev) {
  T delta = *pending;
  if (delta) *pending = 0;
  T delta_cpu = 0;
  T v = READ_ONCE(*pcpu);
  if (v != *prev) {
    delta_cpu = v - *prev;
    delta += delta_cpu;
    *prev = v;
  }
  if (delta_cpu) WRITE_ONCE(*local, *local + delta_cpu);
  if (delta) {
    WRITE_ONCE(*aggr, *aggr + delta);
    if (parent_pending) *parent_pending += delta;
  }
}

}  // namespace

// --- updates (3.3) -----------------------------------------------------------------------------

void __mod_memcg_state(mem_cgroup *memcg, int idx, int val) {
  int i = memcg_stats_index(idx);
  if (WARN_ONCE(i == BAD_INDEX, "%s: missing stat item %d\n", __func__, idx)) return;
  int cpu = smp_processor_id();
  pcpu_add(&per_cpu_ptr(memcg->vmstats_percpu, cpu)->state[i], val);
  memcg_rstat_updated(memcg, memcg_state_val_in_pages(idx, val), cpu);
}

void mod_memcg_state(mem_cgroup *memcg, int idx, int val) {
  preempt_disable();
  __mod_memcg_state(memcg, idx, val);
  preempt_enable();
}

void mod_memcg_lruvec_state(mem_cgroup *memcg, enum node_stat_item idx, int val) {
  int i = memcg_stats_index(idx);
  if (WARN_ONCE(i == BAD_INDEX || i >= NR_MEMCG_NODE_STAT_ITEMS, "%s: missing stat item %d\n",
                __func__, idx))
    return;
  preempt_disable();
  int cpu = smp_processor_id();
  pcpu_add(&per_cpu_ptr(memcg->vmstats_percpu, cpu)->state[i], val);
  pcpu_add(&per_cpu_ptr(memcg->lruvec_stats_percpu, cpu)->state[i], val);
  memcg_rstat_updated(memcg, memcg_state_val_in_pages(idx, val), cpu);
  preempt_enable();
}

void __count_memcg_events(mem_cgroup *memcg, enum vm_event_item idx, unsigned long count) {
  int i = memcg_events_index(idx);
  if (WARN_ONCE(i == BAD_INDEX, "%s: missing stat item %d\n", __func__, idx)) return;
  int cpu = smp_processor_id();
  pcpu_add(&per_cpu_ptr(memcg->vmstats_percpu, cpu)->events[i], count);
  memcg_rstat_updated(memcg, static_cast<int>(count), cpu);
}

void count_memcg_events(mem_cgroup *memcg, enum vm_event_item idx, unsigned long count) {
  preempt_disable();
  __count_memcg_events(memcg, idx, count);
  preempt_enable();
}

// --- reads (3.5) -------------------------------------------------------------------------------

unsigned long memcg_page_state(mem_cgroup *memcg, int idx) {
  int i = memcg_stats_index(idx);
  if (WARN_ONCE(i == BAD_INDEX, "%s: missing stat item %d\n", __func__, idx)) return 0;
  return clamp_smp(READ_ONCE(memcg->vmstats->state[i]));
}

unsigned long memcg_page_state_local(mem_cgroup *memcg, int idx) {
  int i = memcg_stats_index(idx);
  if (WARN_ONCE(i == BAD_INDEX, "%s: missing stat item %d\n", __func__, idx)) return 0;
  return clamp_smp(READ_ONCE(memcg->vmstats->state_local[i]));
}

unsigned long memcg_events(mem_cgroup *memcg, int event) {
  int i = memcg_events_index(event);
  if (WARN_ONCE(i == BAD_INDEX, "%s: missing stat item %d\n", __func__, event)) return 0;
  return READ_ONCE(memcg->vmstats->events[i]);
}

unsigned long memcg_events_local(mem_cgroup *memcg, int event) {
  int i = memcg_events_index(event);
  if (WARN_ONCE(i == BAD_INDEX, "%s: missing stat item %d\n", __func__, event)) return 0;
  return READ_ONCE(memcg->vmstats->events_local[i]);
}

unsigned long lruvec_page_state(mem_cgroup *memcg, enum node_stat_item idx) {
  int i = memcg_stats_index(idx);
  if (WARN_ONCE(i == BAD_INDEX || i >= NR_MEMCG_NODE_STAT_ITEMS, "%s: missing stat item %d\n",
                __func__, idx))
    return 0;
  return clamp_smp(READ_ONCE(memcg->lruvec_stats->state[i]));
}

unsigned long lruvec_page_state_local(mem_cgroup *memcg, enum node_stat_item idx) {
  int i = memcg_stats_index(idx);
  if (WARN_ONCE(i == BAD_INDEX || i >= NR_MEMCG_NODE_STAT_ITEMS, "%s: missing stat item %d\n",
                __func__, idx))
    return 0;
  return clamp_smp(READ_ONCE(memcg->lruvec_stats->state_local[i]));
}

int memcg_page_state_unit(int item) {
  switch (item) {
    case MEMCG_PERCPU_B:
    case MEMCG_ZSWAP_B:
    case NR_SLAB_RECLAIMABLE_B:
    case NR_SLAB_UNRECLAIMABLE_B:
      return 1;
    case NR_KERNEL_STACK_KB:
      return 1024;
    default:
      return static_cast<int>(PAGE_SIZE);
  }
}

int memcg_page_state_output_unit(int item) {
  // Workingset and demotion items are kept in pages but exported as counts of events.
  switch (item) {
    case WORKINGSET_REFAULT_ANON:
    case WORKINGSET_REFAULT_FILE:
    case WORKINGSET_ACTIVATE_ANON:
    case WORKINGSET_ACTIVATE_FILE:
    case WORKINGSET_RESTORE_ANON:
    case WORKINGSET_RESTORE_FILE:
    case WORKINGSET_NODERECLAIM:
    case PGDEMOTE_KSWAPD:
    case PGDEMOTE_DIRECT:
    case PGDEMOTE_KHUGEPAGED:
    case PGDEMOTE_PROACTIVE:
      return 1;
    default:
      return memcg_page_state_unit(item);
  }
}

unsigned long memcg_page_state_output(mem_cgroup *memcg, int item) {
  return memcg_page_state(memcg, item) * memcg_page_state_output_unit(item);
}

unsigned long memcg_page_state_local_output(mem_cgroup *memcg, int item) {
  return memcg_page_state_local(memcg, item) * memcg_page_state_output_unit(item);
}

bool memcg_stat_item_valid(int idx) { return memcg_stats_index(idx) != BAD_INDEX; }
bool memcg_vm_event_item_valid(int event) { return memcg_events_index(event) != BAD_INDEX; }

// --- flushing (3.4) ----------------------------------------------------------------------------

void mem_cgroup_flush_stats(mem_cgroup *memcg) {
  if (!memcg) memcg = root_mem_cgroup;
  if (!memcg) return;
  if (memcg_vmstats_needs_flush(memcg->vmstats)) do_flush_stats(memcg);
}

void mem_cgroup_flush_stats_ratelimited(mem_cgroup *memcg) {
  // Only when the periodic flusher is one full cycle late.
  if (get_jiffies_64() > READ_ONCE(flush_last_time) + 2 * FLUSH_TIME)
    mem_cgroup_flush_stats(memcg);
}

namespace memcg_internal {

void mem_cgroup_css_rstat_flush(cgroup_subsys_state *css, int cpu) {
  mem_cgroup *memcg = mem_cgroup_from_css(css);
  mem_cgroup *parent = parent_mem_cgroup(memcg);
  memcg_vmstats *vs = memcg->vmstats;
  memcg_vmstats *pvs = parent ? parent->vmstats : nullptr;
  memcg_vmstats_percpu *statc = per_cpu_ptr(memcg->vmstats_percpu, cpu);

  for (int i = 0; i < MEMCG_VMSTAT_SIZE; i++)
    flush_one(&vs->state[i], &vs->state_local[i], &vs->state_pending[i],
              pvs ? &pvs->state_pending[i] : nullptr, &statc->state[i], &statc->state_prev[i]);
  for (int i = 0; i < NR_MEMCG_EVENTS; i++)
    flush_one(&vs->events[i], &vs->events_local[i], &vs->events_pending[i],
              pvs ? &pvs->events_pending[i] : nullptr, &statc->events[i], &statc->events_prev[i]);

  lruvec_stats *ls = memcg->lruvec_stats;
  lruvec_stats *pls = parent ? parent->lruvec_stats : nullptr;
  lruvec_stats_percpu *lstatc = per_cpu_ptr(memcg->lruvec_stats_percpu, cpu);
  for (int i = 0; i < NR_MEMCG_NODE_STAT_ITEMS; i++)
    flush_one(&ls->state[i], &ls->state_local[i], &ls->state_pending[i],
              pls ? &pls->state_pending[i] : nullptr, &lstatc->state[i], &lstatc->state_prev[i]);

  WRITE_ONCE(statc->stats_updates, 0u);
  // One atomic write per memcg for the whole per-CPU loop.
  if (atomic_long_read(&vs->stats_updates)) atomic_long_set(&vs->stats_updates, 0);
}

bool memcg_vmstats_alloc(mem_cgroup *memcg, mem_cgroup *parent) {
  memcg->vmstats = new memcg_vmstats;
  memcg->vmstats_percpu = alloc_percpu<memcg_vmstats_percpu>();
  memcg->lruvec_stats = new lruvec_stats;
  memcg->lruvec_stats_percpu = alloc_percpu<lruvec_stats_percpu>();
  if (!memcg->vmstats_percpu || !memcg->lruvec_stats_percpu) {
    memcg_vmstats_free(memcg);
    return false;
  }
  int cpu;
  for_each_possible_cpu(cpu) {
    memcg_vmstats_percpu *statc = per_cpu_ptr(memcg->vmstats_percpu, cpu);
    statc->parent_pcpu = parent ? per_cpu_ptr(parent->vmstats_percpu, cpu) : nullptr;
    statc->vmstats = memcg->vmstats;
  }
  return true;
}

void memcg_vmstats_free(mem_cgroup *memcg) {
  // Bookkeeping for the invariant checker: what the memcg itself counted in its own items.
  for (unsigned int item : memcg_stat_items)
    if (memcg->vmstats_percpu)
      atomic_long_add(emu::memcg_page_state_local_sum(memcg, static_cast<int>(item)),
                      &g_freed_stat[item - MEMCG_SWAP]);
  delete memcg->vmstats;
  memcg->vmstats = nullptr;
  free_percpu(memcg->vmstats_percpu);
  memcg->vmstats_percpu = nullptr;
  delete memcg->lruvec_stats;
  memcg->lruvec_stats = nullptr;
  free_percpu(memcg->lruvec_stats_percpu);
  memcg->lruvec_stats_percpu = nullptr;
}

void memcg_stats_boot() {
  WRITE_ONCE(stats_flush_stopping, false);
  WRITE_ONCE(flush_last_time, get_jiffies_64());
  for (auto &v : g_freed_stat) atomic_long_set(&v, 0);
  INIT_DELAYED_WORK(&stats_flush_dwork, flush_memcg_stats_dwork);
  stats_flush_dwork.timer.flags |= TIMER_DEFERRABLE;
}

void memcg_stats_root_online() {
  queue_delayed_work(system_unbound_wq, &stats_flush_dwork, FLUSH_TIME);
}

void memcg_stats_shutdown() {
  WRITE_ONCE(stats_flush_stopping, true);
  // A running instance may have re-armed itself before it saw the flag; the first cancel waits
  // for it, the second removes that re-arm. Any later instance sees the flag and stops.
  cancel_delayed_work_sync(&stats_flush_dwork);
  cancel_delayed_work_sync(&stats_flush_dwork);
}

}  // namespace memcg_internal

// --- emulator-only readers ---------------------------------------------------------------------

namespace emu {

long memcg_page_state_local_sum(mem_cgroup *memcg, int idx) {
  int i = memcg_stats_index(idx);
  if (WARN_ONCE(i == BAD_INDEX, "%s: missing stat item %d\n", __func__, idx)) return 0;
  long sum = 0;
  int cpu;
  for_each_possible_cpu(cpu) sum += READ_ONCE(per_cpu_ptr(memcg->vmstats_percpu, cpu)->state[i]);
  return sum;
}

unsigned long memcg_events_local_sum(mem_cgroup *memcg, int event) {
  int i = memcg_events_index(event);
  if (WARN_ONCE(i == BAD_INDEX, "%s: missing stat item %d\n", __func__, event)) return 0;
  unsigned long sum = 0;
  int cpu;
  for_each_possible_cpu(cpu) sum += READ_ONCE(per_cpu_ptr(memcg->vmstats_percpu, cpu)->events[i]);
  return sum;
}

long memcg_freed_stat(int idx) {
  if (idx < MEMCG_SWAP || idx >= MEMCG_NR_STAT) return 0;
  return atomic_long_read(&g_freed_stat[idx - MEMCG_SWAP]);
}

void mem_cgroup_flush_stats_force(mem_cgroup *memcg) {
  if (!memcg) memcg = root_mem_cgroup;
  if (memcg) do_flush_stats(memcg);
}

long memcg_stats_updates(mem_cgroup *memcg) {
  return atomic_long_read(&memcg->vmstats->stats_updates);
}

u64 memcg_flush_last_time() { return READ_ONCE(flush_last_time); }

}  // namespace emu

// --- event names -------------------------------------------------------------------------------

const char *vm_event_name(enum vm_event_item item) {
  static constexpr const char *names[NR_VM_EVENT_ITEMS] = {
      "pgpgin",          "pgpgout",          "pswpin",
      "pswpout",         "pgfree",           "pgactivate",
      "pgdeactivate",    "pglazyfree",       "pgfault",
      "pgmajfault",      "pglazyfreed",      "pgrefill",
      "pgreuse",         "pgsteal_kswapd",   "pgsteal_direct",
      "pgsteal_khugepaged", "pgsteal_proactive", "pgscan_kswapd",
      "pgscan_direct",   "pgscan_khugepaged", "pgscan_proactive",
      "pgscan_direct_throttle", "pgscan_anon", "pgscan_file",
      "pgsteal_anon",    "pgsteal_file",     "pgrotated",
      "oom_kill",        "unevictable_pgs_culled", "unevictable_pgs_scanned",
      "unevictable_pgs_rescued", "unevictable_pgs_mlocked", "unevictable_pgs_munlocked",
      "thp_fault_alloc", "thp_collapse_alloc", "thp_swpout",
      "thp_swpout_fallback", "swpin_zero",   "swpout_zero",
  };
  if (static_cast<unsigned int>(item) >= NR_VM_EVENT_ITEMS) return "";
  return names[item];
}

}  // namespace umemcg
