// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_stat_format.cc: the text of memory.stat (v2 and v1) and memory.numa_stat (v2
// and v1).
//
// memory.stat (v2) prints, in this order, every memory_stats[] item in bytes (or as a count for
// the workingset and demotion items), the synthesised slab line after slab_unreclaimable, the
// pgscan and pgsteal sums, then every tracked vm event but pgpgin/pgpgout (kernel-semantics.md
// 3.6). The v1 text prints the memcg's own values, the hierarchical limits and the total_*
// (hierarchical) block. Both are formatted into one 4 KiB buffer, as the kernel's seq_buf.
//
// Mirrors: mm/memcontrol.c (memory_stats[], memcg_stat_format, memory_stat_format,
//   memory_stat_show, memory_numa_stat_show), mm/memcontrol-v1.c (memcg1_stats[],
//   memcg1_stat_names[], memcg1_events[], memcg1_stat_format, mem_cgroup_node_nr_lru_pages,
//   mem_cgroup_nr_lru_pages, memcg_numa_stat_show) (Linux 6.19)
// Emulation: the kernel's pr_warn on a buffer overflow is a line on stderr here.
// Emulation: the machine offers no memory_hugetlb_accounting mount option, so the hugetlb line
//   of memory.stat is never printed (memory.numa_stat prints it: its loop has no such check).
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <iterator>
#include <string>

#include "kernel/cftype.h"
#include "kernel/cgroup.h"
#include "mm/memcontrol.h"
#include "mm/memcontrol_stat.h"

namespace umemcg {

namespace {

// cgroup_root flag (kernel value) of the memory_hugetlb_accounting mount option.
inline constexpr unsigned int CGRP_ROOT_MEMORY_HUGETLB_ACCOUNTING = 1u << 19;
// memory.stat's buffer (SEQ_BUF_SIZE = PAGE_SIZE).
inline constexpr size_t SEQ_BUF_SIZE = 4096;
// Emulation: tests may shrink it to see the truncation (emu::memcg_set_stat_buf_size).
size_t g_stat_buf_size = SEQ_BUF_SIZE;

struct memory_stat {
  const char *name;
  unsigned int idx;
};

// tools/scenario/stat_fetch.cc's kItems[] copies its head on purpose: a user program's own list.
constexpr memory_stat memory_stats[] = {
    {"anon", NR_ANON_MAPPED},
    {"file", NR_FILE_PAGES},
    {"kernel", MEMCG_KMEM},
    {"kernel_stack", NR_KERNEL_STACK_KB},
    {"pagetables", NR_PAGETABLE},
    {"sec_pagetables", NR_SECONDARY_PAGETABLE},
    {"percpu", MEMCG_PERCPU_B},
    {"sock", MEMCG_SOCK},
    {"vmalloc", MEMCG_VMALLOC},
    {"shmem", NR_SHMEM},
    {"file_mapped", NR_FILE_MAPPED},
    {"file_dirty", NR_FILE_DIRTY},
    {"file_writeback", NR_WRITEBACK},
    {"swapcached", NR_SWAPCACHE},
    {"anon_thp", NR_ANON_THPS},
    {"file_thp", NR_FILE_THPS},
    {"shmem_thp", NR_SHMEM_THPS},
    {"inactive_anon", NR_INACTIVE_ANON},
    {"active_anon", NR_ACTIVE_ANON},
    {"inactive_file", NR_INACTIVE_FILE},
    {"active_file", NR_ACTIVE_FILE},
    {"unevictable", NR_UNEVICTABLE},
    {"slab_reclaimable", NR_SLAB_RECLAIMABLE_B},
    {"slab_unreclaimable", NR_SLAB_UNRECLAIMABLE_B},
    {"hugetlb", NR_HUGETLB},
    // The memory events.
    {"workingset_refault_anon", WORKINGSET_REFAULT_ANON},
    {"workingset_refault_file", WORKINGSET_REFAULT_FILE},
    {"workingset_activate_anon", WORKINGSET_ACTIVATE_ANON},
    {"workingset_activate_file", WORKINGSET_ACTIVATE_FILE},
    {"workingset_restore_anon", WORKINGSET_RESTORE_ANON},
    {"workingset_restore_file", WORKINGSET_RESTORE_FILE},
    {"workingset_nodereclaim", WORKINGSET_NODERECLAIM},
    {"pgdemote_kswapd", PGDEMOTE_KSWAPD},
    {"pgdemote_direct", PGDEMOTE_DIRECT},
    {"pgdemote_khugepaged", PGDEMOTE_KHUGEPAGED},
    {"pgdemote_proactive", PGDEMOTE_PROACTIVE},
};

// The vm events memory.stat prints, in the order of the memcg event table (pgpgin and pgpgout,
// tracked for v1, are skipped).
constexpr vm_event_item memcg_vm_event_stat_v2[] = {
    PSWPIN,           PSWPOUT,          PGSCAN_KSWAPD,     PGSCAN_DIRECT,
    PGSCAN_KHUGEPAGED, PGSCAN_PROACTIVE, PGSTEAL_KSWAPD,   PGSTEAL_DIRECT,
    PGSTEAL_KHUGEPAGED, PGSTEAL_PROACTIVE, PGFAULT,        PGMAJFAULT,
    PGREFILL,         PGACTIVATE,       PGDEACTIVATE,      PGLAZYFREE,
    PGLAZYFREED,      SWPIN_ZERO,       SWPOUT_ZERO,       THP_FAULT_ALLOC,
    THP_COLLAPSE_ALLOC, THP_SWPOUT,     THP_SWPOUT_FALLBACK,
};

// v1: the memcg's own values, then total_* for the hierarchy.
constexpr unsigned int memcg1_stats[] = {
    NR_FILE_PAGES, NR_ANON_MAPPED, NR_ANON_THPS, NR_SHMEM, NR_FILE_MAPPED, NR_FILE_DIRTY,
    NR_WRITEBACK, WORKINGSET_REFAULT_ANON, WORKINGSET_REFAULT_FILE, MEMCG_SWAP, NR_SWAPCACHE,
};
constexpr const char *memcg1_stat_names[] = {
    "cache", "rss", "rss_huge", "shmem", "mapped_file", "dirty", "writeback",
    "workingset_refault_anon", "workingset_refault_file", "swap", "swapcached",
};
static_assert(std::size(memcg1_stats) == std::size(memcg1_stat_names));
constexpr vm_event_item memcg1_events[] = {PGPGIN, PGPGOUT, PGFAULT, PGMAJFAULT};

constexpr const char *lru_list_names[] = {"inactive_anon", "active_anon", "inactive_file",
                                          "active_file", "unevictable"};
constexpr int NR_LRU_LISTS = std::size(lru_list_names);

// A fixed-size text buffer: what does not fit is cut off and the buffer is marked overflowed
// (kernel seq_buf: the last vsnprintf leaves a truncated, NUL-terminated line).
struct seq_buf {
  std::string buf;
  size_t size;
  bool overflowed = false;
};

void seq_buf_printf(seq_buf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void seq_buf_printf(seq_buf *s, const char *fmt, ...) {
  if (s->overflowed) return;
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t len = static_cast<size_t>(n);
  if (s->buf.size() + len < s->size) {
    s->buf.append(line, len);
    return;
  }
  // The kernel keeps what vsnprintf could write: up to size - 1 bytes in all.
  s->buf.append(line, std::min(len, s->size - 1 - s->buf.size()));
  s->overflowed = true;
}

void memcg_stat_format(mem_cgroup *memcg, seq_buf *s) {
  // Current memory state, then the accumulated events.
  mem_cgroup_flush_stats(memcg);

  const unsigned int root_flags = memcg->css.cgroup->root->flags;
  for (const memory_stat &ms : memory_stats) {
    if (ms.idx == NR_HUGETLB && !(root_flags & CGRP_ROOT_MEMORY_HUGETLB_ACCOUNTING)) continue;
    u64 size = memcg_page_state_output(memcg, static_cast<int>(ms.idx));
    seq_buf_printf(s, "%s %llu\n", ms.name, static_cast<unsigned long long>(size));
    if (ms.idx == NR_SLAB_UNRECLAIMABLE_B) {
      size += memcg_page_state_output(memcg, NR_SLAB_RECLAIMABLE_B);
      seq_buf_printf(s, "slab %llu\n", static_cast<unsigned long long>(size));
    }
  }

  seq_buf_printf(s, "pgscan %lu\n",
                 memcg_events(memcg, PGSCAN_KSWAPD) + memcg_events(memcg, PGSCAN_DIRECT) +
                     memcg_events(memcg, PGSCAN_PROACTIVE) +
                     memcg_events(memcg, PGSCAN_KHUGEPAGED));
  seq_buf_printf(s, "pgsteal %lu\n",
                 memcg_events(memcg, PGSTEAL_KSWAPD) + memcg_events(memcg, PGSTEAL_DIRECT) +
                     memcg_events(memcg, PGSTEAL_PROACTIVE) +
                     memcg_events(memcg, PGSTEAL_KHUGEPAGED));

  for (vm_event_item e : memcg_vm_event_stat_v2)
    seq_buf_printf(s, "%s %lu\n", vm_event_name(e), memcg_events(memcg, e));
}

void memcg1_stat_format(mem_cgroup *memcg, seq_buf *s) {
  mem_cgroup_flush_stats(memcg);

  for (size_t i = 0; i < std::size(memcg1_stats); i++)
    seq_buf_printf(s, "%s %lu\n", memcg1_stat_names[i],
                   memcg_page_state_local_output(memcg, static_cast<int>(memcg1_stats[i])));
  for (vm_event_item e : memcg1_events)
    seq_buf_printf(s, "%s %lu\n", vm_event_name(e), memcg_events_local(memcg, e));
  for (int i = 0; i < NR_LRU_LISTS; i++)
    seq_buf_printf(s, "%s %lu\n", lru_list_names[i],
                   memcg_page_state_local(memcg, NR_LRU_BASE + i) * PAGE_SIZE);

  // Hierarchical information.
  unsigned long memory = PAGE_COUNTER_MAX, memsw = PAGE_COUNTER_MAX;
  for (mem_cgroup *mi = memcg; mi; mi = parent_mem_cgroup(mi)) {
    memory = std::min<unsigned long>(memory, READ_ONCE(mi->memory.max));
    memsw = std::min<unsigned long>(memsw, READ_ONCE(mi->memsw.max));
  }
  seq_buf_printf(s, "hierarchical_memory_limit %llu\n",
                 static_cast<unsigned long long>(memory) * PAGE_SIZE);
  seq_buf_printf(s, "hierarchical_memsw_limit %llu\n",
                 static_cast<unsigned long long>(memsw) * PAGE_SIZE);

  for (size_t i = 0; i < std::size(memcg1_stats); i++)
    seq_buf_printf(s, "total_%s %llu\n", memcg1_stat_names[i],
                   static_cast<unsigned long long>(
                       memcg_page_state_output(memcg, static_cast<int>(memcg1_stats[i]))));
  for (vm_event_item e : memcg1_events)
    seq_buf_printf(s, "total_%s %llu\n", vm_event_name(e),
                   static_cast<unsigned long long>(memcg_events(memcg, e)));
  for (int i = 0; i < NR_LRU_LISTS; i++)
    seq_buf_printf(s, "total_%s %llu\n", lru_list_names[i],
                   static_cast<unsigned long long>(memcg_page_state(memcg, NR_LRU_BASE + i)) *
                       PAGE_SIZE);
}

int stat_show(seq_file *m, void (*format)(mem_cgroup *, seq_buf *)) {
  mem_cgroup *memcg = mem_cgroup_from_css(seq_css(m));
  seq_buf s{std::string(), READ_ONCE(g_stat_buf_size)};
  s.buf.reserve(s.size);
  format(memcg, &s);
  if (s.overflowed)
    std::fprintf(stderr, "memory_stat_format: Warning, stat buffer overflow, please report\n");
  seq_puts(m, s.buf.c_str());
  return 0;
}

void memory_stat_format(mem_cgroup *memcg, seq_buf *s) {
  if (cgroup_on_dfl(memcg->css.cgroup))
    memcg_stat_format(memcg, s);
  else
    memcg1_stat_format(memcg, s);
}

}  // namespace

namespace emu {
size_t memcg_set_stat_buf_size(size_t size) {
  size_t old = READ_ONCE(g_stat_buf_size);
  WRITE_ONCE(g_stat_buf_size, size ? size : SEQ_BUF_SIZE);
  return old;
}
}  // namespace emu

int memory_stat_show(seq_file *m, void *) { return stat_show(m, memory_stat_format); }

int memcg1_stat_show(seq_file *m, void *) { return stat_show(m, memcg1_stat_format); }

int memory_numa_stat_show(seq_file *m, void *) {
  mem_cgroup *memcg = mem_cgroup_from_css(seq_css(m));

  mem_cgroup_flush_stats(memcg);
  for (const memory_stat &ms : memory_stats) {
    if (ms.idx >= NR_VM_NODE_STAT_ITEMS) continue;
    auto idx = static_cast<node_stat_item>(ms.idx);
    // One node: N0, the lruvec of the memcg (hierarchical), in memory.stat's units.
    u64 size = static_cast<u64>(lruvec_page_state(memcg, idx)) *
               static_cast<u64>(memcg_page_state_output_unit(idx));
    seq_printf(m, "%s N0=%llu\n", ms.name, static_cast<unsigned long long>(size));
  }
  return 0;
}

namespace {

// The LRU masks of v1 memory.numa_stat's lines.
constexpr unsigned int LRU_ALL_FILE = (1u << LRU_INACTIVE_FILE) | (1u << LRU_ACTIVE_FILE);
constexpr unsigned int LRU_ALL_ANON = (1u << LRU_INACTIVE_ANON) | (1u << LRU_ACTIVE_ANON);
constexpr unsigned int LRU_ALL = (1u << NR_LRU_LISTS) - 1;

// Pages on the LRU lists of @lru_mask in @memcg's lruvec of the one node: hierarchical (tree)
// or the memcg's own.
unsigned long mem_cgroup_node_nr_lru_pages(mem_cgroup *memcg, unsigned int lru_mask, bool tree) {
  unsigned long nr = 0;
  for (int lru = 0; lru < NR_LRU_LISTS; lru++) {
    if (!((1u << lru) & lru_mask)) continue;
    auto idx = static_cast<node_stat_item>(NR_LRU_BASE + lru);
    nr += tree ? lruvec_page_state(memcg, idx) : lruvec_page_state_local(memcg, idx);
  }
  return nr;
}

// The same over every node, from the memcg's own statistics.
unsigned long mem_cgroup_nr_lru_pages(mem_cgroup *memcg, unsigned int lru_mask, bool tree) {
  unsigned long nr = 0;
  for (int lru = 0; lru < NR_LRU_LISTS; lru++) {
    if (!((1u << lru) & lru_mask)) continue;
    nr += tree ? memcg_page_state(memcg, NR_LRU_BASE + lru)
               : memcg_page_state_local(memcg, NR_LRU_BASE + lru);
  }
  return nr;
}

}  // namespace

int memcg_numa_stat_show(seq_file *m, void *) {
  struct numa_stat {
    const char *name;
    unsigned int lru_mask;
  };
  static constexpr numa_stat stats[] = {
      {"total", LRU_ALL},
      {"file", LRU_ALL_FILE},
      {"anon", LRU_ALL_ANON},
      {"unevictable", 1u << LRU_UNEVICTABLE},
  };
  mem_cgroup *memcg = mem_cgroup_from_css(seq_css(m));

  mem_cgroup_flush_stats(memcg);
  // The memcg's own pages, then the hierarchy's; in pages, the total first, then node 0.
  for (bool tree : {false, true}) {
    for (const numa_stat &stat : stats) {
      seq_printf(m, "%s%s=%lu", tree ? "hierarchical_" : "", stat.name,
                 mem_cgroup_nr_lru_pages(memcg, stat.lru_mask, tree));
      seq_printf(m, " N%d=%lu", 0, mem_cgroup_node_nr_lru_pages(memcg, stat.lru_mask, tree));
      seq_putc(m, '\n');
    }
  }
  return 0;
}

}  // namespace umemcg
