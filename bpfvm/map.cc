// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/map.cc: the common map object, BPF_MAP_CREATE dispatch, the user-side map commands,
// value copies around struct bpf_spin_lock, and the sleepable-program grace period.
// Mirrors: kernel/bpf/syscall.c (map_create, map_lookup_elem, map_update_elem,
//          map_delete_elem, map_get_next_key, map_freeze, bpf_map_value_size),
//          kernel/bpf/helpers.c (__bpf_spin_lock_irqsave, copy_map_value_locked) (Linux 6.19)
// Emulation: see bpfvm/map.h.
#include "bpfvm/map.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

#include "bpfvm/map_internal.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/preempt.h"
#include "shim/smp.h"

namespace umemcg {

namespace emu {
bool simulated_mode();
}

bpf_map::bpf_map(const BpfMapAttr &attr)
    : map_type(attr.map_type),
      key_size(attr.key_size),
      value_size(attr.value_size),
      max_entries(attr.max_entries),
      map_flags(attr.map_flags),
      name(attr.name),
      spin_lock_off(attr.spin_lock_off),
      wq_off(attr.wq_off),
      timer_off(attr.timer_off) {}

bpf_map::~bpf_map() = default;

const void *bpf_map::map_key_of_value(void *, u32 *) { return nullptr; }

void bpf_map::map_for_each_value(void (*)(bpf_map *, void *)) {}

int bpf_map::map_direct_value_addr(u64 *, u32) const { return -EINVAL; }

void bpf_map::static_regions(std::vector<BpfMapRegion> *) {}
long bpf_map::map_for_each_callback(for_each_fn, void *, u64) { return -ENOTSUPP; }

bool bpf_map::is_percpu() const {
  return map_type == BPF_MAP_TYPE_PERCPU_ARRAY || map_type == BPF_MAP_TYPE_PERCPU_HASH ||
         map_type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

u32 bpf_map::sys_value_size() const {
  if (is_percpu()) return round_up8(value_size) * nr_cpu_ids;
  return value_size;
}

// The generic lookup (kernel: bpf_map_copy_value() for maps that are not per-CPU): copy the value
// out under RCU, through the lock when BPF_F_LOCK, with the special fields cleared.
int bpf_map::sys_lookup_elem(const void *key, void *value, u64 flags) {
  rcu_read_guard g;
  void *ptr = map_lookup_elem(key);
  if (IS_ERR(ptr)) return (int)PTR_ERR(ptr);
  if (!ptr) return -ENOENT;
  if (flags & BPF_F_LOCK)
    copy_map_value_locked(this, value, ptr, true);
  else
    copy_map_value(this, value, ptr);
  check_and_init_map_value(this, value);
  return 0;
}

int bpf_map::sys_update_elem(const void *key, const void *value, u64 flags) {
  rcu_read_guard g;
  return (int)map_update_elem(key, value, flags);
}

int bpf_map::sys_delete_elem(const void *key) {
  rcu_read_guard g;
  return (int)map_delete_elem(key);
}

int sys_map_lookup_elem(bpf_map *map, const void *key, void *value, u64 flags) {
  if (flags & ~(u64)BPF_F_LOCK) return -EINVAL;
  if ((flags & BPF_F_LOCK) && map->spin_lock_off < 0) return -EINVAL;
  return map->sys_lookup_elem(key, value, flags);
}

int sys_map_update_elem(bpf_map *map, const void *key, const void *value, u64 flags) {
  // Kernel: map_get_sys_perms() drops FMODE_CAN_WRITE once the map is frozen.
  if (READ_ONCE(map->frozen)) return -EPERM;
  if ((flags & BPF_F_LOCK) && map->spin_lock_off < 0) return -EINVAL;
  return map->sys_update_elem(key, value, flags);
}

int sys_map_delete_elem(bpf_map *map, const void *key) {
  if (READ_ONCE(map->frozen)) return -EPERM;
  return map->sys_delete_elem(key);
}

int sys_map_get_next_key(bpf_map *map, const void *key, void *next_key) {
  rcu_read_guard g;
  return map->map_get_next_key(key, next_key);
}

int sys_map_freeze(bpf_map *map) {
  // Kernel: maps with special fields (a spin lock, a bpf_wq, a bpf_timer) and struct_ops maps
  // cannot be frozen.
  if (map->spin_lock_off >= 0 || map->wq_off >= 0 || map->timer_off >= 0 ||
      map->map_type == BPF_MAP_TYPE_STRUCT_OPS)
    return -ENOTSUPP;
  if (READ_ONCE(map->frozen)) return -EBUSY;
  WRITE_ONCE(map->frozen, true);
  return 0;
}

// --- value copies ---------------------------------------------------------------------------

void copy_map_value(const bpf_map *map, void *dst, const void *src) {
  // The special fields in offset order (they never overlap: distinct BTF members); the bytes
  // between them are copied.
  struct field {
    u32 off, size;
  } f[3];
  int n = 0;
  if (map->spin_lock_off >= 0) f[n++] = {(u32)map->spin_lock_off, sizeof(struct bpf_spin_lock)};
  if (map->wq_off >= 0) f[n++] = {(u32)map->wq_off, BPF_WQ_SIZE};
  if (map->timer_off >= 0) f[n++] = {(u32)map->timer_off, BPF_TIMER_SIZE};
  for (int i = 1; i < n; i++)  // insertion sort of at most three
    for (int j = i; j > 0 && f[j - 1].off > f[j].off; j--) std::swap(f[j - 1], f[j]);
  u32 pos = 0;
  for (int i = 0; i < n; i++) {
    std::memcpy((u8 *)dst + pos, (const u8 *)src + pos, f[i].off - pos);
    pos = f[i].off + f[i].size;
  }
  std::memcpy((u8 *)dst + pos, (const u8 *)src + pos, map->value_size - pos);
}

void copy_map_value_locked(const bpf_map *map, void *dst, const void *src, bool lock_src) {
  auto *lock = reinterpret_cast<struct bpf_spin_lock *>(
      (u8 *)(lock_src ? const_cast<void *>(src) : dst) + map->spin_lock_off);
  __bpf_spin_lock_irqsave(lock);
  copy_map_value(map, dst, src);
  __bpf_spin_unlock_irqrestore(lock);
}

void check_and_init_map_value(const bpf_map *map, void *dst) {
  if (map->spin_lock_off >= 0)
    std::memset((u8 *)dst + map->spin_lock_off, 0, sizeof(struct bpf_spin_lock));
  if (map->wq_off >= 0) std::memset((u8 *)dst + map->wq_off, 0, BPF_WQ_SIZE);
  if (map->timer_off >= 0) std::memset((u8 *)dst + map->timer_off, 0, BPF_TIMER_SIZE);
}

// --- bpf_spin_lock --------------------------------------------------------------------------
// Emulation: the kernel disables interrupts and takes an arch spinlock on the lock word; here
//   preemption is disabled and the word is a test-and-set lock. In simulated mode no task is
//   switched out while holding one (a program cannot sleep with a lock held), so finding one held
//   there means a lock leaked: a BUG, as in shim/spinlock.h.
void __bpf_spin_lock_irqsave(struct bpf_spin_lock *lock) {
  preempt_disable();
  std::atomic_ref<u32> w(lock->val);
  for (;;) {
    if (!w.exchange(1, std::memory_order_acquire)) return;
    BUG_ON(emu::simulated_mode());
    while (w.load(std::memory_order_relaxed)) std::this_thread::yield();
  }
}

void __bpf_spin_unlock_irqrestore(struct bpf_spin_lock *lock) {
  std::atomic_ref<u32>(lock->val).store(0, std::memory_order_release);
  preempt_enable();
}

// --- RCU + RCU-tasks-trace ------------------------------------------------------------------

namespace {

std::atomic<long> g_trace_readers{0};
std::mutex g_parked_mu;
struct ParkedFree {
  rcu_head rcu;
  rcu_head *target;
  rcu_callback_t fn;
};
std::vector<ParkedFree *> g_parked;  // guarded by g_parked_mu

void run_parked(std::vector<ParkedFree *> &v) {
  for (ParkedFree *p : v) {
    p->fn(p->target);
    delete p;
  }
}

void after_rcu_gp(rcu_head *head) {
  auto *p = reinterpret_cast<ParkedFree *>(head);
  {
    std::lock_guard<std::mutex> g(g_parked_mu);
    // A sleepable program that runs now may have found the element before it was unlinked:
    // park it until no sleepable program runs. One that starts later cannot find it.
    if (g_trace_readers.load(std::memory_order_acquire) != 0) {
      g_parked.push_back(p);
      return;
    }
  }
  p->fn(p->target);
  delete p;
}

}  // namespace

void bpf_rcu_tasks_trace_read_lock() { g_trace_readers.fetch_add(1, std::memory_order_acq_rel); }

void bpf_rcu_tasks_trace_read_unlock() {
  std::vector<ParkedFree *> todo;
  {
    std::lock_guard<std::mutex> g(g_parked_mu);
    // Under the mutex: after_rcu_gp() either saw this reader (and parked) or runs after us.
    if (g_trace_readers.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    todo.swap(g_parked);
  }
  run_parked(todo);
}

void bpf_call_rcu_both(rcu_head *head, rcu_callback_t fn) {
  auto *p = new ParkedFree{{}, head, fn};
  call_rcu(&p->rcu, after_rcu_gp);
}

// --- creation ---------------------------------------------------------------------------------

const char *bpf_errno_name(int err) {
  switch (-err) {
    case 0: return "0";
    case EINVAL: return "-EINVAL";
    case E2BIG: return "-E2BIG";
    case ENOMEM: return "-ENOMEM";
    case EPERM: return "-EPERM";
    case ENOENT: return "-ENOENT";
    case EEXIST: return "-EEXIST";
    case EBUSY: return "-EBUSY";
    case EFAULT: return "-EFAULT";
    case EACCES: return "-EACCES";
    case EAGAIN: return "-EAGAIN";
    case ENOTSUPP: return "-ENOTSUPP";
    case EOPNOTSUPP: return "-EOPNOTSUPP";
    default: return "-E?";
  }
}

absl::Status bpf_errno_status(int err, const std::string &what) {
  const std::string msg = what + " (" + bpf_errno_name(err) + ")";
  switch (-err) {
    case E2BIG: return absl::OutOfRangeError(msg);
    case ENOMEM: return absl::ResourceExhaustedError(msg);
    case EPERM: return absl::PermissionDeniedError(msg);
    case ENOTSUPP:
    case EOPNOTSUPP: return absl::UnimplementedError(msg);
    case EFAULT: return absl::InternalError(msg);
    default: return absl::InvalidArgumentError(msg);
  }
}

int bpf_status_errno(const absl::Status &s) {
  switch (s.code()) {
    case absl::StatusCode::kOk: return 0;
    case absl::StatusCode::kOutOfRange: return -E2BIG;
    case absl::StatusCode::kResourceExhausted: return -ENOMEM;
    case absl::StatusCode::kPermissionDenied: return -EPERM;
    case absl::StatusCode::kUnimplemented: return -ENOTSUPP;
    case absl::StatusCode::kInternal: return -EFAULT;
    default: return -EINVAL;
  }
}

namespace {
// Emulation: stands for a map type that has no implementation here (see bpfvm/map.h).
struct bpf_map_unsupported final : bpf_map {
  using bpf_map::bpf_map;
  void *map_lookup_elem(const void *) override { return ERR_PTR<void>(-ENOTSUPP); }
  long map_update_elem(const void *, const void *, u64) override { return -ENOTSUPP; }
  long map_delete_elem(const void *) override { return -ENOTSUPP; }
  int map_get_next_key(const void *, void *) override { return -ENOTSUPP; }
};
}  // namespace

std::unique_ptr<bpf_map> bpf_map_create_unsupported(const BpfMapAttr &attr) {
  return std::make_unique<bpf_map_unsupported>(attr);
}

absl::StatusOr<std::unique_ptr<bpf_map>> bpf_map_create(const BpfMapAttr &attr) {
  const std::string who = "map '" + attr.name + "'";
  if (attr.spin_lock_off >= 0 &&
      ((u64)attr.spin_lock_off + sizeof(struct bpf_spin_lock) > attr.value_size ||
       attr.spin_lock_off % 4))
    return bpf_errno_status(-EINVAL, who + ": bpf_spin_lock outside the value");
  if (attr.wq_off >= 0) {
    if ((u64)attr.wq_off + BPF_WQ_SIZE > attr.value_size || attr.wq_off % 8)
      return bpf_errno_status(-EINVAL, who + ": bpf_wq outside the value");
    // map_check_btf(): a bpf_wq lives in array, hash and LRU hash values only.
    if (attr.map_type != BPF_MAP_TYPE_ARRAY && attr.map_type != BPF_MAP_TYPE_HASH &&
        attr.map_type != BPF_MAP_TYPE_LRU_HASH)
      return bpf_errno_status(-EOPNOTSUPP, who + ": a bpf_wq is allowed in array, hash and "
                                                 "LRU hash map values only");
  }
  if (attr.timer_off >= 0) {
    if ((u64)attr.timer_off + BPF_TIMER_SIZE > attr.value_size || attr.timer_off % 8)
      return bpf_errno_status(-EINVAL, who + ": bpf_timer outside the value");
    if (attr.map_type != BPF_MAP_TYPE_ARRAY && attr.map_type != BPF_MAP_TYPE_HASH &&
        attr.map_type != BPF_MAP_TYPE_LRU_HASH)
      return bpf_errno_status(-EOPNOTSUPP, who + ": a bpf_timer is allowed in array, hash and "
                                                 "LRU hash map values only");
  }
  switch (attr.map_type) {
    case BPF_MAP_TYPE_ARRAY:
    case BPF_MAP_TYPE_PERCPU_ARRAY:
      return emu::array_map_alloc(attr);
    case BPF_MAP_TYPE_HASH:
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_LRU_HASH:
      return emu::htab_map_alloc(attr);
    case BPF_MAP_TYPE_RINGBUF:
      return emu::ringbuf_map_alloc(attr);
    case BPF_MAP_TYPE_TASK_STORAGE:
    case BPF_MAP_TYPE_CGRP_STORAGE_:
      return emu::local_storage_map_alloc(attr);
    default:
      return bpf_errno_status(-ENOTSUPP, who + ": map type " + std::to_string(attr.map_type) +
                                             " is not implemented by the emulator");
  }
}

}  // namespace umemcg
