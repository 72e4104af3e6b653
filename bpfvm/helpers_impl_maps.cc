// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/helpers_impl_maps.cc: the helpers over maps: element lookup/update/delete, bpf_spin_lock,
// the ring buffer, task and cgroup local storage.
// Mirrors: kernel/bpf/helpers.c (bpf_map_lookup_elem, bpf_map_update_elem, bpf_map_delete_elem,
//          bpf_spin_lock, bpf_spin_unlock), kernel/bpf/ringbuf.c (bpf_ringbuf_reserve,
//          bpf_ringbuf_submit, bpf_ringbuf_discard, bpf_ringbuf_output, bpf_ringbuf_query),
//          kernel/bpf/bpf_task_storage.c, kernel/bpf/bpf_cgrp_storage.c (Linux 6.19)
// Emulation: in checked runs each helper validates what the verifier would have proven (the map
//   is one of the program's, pointers reach valid memory, a record or lock is the run's own) and
//   records a fault instead of touching bad memory; a write helper on a BPF_F_RDONLY_PROG map
//   (which the verifier rejects) returns -EPERM.
#include <cstring>

#include "bpfvm/helpers_impl_internal.h"
#include "bpfvm/map_local_storage.h"
#include "bpfvm/ringbuf.h"
#include "shim/errno.h"
#include "shim/sched.h"

namespace umemcg::emu::helpers {

namespace {

bpf_map *as_map(u64 v) { return reinterpret_cast<bpf_map *>((uintptr_t)v); }
bool checked(const bpf_run_ctx *ctx) { return ctx && ctx->chk; }

// Records memory handed to the program so later accesses through it pass the checks.
void hand_out(bpf_run_ctx *ctx, const void *p, u64 len, bool writable) {
  if (checked(ctx) && p) bpf_run_add_region(ctx, p, len, writable);
}

bool check_task(bpf_run_ctx *ctx, u64 task, const char *helper) {
  if (!checked(ctx) || !task) return true;
  if (task == (u64)(uintptr_t)current || ctx->chk->trusted_ptrs.contains(task)) return true;
  bpf_run_fault(ctx, std::string(helper) + ": R2 is not a task_struct the program was given");
  return false;
}

}  // namespace

BPF_HELPER(map_lookup_elem) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (!check_map(ctx, r1, "bpf_map_lookup_elem")) return 0;
  bpf_map *map = as_map(r1);
  if (!check_mem(ctx, r2, map->key_size, false, "bpf_map_lookup_elem", "key"))
    return 0;
  void *p = map->map_lookup_elem(reinterpret_cast<const void *>(r2));
  if (IS_ERR_OR_NULL(p)) return 0;
  hand_out(ctx, p, map->value_size, !map->rdonly_prog());
  return (u64)(uintptr_t)p;
}

BPF_HELPER(map_update_elem) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (!check_map(ctx, r1, "bpf_map_update_elem")) return (u64)-EFAULT;
  bpf_map *map = as_map(r1);
  if (!check_mem(ctx, r2, map->key_size, false, "bpf_map_update_elem", "key") ||
      !check_mem(ctx, r3, map->value_size, false, "bpf_map_update_elem", "value"))
    return (u64)-EFAULT;
  if (map->rdonly_prog()) return (u64)-EPERM;
  return (u64)map->map_update_elem(reinterpret_cast<const void *>(r2),
                                   reinterpret_cast<const void *>(r3), r4);
}

BPF_HELPER(map_delete_elem) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (!check_map(ctx, r1, "bpf_map_delete_elem")) return (u64)-EFAULT;
  bpf_map *map = as_map(r1);
  if (!check_mem(ctx, r2, map->key_size, false, "bpf_map_delete_elem", "key"))
    return (u64)-EFAULT;
  if (map->rdonly_prog()) return (u64)-EPERM;
  return (u64)map->map_delete_elem(reinterpret_cast<const void *>(r2));
}

// --- bpf_spin_lock --------------------------------------------------------------------------

BPF_HELPER(spin_lock) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  auto *lock = reinterpret_cast<struct bpf_spin_lock *>((uintptr_t)r1);
  if (checked(ctx)) {
    // The lock must sit in a map value (no stack window), aligned, and be the only one held.
    if ((r1 & 3) || !bpf_run_mem_ok(ctx, r1, sizeof(*lock), true, false)) {
      bpf_run_fault(ctx, "bpf_spin_lock: R1 is not a bpf_spin_lock in a map value");
      return 0;
    }
    if (!ctx->chk->locks.empty()) {
      bpf_run_fault(ctx, "bpf_spin_lock: a lock is already held");
      return 0;
    }
    ctx->chk->locks.push_back(lock);
  }
  __bpf_spin_lock_irqsave(lock);
  return 0;
}

BPF_HELPER(spin_unlock) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  auto *lock = reinterpret_cast<struct bpf_spin_lock *>((uintptr_t)r1);
  if (checked(ctx)) {
    if (ctx->chk->locks.empty() || ctx->chk->locks.back() != lock) {
      bpf_run_fault(ctx, "bpf_spin_unlock: R1 is not the lock held");
      return 0;
    }
    ctx->chk->locks.pop_back();
  }
  __bpf_spin_unlock_irqrestore(lock);
  return 0;
}

// --- ring buffer ----------------------------------------------------------------------------

namespace {

bpf_ringbuf *ringbuf_arg(bpf_run_ctx *ctx, u64 map, const char *helper) {
  if (!check_map(ctx, map, helper)) return nullptr;
  bpf_ringbuf *rb = bpf_ringbuf_of(as_map(map));
  if (!rb && checked(ctx)) bpf_run_fault(ctx, std::string(helper) + ": R1 is not a ring buffer");
  return rb;
}

// Submit/discard: in a checked run the sample must be one of the run's own reservations.
bool take_record(bpf_run_ctx *ctx, u64 sample, const char *helper) {
  if (!checked(ctx)) return true;
  if (!ctx->chk->records.erase(sample)) {
    bpf_run_fault(ctx, std::string(helper) + ": R1 is not a record reserved by this run");
    return false;
  }
  ctx->chk->dyn.erase(sample);
  return true;
}

}  // namespace

BPF_HELPER(ringbuf_reserve) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  bpf_ringbuf *rb = ringbuf_arg(ctx, r1, "bpf_ringbuf_reserve");
  if (!rb || r3) return 0;
  void *p = __bpf_ringbuf_reserve(rb, r2);
  if (p && checked(ctx)) {
    hand_out(ctx, p, r2, true);
    ctx->chk->records.insert((u64)(uintptr_t)p);
  }
  return (u64)(uintptr_t)p;
}

BPF_HELPER(ringbuf_submit) {
  if (!take_record(bpf_current_run_ctx(), r1, "bpf_ringbuf_submit")) return 0;
  bpf_ringbuf_commit(reinterpret_cast<void *>((uintptr_t)r1), r2, false);
  return 0;
}

BPF_HELPER(ringbuf_discard) {
  if (!take_record(bpf_current_run_ctx(), r1, "bpf_ringbuf_discard")) return 0;
  bpf_ringbuf_commit(reinterpret_cast<void *>((uintptr_t)r1), r2, true);
  return 0;
}

BPF_HELPER(ringbuf_output) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  bpf_ringbuf *rb = ringbuf_arg(ctx, r1, "bpf_ringbuf_output");
  if (!rb) return (u64)-EFAULT;
  if (!check_mem(ctx, r2, r3, false, "bpf_ringbuf_output", "data"))
    return (u64)-EFAULT;
  if (r4 & ~(u64)(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP)) return (u64)-EINVAL;
  void *rec = __bpf_ringbuf_reserve(rb, r3);
  if (!rec) return (u64)-EAGAIN;
  if (r3) std::memcpy(rec, reinterpret_cast<const void *>((uintptr_t)r2), r3);
  bpf_ringbuf_commit(rec, r4, false);
  return 0;
}

BPF_HELPER(ringbuf_query) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  bpf_ringbuf *rb = ringbuf_arg(ctx, r1, "bpf_ringbuf_query");
  return rb ? bpf_ringbuf_query(rb, r2) : 0;
}

// --- local storage --------------------------------------------------------------------------

BPF_HELPER(task_storage_get) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (!check_map(ctx, r1, "bpf_task_storage_get") || !check_task(ctx, r2, "bpf_task_storage_get"))
    return 0;
  bpf_map *map = as_map(r1);
  if (r3 && !check_mem(ctx, r3, map->value_size, false, "bpf_task_storage_get", "value"))
    return 0;
  void *p = bpf_task_storage_get(map, reinterpret_cast<task_struct *>((uintptr_t)r2),
                                 reinterpret_cast<const void *>((uintptr_t)r3), r4);
  hand_out(ctx, p, map->value_size, true);
  return (u64)(uintptr_t)p;
}

BPF_HELPER(task_storage_delete) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (!check_map(ctx, r1, "bpf_task_storage_delete") ||
      !check_task(ctx, r2, "bpf_task_storage_delete"))
    return (u64)-EFAULT;
  return (u64)bpf_task_storage_delete(as_map(r1), reinterpret_cast<task_struct *>((uintptr_t)r2));
}

// The cgroup argument is an opaque object id (never dereferenced).
BPF_HELPER(cgrp_storage_get) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (!check_map(ctx, r1, "bpf_cgrp_storage_get")) return 0;
  bpf_map *map = as_map(r1);
  if (r3 && !check_mem(ctx, r3, map->value_size, false, "bpf_cgrp_storage_get", "value"))
    return 0;
  void *p = bpf_cgrp_storage_get(map, r2, reinterpret_cast<const void *>((uintptr_t)r3), r4);
  hand_out(ctx, p, map->value_size, true);
  return (u64)(uintptr_t)p;
}

BPF_HELPER(cgrp_storage_delete) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (!check_map(ctx, r1, "bpf_cgrp_storage_delete")) return (u64)-EFAULT;
  return (u64)bpf_cgrp_storage_delete(as_map(r1), r2);
}

}  // namespace umemcg::emu::helpers
