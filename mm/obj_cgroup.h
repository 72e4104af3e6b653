// SPDX-License-Identifier: GPL-2.0-only
// mm/obj_cgroup.h: obj_cgroup (the kmem charge handle of a memcg) and byte-granular charging
// through the per-CPU obj stock.
//
// Mirrors: include/linux/memcontrol.h (struct obj_cgroup), mm/memcontrol.c (Linux 6.19):
//   obj_cgroup_alloc/release, memcg_reparent_objcgs, current_obj_cgroup, struct obj_stock_pcp,
//   consume_obj_stock, refill_obj_stock, drain_obj_stock, obj_cgroup_charge/uncharge,
//   obj_cgroup_charge_pages/uncharge_pages
// Every non-root memcg gets an objcg when it comes online. At offline the objcg is reparented:
// its memcg pointer moves to the parent, so objects still alive charge the parent from then on.
// Emulation: the objcg reference count is an atomic (the kernel's percpu_ref); the memcg's base
//   reference is dropped at offline, like percpu_ref_kill().
// Emulation: the obj stock keeps no slab vmstat accumulators (cached_pgdat, NR_SLAB_*_B): slab
//   objects update no slab statistics (mm/memcontrol_slab.cc). Each object is charged the size
//   the caller passes.
// Emulation: the whole pages obj_cgroup_charge() charges stand for the slab pages behind the
//   objects: each takes a page of the machine's RAM through the page allocator (__alloc_pages
//   with the caller's gfp, before the charge, as the kernel allocates the slab page before it
//   charges the object; a failed charge gives it back) and gives it back when the page is
//   uncharged (from the obj stock, a drain or the objcg's release). The kernel's slab pages
//   are shared by objects of every memcg and freed when empty; here the charged pages are the
//   RAM. Pages charged with __memcg_kmem_charge_page() are the caller's folio, whose
//   allocation took its RAM.
// Emulation: obj_cgroup_charge_pages() charges through try_charge() (the root is never charged),
//   matching the uncharge side that skips the root (inferred).
// Emulation: there is no per-task cached objcg (current->objcg): current_obj_cgroup() looks it
//   up every time; get_obj_cgroup_from_current() returns it with a reference.
#pragma once

#include <list>

#include "mm/memcontrol.h"
#include "shim/atomic.h"
#include "shim/list.h"
#include "shim/rcupdate.h"

namespace umemcg {

struct obj_cgroup {
  atomic_long_t refcnt;
  // On the objcg_list of the memcg it was reparented to; self-linked while it is its memcg's
  // current objcg.
  list_head list GUARDED_BY(objcg_lock);
  // Emulation: on the registry of every allocated objcg (emu::for_each_objcg).
  list_head emu_node GUARDED_BY(objcg_lock);
  mem_cgroup *memcg = nullptr;  // RCU; the parent after reparenting
  // Sub-page remainders flushed out of per-CPU stocks, waiting to be picked up by a refill.
  atomic_t nr_charged_bytes;
  rcu_head rcu;
};

// Looks up the objcg for current's context (nullptr: root or no memcg). rcu_read_lock held.
obj_cgroup *current_obj_cgroup();
// The same with a reference (obj_cgroup_put when done), or nullptr.
obj_cgroup *get_obj_cgroup_from_current();

void obj_cgroup_get(obj_cgroup *objcg);
void obj_cgroup_put(obj_cgroup *objcg);
inline mem_cgroup *obj_cgroup_memcg(obj_cgroup *objcg) { return rcu_dereference(objcg->memcg); }
// objcg's memcg with a css reference (retrying across a concurrent reparenting).
mem_cgroup *get_mem_cgroup_from_objcg(obj_cgroup *objcg);

/**
 * obj_cgroup_charge - charge @size bytes of kernel objects to @objcg
 * Whole pages are charged to the memcg; the unused rest of the last page stays pre-charged in
 * this CPU's obj stock. Returns 0 or -ENOMEM.
 */
int obj_cgroup_charge(obj_cgroup *objcg, gfp_t gfp, size_t size);
void obj_cgroup_uncharge(obj_cgroup *objcg, size_t size);
int obj_cgroup_charge_pages(obj_cgroup *objcg, gfp_t gfp, unsigned int nr_pages);
void obj_cgroup_uncharge_pages(obj_cgroup *objcg, unsigned int nr_pages);

}  // namespace umemcg

namespace umemcg::emu {
// The obj stock of @cpu as seen from outside (racy snapshot; for the invariant checker).
struct obj_stock_view {
  obj_cgroup *cached_objcg;
  unsigned int nr_bytes;
};
obj_stock_view obj_stock_snapshot(int cpu);
// Every objcg currently allocated (for the invariant checker), under the objcg list lock.
void for_each_objcg(void (*fn)(obj_cgroup *, void *), void *arg);
long objcg_live_count();
// The pages of the machine's RAM the bytes charged through the obj stock hold (see the banner).
unsigned long slab_ram_pages();
}  // namespace umemcg::emu
