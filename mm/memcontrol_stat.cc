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
// Emulation: a memcg's statistics (aggregates and per-CPU totals) are allocated on its first
//   update, the per-CPU part on each CPU's first update (struct memcg_stats_pcpu below).
#include "mm/memcontrol_stat.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <iterator>
#include <new>

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

// The tracked items (node items and memcg's own) of memcgs already freed: bookkeeping for the
// checker and for the machine's node statistics (mm/vmstat.h).
atomic_long_t g_freed_stat[MEMCG_NR_STAT];

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

struct memcg_vmstats;

// Per memcg and CPU. The first three fields are what memcg_rstat_updated() walks up the tree
// for every update: they share the first cache line (the block holding it is cache-line
// aligned, see memcg_stats_pcpu). state/events are this CPU's running totals, written only by
// this CPU with preemption disabled and read by the flusher (WRITE_ONCE / READ_ONCE); the
// _prev snapshots belong to the flusher (rstat lock).
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

// Emulation: a memcg's statistics are allocated on its first update, not at css_alloc (the
// kernel allocates memcg_vmstats, memcg_vmstats_percpu and the lruvec stats of every node with
// the memcg). A memcg that is never updated (created and removed without a charge) costs only
// its pointer array (8 bytes per CPU); see docs/charge-path.md, "Statistics memory".
//
// memcg_stats: the aggregates of the memcg and of its lruvec, one allocation. Published in
// mem_cgroup::stats with a release cmpxchg by the first CPU that updates the memcg (several
// may race: the losers free theirs and take the winner's); read with an acquire load. nullptr
// reads as all zeros and as "nothing pending" (stats_updates 0).
struct memcg_stats {
  memcg_vmstats vmstats;
  lruvec_stats lruvec;
};

// memcg_stats_pcpu: one CPU's running totals of the memcg and of its lruvec, one cache-aligned
// allocation, made on that CPU's first update of the memcg (memcg_stats_pcpu_create) with
// preemption disabled. Only that CPU writes its slot mem_cgroup::stats_pcpu[cpu]
// (cmpxchg-release: a nested context on the CPU could race the creation); it reads the slot
// with a relaxed load, other CPUs (the rstat flush, the exact-sum readers) with an acquire
// load, and treat nullptr as all zeros. Invariant: when a CPU's block of a memcg exists, the
// blocks of every ancestor on that CPU and the memcg's memcg_stats exist too (created first),
// so the parent_pcpu walk of memcg_rstat_updated() never meets nullptr, and a css that is on a
// CPU's rstat updated tree has its block on that CPU (css_rstat_updated runs after the block is
// published, for the memcg and its ancestors). Blocks and aggregates are freed with the memcg,
// after its final flush; children are freed before their parent, so parent_pcpu stays valid.
struct ____cacheline_aligned memcg_stats_pcpu {
  memcg_vmstats_percpu vmstats;
  lruvec_stats_percpu lruvec;
};

namespace {

// --- lazily allocated statistics (see memcg_stats above) -----------------------------------------

// The aggregates, or nullptr (never updated). Any context.
memcg_stats *memcg_stats_of(mem_cgroup *memcg) {
  return std::atomic_ref<memcg_stats *>(memcg->stats).load(std::memory_order_acquire);
}
memcg_vmstats *memcg_vmstats_of(mem_cgroup *memcg) {
  memcg_stats *s = memcg_stats_of(memcg);
  return s ? &s->vmstats : nullptr;
}
// @cpu's block of @memcg or nullptr, read from any CPU.
memcg_stats_pcpu *memcg_stats_pcpu_peek(mem_cgroup *memcg, int cpu) {
  return std::atomic_ref<memcg_stats_pcpu *>(memcg->stats_pcpu[cpu])
      .load(std::memory_order_acquire);
}

memcg_stats *memcg_stats_get_or_create(mem_cgroup *memcg) {
  memcg_stats *s = memcg_stats_of(memcg);
  if (likely(s)) return s;
  // Emulation: the C++ heap, not the shim's accounted kmalloc: it never sleeps and never
  // re-enters memcg, so it is safe with preemption (and interrupts) disabled.
  auto *fresh = new (std::nothrow) memcg_stats;
  if (!fresh) return nullptr;
  memcg_stats *expected = nullptr;
  if (std::atomic_ref<memcg_stats *>(memcg->stats)
          .compare_exchange_strong(expected, fresh, std::memory_order_acq_rel,
                                   std::memory_order_acquire))
    return fresh;
  delete fresh;  // another CPU published first
  return expected;
}

/*
 * memcg_stats_pcpu_create - the first update of @memcg on @cpu: create its block there
 *
 * Creates the blocks of the ancestors on @cpu that have none (top-down, so each child's
 * parent_pcpu is set from a published block) and @memcg's aggregates, then publishes the block.
 * Returns nullptr only when the heap is exhausted (WARN once; the caller drops the update).
 * Context: preemption disabled, on @cpu (the caller's update section); does not sleep.
 */
__attribute__((noinline)) memcg_stats_pcpu *memcg_stats_pcpu_create(mem_cgroup *memcg,
                                                                      int cpu) {
  memcg_stats_pcpu *pstatc = nullptr;
  if (mem_cgroup *parent = parent_mem_cgroup(memcg)) {
    pstatc = READ_ONCE(parent->stats_pcpu[cpu]);
    if (!pstatc) pstatc = memcg_stats_pcpu_create(parent, cpu);
    if (!pstatc) return nullptr;
  }
  memcg_stats *stats = memcg_stats_get_or_create(memcg);
  auto *statc = stats ? new (std::nothrow) memcg_stats_pcpu : nullptr;
  if (WARN_ONCE(!statc, "memcg: no memory for statistics, update dropped\n")) return nullptr;
  statc->vmstats.parent_pcpu = pstatc ? &pstatc->vmstats : nullptr;
  statc->vmstats.vmstats = &stats->vmstats;
  memcg_stats_pcpu *expected = nullptr;
  if (std::atomic_ref<memcg_stats_pcpu *>(memcg->stats_pcpu[cpu])
          .compare_exchange_strong(expected, statc, std::memory_order_release,
                                   std::memory_order_relaxed))
    return statc;
  delete statc;  // a context nested on this CPU created it meanwhile
  return expected;
}

// This CPU's block of @memcg, created on first use; nullptr only on heap exhaustion.
// Context: preemption disabled, @cpu == smp_processor_id(). Only this CPU writes the slot, so
// a relaxed load sees its own publication (a task that later holds this vCPU is ordered after
// it by the vCPU hand-over).
inline memcg_stats_pcpu *memcg_stats_pcpu_get(mem_cgroup *memcg, int cpu) {
  memcg_stats_pcpu *statc = READ_ONCE(memcg->stats_pcpu[cpu]);
  if (likely(statc)) return statc;
  return memcg_stats_pcpu_create(memcg, cpu);
}

// --- flushing state (3.4) ----------------------------------------------------------------------

delayed_work stats_flush_dwork;
u64 flush_last_time = 0;  // jiffies of the last root flush (READ_ONCE/WRITE_ONCE)
bool stats_flush_stopping = false;  // shutdown: the periodic work no longer re-arms

// nullptr (a memcg never updated) has nothing pending.
bool memcg_vmstats_needs_flush(memcg_vmstats *vmstats) {
  if (!vmstats) return false;
  return atomic_long_read(&vmstats->stats_updates) >
         static_cast<long>(MEMCG_CHARGE_BATCH * num_online_cpus());
}

/*
 * memcg_rstat_updated - account @val pages of updates on this CPU to @memcg and its ancestors
 * @block: @memcg's block on this CPU (its ancestors' blocks exist, see memcg_stats_pcpu)
 *
 * Each level keeps a per-CPU count; once it reaches MEMCG_CHARGE_BATCH it moves into the
 * level's atomic stats_updates. A level already over the flush threshold stops the walk: its
 * ancestors are over it too (each of them received at least as much).
 * Context: preemption disabled.
 */
void memcg_rstat_updated(mem_cgroup *memcg, memcg_stats_pcpu *block, int val, int cpu) {
  if (!val) return;
  css_rstat_updated(&memcg->css, cpu);
  for (memcg_vmstats_percpu *statc = &block->vmstats; statc; statc = statc->parent_pcpu) {
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
// into the aggregates, and pushes the sum to the parent's pending delta. pcpu and prev are
// nullptr when the memcg has no block on this CPU (all zeros: no change of its own).
template <typename T>
void flush_one(T *aggr, T *local, T *pending, T *parent_pending, const T *pcpu, T *prev) {
  T delta = *pending;
  if (delta) *pending = 0;
  T delta_cpu = 0;
  T v = pcpu ? READ_ONCE(*pcpu) : 0;
  if (pcpu && v != *prev) {
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
  // Adding 0 changes nothing and counts nothing (memcg_rstat_updated ignores it): it creates
  // no statistics block either.
  if (unlikely(!val)) return;
  int cpu = smp_processor_id();
  memcg_stats_pcpu *statc = memcg_stats_pcpu_get(memcg, cpu);
  if (unlikely(!statc)) return;
  pcpu_add(&statc->vmstats.state[i], val);
  memcg_rstat_updated(memcg, statc, memcg_state_val_in_pages(idx, val), cpu);
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
  if (unlikely(!val)) return;  // as in __mod_memcg_state
  preempt_disable();
  int cpu = smp_processor_id();
  if (memcg_stats_pcpu *statc = memcg_stats_pcpu_get(memcg, cpu); likely(statc)) {
    pcpu_add(&statc->vmstats.state[i], val);
    pcpu_add(&statc->lruvec.state[i], val);
    memcg_rstat_updated(memcg, statc, memcg_state_val_in_pages(idx, val), cpu);
  }
  preempt_enable();
}

void __count_memcg_events(mem_cgroup *memcg, enum vm_event_item idx, unsigned long count) {
  int i = memcg_events_index(idx);
  if (WARN_ONCE(i == BAD_INDEX, "%s: missing stat item %d\n", __func__, idx)) return;
  if (unlikely(!count)) return;  // as in __mod_memcg_state
  int cpu = smp_processor_id();
  memcg_stats_pcpu *statc = memcg_stats_pcpu_get(memcg, cpu);
  if (unlikely(!statc)) return;
  pcpu_add(&statc->vmstats.events[i], count);
  memcg_rstat_updated(memcg, statc, static_cast<int>(count), cpu);
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
  memcg_vmstats *vs = memcg_vmstats_of(memcg);
  return vs ? clamp_smp(READ_ONCE(vs->state[i])) : 0;
}

unsigned long memcg_page_state_local(mem_cgroup *memcg, int idx) {
  int i = memcg_stats_index(idx);
  if (WARN_ONCE(i == BAD_INDEX, "%s: missing stat item %d\n", __func__, idx)) return 0;
  memcg_vmstats *vs = memcg_vmstats_of(memcg);
  return vs ? clamp_smp(READ_ONCE(vs->state_local[i])) : 0;
}

unsigned long memcg_events(mem_cgroup *memcg, int event) {
  int i = memcg_events_index(event);
  if (WARN_ONCE(i == BAD_INDEX, "%s: missing stat item %d\n", __func__, event)) return 0;
  memcg_vmstats *vs = memcg_vmstats_of(memcg);
  return vs ? READ_ONCE(vs->events[i]) : 0;
}

unsigned long memcg_events_local(mem_cgroup *memcg, int event) {
  int i = memcg_events_index(event);
  if (WARN_ONCE(i == BAD_INDEX, "%s: missing stat item %d\n", __func__, event)) return 0;
  memcg_vmstats *vs = memcg_vmstats_of(memcg);
  return vs ? READ_ONCE(vs->events_local[i]) : 0;
}

unsigned long lruvec_page_state(mem_cgroup *memcg, enum node_stat_item idx) {
  int i = memcg_stats_index(idx);
  if (WARN_ONCE(i == BAD_INDEX || i >= NR_MEMCG_NODE_STAT_ITEMS, "%s: missing stat item %d\n",
                __func__, idx))
    return 0;
  memcg_stats *st = memcg_stats_of(memcg);
  return st ? clamp_smp(READ_ONCE(st->lruvec.state[i])) : 0;
}

unsigned long lruvec_page_state_local(mem_cgroup *memcg, enum node_stat_item idx) {
  int i = memcg_stats_index(idx);
  if (WARN_ONCE(i == BAD_INDEX || i >= NR_MEMCG_NODE_STAT_ITEMS, "%s: missing stat item %d\n",
                __func__, idx))
    return 0;
  memcg_stats *st = memcg_stats_of(memcg);
  return st ? clamp_smp(READ_ONCE(st->lruvec.state_local[i])) : 0;
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
  if (memcg_vmstats_needs_flush(memcg_vmstats_of(memcg))) do_flush_stats(memcg);
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
  // A memcg on @cpu's updated tree was updated there (itself or through a descendant), so its
  // block on @cpu, its aggregates and its parent's exist (see memcg_stats_pcpu). Whoever else
  // marks a css updated (a test) may find none: no aggregates means nothing was ever counted or
  // pushed up here; no block on @cpu means no change of its own there (all zeros).
  memcg_stats *st = memcg_stats_of(memcg);
  if (!st) return;
  memcg_stats_pcpu *block = memcg_stats_pcpu_peek(memcg, cpu);
  memcg_stats *pst = parent ? memcg_stats_of(parent) : nullptr;
  // A memcg's aggregates are created after its parent's (memcg_stats_pcpu_create, top-down).
  WARN_ON_ONCE(parent && !pst);
  memcg_vmstats *vs = &st->vmstats;
  memcg_vmstats *pvs = pst ? &pst->vmstats : nullptr;
  memcg_vmstats_percpu *statc = block ? &block->vmstats : nullptr;

  for (int i = 0; i < MEMCG_VMSTAT_SIZE; i++)
    flush_one(&vs->state[i], &vs->state_local[i], &vs->state_pending[i],
              pvs ? &pvs->state_pending[i] : nullptr, statc ? &statc->state[i] : nullptr,
              statc ? &statc->state_prev[i] : nullptr);
  for (int i = 0; i < NR_MEMCG_EVENTS; i++)
    flush_one(&vs->events[i], &vs->events_local[i], &vs->events_pending[i],
              pvs ? &pvs->events_pending[i] : nullptr, statc ? &statc->events[i] : nullptr,
              statc ? &statc->events_prev[i] : nullptr);

  lruvec_stats *ls = &st->lruvec;
  lruvec_stats *pls = pst ? &pst->lruvec : nullptr;
  lruvec_stats_percpu *lstatc = block ? &block->lruvec : nullptr;
  for (int i = 0; i < NR_MEMCG_NODE_STAT_ITEMS; i++)
    flush_one(&ls->state[i], &ls->state_local[i], &ls->state_pending[i],
              pls ? &pls->state_pending[i] : nullptr, lstatc ? &lstatc->state[i] : nullptr,
              lstatc ? &lstatc->state_prev[i] : nullptr);

  if (statc) WRITE_ONCE(statc->stats_updates, 0u);
  // One atomic write per memcg for the whole per-CPU loop.
  if (atomic_long_read(&vs->stats_updates)) atomic_long_set(&vs->stats_updates, 0);
}

bool memcg_vmstats_alloc(mem_cgroup *memcg) {
  // Only the per-CPU pointers: the statistics come with the first update (see memcg_stats).
  if (nr_cpu_ids == 0) return false;
  memcg->stats_pcpu = new (std::nothrow) memcg_stats_pcpu *[nr_cpu_ids]();
  return memcg->stats_pcpu != nullptr;
}

void memcg_vmstats_free(mem_cgroup *memcg) {
  if (!memcg->stats_pcpu) return;
  // Bookkeeping for the invariant checker and the node statistics: what the memcg itself
  // counted in its tracked items.
  for (unsigned int item : memcg_node_stat_items)
    atomic_long_add(emu::memcg_page_state_local_sum(memcg, static_cast<int>(item)),
                    &g_freed_stat[item]);
  for (unsigned int item : memcg_stat_items)
    atomic_long_add(emu::memcg_page_state_local_sum(memcg, static_cast<int>(item)),
                    &g_freed_stat[item]);
  int cpu;
  for_each_possible_cpu(cpu) delete memcg->stats_pcpu[cpu];
  delete[] memcg->stats_pcpu;
  memcg->stats_pcpu = nullptr;
  delete memcg->stats;
  memcg->stats = nullptr;
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
  for_each_possible_cpu(cpu) {
    if (memcg_stats_pcpu *statc = memcg_stats_pcpu_peek(memcg, cpu))
      sum += READ_ONCE(statc->vmstats.state[i]);
  }
  return sum;
}

unsigned long memcg_events_local_sum(mem_cgroup *memcg, int event) {
  int i = memcg_events_index(event);
  if (WARN_ONCE(i == BAD_INDEX, "%s: missing stat item %d\n", __func__, event)) return 0;
  unsigned long sum = 0;
  int cpu;
  for_each_possible_cpu(cpu) {
    if (memcg_stats_pcpu *statc = memcg_stats_pcpu_peek(memcg, cpu))
      sum += READ_ONCE(statc->vmstats.events[i]);
  }
  return sum;
}

long memcg_freed_stat(int idx) {
  if (idx < 0 || idx >= MEMCG_NR_STAT) return 0;
  return atomic_long_read(&g_freed_stat[idx]);
}

void mem_cgroup_flush_stats_force(mem_cgroup *memcg) {
  if (!memcg) memcg = root_mem_cgroup;
  if (memcg) do_flush_stats(memcg);
}

long memcg_stats_updates(mem_cgroup *memcg) {
  memcg_vmstats *vs = memcg_vmstats_of(memcg);
  return vs ? atomic_long_read(&vs->stats_updates) : 0;
}

u64 memcg_flush_last_time() { return READ_ONCE(flush_last_time); }

u64 memcg_stats_pcpu_mask(mem_cgroup *memcg) {
  u64 mask = 0;
  int cpu;
  for_each_possible_cpu(cpu) {
    if (memcg_stats_pcpu_peek(memcg, cpu)) mask |= u64{1} << cpu;
  }
  return mask;
}

bool memcg_stats_allocated(mem_cgroup *memcg) { return memcg_stats_of(memcg) != nullptr; }

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
