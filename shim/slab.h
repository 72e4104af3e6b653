// SPDX-License-Identifier: GPL-2.0-only
// shim/slab.h: kmalloc/kzalloc/kfree with gfp flags, and the accounting hook that __GFP_ACCOUNT
// allocations reach memcg through.
//
// Mirrors: include/linux/slab.h (kmalloc, kzalloc, kfree, ksize), mm/slub.c's memcg hooks
//   (memcg_slab_post_alloc_hook / memcg_slab_free_hook), include/linux/sched/mm.h
//   (set_active_memcg) (Linux 6.19)
// An allocation with __GFP_ACCOUNT is charged, before it is returned, through the registered
// kmem_account_ops (memcg registers its obj_cgroup charge at boot): to the active memcg when one
// is set (set_active_memcg), else to the current task's memcg, as the kernel's
// current_obj_cgroup() resolves it. A refused charge fails the allocation (NULL), as a failed
// slab charge does. kfree uncharges the same bytes from the same owner.
// Emulation: objects come from the host allocator (no slab caches, no per-CPU freelists); each
//   carries a small header with its size and charge owner (the kernel keeps the objcg in the
//   slab's obj_exts vector). The charged size is the requested size (the kernel charges the
//   kmalloc size class: obj_full_size of the cache's object).
// Emulation: with no ops registered (no memory controller booted) accounting does nothing.
#pragma once

#include <cstddef>

#include "shim/types.h"

namespace umemcg {

struct mem_cgroup;

// The accounting hook (the memory controller's side of memcg_slab_post_alloc_hook and of
// set_active_memcg). Every member is required.
struct kmem_account_ops {
  // Charges size bytes to the allocating context's memcg. Returns 0 with *owner set (nullptr
  // when nothing was charged: root, no memcg), or -ENOMEM when the charge is refused.
  int (*charge)(gfp_t gfp, size_t size, void **owner);
  // Uncharges what charge() returned.
  void (*uncharge)(void *owner, size_t size);
  // The current task's memcg with a reference (nullptr: none); put with put_memcg().
  mem_cgroup *(*get_current_memcg)();
  void (*put_memcg)(mem_cgroup *memcg);
  // set_active_memcg(): the memcg later accounted allocations of this context charge; returns
  // the previous one.
  mem_cgroup *(*set_active_memcg)(mem_cgroup *memcg);
};

/**
 * kmalloc - allocate size bytes
 * @gfp: allocation flags; __GFP_ACCOUNT charges the object (see the banner), __GFP_ZERO zeroes it
 *
 * Context: may sleep (reclaim, through the charge) unless @gfp lacks __GFP_DIRECT_RECLAIM.
 * Returns the object, or nullptr when the charge is refused or the host has no memory.
 */
void *kmalloc(size_t size, gfp_t gfp);
void *kzalloc(size_t size, gfp_t gfp);
// Frees (and uncharges) an object from kmalloc; nullptr is ignored.
void kfree(const void *p);
// The usable size of an object from kmalloc.
size_t ksize(const void *p);

// Memcg context helpers for callers outside mm/ (the kernel's set_active_memcg and
// get_mem_cgroup_from_mm(current->mm)); they do nothing and return nullptr without ops.
mem_cgroup *kmem_set_active_memcg(mem_cgroup *memcg);
mem_cgroup *kmem_get_current_memcg();
void kmem_put_memcg(mem_cgroup *memcg);

namespace emu {
// Registers (or, with nullptr, removes) the accounting hook. Not concurrent with allocations.
void set_kmem_account_ops(const kmem_account_ops *ops);
// Objects allocated by kmalloc and not yet freed (leak checks), and of those, bytes charged.
long kmalloc_live_objects();
long kmalloc_charged_bytes();
}  // namespace emu

}  // namespace umemcg
