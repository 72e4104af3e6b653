// SPDX-License-Identifier: GPL-2.0-only
// shim/slab.cc: kmalloc/kfree and the accounting hook (see slab.h).
//
// Mirrors: mm/slub.c (kmalloc, kfree, memcg_slab_post_alloc_hook, memcg_slab_free_hook)
//   (Linux 6.19)
#include "shim/slab.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "shim/gfp.h"

namespace umemcg {

namespace {

// The object header: max_align_t-sized so the object keeps malloc's alignment.
struct alignas(alignof(std::max_align_t)) kmalloc_header {
  size_t size;
  void *owner;  // the charge owner, nullptr if not charged
};

std::atomic<const kmem_account_ops *> g_ops{nullptr};
std::atomic<long> g_live{0};
std::atomic<long> g_charged{0};

kmalloc_header *header_of(const void *p) {
  return reinterpret_cast<kmalloc_header *>(const_cast<char *>(static_cast<const char *>(p)) -
                                            sizeof(kmalloc_header));
}

}  // namespace

void *kmalloc(size_t size, gfp_t gfp) {
  void *owner = nullptr;
  const kmem_account_ops *ops = g_ops.load(std::memory_order_acquire);
  if ((gfp & __GFP_ACCOUNT) && ops) {
    if (ops->charge(gfp, size, &owner)) return nullptr;
  }
  auto *h = static_cast<kmalloc_header *>(std::malloc(sizeof(kmalloc_header) + size));
  if (!h) {
    if (owner) ops->uncharge(owner, size);
    return nullptr;
  }
  h->size = size;
  h->owner = owner;
  g_live.fetch_add(1, std::memory_order_relaxed);
  if (owner) g_charged.fetch_add(static_cast<long>(size), std::memory_order_relaxed);
  void *p = h + 1;
  if (gfp & __GFP_ZERO) std::memset(p, 0, size);
  return p;
}

void *kzalloc(size_t size, gfp_t gfp) { return kmalloc(size, gfp | __GFP_ZERO); }

void kfree(const void *p) {
  if (!p) return;
  kmalloc_header *h = header_of(p);
  if (h->owner) {
    // An owner exists only if ops were registered when the object was charged; an object
    // outliving the memory controller keeps its (gone) charge.
    const kmem_account_ops *ops = g_ops.load(std::memory_order_acquire);
    if (ops) ops->uncharge(h->owner, h->size);
    g_charged.fetch_sub(static_cast<long>(h->size), std::memory_order_relaxed);
  }
  g_live.fetch_sub(1, std::memory_order_relaxed);
  std::free(h);
}

size_t ksize(const void *p) { return p ? header_of(p)->size : 0; }

mem_cgroup *kmem_set_active_memcg(mem_cgroup *memcg) {
  const kmem_account_ops *ops = g_ops.load(std::memory_order_acquire);
  return ops ? ops->set_active_memcg(memcg) : nullptr;
}

mem_cgroup *kmem_get_current_memcg() {
  const kmem_account_ops *ops = g_ops.load(std::memory_order_acquire);
  return ops ? ops->get_current_memcg() : nullptr;
}

void kmem_put_memcg(mem_cgroup *memcg) {
  const kmem_account_ops *ops = g_ops.load(std::memory_order_acquire);
  if (ops && memcg) ops->put_memcg(memcg);
}

namespace emu {
void set_kmem_account_ops(const kmem_account_ops *ops) {
  g_ops.store(ops, std::memory_order_release);
}
long kmalloc_live_objects() { return g_live.load(std::memory_order_relaxed); }
long kmalloc_charged_bytes() { return g_charged.load(std::memory_order_relaxed); }
}  // namespace emu

}  // namespace umemcg
