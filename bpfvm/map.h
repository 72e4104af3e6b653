// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/map.h: live BPF maps: the common object (struct bpf_map), creation from attributes
// (BPF_MAP_CREATE), the program-side operations (bpf_map_ops: what the map helpers call) and the
// user-space side commands (BPF_MAP_LOOKUP_ELEM, BPF_MAP_UPDATE_ELEM, BPF_MAP_DELETE_ELEM,
// BPF_MAP_GET_NEXT_KEY, BPF_MAP_FREEZE).
//
// Map types: array, percpu_array, hash, percpu_hash, lru_hash (map_array.cc, map_hash.cc),
// ringbuf (ringbuf.h), task and cgroup local storage (map_local_storage.h). Global data sections
// are single-element arrays (BpfMapAttr from a loader MapSpec, see runtime.h).
//
// Program side vs. user side: map_lookup_elem() returns a pointer into the map (this vCPU's copy
// for per-CPU maps) and must run inside an RCU read-side section (or a sleepable program run,
// see bpf_rcu_tasks_trace_read_lock()); the sys_map_*() commands copy values in and out (every
// possible vCPU's copy for per-CPU maps, each rounded up to 8 bytes) and take the read-side
// section themselves. Both return the kernel's negative errno values.
//
// Element lifetime: a hash element that is deleted or replaced stays readable by readers that
// found it until an RCU grace period (and every running sleepable program) has passed.
//
// Mirrors: include/linux/bpf.h (struct bpf_map, struct bpf_map_ops, copy_map_value,
//          copy_map_value_locked), kernel/bpf/syscall.c (map_create, map_lookup_elem,
//          map_update_elem, map_delete_elem, map_get_next_key, map_freeze) (Linux 6.19)
// Emulation:
//  - maps are C++ objects owned by their creator (no file descriptors, no refcounts).
//  - the special fields of a value are struct bpf_spin_lock, struct bpf_wq and struct bpf_timer
//    (no kptrs, graph). A bpf_wq or bpf_timer is cancelled and freed when its element is updated
//    (array), replaced or deleted (hash), and when the map is released (bpfvm/bpf_async.h).
//  - errors at creation are absl statuses whose message ends with the kernel errno name
//    ("... (-EINVAL)"); bpf_status_errno() turns one back into the number.
#pragma once

// shim/thread_annotations.h before abseil: abseil redefines the same macros in a system
// header (silently), the reverse order warns.
#include "shim/thread_annotations.h"

#include <linux/bpf.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "shim/rcupdate.h"
#include "shim/types.h"

namespace umemcg {

// Not in the uapi headers this project builds against (added after 6.1).
inline constexpr u32 BPF_MAP_TYPE_CGRP_STORAGE_ = 32;

// BPF_MAP_CREATE attributes (the subset of union bpf_attr the runtime uses).
struct BpfMapAttr {
  u32 map_type = 0;
  u32 key_size = 0;
  u32 value_size = 0;
  u32 max_entries = 0;
  u32 map_flags = 0;
  std::string name;
  // Offset of the struct bpf_spin_lock in the value (from BTF), -1 if none.
  s32 spin_lock_off = -1;
  // Offset of the struct bpf_wq in the value (from BTF), -1 if none: array, hash and LRU hash
  // maps only (-EOPNOTSUPP otherwise, as map_check_btf()).
  s32 wq_off = -1;
  // Offset of the struct bpf_timer in the value (from BTF), -1 if none: array, hash and LRU hash
  // maps only (-EOPNOTSUPP otherwise).
  s32 timer_off = -1;
};

// The uapi struct bpf_wq: 16 opaque bytes, 8-byte aligned.
inline constexpr u32 BPF_WQ_SIZE = 16;
// The uapi struct bpf_timer: 16 opaque bytes, 8-byte aligned.
inline constexpr u32 BPF_TIMER_SIZE = 16;

// One region of memory a program may access, for the checked interpreter.
struct BpfMapRegion {
  void *start;
  u64 len;
  bool writable;
};

struct bpf_map {
  bpf_map(const BpfMapAttr &attr);
  virtual ~bpf_map();
  bpf_map(const bpf_map &) = delete;
  bpf_map &operator=(const bpf_map &) = delete;

  // --- struct bpf_map_ops: the program side ---------------------------------------------
  // Pointer to the value (this vCPU's copy for per-CPU maps), nullptr if absent.
  virtual void *map_lookup_elem(const void *key) = 0;
  // flags: BPF_ANY / BPF_NOEXIST / BPF_EXIST, optionally | BPF_F_LOCK.
  virtual long map_update_elem(const void *key, const void *value, u64 flags) = 0;
  virtual long map_delete_elem(const void *key) = 0;
  // key == nullptr: the first key.
  virtual int map_get_next_key(const void *key, void *next_key) = 0;
  // bpf_for_each_map_elem(): calls fn(arg, key, value) on each element in the map's order
  // (this vCPU's value for per-CPU maps; a hash map's under RCU, bucket by bucket) until fn
  // returns non-zero, and returns the number of calls; -EINVAL for non-zero flags, -ENOTSUPP
  // for a map type without it (the verifier refuses those: "callback function not allowed for
  // map"). Array keys are a u32 index that lives for the call only.
  using for_each_fn = u64 (*)(void *arg, void *key, void *value);
  virtual long map_for_each_callback(for_each_fn fn, void *arg, u64 flags);
  // ld_imm64 of a value address (BPF_PSEUDO_MAP_VALUE): single-element arrays only.
  virtual int map_direct_value_addr(u64 *imm, u32 off) const;

  // --- user side (the bpf() commands); per-CPU maps copy every vCPU's value -----------------
  virtual int sys_lookup_elem(const void *key, void *value, u64 flags);
  virtual int sys_update_elem(const void *key, const void *value, u64 flags);
  virtual int sys_delete_elem(const void *key);

  // Checked interpreter: memory a program may reach without a helper returning it (the value
  // area of array maps); appended to out.
  virtual void static_regions(std::vector<BpfMapRegion> *out);

  // --- async objects (bpf_wq) in values: bpfvm/bpf_async.h ----------------------------------
  // The key of the element whose value is at `value` (a pointer map_lookup_elem() returned), as
  // async callbacks receive it: array maps store the index in *idx and return idx, hash maps
  // return the element's key. nullptr for the other map types.
  virtual const void *map_key_of_value(void *value, u32 *idx);
  // Calls fn on every element's value (this vCPU's copy for per-CPU maps), each under the lock
  // its writers take; fn must not sleep. For releasing the map's async objects.
  virtual void map_for_each_value(void (*fn)(bpf_map *map, void *value));
  // Async object states allocated for this map's values and not yet freed; set once the map
  // was released (bpf_wq_init() then fails with -EPERM, as for a map without user references).
  std::atomic<long> async_live{0};
  std::atomic<bool> async_released{false};

  // Size of one value as user space sees it (per-CPU: round_up(value_size, 8) * nr_cpu_ids).
  u32 sys_value_size() const;
  bool is_percpu() const;
  bool rdonly_prog() const { return map_flags & BPF_F_RDONLY_PROG; }

  u32 map_type;
  u32 key_size;
  u32 value_size;
  u32 max_entries;
  u32 map_flags;
  std::string name;
  s32 spin_lock_off;  // struct bpf_spin_lock in the value, -1 if none
  s32 wq_off;         // struct bpf_wq in the value, -1 if none
  s32 timer_off;      // struct bpf_timer in the value, -1 if none
  bool frozen = false;
};

// BPF_MAP_CREATE: checks the attributes the way each map type's map_alloc_check() does and
// allocates the map.
absl::StatusOr<std::unique_ptr<bpf_map>> bpf_map_create(const BpfMapAttr &attr);

// A map of a type the emulator does not implement (struct_ops, map-in-map): every operation
// fails with -ENOTSUPP. The runtime creates one so that objects naming such maps still link.
std::unique_ptr<bpf_map> bpf_map_create_unsupported(const BpfMapAttr &attr);

// The negative errno a creation status stands for (0 for OK).
int bpf_status_errno(const absl::Status &s);
absl::Status bpf_errno_status(int err, const std::string &what);
const char *bpf_errno_name(int err);

// The user-side commands (kernel/bpf/syscall.c). value buffers are sys_value_size() bytes.
int sys_map_lookup_elem(bpf_map *map, const void *key, void *value, u64 flags = 0);
int sys_map_update_elem(bpf_map *map, const void *key, const void *value, u64 flags = BPF_ANY);
int sys_map_delete_elem(bpf_map *map, const void *key);
int sys_map_get_next_key(bpf_map *map, const void *key, void *next_key);
// BPF_MAP_FREEZE: user space may no longer write the map (-EPERM); -EBUSY if already frozen.
int sys_map_freeze(bpf_map *map);

// Value copies that leave the special fields (struct bpf_spin_lock, bpf_wq, bpf_timer) alone
// (include/linux/bpf.h).
void copy_map_value(const bpf_map *map, void *dst, const void *src);
// The same with the value's lock held: dst's lock, or src's when lock_src.
void copy_map_value_locked(const bpf_map *map, void *dst, const void *src, bool lock_src);
// Zeroes the special fields of a fresh value.
void check_and_init_map_value(const bpf_map *map, void *dst);

// bpf_spin_lock()/bpf_spin_unlock() on a lock word in a map value.
void __bpf_spin_lock_irqsave(struct bpf_spin_lock *lock);
void __bpf_spin_unlock_irqrestore(struct bpf_spin_lock *lock);

// Sleepable programs run under RCU-tasks-trace in the kernel (rcu_read_lock_trace()), and map
// elements are freed only after both an RCU and an RCU-tasks-trace grace period.
// Emulation: a count of running sleepable programs; an element whose RCU grace period ended while
//   any sleepable program runs is parked until that count drops to zero (a conservative grace
//   period).
void bpf_rcu_tasks_trace_read_lock();
void bpf_rcu_tasks_trace_read_unlock();
// Frees obj with fn after an RCU grace period and an RCU-tasks-trace grace period.
void bpf_call_rcu_both(rcu_head *head, rcu_callback_t fn);

inline u32 round_up8(u32 v) { return (v + 7) & ~7u; }

}  // namespace umemcg
