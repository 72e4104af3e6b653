// SPDX-License-Identifier: GPL-2.0-only
// mm/swap.cc: the per-CPU lru_add batches, access marking, list moves and freeing (see swap.h).
//
// Mirrors: mm/swap.c, include/linux/mm_inline.h (Linux 6.19)
// Emulation: see swap.h.
#include "mm/swap.h"

#include <vector>

#include "mm/memcontrol_iter.h"
#include "mm/page_alloc.h"
#include "mm/vmstat.h"
#include "mm/workingset.h"
#include "shim/bug.h"
#include "shim/local_lock.h"
#include "shim/mutex.h"
#include "shim/percpu.h"
#include "shim/preempt.h"
#include "shim/smp.h"
#include "shim/workqueue.h"

namespace umemcg {

namespace {

// struct cpu_fbatches, the lru_add part: folios waiting for the LRU on one CPU, each holding a
// reference. Only the owning CPU touches it (under its local lock), except lru_add_batched_pages
// on a quiescent machine.
struct cpu_fbatches {
  local_lock_t lock;
  unsigned int nr GUARDED_BY(lock) = 0;
  folio *lru_add[PAGEVEC_SIZE] GUARDED_BY(lock) = {};
  work_struct drain_work;  // lru_add_drain_per_cpu, queued by lru_add_drain_all
};

DEFINE_PER_CPU(cpu_fbatches, cpu_fbatches_pcp);
DEFINE_MUTEX(lru_drain_all_lock);

}  // namespace

void update_lru_size(lruvec *lv, lru_list lru, long nr) {
  // The only writer holds lru_lock; lruvec_lru_size() reads without it (WRITE_ONCE/READ_ONCE).
  WRITE_ONCE(lv->lru_zone_size[lru],
             static_cast<unsigned long>(static_cast<long>(lv->lru_zone_size[lru]) + nr));
  // mod_lruvec_state(): NR_INACTIVE_ANON .. NR_UNEVICTABLE follow enum lru_list.
  mod_memcg_lruvec_state(lruvec_memcg(lv), static_cast<node_stat_item>(NR_LRU_BASE + static_cast<int>(lru)),
                         static_cast<int>(nr));
}

namespace {

// Frees folios whose last reference is gone: off the LRU, uncharged in one batch, deleted.
void free_folios(folio **folios, unsigned int nr) {
  for (unsigned int i = 0; i < nr; i++) {
    folio *f = folios[i];
    if (folio_test_lru(f)) {
      lruvec *lv = folio_lruvec(f);
      spin_lock_irq(&lv->lru_lock);
      // Nobody else can clear PG_lru now: isolation needs a reference first.
      if (folio_test_clear_lru(f)) lruvec_del_folio(lv, f);
      spin_unlock_irq(&lv->lru_lock);
    }
  }
  __mem_cgroup_uncharge_folios(folios, nr);
  free_unref_folios(folios, nr);
}

// lru_add(): the batch entry's destination list.
void lru_add(lruvec *lv, folio *f) REQUIRES(lv->lru_lock) {
  if (!folio_test_mlocked(f)) {
    folio_clear_unevictable(f);
  } else {
    folio_clear_active(f);
    folio_set_unevictable(f);
  }
  folio_set_lru(f);
  lruvec_add_folio(lv, f);
}

// folio_batch_move_lru() for the lru_add batch: lists, then the batch's references dropped.
// The lru_lock held follows the folios' lruvecs (relocked when the lruvec changes, as
// folio_lruvec_relock_irq() does): a pattern the lock analysis cannot follow, hence no analysis.
void folio_batch_move_lru(folio **batch, unsigned int nr) NO_THREAD_SAFETY_ANALYSIS {
  lruvec *locked = nullptr;
  for (unsigned int i = 0; i < nr; i++) {
    lruvec *lv = folio_lruvec(batch[i]);
    if (lv != locked) {
      if (locked) spin_unlock_irq(&locked->lru_lock);
      locked = lv;
      spin_lock_irq(&lv->lru_lock);
    }
    lru_add(lv, batch[i]);
  }
  if (locked) spin_unlock_irq(&locked->lru_lock);
  folios_put(batch, nr);
}

// Takes this CPU's batch out under its lock; the caller moves it with no local lock held.
unsigned int take_local_batch(folio **out) {
  cpu_fbatches *fb = this_cpu_ptr(&cpu_fbatches_pcp);
  local_lock(&fb->lock);
  unsigned int nr = fb->nr;
  for (unsigned int i = 0; i < nr; i++) out[i] = fb->lru_add[i];
  fb->nr = 0;
  local_unlock(&fb->lock);
  return nr;
}

void lru_add_drain_per_cpu(work_struct *) { lru_add_drain(); }

}  // namespace

void lruvec_add_folio(lruvec *lv, folio *f) {
  lru_list lru = folio_lru_list(f);
  update_lru_size(lv, lru, folio_nr_pages(f));
  list_add(&f->lru, &lv->lists[lru]);
}

void lruvec_add_folio_tail(lruvec *lv, folio *f) {
  lru_list lru = folio_lru_list(f);
  update_lru_size(lv, lru, folio_nr_pages(f));
  list_add_tail(&f->lru, &lv->lists[lru]);
}

void lruvec_del_folio(lruvec *lv, folio *f) {
  lru_list lru = folio_lru_list(f);
  list_del_init(&f->lru);
  update_lru_size(lv, lru, -static_cast<long>(folio_nr_pages(f)));
}

// A snapshot of a word the lock holder writes, without the lock (hence no analysis): READ_ONCE,
// paired with update_lru_size()'s WRITE_ONCE.
unsigned long lruvec_lru_size(lruvec *lv, lru_list lru) NO_THREAD_SAFETY_ANALYSIS {
  return READ_ONCE(lv->lru_zone_size[lru]);
}

void folio_add_lru(folio *f) {
  WARN_ON_ONCE(folio_test_lru(f));
  folio_get(f);  // the batch's reference
  cpu_fbatches *fb = this_cpu_ptr(&cpu_fbatches_pcp);
  folio *full[PAGEVEC_SIZE];
  unsigned int nr = 0;
  local_lock(&fb->lock);
  fb->lru_add[fb->nr++] = f;
  if (fb->nr == PAGEVEC_SIZE) {
    for (unsigned int i = 0; i < fb->nr; i++) full[i] = fb->lru_add[i];
    nr = fb->nr;
    fb->nr = 0;
  }
  local_unlock(&fb->lock);
  if (nr) folio_batch_move_lru(full, nr);
}

void folio_add_lru_vma(folio *f, vm_area_struct *vma) {
  // mlock_new_folio(): a page faulted into a VM_LOCKED mapping is born mlocked.
  if (vma->vm_flags & VM_LOCKED) {
    folio_set_mlocked(f);
    count_vm_events(UNEVICTABLE_PGMLOCKED, folio_nr_pages(f));
  }
  folio_add_lru(f);
}

void lru_add_drain() {
  folio *batch[PAGEVEC_SIZE];
  unsigned int nr = take_local_batch(batch);
  if (nr) folio_batch_move_lru(batch, nr);
}

void lru_add_drain_all() NO_THREAD_SAFETY_ANALYSIS {
  mutex_lock(&lru_drain_all_lock);
  bool queued[NR_CPUS] = {};
  int cpu;
  for_each_online_cpu(cpu) {
    cpu_fbatches *fb = per_cpu_ptr(&cpu_fbatches_pcp, cpu);
    // Racy peek, as the kernel's cpu_needs_drain(): a batch filled after it is not waited for.
    if (data_race(fb->nr) == 0) continue;
    queued[cpu] = queue_work_on(cpu, system_percpu_wq, &fb->drain_work);
  }
  for_each_online_cpu(cpu) if (queued[cpu]) flush_work(&per_cpu_ptr(&cpu_fbatches_pcp, cpu)->drain_work);
  mutex_unlock(&lru_drain_all_lock);
}

// __lru_cache_activate_folio: a folio still in this CPU's batch is marked active in place.
static void lru_cache_activate_folio(folio *f) {
  cpu_fbatches *fb = this_cpu_ptr(&cpu_fbatches_pcp);
  local_lock(&fb->lock);
  for (unsigned int i = fb->nr; i-- > 0;)
    if (fb->lru_add[i] == f) {
      folio_set_active(f);
      break;
    }
  local_unlock(&fb->lock);
}

// folio_activate(): inactive -> active on the LRU (PGACTIVATE).
static void folio_activate(folio *f) {
  if (folio_test_active(f) || folio_test_unevictable(f)) return;
  lruvec *lv = folio_lruvec(f);
  spin_lock_irq(&lv->lru_lock);
  // Owning PG_lru keeps reclaim from isolating it meanwhile.
  if (folio_test_clear_lru(f)) {
    lruvec_del_folio(lv, f);
    folio_set_active(f);
    lruvec_add_folio(lv, f);
    folio_set_lru(f);
    count_vm_events(PGACTIVATE, folio_nr_pages(f));
    count_memcg_events(lruvec_memcg(lv), PGACTIVATE, folio_nr_pages(f));
  }
  spin_unlock_irq(&lv->lru_lock);
}

void folio_mark_accessed(folio *f) {
  if (!folio_test_referenced(f)) {
    folio_set_referenced(f);
  } else if (folio_test_unevictable(f)) {
    // Unevictable folios stay put; referenced is all they get.
  } else if (!folio_test_active(f)) {
    if (folio_test_lru(f))
      folio_activate(f);
    else
      lru_cache_activate_folio(f);
    folio_clear_referenced(f);
    workingset_activation(f);
  }
}

void folio_put(folio *f) {
  if (folio_put_testzero(f)) free_folios(&f, 1);
}

void folios_put(folio **folios, unsigned int nr) {
  folio *dead[PAGEVEC_SIZE];
  std::vector<folio *> more;
  unsigned int n = 0;
  for (unsigned int i = 0; i < nr; i++) {
    if (!folio_put_testzero(folios[i])) continue;
    if (n < PAGEVEC_SIZE)
      dead[n++] = folios[i];
    else
      more.push_back(folios[i]);
  }
  if (n) free_folios(dead, n);
  if (!more.empty()) free_folios(more.data(), static_cast<unsigned int>(more.size()));
}

void lru_note_cost(lruvec *lv, bool file, unsigned int nr_io, unsigned int nr_rotated) {
  unsigned long cost = static_cast<unsigned long>(nr_io) * SWAP_CLUSTER_MAX + nr_rotated;
  // The cost goes to this lruvec and every ancestor's, each halving both costs once they exceed
  // a quarter of its LRU pages (so older costs decay).
  for (mem_cgroup *m = lruvec_memcg(lv); m; m = parent_mem_cgroup(m)) {
    lruvec *l = mem_cgroup_lruvec(m);
    spin_lock_irq(&l->lru_lock);
    if (file)
      l->file_cost += cost;
    else
      l->anon_cost += cost;
    unsigned long lrusize = 0;
    for (int lru = 0; lru < NR_EVICTABLE_LRU; lru++) lrusize += l->lru_zone_size[lru];
    if (l->file_cost + l->anon_cost > lrusize / 4) {
      l->file_cost /= 2;
      l->anon_cost /= 2;
    }
    spin_unlock_irq(&l->lru_lock);
  }
}

unsigned long lru_add_batched_pages(mem_cgroup *memcg) NO_THREAD_SAFETY_ANALYSIS {
  unsigned long n = 0;
  int cpu;
  for_each_possible_cpu(cpu) {
    cpu_fbatches *fb = per_cpu_ptr(&cpu_fbatches_pcp, cpu);
    for (unsigned int i = 0; i < data_race(fb->nr); i++) {
      folio *f = data_race(fb->lru_add[i]);
      if (folio_memcg(f) == memcg) n += folio_nr_pages(f);
    }
  }
  return n;
}

void lru_boot() NO_THREAD_SAFETY_ANALYSIS {
  int cpu;
  for_each_possible_cpu(cpu) {
    cpu_fbatches *fb = per_cpu_ptr(&cpu_fbatches_pcp, cpu);
    local_lock_init(&fb->lock);
    data_race(fb->nr) = 0;
    INIT_WORK(&fb->drain_work, lru_add_drain_per_cpu);
  }
}

void lru_shutdown() NO_THREAD_SAFETY_ANALYSIS {
  // Emulation: every batch is moved to the lists from the shutting-down task (the CPUs are idle).
  int cpu;
  for_each_possible_cpu(cpu) {
    cpu_fbatches *fb = per_cpu_ptr(&cpu_fbatches_pcp, cpu);
    folio *batch[PAGEVEC_SIZE];
    unsigned int nr = data_race(fb->nr);
    for (unsigned int i = 0; i < nr; i++) batch[i] = data_race(fb->lru_add[i]);
    data_race(fb->nr) = 0;
    if (nr) folio_batch_move_lru(batch, nr);
  }
}

}  // namespace umemcg
