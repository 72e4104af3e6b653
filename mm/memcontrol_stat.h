// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_stat.h: memcg statistics: the stat items, the per-CPU update path, the rstat
// flush, the readers, and the memory.stat / memory.numa_stat text (kernel-semantics.md 3).
//
// A memcg tracks a subset of the node stat items, its own memcg_stat_item counters and a subset
// of the vm events (3.1). An update adds to this CPU's running total of the memcg (and, for node
// items, of its lruvec) and counts its size, in pages, towards the flush threshold of the memcg
// and each ancestor (3.3). Readers see the per-memcg aggregates the last rstat flush computed
// (3.4, 3.5): hierarchical (memcg_page_state, memcg_events) and local (the *_local readers).
// A flush happens when a reader finds more than MEMCG_CHARGE_BATCH x num_online_cpus() pages
// of pending updates in the subtree, and unconditionally for the whole tree every FLUSH_TIME
// (2 s of machine time). Readers can therefore lag behind the updates (3.4, staleness).
//
// Locking: the per-CPU totals are written only by their CPU with preemption disabled
// (__mod_memcg_state and __count_memcg_events require it, the others disable it themselves);
// the aggregates are written only under the rstat lock (kernel/cgroup_rstat.h) and read
// locklessly with READ_ONCE.
//
// Memory: a memcg allocates no statistics until it is updated: the aggregates come with its
// first update, the per-CPU totals with the first update on each CPU (published with a release
// cmpxchg; readers treat a missing block as all zeros). See memcontrol_stat.cc, struct
// memcg_stats_pcpu, and docs/charge-path.md, "Statistics memory".
//
// Mirrors: include/linux/mmzone.h (enum node_stat_item), include/linux/vm_event_item.h,
//   include/linux/memcontrol.h (enum memcg_stat_item, the stat API), mm/memcontrol.c
//   (memcg_vmstats*, memcg_rstat_updated, mem_cgroup_flush_stats*, mem_cgroup_css_rstat_flush,
//   memory_stats[], memcg_stat_format, memory_stat_show, memory_numa_stat_show),
//   mm/memcontrol-v1.c (memcg1_stat_format) (Linux 6.19)
// Emulation: the emulated kernel config is CONFIG_SWAP=y, CONFIG_TRANSPARENT_HUGEPAGE=y (no huge
//   pages are modelled, so the THP lines print 0), CONFIG_ZSWAP=n, CONFIG_NUMA_BALANCING=n,
//   CONFIG_HUGETLB_PAGE=y (the hugetlb line needs the memory_hugetlb_accounting mount option,
//   which the machine does not offer), CONFIG_MEMCG_V1=y, CONFIG_SMP=y, one NUMA node (N0).
// Emulation: the enums keep the kernel's names and relative order but list only the items of
//   that config which the emulator's memory model or memcg use; their numeric values are the
//   emulator's own (a BPF program must take them from here, not from a vmlinux.h).
// Emulation: one NUMA node, so a memcg has one lruvec and the lruvec is named by its memcg:
//   mod_memcg_lruvec_state(memcg, ...) is the kernel's __mod_memcg_lruvec_state on that lruvec
//   (the memory model wraps it in mod_lruvec_state(lruvec, ...), with the node counters).
// Emulation: interrupt contexts run only at explicit points (shim/preempt.h), so the per-CPU
//   read-modify-write of an update with preemption disabled is the kernel's this_cpu_add.
// Emulation: statistics memory allocated on first update (see "Memory" above); the kernel
//   allocates it with the memcg.
#pragma once

#include <cstddef>

#include "shim/types.h"

namespace umemcg {

struct mem_cgroup;
struct seq_file;
struct cgroup_subsys_state;

// --- items -------------------------------------------------------------------------------------

enum node_stat_item {
  NR_LRU_BASE,
  NR_INACTIVE_ANON = NR_LRU_BASE,  // the order of enum lru_list
  NR_ACTIVE_ANON,
  NR_INACTIVE_FILE,
  NR_ACTIVE_FILE,
  NR_UNEVICTABLE,
  NR_SLAB_RECLAIMABLE_B,
  NR_SLAB_UNRECLAIMABLE_B,
  NR_ISOLATED_ANON,  // isolated from the anon LRU by reclaim
  NR_ISOLATED_FILE,
  WORKINGSET_NODES,
  WORKINGSET_REFAULT_BASE,
  WORKINGSET_REFAULT_ANON = WORKINGSET_REFAULT_BASE,
  WORKINGSET_REFAULT_FILE,
  WORKINGSET_ACTIVATE_BASE,
  WORKINGSET_ACTIVATE_ANON = WORKINGSET_ACTIVATE_BASE,
  WORKINGSET_ACTIVATE_FILE,
  WORKINGSET_RESTORE_BASE,
  WORKINGSET_RESTORE_ANON = WORKINGSET_RESTORE_BASE,
  WORKINGSET_RESTORE_FILE,
  WORKINGSET_NODERECLAIM,
  NR_ANON_MAPPED,
  NR_FILE_MAPPED,
  NR_FILE_PAGES,
  NR_FILE_DIRTY,
  NR_WRITEBACK,
  NR_SHMEM,
  NR_SHMEM_THPS,
  NR_FILE_THPS,
  NR_ANON_THPS,
  NR_VMSCAN_WRITE,
  NR_VMSCAN_IMMEDIATE,
  NR_DIRTIED,
  NR_WRITTEN,
  NR_KERNEL_STACK_KB,  // in KiB
  NR_PAGETABLE,
  NR_SECONDARY_PAGETABLE,
  NR_SWAPCACHE,
  PGDEMOTE_KSWAPD,
  PGDEMOTE_DIRECT,
  PGDEMOTE_KHUGEPAGED,
  PGDEMOTE_PROACTIVE,
  NR_HUGETLB,
  NR_VM_NODE_STAT_ITEMS
};

// memcg's own items, numbered after the node items: one index space (int idx) for both.
enum memcg_stat_item {
  MEMCG_SWAP = NR_VM_NODE_STAT_ITEMS,
  MEMCG_SOCK,
  MEMCG_PERCPU_B,
  MEMCG_VMALLOC,
  MEMCG_KMEM,
  MEMCG_ZSWAP_B,
  MEMCG_ZSWAPPED,
  MEMCG_NR_STAT,
};

enum vm_event_item {
  PGPGIN,
  PGPGOUT,
  PSWPIN,
  PSWPOUT,
  PGFREE,
  PGACTIVATE,
  PGDEACTIVATE,
  PGLAZYFREE,
  PGFAULT,
  PGMAJFAULT,
  PGLAZYFREED,
  PGREFILL,
  PGREUSE,
  PGSTEAL_KSWAPD,
  PGSTEAL_DIRECT,
  PGSTEAL_KHUGEPAGED,
  PGSTEAL_PROACTIVE,
  PGSCAN_KSWAPD,
  PGSCAN_DIRECT,
  PGSCAN_KHUGEPAGED,
  PGSCAN_PROACTIVE,
  PGSCAN_DIRECT_THROTTLE,
  PGSCAN_ANON,
  PGSCAN_FILE,
  PGSTEAL_ANON,
  PGSTEAL_FILE,
  PGROTATED,
  OOM_KILL,
  UNEVICTABLE_PGCULLED,
  UNEVICTABLE_PGSCANNED,
  UNEVICTABLE_PGRESCUED,
  UNEVICTABLE_PGMLOCKED,
  UNEVICTABLE_PGMUNLOCKED,
  THP_FAULT_ALLOC,
  THP_COLLAPSE_ALLOC,
  THP_SWPOUT,
  THP_SWPOUT_FALLBACK,
  SWPIN_ZERO,
  SWPOUT_ZERO,
  NR_VM_EVENT_ITEMS
};

// vmstat's name of an event ("pgfault"), or "" out of range.
const char *vm_event_name(enum vm_event_item item);

// --- constants -------------------------------------------------------------------------------

// The periodic flush interval (2 * HZ jiffies).
inline constexpr unsigned long FLUSH_TIME = 2 * 1000;

// --- updates ---------------------------------------------------------------------------------

/**
 * __mod_memcg_state - add @val to a memcg stat item on this CPU
 * @memcg: the memcg (the root too)
 * @idx: a tracked node_stat_item or memcg_stat_item
 * @val: delta in the item's native unit (pages, bytes or KiB, see memcg_page_state_unit)
 *
 * Counts |val| (in pages, at least 1 for a non-zero sub-page update) towards the flush
 * threshold of @memcg and each ancestor. An untracked @idx is a WARN and is ignored.
 * Context: preemption disabled (the caller's per-CPU section).
 */
void __mod_memcg_state(mem_cgroup *memcg, int idx, int val);
// mod_memcg_state: the same from any task context (disables preemption itself).
void mod_memcg_state(mem_cgroup *memcg, int idx, int val);

/**
 * mod_memcg_lruvec_state - add @val to a node item of @memcg and of its lruvec on this CPU
 * @memcg: the memcg owning the lruvec (one node, see the banner)
 * @idx: a tracked node_stat_item
 * @val: delta in the item's native unit
 *
 * Updates both the memcg's and the lruvec's per-CPU totals (memory.stat and memory.numa_stat
 * read them). Context: any task context; disables preemption itself.
 */
void mod_memcg_lruvec_state(mem_cgroup *memcg, enum node_stat_item idx, int val);

/**
 * __count_memcg_events - count @count occurrences of a vm event in @memcg on this CPU
 * Context: preemption disabled. count_memcg_events() disables it itself. An untracked @idx is a
 * WARN and is ignored.
 */
void __count_memcg_events(mem_cgroup *memcg, enum vm_event_item idx, unsigned long count);
void count_memcg_events(mem_cgroup *memcg, enum vm_event_item idx, unsigned long count);

// --- reads (values of the last flush) ----------------------------------------------------------

// Hierarchical value of @idx in its native unit, clamped at 0 (CONFIG_SMP). Untracked: WARN, 0.
unsigned long memcg_page_state(mem_cgroup *memcg, int idx);
// The memcg's own value (all CPUs, no descendants), clamped at 0.
unsigned long memcg_page_state_local(mem_cgroup *memcg, int idx);
// Hierarchical / local event counts. Untracked: WARN, 0.
unsigned long memcg_events(mem_cgroup *memcg, int event);
unsigned long memcg_events_local(mem_cgroup *memcg, int event);
// The lruvec (node 0) of @memcg: hierarchical and local node-item values, clamped at 0.
unsigned long lruvec_page_state(mem_cgroup *memcg, enum node_stat_item idx);
unsigned long lruvec_page_state_local(mem_cgroup *memcg, enum node_stat_item idx);

// The native unit of an item in bytes: 1 for the _B items, 1024 for NR_KERNEL_STACK_KB,
// PAGE_SIZE for everything else.
int memcg_page_state_unit(int item);
// memory.stat's unit: 1 (a plain count) for WORKINGSET_* and PGDEMOTE_*, else the native unit.
int memcg_page_state_output_unit(int item);
// memcg_page_state() x output unit: what memory.stat prints and bpf_mem_cgroup_page_state returns.
unsigned long memcg_page_state_output(mem_cgroup *memcg, int item);
unsigned long memcg_page_state_local_output(mem_cgroup *memcg, int item);
// Whether @idx (a node or memcg item) / @event is tracked per memcg (3.1).
bool memcg_stat_item_valid(int idx);
bool memcg_vm_event_item_valid(int event);

// --- flushing ----------------------------------------------------------------------------------

/**
 * mem_cgroup_flush_stats - flush @memcg's subtree if enough updates are pending
 * @memcg: root of the subtree (nullptr: the root memcg)
 *
 * Flushes only when the subtree's pending update count exceeds MEMCG_CHARGE_BATCH x
 * num_online_cpus(); otherwise returns at once and readers see older values.
 * Context: task context, may sleep (between CPUs of the flush).
 */
void mem_cgroup_flush_stats(mem_cgroup *memcg);
// Flushes (threshold-gated) only when the periodic flush is a full cycle late (> 2 x FLUSH_TIME
// since the last root flush). Context: task context, may sleep.
void mem_cgroup_flush_stats_ratelimited(mem_cgroup *memcg);

// --- control files (kernel/cftype.h seq_show signature) ---------------------------------------

// memory.stat: the v2 text on the default hierarchy, the v1 text on v1 (4 KiB, truncated with a
// warning beyond that).
int memory_stat_show(seq_file *m, void *v);
// memory.numa_stat (v2): one line per node item of memory.stat, " N0=<value>".
int memory_numa_stat_show(seq_file *m, void *v);
// memory.numa_stat (v1): "total=", "file=", "anon=", "unevictable=" lines of the memcg's own LRU
// pages, then the same with "hierarchical_" for its subtree; each "<pages> N0=<pages>".
int memcg_numa_stat_show(seq_file *m, void *v);
// The v1 text whatever the hierarchy (memcg1_stat_format).
// Emulation: the kernel's v1 table points at memory_stat_show, which picks the v1 text there.
int memcg1_stat_show(seq_file *m, void *v);

// --- memcg lifetime (called by mm/memcontrol.cc) -------------------------------------------------

namespace memcg_internal {
// The vmstats of a new memcg: only its per-CPU block pointers, all nullptr (the blocks and
// the aggregates are allocated on the first update, see memcontrol_stat.cc); false on
// allocation failure.
bool memcg_vmstats_alloc(mem_cgroup *memcg);
// Frees them (after the final rstat flush pushed everything to the parent).
void memcg_vmstats_free(mem_cgroup *memcg);
// The root came online: arm the periodic flush. Boot/shutdown of the flush machinery.
void memcg_stats_root_online();
void memcg_stats_boot();
void memcg_stats_shutdown();
// The css_rstat_flush callback of the memory controller.
void mem_cgroup_css_rstat_flush(cgroup_subsys_state *css, int cpu);
}  // namespace memcg_internal

namespace emu {
/**
 * memcg_page_state_local_sum - exact own value of @idx: the sum of every CPU's running total
 *
 * Needs no flush and is not clamped (it can be negative, e.g. kmem uncharged from the parent
 * after reparenting). Exact when no update is in flight (a quiescent machine); the invariant
 * checker reads statistics this way so that checking never changes what readers see.
 */
long memcg_page_state_local_sum(mem_cgroup *memcg, int idx);
unsigned long memcg_events_local_sum(mem_cgroup *memcg, int event);
// The own value of a tracked item (a node item or memcg's own, in its native unit) summed over
// the memcgs already freed, as they held it when freed (bookkeeping for the checker and for
// the machine's node statistics, mm/vmstat.h); 0 for an untracked @idx.
long memcg_freed_stat(int idx);
// Forces a flush of @memcg's subtree, as the periodic work does for the root (no threshold).
void mem_cgroup_flush_stats_force(mem_cgroup *memcg);
// The root's pending update count (the threshold counter) and the time of the last root flush.
long memcg_stats_updates(mem_cgroup *memcg);
u64 memcg_flush_last_time();
// The CPUs on which @memcg has a per-CPU statistics block (bit cpu set; machines have at most
// 64 vCPUs), and whether its aggregates exist (see "Memory" in the banner). Any context.
u64 memcg_stats_pcpu_mask(mem_cgroup *memcg);
bool memcg_stats_allocated(mem_cgroup *memcg);
// memory.stat's buffer size (0: the kernel's 4096). Returns the previous one.
size_t memcg_set_stat_buf_size(size_t size);
}  // namespace emu

}  // namespace umemcg
