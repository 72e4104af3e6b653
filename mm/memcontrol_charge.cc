// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_charge.cc: try_charge_memcg() with the 6.19 memcg stock, folio charge and
// uncharge, migration.
//
// Mirrors: mm/memcontrol.c (Linux 6.19): try_charge_memcg, charge_memcg, __mem_cgroup_charge,
//   uncharge_folio, uncharge_batch, __mem_cgroup_uncharge, __mem_cgroup_uncharge_folios,
//   mem_cgroup_replace_folio, mem_cgroup_migrate
// Emulation: psi_memstall_enter/leave around reclaim are not modelled (the shim has no PSI).
// memcg1_commit_charge and memcg1_uncharge_batch count PGPGIN/PGPGOUT and the page events that
//   check v1 usage thresholds (mm/memcontrol_v1_events.h).
#include <algorithm>

#include "mm/memcontrol_folio.h"
#include "mm/memcontrol_internal.h"
#include "mm/memcontrol_v1_events.h"
#include "mm/obj_cgroup.h"
#include "mm/page_counter_stock.h"
#include "shim/bug.h"
#include "shim/errno.h"

namespace umemcg {

namespace {

/*
 * Everything after a failed charge attempt of the memcg-stock design: the exact-size retry and
 * the failure ladder. @failed is the memory counter at which the first attempt, of @batch pages
 * on a v2 hierarchy, failed (try_charge_memcg_slow() made it); null means no attempt was made
 * yet (v1, where memsw is charged first). Either way the sequence of attempts is the kernel's.
 */
[[gnu::noinline]] int try_charge_memcg_ladder(mem_cgroup *memcg, gfp_t gfp_mask,
                                              unsigned int nr_pages, unsigned int batch,
                                              page_counter *failed) {
  memcg_charge_ladder l;
  mem_cgroup *mem_over_limit;
  page_counter *counter;
  // No reclaim bit at all (kmalloc_nolock style): such callers may not even spin on a lock.
  bool allow_spinning = gfpflags_allow_spinning(gfp_mask);

  if (failed) {
    mem_over_limit = mem_cgroup_from_memory_counter(failed);
    goto failed_attempt;
  }
  goto charge;  // the caller's consume_stock() already missed
retry:
  if (consume_stock(memcg, nr_pages)) return 0;
charge:
  // Non-spinning callers charge exactly: no refill, so no old slot gets evicted and drained.
  if (!allow_spinning) batch = nr_pages;

  if (!do_memsw_account() || page_counter_try_charge(&memcg->memsw, batch, &counter)) {
    if (page_counter_try_charge(&memcg->memory, batch, &counter)) goto done_restock;
    if (do_memsw_account()) page_counter_uncharge(&memcg->memsw, batch);
    mem_over_limit = mem_cgroup_from_memory_counter(counter);
  } else {
    mem_over_limit = mem_cgroup_from_memsw_counter(counter);
    l.reclaim_options &= ~MEMCG_RECLAIM_MAY_SWAP;  // swapping would not lower memsw
  }

failed_attempt:
  // Never reclaim for the optional part of a batch: try the exact size first.
  if (batch > nr_pages) {
    batch = nr_pages;
    goto retry;
  }

  {
    const memcg_charge_next next = memcg_charge_failed(&l, mem_over_limit, gfp_mask, nr_pages);
    if (next == memcg_charge_next::retry) goto retry;
    return memcg_charge_nomem(&l, memcg, mem_over_limit, gfp_mask, nr_pages,
                              next == memcg_charge_next::force);
  }

done_restock:
  if (batch > nr_pages) refill_stock(memcg, batch - nr_pages);
  memcg_check_high(memcg, gfp_mask, batch);
  return 0;
}

/*
 * The charge slow path of the memcg-stock design: everything after the first stock miss.
 * Kept out of line so the stock hit in try_charge_memcg() stays a handful of instructions.
 * Emulation: the first attempt on a v2 hierarchy (a batch charged, the surplus stocked, the
 *   memory.high check) is split from the failure ladder (try_charge_memcg_ladder()), so that
 *   the common miss sets up no ladder state and saves no registers it does not use; the kernel
 *   keeps both in try_charge_memcg(). The attempts made, and their order, are the same.
 */
[[gnu::noinline]] int try_charge_memcg_slow(mem_cgroup *memcg, gfp_t gfp_mask,
                                            unsigned int nr_pages) {
  unsigned int batch = std::max(MEMCG_CHARGE_BATCH, nr_pages);
  // Non-spinning callers charge exactly: no refill, so no old slot gets evicted and drained.
  if (!gfpflags_allow_spinning(gfp_mask)) batch = nr_pages;
  if (unlikely(do_memsw_account())) return try_charge_memcg_ladder(memcg, gfp_mask, nr_pages,
                                                                    batch, nullptr);
  page_counter *counter;
  if (unlikely(!page_counter_try_charge(&memcg->memory, batch, &counter)))
    return try_charge_memcg_ladder(memcg, gfp_mask, nr_pages, batch, counter);
  if (likely(batch > nr_pages)) refill_stock(memcg, batch - nr_pages);
  memcg_check_high(memcg, gfp_mask, batch);
  return 0;
}

// The page_counter-stock design's entry, inlined into try_charge_memcg() behind its design
// check: its hit, like the memcg stock's, calls nothing, so neither needs a stack frame, and the
// check leads straight to it (no jump to a function of its own); both misses are tail calls.
[[gnu::always_inline]] inline int try_charge_memcg_pcstock_entry(mem_cgroup *memcg,
                                                                 gfp_t gfp_mask,
                                                                 unsigned int nr_pages) {
  // The page_counter stock's hit, inlined (v2: memory only; v1 needs memsw first).
  page_counter_stock *bank;
  if (!do_memsw_account() && (bank = READ_ONCE(memcg->memory.stock))) {
    if (likely(page_counter_consume_stock(bank, &memcg->memory, nr_pages))) return 0;
    return try_charge_memcg_pcstock(memcg, gfp_mask, nr_pages, true);
  }
  return try_charge_memcg_pcstock(memcg, gfp_mask, nr_pages, false);
}

}  // namespace

memcg_charge_next memcg_charge_failed(memcg_charge_ladder *l, mem_cgroup *mem_over_limit,
                                      gfp_t gfp_mask, unsigned int nr_pages) {
  // The reclaimer itself (or an OOM victim exiting) allocates: never recurse into reclaim.
  if (unlikely(current->flags & PF_MEMALLOC)) return memcg_charge_next::force;
  if (unlikely(task_in_memcg_oom(current))) return memcg_charge_next::nomem;
  if (!gfpflags_allow_blocking(gfp_mask)) return memcg_charge_next::nomem;

  // Raised on every pass that gets this far, not once per charge.
  memcg_memory_event(mem_over_limit, MEMCG_MAX);
  l->raised_max_event = true;

  unsigned long nr_reclaimed = try_to_free_mem_cgroup_pages(mem_over_limit, nr_pages, gfp_mask,
                                                            l->reclaim_options, nullptr);

  if (mem_cgroup_margin(mem_over_limit) >= nr_pages) return memcg_charge_next::retry;

  // Pages may sit in per-CPU stocks. The remote drains are asynchronous: one retry only.
  if (!l->drained) {
    drain_all_stock(mem_over_limit);
    l->drained = true;
    return memcg_charge_next::retry;
  }

  if (gfp_mask & __GFP_NORETRY) return memcg_charge_next::nomem;
  // Small charges retry after any progress without spending a retry; THPs do not.
  if (nr_reclaimed && nr_pages <= (1u << PAGE_ALLOC_COSTLY_ORDER)) return memcg_charge_next::retry;
  if (l->nr_retries--) return memcg_charge_next::retry;
  if (gfp_mask & __GFP_RETRY_MAYFAIL) return memcg_charge_next::nomem;
  // Killed by the OOM killer already and still failing: let the task exit.
  if (l->passed_oom && task_is_dying()) return memcg_charge_next::nomem;

  // mem_cgroup_oom() is false for orders above PAGE_ALLOC_COSTLY_ORDER: no kill, no event.
  if (mem_cgroup_oom(mem_over_limit, gfp_mask,
                     get_order(static_cast<unsigned long>(nr_pages) * PAGE_SIZE))) {
    l->passed_oom = true;
    l->nr_retries = MAX_RECLAIM_RETRIES;
    return memcg_charge_next::retry;
  }
  return memcg_charge_next::nomem;
}

int memcg_charge_nomem(const memcg_charge_ladder *l, mem_cgroup *memcg,
                       mem_cgroup *mem_over_limit, gfp_t gfp_mask, unsigned int nr_pages,
                       bool force) {
  // __GFP_HIGH (GFP_ATOMIC) and __GFP_NOFAIL may not fail: charge over the limit.
  if (!force && !(gfp_mask & (__GFP_NOFAIL | __GFP_HIGH))) return -ENOMEM;
  // A forced charge still tells listeners the limit was hit (without file notification when
  // the caller may not spin).
  if (!l->raised_max_event)
    __memcg_memory_event(mem_over_limit, MEMCG_MAX, gfpflags_allow_spinning(gfp_mask));
  // Exactly nr_pages, never a batch: nothing is stocked over the limit.
  page_counter_charge(&memcg->memory, nr_pages);
  if (do_memsw_account()) page_counter_charge(&memcg->memsw, nr_pages);
  return 0;
}

/*
 * A stock hit returns at once: no page counter is touched, and there is no memory.high check
 * (that runs once per batch actually charged, in the slow path). The hit is a leaf: no frame,
 * no call; both misses leave by tail calls.
 */
int try_charge_memcg(mem_cgroup *memcg, gfp_t gfp_mask, unsigned int nr_pages) {
  if (unlikely(memcg_pcstock())) return try_charge_memcg_pcstock_entry(memcg, gfp_mask, nr_pages);
  if (likely(consume_stock(memcg, nr_pages))) return 0;
  return try_charge_memcg_slow(memcg, gfp_mask, nr_pages);
}

// --- folios ------------------------------------------------------------------------------------

int charge_memcg(folio *f, mem_cgroup *memcg, gfp_t gfp) {
  int ret = try_charge(memcg, gfp, folio_nr_pages(f));
  if (ret) return ret;
  css_get(&memcg->css);  // the folio's reference
  f->memcg_data = reinterpret_cast<unsigned long>(memcg);
  // memcg1_commit_charge(): one page-in event per folio, whatever its size.
  count_memcg_events(memcg, PGPGIN, 1);
  memcg1_check_events(memcg, folio_nr_pages(f));
  return 0;
}

int __mem_cgroup_charge(folio *f, mm_struct *mm, gfp_t gfp) {
  mem_cgroup *memcg = get_mem_cgroup_from_mm(mm);
  int ret = charge_memcg(f, memcg, gfp);
  css_put(&memcg->css);
  return ret;
}

namespace {

struct uncharge_gather {
  mem_cgroup *memcg = nullptr;
  unsigned long nr_memory = 0;
  unsigned long pgpgout = 0;
  unsigned long nr_kmem = 0;
};

void uncharge_batch(const uncharge_gather *ug) {
  if (ug->nr_memory) {
    // Directly on the counters: freed user pages never go back through the stock.
    memcg_uncharge(ug->memcg, static_cast<unsigned int>(ug->nr_memory));
    if (ug->nr_kmem) mod_memcg_state(ug->memcg, MEMCG_KMEM, -static_cast<int>(ug->nr_kmem));
    // Room was made: tasks waiting out a v1 OOM of a related memcg retry.
    memcg1_oom_recover(ug->memcg);
  }
  // memcg1_uncharge_batch(): one page-out event per user folio.
  count_memcg_events(ug->memcg, PGPGOUT, ug->pgpgout);
  memcg1_check_events(ug->memcg, ug->nr_memory);
  css_put(&ug->memcg->css);  // the gather's reference
}

void uncharge_folio(folio *f, uncharge_gather *ug) {
  mem_cgroup *memcg;
  obj_cgroup *objcg = nullptr;

  if (!f->memcg_data) return;
  if (folio_memcg_kmem(f)) {
    objcg = reinterpret_cast<obj_cgroup *>(f->memcg_data & ~MEMCG_DATA_FLAGS_MASK);
    memcg = get_mem_cgroup_from_objcg(objcg);
  } else {
    memcg = folio_memcg(f);
  }
  if (ug->memcg != memcg) {
    if (ug->memcg) {
      uncharge_batch(ug);
      *ug = uncharge_gather{};
    }
    ug->memcg = memcg;
    css_get(&memcg->css);
  }
  unsigned int nr_pages = folio_nr_pages(f);
  if (objcg) {
    ug->nr_memory += nr_pages;
    ug->nr_kmem += nr_pages;
    f->memcg_data = 0;
    obj_cgroup_put(objcg);
  } else {
    // User pages are not accounted at the root level.
    if (!mem_cgroup_is_root(memcg)) ug->nr_memory += nr_pages;
    ug->pgpgout++;
    f->memcg_data = 0;
  }
  css_put(&memcg->css);  // the folio's (or get_mem_cgroup_from_objcg's) reference
}

}  // namespace

void __mem_cgroup_uncharge(folio *f) {
  uncharge_gather ug;
  uncharge_folio(f, &ug);
  if (ug.memcg) uncharge_batch(&ug);
}

void __mem_cgroup_uncharge_folios(folio **folios, unsigned int nr) {
  uncharge_gather ug;
  for (unsigned int i = 0; i < nr; i++) uncharge_folio(folios[i], &ug);
  if (ug.memcg) uncharge_batch(&ug);
}

void mem_cgroup_replace_folio(folio *old_folio, folio *new_folio) {
  mem_cgroup *memcg = folio_memcg(old_folio);
  if (!memcg) return;
  unsigned int nr_pages = folio_nr_pages(new_folio);
  // Forced: the old folio is freed soon and gives its charge back then.
  if (!mem_cgroup_is_root(memcg)) {
    page_counter_charge(&memcg->memory, nr_pages);
    if (do_memsw_account()) page_counter_charge(&memcg->memsw, nr_pages);
  }
  css_get(&memcg->css);
  new_folio->memcg_data = reinterpret_cast<unsigned long>(memcg);
  count_memcg_events(memcg, PGPGIN, 1);  // memcg1_commit_charge()
  memcg1_check_events(memcg, nr_pages);
}

void mem_cgroup_migrate(folio *old_folio, folio *new_folio) {
  if (!old_folio->memcg_data) return;
  // The charge (and the css reference) moves with memcg_data; counters do not change.
  new_folio->memcg_data = old_folio->memcg_data;
  old_folio->memcg_data = 0;
}

}  // namespace umemcg
