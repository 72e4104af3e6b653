// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/map_array.cc: BPF_MAP_TYPE_ARRAY and BPF_MAP_TYPE_PERCPU_ARRAY (and so the global data
// sections, which are single-element arrays).
//
// Every element always exists (zero-filled at creation): updates only overwrite, BPF_NOEXIST
// fails with -EEXIST, delete is -EINVAL, an index past max_entries is -E2BIG for updates and
// "not found" for lookups. get_next_key walks indices in order and restarts at 0 from a missing
// (out of range) key.
//
// Mirrors: kernel/bpf/arraymap.c (array_map_alloc_check, array_map_alloc,
//          array_map_lookup_elem, percpu_array_map_lookup_elem, array_map_update_elem,
//          array_map_get_next_key, array_map_direct_value_addr, bpf_percpu_array_copy,
//          bpf_percpu_array_update, bpf_for_each_array_elem) (Linux 6.19)
// Emulation: no index masking against speculation; the per-CPU copies of one array are one
//   allocation ([cpu][index]) instead of the per-CPU allocator's areas.
#include <climits>
#include <cstring>

#include "bpfvm/bpf_async.h"
#include "bpfvm/map_internal.h"
#include "shim/errno.h"
#include "shim/smp.h"
#include "shim/types.h"

namespace umemcg::emu {

namespace {

// BPF_F_ACCESS_MASK and the other flags an array accepts (ARRAY_CREATE_FLAG_MASK).
constexpr u32 kAccessMask = BPF_F_RDONLY | BPF_F_WRONLY | BPF_F_RDONLY_PROG | BPF_F_WRONLY_PROG;
constexpr u32 kArrayCreateFlags = BPF_F_NUMA_NODE | BPF_F_MMAPABLE | kAccessMask |
                                  BPF_F_PRESERVE_ELEMS | BPF_F_INNER_MAP;
constexpr u32 kPcpuMinUnitSize = 32 << 10;  // PCPU_MIN_UNIT_SIZE

bool flags_access_ok(u32 f) {
  return !((f & BPF_F_RDONLY) && (f & BPF_F_WRONLY)) &&
         !((f & BPF_F_RDONLY_PROG) && (f & BPF_F_WRONLY_PROG));
}

class bpf_array final : public bpf_map {
 public:
  bpf_array(const BpfMapAttr &attr, u32 ncpus)
      : bpf_map(attr),
        elem_size_(round_up8(attr.value_size)),
        ncpus_(ncpus),
        cpu_stride_((u64)elem_size_ * attr.max_entries),
        value_(new u8[cpu_stride_ * ncpus]()) {}
  // The element memory goes with the map: no async callback may run on it any more.
  ~bpf_array() override { bpf_map_release_async(this); }

  void *map_lookup_elem(const void *key) override {
    const u32 index = *static_cast<const u32 *>(key);
    if (index >= max_entries) return nullptr;
    return elem(percpu() ? (u32)smp_processor_id() : 0, index);
  }

  long map_update_elem(const void *key, const void *value, u64 flags) override {
    const u32 index = *static_cast<const u32 *>(key);
    if ((flags & ~(u64)BPF_F_LOCK) > BPF_EXIST) return -EINVAL;
    if (index >= max_entries) return -E2BIG;  // all elements were pre-allocated
    if (flags & BPF_NOEXIST) return -EEXIST;  // all elements already exist
    if ((flags & BPF_F_LOCK) && spin_lock_off < 0) return -EINVAL;
    if (percpu()) {
      // The program side of a per-CPU update writes this vCPU's copy only.
      std::memcpy(elem((u32)smp_processor_id(), index), value, value_size);
    } else if (flags & BPF_F_LOCK) {
      copy_map_value_locked(this, elem(0, index), value, false);
    } else {
      copy_map_value(this, elem(0, index), value);
    }
    // array_map_update_elem(): an update cancels and frees the value's async objects.
    if (!percpu()) bpf_obj_free_fields(this, elem(0, index));
    return 0;
  }

  long map_delete_elem(const void *) override { return -EINVAL; }

  int map_get_next_key(const void *key, void *next_key) override {
    const u32 index = key ? *static_cast<const u32 *>(key) : UINT32_MAX;
    u32 *next = static_cast<u32 *>(next_key);
    if (index >= max_entries) {
      *next = 0;
      return 0;
    }
    if (index == max_entries - 1) return -ENOENT;
    *next = index + 1;
    return 0;
  }

  int map_direct_value_addr(u64 *imm, u32 off) const override {
    if (max_entries != 1) return -ENOTSUPP;
    if (off >= value_size) return -EINVAL;
    *imm = (u64)(uintptr_t)(value_.get() + off);
    return 0;
  }

  int sys_lookup_elem(const void *key, void *value, u64 flags) override {
    if (!percpu()) return bpf_map::sys_lookup_elem(key, value, flags);
    const u32 index = *static_cast<const u32 *>(key);
    if (index >= max_entries) return -ENOENT;
    u8 *out = static_cast<u8 *>(value);
    for (u32 cpu = 0; cpu < ncpus_; cpu++, out += elem_size_) {
      std::memcpy(out, elem(cpu, index), value_size);
      std::memset(out + value_size, 0, elem_size_ - value_size);
    }
    return 0;
  }

  int sys_update_elem(const void *key, const void *value, u64 flags) override {
    if (!percpu()) return bpf_map::sys_update_elem(key, value, flags);
    const u32 index = *static_cast<const u32 *>(key);
    if (flags > BPF_EXIST) return -EINVAL;
    if (index >= max_entries) return -E2BIG;
    if (flags == BPF_NOEXIST) return -EEXIST;
    const u8 *in = static_cast<const u8 *>(value);
    for (u32 cpu = 0; cpu < ncpus_; cpu++, in += elem_size_)
      std::memcpy(elem(cpu, index), in, value_size);
    return 0;
  }

  void static_regions(std::vector<BpfMapRegion> *out) override {
    out->push_back({value_.get(), cpu_stride_ * ncpus_, !rdonly_prog()});
  }

  // The index of a value (kernel: bpf_wq_work() computes it from the value's offset).
  const void *map_key_of_value(void *value, u32 *idx) override {
    if (percpu()) return nullptr;
    *idx = (u32)((static_cast<u8 *>(value) - value_.get()) / elem_size_);
    return idx;
  }

  void map_for_each_value(void (*fn)(bpf_map *, void *)) override {
    if (percpu()) return;
    for (u32 i = 0; i < max_entries; i++) fn(this, elem(0, i));
  }

  // bpf_for_each_array_elem(): every index in order, the key a copy of it.
  long map_for_each_callback(for_each_fn fn, void *arg, u64 flags) override {
    if (flags) return -EINVAL;
    const u32 cpu = percpu() ? (u32)smp_processor_id() : 0;
    u32 i = 0;
    while (i < max_entries) {
      u32 key = i;
      const u64 ret = fn(arg, &key, elem(cpu, i++));
      if (ret) break;  // 1: stop (the verifier holds callbacks to [0, 1])
    }
    return i;
  }

 private:
  bool percpu() const { return map_type == BPF_MAP_TYPE_PERCPU_ARRAY; }
  u8 *elem(u32 cpu, u32 index) const { return value_.get() + cpu * cpu_stride_ + (u64)index * elem_size_; }

  const u32 elem_size_;  // value_size rounded up to 8
  const u32 ncpus_;      // 1, or nr_cpu_ids for a per-CPU array
  const u64 cpu_stride_;
  std::unique_ptr<u8[]> value_;
};

}  // namespace

absl::Status need_cpus(const BpfMapAttr &attr) {
  if (nr_cpu_ids == 0)
    return bpf_errno_status(-EINVAL, "map '" + attr.name + "': a per-CPU map needs a machine");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<bpf_map>> array_map_alloc(const BpfMapAttr &attr) {
  const std::string who = "map '" + attr.name + "'";
  const bool percpu = attr.map_type == BPF_MAP_TYPE_PERCPU_ARRAY;
  if (attr.max_entries == 0 || attr.key_size != 4 || attr.value_size == 0 ||
      (attr.map_flags & ~kArrayCreateFlags) || !flags_access_ok(attr.map_flags))
    return bpf_errno_status(-EINVAL, who + ": array needs key_size 4, value_size > 0, "
                                           "max_entries > 0 and array flags");
  if (percpu && (attr.map_flags & (BPF_F_MMAPABLE | BPF_F_INNER_MAP)))
    return bpf_errno_status(-EINVAL, who + ": per-CPU array cannot be mmapable");
  if (attr.map_flags & BPF_F_PRESERVE_ELEMS)
    return bpf_errno_status(-EINVAL, who + ": BPF_F_PRESERVE_ELEMS is for perf event arrays");
  if (attr.value_size > INT_MAX) return bpf_errno_status(-E2BIG, who + ": value too large");
  if (percpu && round_up8(attr.value_size) > kPcpuMinUnitSize)
    return bpf_errno_status(-E2BIG, who + ": per-CPU value larger than 32 KiB");
  const u64 array_size = (u64)round_up8(attr.value_size) * attr.max_entries;
  if (array_size >= UINT32_MAX - PAGE_SIZE)
    return bpf_errno_status(-ENOMEM, who + ": array larger than 4 GiB");
  u32 ncpus = 1;
  if (percpu) {
    if (absl::Status s = need_cpus(attr); !s.ok()) return s;
    ncpus = nr_cpu_ids;
  }
  return std::unique_ptr<bpf_map>(new bpf_array(attr, ncpus));
}

}  // namespace umemcg::emu
