// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/bpf_async.cc: struct bpf_wq and struct bpf_timer: their state, their work items and
// timer, their kfuncs and helpers, their cancellation.
// Mirrors: kernel/bpf/helpers.c (bpf_wq_*, bpf_timer_*, __bpf_async_*) (Linux 6.19); see
//          bpfvm/bpf_async.h.
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
#include "shim/jiffies.h"
#include "shim/preempt.h"
#include "shim/rcupdate.h"
#include "shim/sched.h"
#include "shim/timer.h"
#include "shim/wait.h"
#include "shim/workqueue.h"

namespace umemcg {

namespace {

// The common part of an async object's state (kernel: struct bpf_async_cb).
struct bpf_async_cb {
  bpf_map *map = nullptr;
  void *value = nullptr;      // the map value holding the bpf_wq/bpf_timer
  const void *key = nullptr;  // its key (array maps: &idx)
  u32 idx = 0;
  // The program and callback set by bpf_{wq,timer}_set_callback*(), read and written as a pair
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

// kernel: struct bpf_hrtimer. Emulation: the expiry (a timer_list on the machine clock) queues
// `work`, which runs the callback: the shim's timer context has no vCPU to run a program on.
struct bpf_hrtimer {
  bpf_async_cb cb;
  timer_list timer;
  work_struct work;
  work_struct delete_work;
};

enum class bpf_async_type { timer, wq };

// Not in the uapi header this project builds against (6.7+).
constexpr u64 BPF_F_TIMER_ABS_ = 1ull << 0;
constexpr u64 BPF_F_TIMER_CPU_PIN_ = 1ull << 1;
// The clocks bpf_timer_init() accepts (include/uapi/linux/time.h).
constexpr u64 CLOCK_REALTIME_ = 0, CLOCK_MONOTONIC_ = 1, CLOCK_BOOTTIME_ = 7, MAX_CLOCKS_ = 16;

// What the 16 bytes of a struct bpf_wq or bpf_timer hold (kernel: struct bpf_async_kern). cb is
// accessed with atomics: bpf_obj_free_fields() reads it without the lock first.
struct bpf_async_kern {
  bpf_async_cb *cb;
  struct bpf_spin_lock lock;
};
static_assert(sizeof(bpf_async_kern) <= BPF_WQ_SIZE && sizeof(bpf_async_kern) <= BPF_TIMER_SIZE);
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

// Runs cb's callback with (map, key, value), as a worker runs it for bpf_wq and bpf_timer. The
// RCU-tasks-trace read side is entered before the callback is read, so that a value deleted once
// it was dropped is freed only after this run. A timer's callback of a non-sleepable program
// also runs under rcu_read_lock() (bpf_timer_cb()); a bpf_wq callback is sleepable and never does.
void bpf_async_run_callback(bpf_async_cb *cb, bool timer) {
  bpf_rcu_tasks_trace_read_lock();
  migrate_disable();
  __bpf_spin_lock_irqsave(&cb->cb_lock);
  const emu::BpfLoadedProg *prog = cb->prog;
  const emu::BpfCallback *fn = cb->callback_fn;
  __bpf_spin_unlock_irqrestore(&cb->cb_lock);
  if (prog && fn) {
    const u64 args[3] = {(u64)(uintptr_t)cb->map, (u64)(uintptr_t)cb->key,
                         (u64)(uintptr_t)cb->value};
    const bool rcu = timer && !prog->sleepable();
    if (rcu) rcu_read_lock();
    prog->run_async_callback(*fn, args);  // the verifier held it to return 0
    if (rcu) rcu_read_unlock();
  }
  migrate_enable();
  bpf_rcu_tasks_trace_read_unlock();
}

// bpf_wq_work(): the callback on a worker.
void bpf_wq_work(work_struct *work) {
  bpf_async_run_callback(&container_of(work, bpf_work, work)->cb, false);
}

// bpf_timer_cb(), from the work item the expiry queued.
void bpf_timer_work(work_struct *work) {
  bpf_async_run_callback(&container_of(work, bpf_hrtimer, work)->cb, true);
}

// The expiry, in timer context (no vCPU): hand the callback to a worker.
void bpf_timer_fn(timer_list *timer) {
  bpf_hrtimer *t = container_of(timer, bpf_hrtimer, timer);
  queue_work(system_unbound_wq, &t->work);
}

// bpf_timer_delete_work(): a detached timer goes once neither its expiry nor its callback can
// run any more.
void bpf_timer_delete_work(work_struct *work) {
  bpf_hrtimer *t = container_of(work, bpf_hrtimer, delete_work);
  timer_delete_sync(&t->timer);
  cancel_work_sync(&t->work);
  bpf_map *map = t->cb.map;
  delete t;
  put_live(map);
}

// bpf_wq_delete_work(): a detached state goes once its work item can no longer run.
void bpf_wq_delete_work(work_struct *work) {
  bpf_work *w = container_of(work, bpf_work, delete_work);
  cancel_work_sync(&w->work);
  bpf_map *map = w->cb.map;
  delete w;
  put_live(map);
}

// __bpf_async_cancel_and_free() + bpf_wq_cancel_and_free() / bpf_timer_cancel_and_free().
void bpf_async_cancel_and_free(void *p, bpf_async_type type) {
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
  // The callback may be running, and may be what deletes this value: free the state from a
  // work item of its own, which may wait.
  if (type == bpf_async_type::wq) schedule_work(&reinterpret_cast<bpf_work *>(cb)->delete_work);
  else schedule_work(&reinterpret_cast<bpf_hrtimer *>(cb)->delete_work);
}

// __bpf_async_init(): allocates the state of an uninitialised bpf_wq/bpf_timer at `p`, in a
// value of `map` whose field is at field_off.
int bpf_async_init(void *p, bpf_map *map, s32 field_off, bpf_async_type type) {
  if (!map || field_off < 0) return -EINVAL;
  auto *async = static_cast<bpf_async_kern *>(p);
  void *value = static_cast<u8 *>(p) - field_off;
  int ret = 0;
  __bpf_spin_lock_irqsave(&async->lock);
  bpf_async_cb *cb = nullptr;
  if (async->cb) {
    ret = -EBUSY;
  } else if (type == bpf_async_type::wq) {
    if (auto *w = new (std::nothrow) bpf_work) {
      INIT_WORK(&w->work, bpf_wq_work);
      INIT_WORK(&w->delete_work, bpf_wq_delete_work);
      cb = &w->cb;
    }
  } else if (auto *t = new (std::nothrow) bpf_hrtimer) {
    timer_setup(&t->timer, bpf_timer_fn, 0);
    INIT_WORK(&t->work, bpf_timer_work);
    INIT_WORK(&t->delete_work, bpf_timer_delete_work);
    cb = &t->cb;
  }
  auto free_cb = [type](bpf_async_cb *c) {
    if (type == bpf_async_type::wq) delete reinterpret_cast<bpf_work *>(c);
    else delete reinterpret_cast<bpf_hrtimer *>(c);
  };
  if (!ret && !cb) ret = -ENOMEM;
  if (cb) {
    cb->map = map;
    cb->value = value;
    cb->key = map->map_key_of_value(value, &cb->idx);
    if (!cb->key) {
      free_cb(cb);
      ret = -EINVAL;
    } else {
      map->async_live.fetch_add(1, std::memory_order_relaxed);
      __atomic_store_n(&async->cb, cb, __ATOMIC_RELEASE);
      // Pairs with bpf_map_release_async(): the store above, then the flag.
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (map->async_released.load(std::memory_order_seq_cst)) {
        __atomic_store_n(&async->cb, nullptr, __ATOMIC_RELEASE);
        free_cb(cb);
        put_live(map);
        ret = -EPERM;
      }
    }
  }
  __bpf_spin_unlock_irqrestore(&async->lock);
  return ret;
}

// __bpf_async_set_callback(): the running program's callback `callback_fn`.
int bpf_async_set_callback(void *p, u64 callback_fn) {
  bpf_run_ctx *rc = bpf_current_run_ctx();
  const auto *prog = rc ? static_cast<const emu::BpfLoadedProg *>(rc->prog) : nullptr;
  const emu::BpfCallback *fn = prog ? prog->find_callback(callback_fn) : nullptr;
  if (!fn) return -EINVAL;  // Emulation: called outside a program run, or not its callback
  auto *async = static_cast<bpf_async_kern *>(p);
  int ret = 0;
  __bpf_spin_lock_irqsave(&async->lock);
  if (bpf_async_cb *cb = async->cb) set_callback(cb, prog, fn);
  else ret = -EINVAL;
  __bpf_spin_unlock_irqrestore(&async->lock);
  return ret;
}

// The initialised state at p with a callback set, or nullptr. Caller holds async->lock.
bpf_async_cb *armed_cb(bpf_async_kern *async) {
  bpf_async_cb *cb = async->cb;
  if (!cb) return nullptr;
  __bpf_spin_lock_irqsave(&cb->cb_lock);
  const bool has_prog = cb->prog != nullptr;
  __bpf_spin_unlock_irqrestore(&cb->cb_lock);
  return has_prog ? cb : nullptr;
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

namespace emu {

u64 bpf_timer_init_helper(u64 timer, u64 map, u64 flags, u64, u64) {
  if (refuse_checked("bpf_timer_init")) return (u64)(s64)-EINVAL;
  return (u64)(s64)bpf_timer_init(async_of(timer), reinterpret_cast<bpf_map *>((uintptr_t)map),
                                  flags);
}

u64 bpf_timer_set_callback_helper(u64 timer, u64 fn, u64, u64, u64) {
  if (refuse_checked("bpf_timer_set_callback")) return (u64)(s64)-EINVAL;
  return (u64)(s64)bpf_timer_set_callback(async_of(timer), fn);
}

u64 bpf_timer_start_helper(u64 timer, u64 nsecs, u64 flags, u64, u64) {
  if (refuse_checked("bpf_timer_start")) return (u64)(s64)-EINVAL;
  return (u64)(s64)bpf_timer_start(async_of(timer), nsecs, flags);
}

u64 bpf_timer_cancel_helper(u64 timer, u64, u64, u64, u64) {
  if (refuse_checked("bpf_timer_cancel")) return (u64)(s64)-EINVAL;
  return (u64)(s64)bpf_timer_cancel(async_of(timer));
}

}  // namespace emu

namespace {

}  // namespace

void bpf_obj_free_fields(bpf_map *map, void *value) {
  if (map->wq_off >= 0)
    bpf_async_cancel_and_free(static_cast<u8 *>(value) + map->wq_off, bpf_async_type::wq);
  if (map->timer_off >= 0)
    bpf_async_cancel_and_free(static_cast<u8 *>(value) + map->timer_off, bpf_async_type::timer);
}

void bpf_map_release_async(bpf_map *map) {
  if (map->wq_off < 0 && map->timer_off < 0) return;
  // Ordered before the walk: a concurrent bpf_wq_init() either is seen by the walk or sees the
  // flag and undoes itself (kernel: map->usercnt).
  map->async_released.store(true, std::memory_order_seq_cst);
  if (map->async_live.load(std::memory_order_acquire) == 0) return;
  map->map_for_each_value([](bpf_map *m, void *value) { bpf_obj_free_fields(m, value); });
  if (!current) {
    WARN(1, "map '%s' released off a machine task with async callbacks pending",
         map->name.c_str());
    return;
  }
  wait_event(async_free_wait, map->async_live.load(std::memory_order_acquire) == 0);
}

namespace emu {

int bpf_wq_init(void *wq, bpf_map *map, unsigned int flags) {
  if (flags) return -EINVAL;
  return bpf_async_init(wq, map, map ? map->wq_off : -1, bpf_async_type::wq);
}

int bpf_wq_set_callback_impl(void *wq, u64 callback_fn, unsigned int flags, void *aux) {
  (void)aux;
  if (flags) return -EINVAL;
  return bpf_async_set_callback(wq, callback_fn);
}

int bpf_wq_start(void *wq, unsigned int flags) {
  if (flags) return -EINVAL;
  auto *async = static_cast<bpf_async_kern *>(wq);
  __bpf_spin_lock_irqsave(&async->lock);
  bpf_async_cb *cb = armed_cb(async);
  if (cb) schedule_work(&reinterpret_cast<bpf_work *>(cb)->work);
  __bpf_spin_unlock_irqrestore(&async->lock);
  return cb ? 0 : -EINVAL;
}

int bpf_timer_init(void *timer, bpf_map *map, u64 flags) {
  const u64 clockid = flags & (MAX_CLOCKS_ - 1);
  if (flags >= MAX_CLOCKS_ ||
      (clockid != CLOCK_MONOTONIC_ && clockid != CLOCK_REALTIME_ && clockid != CLOCK_BOOTTIME_))
    return -EINVAL;
  return bpf_async_init(timer, map, map ? map->timer_off : -1, bpf_async_type::timer);
}

int bpf_timer_set_callback(void *timer, u64 callback_fn) {
  return bpf_async_set_callback(timer, callback_fn);
}

int bpf_timer_start(void *timer, u64 nsecs, u64 flags) {
  if (flags & ~(BPF_F_TIMER_ABS_ | BPF_F_TIMER_CPU_PIN_)) return -EINVAL;
  auto *async = static_cast<bpf_async_kern *>(timer);
  __bpf_spin_lock_irqsave(&async->lock);
  bpf_async_cb *cb = armed_cb(async);
  if (cb) {
    const u64 now = ktime_get_ns();
    const u64 at = (flags & BPF_F_TIMER_ABS_) ? nsecs : (nsecs > ~0ull - now ? ~0ull : now + nsecs);
    // The first jiffy at or after the expiry (a past one fires at once).
    const u64 j = at / NSEC_PER_JIFFY + (at % NSEC_PER_JIFFY != 0);
    mod_timer(&reinterpret_cast<bpf_hrtimer *>(cb)->timer, (unsigned long)j);
  }
  __bpf_spin_unlock_irqrestore(&async->lock);
  return cb ? 0 : -EINVAL;
}

int bpf_timer_cancel(void *timer) {
  auto *async = static_cast<bpf_async_kern *>(timer);
  __bpf_spin_lock_irqsave(&async->lock);
  bpf_async_cb *cb = async->cb;
  auto *t = reinterpret_cast<bpf_hrtimer *>(cb);
  int ret = 0;
  if (!cb) ret = -EINVAL;
  else if (current_work() == &t->work) ret = -EDEADLK;  // its own callback
  else set_callback(cb, nullptr, nullptr);              // drop_prog_refcnt()
  if (!ret) {
    // 1 if the timer was active: armed, or expired with its callback not started yet.
    ret = timer_delete(&t->timer) ? 1 : 0;
    if (cancel_work(&t->work)) ret = 1;
  }
  __bpf_spin_unlock_irqrestore(&async->lock);
  return ret;
}

std::vector<KfuncDesc> bpf_async_kfuncs() {
  const KfuncArg ret = KfuncArg::scalar(4, true);
  std::vector<KfuncDesc> v;
  v.push_back({"bpf_wq_init", ret, {KfuncArg::wq(), KfuncArg::map(), KfuncArg::scalar(4)}, 0,
               k_wq_init});
  // 6.19: (wq, callback_fn, flags, aux__prog): the verifier passes the program as aux.
  v.push_back({"bpf_wq_set_callback_impl", ret,
               {KfuncArg::wq(), KfuncArg::callback(), KfuncArg::scalar(4), KfuncArg::ignored()},
               0, k_wq_set_callback});
  v.push_back({"bpf_wq_set_callback", ret,
               {KfuncArg::wq(), KfuncArg::callback(), KfuncArg::scalar(4)}, 0,
               k_wq_set_callback});
  v.push_back({"bpf_wq_start", ret, {KfuncArg::wq(), KfuncArg::scalar(4)}, 0, k_wq_start});
  return v;
}

}  // namespace emu
}  // namespace umemcg
