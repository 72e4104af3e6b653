// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_slab.cc: memcg's side of the shim allocator's accounting hook (shim/slab.h):
// __GFP_ACCOUNT kmalloc objects are charged to the obj_cgroup of the allocating context.
//
// Mirrors: mm/memcontrol.c (__memcg_slab_post_alloc_hook, __memcg_slab_free_hook,
//   current_obj_cgroup), include/linux/sched/mm.h (set_active_memcg) (Linux 6.19)
// The owner is current_obj_cgroup(): the active memcg's objcg when one is set, else the current
// task's (none for kernel threads without an active memcg, and none for the root), with a
// reference held by the object until it is freed; the bytes go through obj_cgroup_charge (the
// per-CPU obj stock, whole pages to the memcg's counters).
// Emulation: the slab statistics (NR_SLAB_UNRECLAIMABLE_B in memory.stat) are not updated for
//   these objects.
#include "mm/memcontrol.h"
#include "mm/memcontrol_internal.h"
#include "mm/obj_cgroup.h"
#include "shim/errno.h"
#include "shim/slab.h"

namespace umemcg {

namespace {

int memcg_slab_charge(gfp_t gfp, size_t size, void **owner) {
  *owner = nullptr;
  obj_cgroup *objcg = get_obj_cgroup_from_current();
  if (!objcg) return 0;
  if (obj_cgroup_charge(objcg, gfp, size)) {
    obj_cgroup_put(objcg);
    return -ENOMEM;
  }
  *owner = objcg;
  return 0;
}

void memcg_slab_uncharge(void *owner, size_t size) {
  auto *objcg = static_cast<obj_cgroup *>(owner);
  obj_cgroup_uncharge(objcg, size);
  obj_cgroup_put(objcg);
}

mem_cgroup *memcg_get_current() { return get_mem_cgroup_from_current(); }

void memcg_put(mem_cgroup *memcg) { css_put(&memcg->css); }

const kmem_account_ops memcg_kmem_account_ops = {
    memcg_slab_charge, memcg_slab_uncharge, memcg_get_current, memcg_put, set_active_memcg,
};

}  // namespace

void memcg_slab_register() { emu::set_kmem_account_ops(&memcg_kmem_account_ops); }
void memcg_slab_unregister() { emu::set_kmem_account_ops(nullptr); }

}  // namespace umemcg
