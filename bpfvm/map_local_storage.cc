// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/map_local_storage.cc: task and cgroup local storage maps.
// Mirrors: kernel/bpf/bpf_local_storage.c, kernel/bpf/bpf_task_storage.c,
//          kernel/bpf/bpf_cgrp_storage.c (Linux 6.19)
// Emulation: see bpfvm/map_local_storage.h.
#include "bpfvm/map_local_storage.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "bpfvm/map_internal.h"
#include "shim/errno.h"
#include "shim/machine.h"
#include "shim/spinlock.h"

namespace umemcg {

namespace {

constexpr u32 kMaxValueSize = 0xffff - 128;  // BPF_LOCAL_STORAGE_MAX_VALUE_SIZE (U16_MAX bound)

struct bpf_local_storage_elem;

// One owner's storage: its values in every map (the kernel's struct bpf_local_storage).
struct bpf_local_storage {
  std::vector<bpf_local_storage_elem *> list;  // guarded by g_lock
};

struct bpf_local_storage_map;

struct bpf_local_storage_elem {
  rcu_head rcu;
  bpf_local_storage_map *smap;
  bpf_local_storage *owner;
  u8 *data() { return reinterpret_cast<u8 *>(this + 1); }
};
static_assert(sizeof(bpf_local_storage_elem) % 8 == 0);

// Per-task BPF data, hung off task_struct::bpf_storage.
struct bpf_task_data {
  bpf_local_storage storage;
  task_struct *task = nullptr;
};

DEFINE_SPINLOCK(g_lock);  // every list below and in bpf_local_storage
std::vector<bpf_task_data *> g_task_data;                  // guarded by g_lock
std::unordered_map<u64, bpf_local_storage *> g_cgrp_owners;  // guarded by g_lock
emu::Machine *g_hooked_machine = nullptr;                  // guarded by g_lock

struct bpf_local_storage_map final : bpf_map {
  explicit bpf_local_storage_map(const BpfMapAttr &attr) : bpf_map(attr) {}
  ~bpf_local_storage_map() override;

  void *map_lookup_elem(const void *) override { return ERR_PTR<void>(-EOPNOTSUPP); }
  long map_update_elem(const void *, const void *, u64) override { return -EOPNOTSUPP; }
  long map_delete_elem(const void *) override { return -EOPNOTSUPP; }
  int map_get_next_key(const void *, void *) override { return -ENOTSUPP; }

  std::vector<bpf_local_storage_elem *> elems;  // guarded by g_lock
};

void selem_free_cb(rcu_head *head) {
  auto *e = reinterpret_cast<bpf_local_storage_elem *>(head);
  e->~bpf_local_storage_elem();
  ::operator delete(e);
}

template <typename T>
void erase_one(std::vector<T *> &v, T *x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it != v.end()) {
    *it = v.back();
    v.pop_back();
  }
}

// bpf_selem_unlink(): off both lists (g_lock held), freed after the grace periods.
void selem_unlink(bpf_local_storage_elem *e) {
  erase_one(e->owner->list, e);
  erase_one(e->smap->elems, e);
  bpf_call_rcu_both(&e->rcu, selem_free_cb);
}

bpf_local_storage_map::~bpf_local_storage_map() {
  spin_lock(&g_lock);
  while (!elems.empty()) selem_unlink(elems.back());
  spin_unlock(&g_lock);
}

bpf_local_storage_elem *storage_lookup(bpf_local_storage *owner, bpf_local_storage_map *smap) {
  if (!owner) return nullptr;
  for (bpf_local_storage_elem *e : owner->list)
    if (e->smap == smap) return e;
  return nullptr;
}

bpf_local_storage_elem *selem_alloc(bpf_local_storage_map *smap, bpf_local_storage *owner,
                                    const void *value) {
  const size_t sz = sizeof(bpf_local_storage_elem) + round_up8(smap->value_size);
  void *mem = ::operator new(sz);
  std::memset(mem, 0, sz);
  auto *e = new (mem) bpf_local_storage_elem{{}, smap, owner};
  if (value) {
    copy_map_value(smap, e->data(), value);
    check_and_init_map_value(smap, e->data());
  }
  return e;
}

void selem_link(bpf_local_storage_elem *e) {
  e->owner->list.push_back(e);
  e->smap->elems.push_back(e);
}

bpf_local_storage_map *as_smap(bpf_map *map, u32 type) {
  if (!map || map->map_type != type) return nullptr;
  return static_cast<bpf_local_storage_map *>(map);
}

// Frees everything at machine shutdown (the shim has no task-exit hook): the tasks go away with
// the machine.
void free_all_task_data() {
  spin_lock(&g_lock);
  std::vector<bpf_task_data *> all;
  all.swap(g_task_data);
  for (bpf_task_data *d : all) {
    while (!d->storage.list.empty()) selem_unlink(d->storage.list.back());
    if (d->task) std::atomic_ref<void *>(d->task->bpf_storage).store(nullptr, std::memory_order_release);
  }
  for (auto &[id, owner] : g_cgrp_owners) {
    while (!owner->list.empty()) selem_unlink(owner->list.back());
    delete owner;
  }
  g_cgrp_owners.clear();
  g_hooked_machine = nullptr;
  spin_unlock(&g_lock);
  for (bpf_task_data *d : all) delete d;
}

// task_struct::bpf_storage is set once under g_lock (release) and read lock-free (acquire); it
// is cleared only at machine shutdown, when no program runs.
bpf_task_data *task_data_of(task_struct *task) {
  return static_cast<bpf_task_data *>(
      std::atomic_ref<void *>(task->bpf_storage).load(std::memory_order_acquire));
}

// The task's BPF data, allocated on first use (g_lock held).
bpf_task_data *task_data_locked(task_struct *task) {
  bpf_task_data *d = task_data_of(task);
  if (d) return d;
  d = new bpf_task_data;
  d->task = task;
  std::atomic_ref<void *>(task->bpf_storage).store(d, std::memory_order_release);
  g_task_data.push_back(d);
  emu::Machine *m = emu::Machine::get();
  if (m && g_hooked_machine != m) {
    g_hooked_machine = m;
    m->add_shutdown_hook(free_all_task_data);
  }
  return d;
}

// bpf_local_storage_update() for one owner: BPF_NOEXIST/BPF_EXIST checks, BPF_F_LOCK in place,
// otherwise a new element replaces the old one (readers of the old one keep it until the grace
// periods pass). Returns the element or an ERR_PTR. g_lock held.
bpf_local_storage_elem *storage_update(bpf_local_storage_map *smap, bpf_local_storage *owner,
                                       const void *value, u64 flags) {
  if ((flags & ~(u64)BPF_F_LOCK) > BPF_EXIST || ((flags & BPF_F_LOCK) && smap->spin_lock_off < 0))
    return ERR_PTR<bpf_local_storage_elem>(-EINVAL);
  bpf_local_storage_elem *old = storage_lookup(owner, smap);
  const u64 f = flags & ~(u64)BPF_F_LOCK;
  if (old && f == BPF_NOEXIST) return ERR_PTR<bpf_local_storage_elem>(-EEXIST);
  if (!old && f == BPF_EXIST) return ERR_PTR<bpf_local_storage_elem>(-ENOENT);
  if (old && (flags & BPF_F_LOCK)) {
    copy_map_value_locked(smap, old->data(), value, false);
    return old;
  }
  bpf_local_storage_elem *e = selem_alloc(smap, owner, value);
  selem_link(e);
  if (old) selem_unlink(old);
  return e;
}

bpf_local_storage *cgrp_owner_locked(u64 id, bool create) {
  auto it = g_cgrp_owners.find(id);
  if (it != g_cgrp_owners.end()) return it->second;
  if (!create) return nullptr;
  auto *o = new bpf_local_storage;
  g_cgrp_owners.emplace(id, o);
  return o;
}

void *storage_get(bpf_local_storage_map *smap, bpf_local_storage *owner, const void *value,
                  u64 flags) {
  if (bpf_local_storage_elem *e = storage_lookup(owner, smap)) return e->data();
  if (!(flags & BPF_LOCAL_STORAGE_GET_F_CREATE)) return nullptr;
  bpf_local_storage_elem *e = storage_update(smap, owner, value, BPF_NOEXIST);
  return IS_ERR(e) ? nullptr : e->data();
}

int storage_sys_lookup(bpf_local_storage_map *smap, bpf_local_storage *owner, void *value,
                       u64 flags) {
  if (flags & ~(u64)BPF_F_LOCK) return -EINVAL;
  if ((flags & BPF_F_LOCK) && smap->spin_lock_off < 0) return -EINVAL;
  bpf_local_storage_elem *e = storage_lookup(owner, smap);
  if (!e) return -ENOENT;
  if (flags & BPF_F_LOCK)
    copy_map_value_locked(smap, value, e->data(), true);
  else
    copy_map_value(smap, value, e->data());
  check_and_init_map_value(smap, value);
  return 0;
}

long storage_delete(bpf_local_storage_map *smap, bpf_local_storage *owner) {
  bpf_local_storage_elem *e = storage_lookup(owner, smap);
  if (!e) return -ENOENT;
  selem_unlink(e);
  return 0;
}

bpf_local_storage *task_owner(task_struct *task) {
  bpf_task_data *d = task_data_of(task);
  return d ? &d->storage : nullptr;
}

}  // namespace

// --- task storage -----------------------------------------------------------------------------

void *bpf_task_storage_get(bpf_map *map, task_struct *task, const void *value, u64 flags) {
  bpf_local_storage_map *smap = as_smap(map, BPF_MAP_TYPE_TASK_STORAGE);
  if (!smap || !task || (flags & ~(u64)BPF_LOCAL_STORAGE_GET_F_CREATE)) return nullptr;
  spin_lock(&g_lock);
  bpf_local_storage *owner = (flags & BPF_LOCAL_STORAGE_GET_F_CREATE)
                                 ? &task_data_locked(task)->storage
                                 : task_owner(task);
  void *p = owner ? storage_get(smap, owner, value, flags) : nullptr;
  spin_unlock(&g_lock);
  return p;
}

long bpf_task_storage_delete(bpf_map *map, task_struct *task) {
  bpf_local_storage_map *smap = as_smap(map, BPF_MAP_TYPE_TASK_STORAGE);
  if (!smap || !task) return -EINVAL;
  spin_lock(&g_lock);
  long ret = storage_delete(smap, task_owner(task));
  spin_unlock(&g_lock);
  return ret;
}

int sys_task_storage_lookup(bpf_map *map, task_struct *task, void *value, u64 flags) {
  bpf_local_storage_map *smap = as_smap(map, BPF_MAP_TYPE_TASK_STORAGE);
  if (!smap || !task) return -EINVAL;
  spin_lock(&g_lock);
  int ret = storage_sys_lookup(smap, task_owner(task), value, flags);
  spin_unlock(&g_lock);
  return ret;
}

int sys_task_storage_update(bpf_map *map, task_struct *task, const void *value, u64 flags) {
  bpf_local_storage_map *smap = as_smap(map, BPF_MAP_TYPE_TASK_STORAGE);
  if (!smap || !task) return -EINVAL;
  spin_lock(&g_lock);
  bpf_local_storage_elem *e = storage_update(smap, &task_data_locked(task)->storage, value, flags);
  spin_unlock(&g_lock);
  return IS_ERR(e) ? (int)PTR_ERR(e) : 0;
}

int sys_task_storage_delete(bpf_map *map, task_struct *task) {
  bpf_local_storage_map *smap = as_smap(map, BPF_MAP_TYPE_TASK_STORAGE);
  if (!smap || !task) return -EINVAL;
  spin_lock(&g_lock);
  int ret = (int)storage_delete(smap, task_owner(task));
  spin_unlock(&g_lock);
  return ret;
}

void bpf_task_storage_free(task_struct *task) {
  spin_lock(&g_lock);
  if (bpf_local_storage *owner = task_owner(task))
    while (!owner->list.empty()) selem_unlink(owner->list.back());
  spin_unlock(&g_lock);
}

// --- cgroup storage ---------------------------------------------------------------------------

void *bpf_cgrp_storage_get(bpf_map *map, u64 cgroup_id, const void *value, u64 flags) {
  bpf_local_storage_map *smap = as_smap(map, BPF_MAP_TYPE_CGRP_STORAGE_);
  if (!smap || !cgroup_id || (flags & ~(u64)BPF_LOCAL_STORAGE_GET_F_CREATE)) return nullptr;
  spin_lock(&g_lock);
  bpf_local_storage *owner = cgrp_owner_locked(cgroup_id, flags & BPF_LOCAL_STORAGE_GET_F_CREATE);
  void *p = owner ? storage_get(smap, owner, value, flags) : nullptr;
  spin_unlock(&g_lock);
  return p;
}

long bpf_cgrp_storage_delete(bpf_map *map, u64 cgroup_id) {
  bpf_local_storage_map *smap = as_smap(map, BPF_MAP_TYPE_CGRP_STORAGE_);
  if (!smap || !cgroup_id) return -EINVAL;
  spin_lock(&g_lock);
  long ret = storage_delete(smap, cgrp_owner_locked(cgroup_id, false));
  spin_unlock(&g_lock);
  return ret;
}

int sys_cgrp_storage_lookup(bpf_map *map, u64 cgroup_id, void *value, u64 flags) {
  bpf_local_storage_map *smap = as_smap(map, BPF_MAP_TYPE_CGRP_STORAGE_);
  if (!smap || !cgroup_id) return -EINVAL;
  spin_lock(&g_lock);
  int ret = storage_sys_lookup(smap, cgrp_owner_locked(cgroup_id, false), value, flags);
  spin_unlock(&g_lock);
  return ret;
}

int sys_cgrp_storage_update(bpf_map *map, u64 cgroup_id, const void *value, u64 flags) {
  bpf_local_storage_map *smap = as_smap(map, BPF_MAP_TYPE_CGRP_STORAGE_);
  if (!smap || !cgroup_id) return -EINVAL;
  spin_lock(&g_lock);
  bpf_local_storage_elem *e = storage_update(smap, cgrp_owner_locked(cgroup_id, true), value, flags);
  spin_unlock(&g_lock);
  return IS_ERR(e) ? (int)PTR_ERR(e) : 0;
}

int sys_cgrp_storage_delete(bpf_map *map, u64 cgroup_id) {
  bpf_local_storage_map *smap = as_smap(map, BPF_MAP_TYPE_CGRP_STORAGE_);
  if (!smap || !cgroup_id) return -EINVAL;
  spin_lock(&g_lock);
  int ret = (int)storage_delete(smap, cgrp_owner_locked(cgroup_id, false));
  spin_unlock(&g_lock);
  return ret;
}

void bpf_cgrp_storage_free(u64 cgroup_id) {
  spin_lock(&g_lock);
  auto it = g_cgrp_owners.find(cgroup_id);
  if (it != g_cgrp_owners.end()) {
    bpf_local_storage *owner = it->second;
    while (!owner->list.empty()) selem_unlink(owner->list.back());
    g_cgrp_owners.erase(it);
    delete owner;
  }
  spin_unlock(&g_lock);
}

u32 bpf_local_storage_count(bpf_map *map) {
  if (!map || (map->map_type != BPF_MAP_TYPE_TASK_STORAGE &&
               map->map_type != BPF_MAP_TYPE_CGRP_STORAGE_))
    return 0;
  spin_lock(&g_lock);
  u32 n = (u32)static_cast<bpf_local_storage_map *>(map)->elems.size();
  spin_unlock(&g_lock);
  return n;
}

namespace emu {

absl::StatusOr<std::unique_ptr<bpf_map>> local_storage_map_alloc(const BpfMapAttr &attr) {
  const std::string who = "map '" + attr.name + "'";
  if ((attr.map_flags & ~(u32)(BPF_F_NO_PREALLOC | BPF_F_CLONE)) ||
      !(attr.map_flags & BPF_F_NO_PREALLOC) || attr.max_entries || attr.key_size != sizeof(int) ||
      !attr.value_size)
    return bpf_errno_status(-EINVAL, who + ": local storage needs BPF_F_NO_PREALLOC, "
                                           "max_entries 0, key_size 4 and a value");
  if (attr.value_size > kMaxValueSize)
    return bpf_errno_status(-E2BIG, who + ": local storage value too large");
  return std::unique_ptr<bpf_map>(new bpf_local_storage_map(attr));
}

}  // namespace emu
}  // namespace umemcg
