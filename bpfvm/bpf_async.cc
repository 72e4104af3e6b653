// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/bpf_async.cc: struct bpf_wq: its state, its work item, its kfuncs, its cancellation.
// Mirrors: kernel/bpf/helpers.c (bpf_wq_*, __bpf_async_*) (Linux 6.19); see bpfvm/bpf_async.h.
// Emulation: see bpfvm/bpf_async.h.
#include "bpfvm/bpf_async.h"

#include <atomic>
#include <cstddef>
#include <new>

#include "bpfvm/helpers_impl.h"
#include "bpfvm/map.h"
#include "bpfvm/runtime.h"
#include "shim/bug.h"
#include "shim/compiler.h"
#include "shim/errno.h"
#include "shim/preempt.h"
#include "shim/sched.h"
#include "shim/wait.h"
#include "shim/workqueue.h"

namespace umemcg {

namespace {

// The common part of an async object's state (kernel: struct bpf_async_cb).
struct bpf_async_cb {
  bpf_map *map = nullptr;
  void *value = nullptr;      // the map value holding the bpf_wq
  const void *key = nullptr;  // its key (array maps: &idx)
  u32 idx = 0;
  // The program and callback set by bpf_wq_set_callback_impl(), read and written as a pair
  // under cb_lock (nullptr: none; a dropped callback).
  struct bpf_spin_lock cb_lock = {};
  const emu::BpfLoadedProg *prog = nullptr;
  const emu::BpfCallback *callback_fn = nullptr;
};

// kernel: struct bpf_work.
struct bpf_work {
  bpf_async_cb cb;
  work_struct work;
  work_struct delete_work;
};

// What the 16 bytes of a struct bpf_wq hold (kernel: struct bpf_async_kern). cb is accessed
// with atomics: bpf_obj_free_fields() reads it without the lock first.
struct bpf_async_kern {
  bpf_async_cb *cb;
  struct bpf_spin_lock lock;
};
static_assert(sizeof(bpf_async_kern) <= BPF_WQ_SIZE);
static_assert(alignof(bpf_async_kern) == 8);

// bpf_map_release_async() waits here for a map's states to be freed. One queue for every map:
// the freeing side must not touch the map after its last decrement of async_live.
DECLARE_WAIT_QUEUE_HEAD(async_free_wait);

bpf_async_cb *load_cb(bpf_async_kern *async) {
  return __atomic_load_n(&async->cb, __ATOMIC_ACQUIRE);
}

void set_callback(bpf_async_cb *cb, const emu::BpfLoadedProg *prog,
                  const emu::BpfCallback *fn) {
  __bpf_spin_lock_irqsave(&cb->cb_lock);
  cb->prog = prog;
  cb->callback_fn = fn;
  __bpf_spin_unlock_irqrestore(&cb->cb_lock);
}

void put_live(bpf_map *map) {
  // After the last decrement the map may be freed at once by its releaser: touch it no more.
  if (map->async_live.fetch_sub(1, std::memory_order_acq_rel) == 1) wake_up_all(&async_free_wait);
}

// bpf_wq_work(): the callback on a worker, sleepable. The read side is entered before the
// callback is read, so that a value deleted once it was dropped is freed only after this run.
void bpf_wq_work(work_struct *work) {
  bpf_work *w = container_of(work, bpf_work, work);
  bpf_async_cb *cb = &w->cb;
  bpf_rcu_tasks_trace_read_lock();
  migrate_disable();
  __bpf_spin_lock_irqsave(&cb->cb_lock);
  const emu::BpfLoadedProg *prog = cb->prog;
  const emu::BpfCallback *fn = cb->callback_fn;
  __bpf_spin_unlock_irqrestore(&cb->cb_lock);
  if (prog && fn) {
    const u64 args[3] = {(u64)(uintptr_t)cb->map, (u64)(uintptr_t)cb->key,
                         (u64)(uintptr_t)cb->value};
    prog->run_async_callback(*fn, args);  // the verifier held it to return 0
  }
  migrate_enable();
  bpf_rcu_tasks_trace_read_unlock();
}

// bpf_wq_delete_work(): a detached state goes once its work item can no longer run.
void bpf_wq_delete_work(work_struct *work) {
  bpf_work *w = container_of(work, bpf_work, delete_work);
  cancel_work_sync(&w->work);
  bpf_map *map = w->cb.map;
  delete w;
  put_live(map);
}

// __bpf_async_cancel_and_free() + bpf_wq_cancel_and_free().
void bpf_wq_cancel_and_free(void *p) {
  auto *async = static_cast<bpf_async_kern *>(p);
  if (!load_cb(async)) return;  // never initialised: the common case, no lock
  __bpf_spin_lock_irqsave(&async->lock);
  bpf_async_cb *cb = async->cb;
  if (cb) {
    set_callback(cb, nullptr, nullptr);
    __atomic_store_n(&async->cb, nullptr, __ATOMIC_RELEASE);
  }
  __bpf_spin_unlock_irqrestore(&async->lock);
  if (!cb) return;
  // The work item may be running the callback, which may be what deletes this value: free it
  // from another work item, which may wait.
  schedule_work(&reinterpret_cast<bpf_work *>(cb)->delete_work);
}

bpf_async_kern *async_of(u64 wq) { return reinterpret_cast<bpf_async_kern *>((uintptr_t)wq); }

// Emulation: the kfuncs trust their pointers as the kernel's do (the verifier proved them), so
// a checked run (no proof) may not call them.
bool refuse_checked(const char *kfunc) {
  bpf_run_ctx *rc = bpf_current_run_ctx();
  if (!rc || !rc->chk) return false;
  emu::bpf_run_fault(rc, std::string(kfunc) + " is not available to unverified programs");
  return true;
}

u64 k_wq_init(u64 wq, u64 map, u64 flags, u64, u64) {
  if (refuse_checked("bpf_wq_init")) return (u64)(s64)-EINVAL;
  return (u64)(s64)emu::bpf_wq_init(async_of(wq), reinterpret_cast<bpf_map *>((uintptr_t)map),
                                    (unsigned int)flags);
}

u64 k_wq_set_callback(u64 wq, u64 fn, u64 flags, u64 aux, u64) {
  if (refuse_checked("bpf_wq_set_callback_impl")) return (u64)(s64)-EINVAL;
  return (u64)(s64)emu::bpf_wq_set_callback_impl(async_of(wq), fn, (unsigned int)flags,
                                                 reinterpret_cast<void *>((uintptr_t)aux));
}

u64 k_wq_start(u64 wq, u64 flags, u64, u64, u64) {
  if (refuse_checked("bpf_wq_start")) return (u64)(s64)-EINVAL;
  return (u64)(s64)emu::bpf_wq_start(async_of(wq), (unsigned int)flags);
}

}  // namespace

void bpf_obj_free_fields(bpf_map *map, void *value) {
  if (map->wq_off >= 0) bpf_wq_cancel_and_free(static_cast<u8 *>(value) + map->wq_off);
}

void bpf_map_release_async(bpf_map *map) {
  if (map->wq_off < 0) return;
  // Ordered before the walk: a concurrent bpf_wq_init() either is seen by the walk or sees the
  // flag and undoes itself (kernel: map->usercnt).
  map->async_released.store(true, std::memory_order_seq_cst);
  if (map->async_live.load(std::memory_order_acquire) == 0) return;
  map->map_for_each_value([](bpf_map *m, void *value) { bpf_obj_free_fields(m, value); });
  if (!current) {
    WARN(1, "map '%s' released off a machine task with bpf_wq callbacks pending", map->name.c_str());
    return;
  }
  wait_event(async_free_wait, map->async_live.load(std::memory_order_acquire) == 0);
}

namespace emu {

int bpf_wq_init(void *wq, bpf_map *map, unsigned int flags) {
  if (flags) return -EINVAL;
  if (!map || map->wq_off < 0) return -EINVAL;
  auto *async = static_cast<bpf_async_kern *>(wq);
  void *value = static_cast<u8 *>(wq) - map->wq_off;
  int ret = 0;
  __bpf_spin_lock_irqsave(&async->lock);
  if (async->cb) {
    ret = -EBUSY;
  } else if (bpf_work *w = new (std::nothrow) bpf_work; !w) {
    ret = -ENOMEM;
  } else {
    w->cb.map = map;
    w->cb.value = value;
    w->cb.key = map->map_key_of_value(value, &w->cb.idx);
    INIT_WORK(&w->work, bpf_wq_work);
    INIT_WORK(&w->delete_work, bpf_wq_delete_work);
    if (!w->cb.key) {
      delete w;
      ret = -EINVAL;
    } else {
      map->async_live.fetch_add(1, std::memory_order_relaxed);
      __atomic_store_n(&async->cb, &w->cb, __ATOMIC_RELEASE);
      // Pairs with bpf_map_release_async(): the store above, then the flag.
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (map->async_released.load(std::memory_order_seq_cst)) {
        __atomic_store_n(&async->cb, nullptr, __ATOMIC_RELEASE);
        delete w;
        put_live(map);
        ret = -EPERM;
      }
    }
  }
  __bpf_spin_unlock_irqrestore(&async->lock);
  return ret;
}

int bpf_wq_set_callback_impl(void *wq, u64 callback_fn, unsigned int flags, void *aux) {
  (void)aux;
  if (flags) return -EINVAL;
  bpf_run_ctx *rc = bpf_current_run_ctx();
  const auto *prog = rc ? static_cast<const BpfLoadedProg *>(rc->prog) : nullptr;
  const BpfCallback *fn = prog ? prog->find_callback(callback_fn) : nullptr;
  if (!fn) return -EINVAL;  // Emulation: called outside a program run, or not its callback
  auto *async = static_cast<bpf_async_kern *>(wq);
  int ret = 0;
  __bpf_spin_lock_irqsave(&async->lock);
  if (bpf_async_cb *cb = async->cb) set_callback(cb, prog, fn);
  else ret = -EINVAL;
  __bpf_spin_unlock_irqrestore(&async->lock);
  return ret;
}

int bpf_wq_start(void *wq, unsigned int flags) {
  if (flags) return -EINVAL;
  auto *async = static_cast<bpf_async_kern *>(wq);
  int ret = 0;
  __bpf_spin_lock_irqsave(&async->lock);
  bpf_async_cb *cb = async->cb;
  bool has_prog = false;
  if (cb) {
    __bpf_spin_lock_irqsave(&cb->cb_lock);
    has_prog = cb->prog != nullptr;
    __bpf_spin_unlock_irqrestore(&cb->cb_lock);
  }
  if (!has_prog) ret = -EINVAL;
  else schedule_work(&reinterpret_cast<bpf_work *>(cb)->work);
  __bpf_spin_unlock_irqrestore(&async->lock);
  return ret;
}

std::vector<KfuncDesc> bpf_async_kfuncs() {
  const KfuncArg ret = KfuncArg::scalar(4, true);
  std::vector<KfuncDesc> v;
  v.push_back({"bpf_wq_init", ret, {KfuncArg::wq(), KfuncArg::map(), KfuncArg::scalar(4)}, 0,
               k_wq_init});
  // 6.19: flags__k (a known constant) and aux__ign (the verifier passes the program).
  v.push_back({"bpf_wq_set_callback_impl", ret,
               {KfuncArg::wq(), KfuncArg::callback(), KfuncArg::constant_scalar(4),
                KfuncArg::ignored()},
               0, k_wq_set_callback});
  v.push_back({"bpf_wq_set_callback", ret,
               {KfuncArg::wq(), KfuncArg::callback(), KfuncArg::scalar(4)}, 0,
               k_wq_set_callback});
  v.push_back({"bpf_wq_start", ret, {KfuncArg::wq(), KfuncArg::scalar(4)}, 0, k_wq_start});
  return v;
}

}  // namespace emu
}  // namespace umemcg
