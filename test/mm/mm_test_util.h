// SPDX-License-Identifier: GPL-2.0-only
// test/mm/mm_test_util.h: helpers for tests of the memory model (processes, LRU, reclaim).
#pragma once

#include "test/support/memcg_env.h"

#include <functional>

#include "mm/filemap.h"
#include "mm/memcontrol_folio.h"
#include "mm/memory.h"
#include "mm/obj_cgroup.h"
#include "mm/memcontrol_iter.h"
#include "mm/oom_kill.h"
#include "mm/page_alloc.h"
#include "mm/process.h"
#include "mm/swap.h"
#include "mm/vmscan.h"
#include "shim/completion.h"

namespace umemcg::test {

inline unsigned long lru_pages(mem_cgroup *m, lru_list lru) {
  return lruvec_lru_size(mem_cgroup_lruvec(m), lru);
}
inline unsigned long lru_total(mem_cgroup *m) {
  unsigned long n = 0;
  for (int l = 0; l < NR_LRU_LISTS; l++) n += lru_pages(m, static_cast<lru_list>(l));
  return n;
}
inline long usage(mem_cgroup *m) { return static_cast<long>(page_counter_read(&m->memory)); }

// In a process: maps @nr anon pages (mmap @flags) and faults them in, one fault each unless
// MAP_POPULATE faulted them in the mmap. False once the process is killed on the way.
inline bool fault_anon(unsigned long nr, unsigned long flags) {
  unsigned long addr;
  bool alive = emu::sys_mmap_anon(nr, flags, &addr);
  if (!(flags & MAP_POPULATE))
    for (unsigned long i = 0; alive && i < nr; i++) alive = emu::user_write(addr + i);
  return alive;
}

// Starts a process in @memcg that faults @nr anon pages (one fault each), signals @ready from
// the kernel (also when it is killed before it is done) and holds them until killed.
inline emu::Process *start_anon_holder(mem_cgroup *memcg, unsigned long nr, completion *ready,
                                       short adj = 0, unsigned long flags = 0) {
  emu::ProcessOptions o;
  o.memcg = memcg;
  o.oom_score_adj = adj;
  return emu::process_start(o, [nr, ready, flags] {
    bool alive = fault_anon(nr, flags);
    {
      emu::KernelEntry k;
      complete(ready);
    }
    while (alive && emu::sys_pause()) {
    }
    return 0;
  });
}

// Kills @p and returns its exit status.
inline int kill_and_wait(emu::Process *p) {
  emu::process_kill(p);
  return emu::process_wait(p);
}

// A start_anon_holder() process, returned once it has signalled (its pages faulted in, or it is
// on its way out).
inline emu::Process *anon_holder_started(mem_cgroup *memcg, unsigned long nr, short adj = 0,
                                         unsigned long flags = 0) {
  completion ready;
  init_completion(&ready);
  emu::Process *p = start_anon_holder(memcg, nr, &ready, adj, flags);
  wait_for_completion(&ready);
  return p;
}

// A start_anon_holder() process, started and waited for until its pages are faulted in.
struct AnonHolder {
  emu::Process *proc;
  AnonHolder(mem_cgroup *m, unsigned long nr) : proc(anon_holder_started(m, nr)) {}
  // Kills it and returns its exit status.
  int kill() { return kill_and_wait(proc); }
};

// Pages of the machine's RAM the model's folios hold, counted from the lists: on a quiescent
// machine every folio is on an LRU list or in an lru_add batch (every memcg, offline ones too);
// plus the pages of the slab objects charged to memcgs (mm/obj_cgroup.h).
// totalram_pages() - nr_free_pages() must equal it: no page lost, none counted twice.
inline unsigned long folio_pages_held() {
  unsigned long n = emu::slab_ram_pages();
  for (mem_cgroup *m = mem_cgroup_iter(nullptr, nullptr, nullptr); m;
       m = mem_cgroup_iter(nullptr, m, nullptr))
    n += lru_total(m) + lru_add_batched_pages(m);
  return n;
}
// A machine of @pages of RAM (memcg_boot_params::totalram_pages) with @swap swap slots.
inline memcg_boot_params with_ram(memcg_boot_params p, unsigned long pages,
                                  unsigned long swap = 0) {
  p.totalram_pages = pages;
  p.swap_pages = swap;
  return p;
}

// Every per-CPU LRU batch and charge stock emptied, and memcg's queued work done.
inline void drain_charges() {
  lru_add_drain_all();
  drain_all_stock(root_mem_cgroup);
  flush_workqueue(memcg_wq);
}

inline unsigned long ram_used() { return totalram_pages() - nr_free_pages(); }

// Once kswapd is idle (no folio isolated by it), the RAM in use is what the folios hold.
inline void check_ram_held() {
  emu::kswapd_wait_idle();
  CHECK(ram_used() == folio_pages_held());
}

// Reads @nr pages of @ino from page @first into the page cache, charged to @memcg (kernel task).
inline int read_into(mem_cgroup *memcg, inode *ino, unsigned long first, unsigned long nr) {
  mem_cgroup *old = set_active_memcg(memcg);
  int ret = filemap_read(ino, first, nr);
  set_active_memcg(old);
  return ret;
}

// A new file whose pages 0 to @nr - 1 are read into the page cache, charged to @memcg.
inline inode *cached_file(mem_cgroup *memcg, unsigned long nr) {
  inode *f = emu::file_create();
  REQUIRE(read_into(memcg, f, 0, nr) == 0);
  return f;
}

}  // namespace umemcg::test
