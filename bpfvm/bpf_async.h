// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/bpf_async.h: async objects in map values: struct bpf_wq (the bpf_wq_init,
// bpf_wq_set_callback_impl and bpf_wq_start kfuncs) and struct bpf_timer (the bpf_timer_init,
// bpf_timer_set_callback, bpf_timer_start and bpf_timer_cancel helpers), and their cancellation
// when the element or the map goes away.
//
// A struct bpf_wq is 16 opaque bytes of a map value (array, hash, LRU hash). bpf_wq_init()
// allocates its state (a work item on the system workqueue and the callback slot) and stores a
// pointer to it in the first 8 bytes; the next 8 hold the lock word that serialises init,
// set_callback, start and free. bpf_wq_set_callback_impl() names one of the running program's
// BPF_PSEUDO_FUNC callbacks; bpf_wq_start() queues the work item, which calls the callback
// (r1 = map, r2 = key, r3 = value) on a worker, sleepable: under the RCU-tasks-trace read side
// with migration disabled, so it may call sleepable kfuncs such as bpf_proactive_reclaim.
//
// A struct bpf_timer is the same, with a timer on the machine clock: bpf_timer_init() takes a
// clock id (CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME); bpf_timer_start() arms it nsecs
// from now (or at nsecs with BPF_F_TIMER_ABS); at expiry the callback runs, verified as not
// sleepable, and may re-arm the timer. bpf_timer_cancel() disarms it and drops the
// callback (a later start needs a new bpf_timer_set_callback()); from the timer's own callback
// it fails with -EDEADLK.
//
// Freeing (bpf_obj_free_fields, kernel: bpf_wq_cancel_and_free): updating an array element,
// replacing or deleting a hash element detaches the state from the value (later starts fail
// with -EINVAL), drops the callback, and queues the state's delete work, which cancels a
// pending execution, waits for a running one and frees the state. Releasing a map
// (bpf_map_release_async: the kernel's map_release_uref) does the same for every value and
// waits until every state of the map is freed.
//
// Mirrors: kernel/bpf/helpers.c (struct bpf_async_kern, struct bpf_async_cb, struct bpf_work,
//          __bpf_async_init, __bpf_async_set_callback, bpf_wq_work, bpf_wq_delete_work,
//          __bpf_async_cancel_and_free, bpf_wq_cancel_and_free, bpf_wq_init, bpf_wq_start,
//          bpf_wq_set_callback_impl, struct bpf_hrtimer, bpf_timer_cb, bpf_timer_init,
//          bpf_timer_set_callback, bpf_timer_start, bpf_timer_cancel,
//          bpf_timer_cancel_and_free, bpf_timer_delete_work), kernel/bpf/syscall.c
//          (bpf_obj_free_fields, bpf_obj_free_workqueue, bpf_obj_free_timer),
//          kernel/bpf/arraymap.c (array_map_free_timers_wq), kernel/bpf/hashtab.c
//          (htab_free_malloced_timers_and_wq) (Linux 6.19)
// Emulation:
//  - the state keeps a pointer to the program (not a reference): a program lives as long as its
//    object, and the object releases its maps (cancelling every callback) before freeing its
//    programs. Maps have no user-space reference count, so the kernel's -EPERM for a map
//    without one never happens.
//  - bpf_wq_start() queues the work under the lock word, so that no start can queue the work
//    item of a state being freed (the kernel reads the state without the lock and frees it
//    after an RCU grace period).
//  - bpf_wq_init() returns -EINVAL for a map without a bpf_wq in its value (the kernel trusts
//    the verifier, which accepts such a map pointer).
//  - bpf_wq_set_callback is also accepted: the name of the kfunc with the program argument
//    implicit (7.0 window; libbpf's bpf_experimental.h calls it when the kernel has it).
//  - unverified (checked) programs may not use bpf_wq or bpf_timer: the kfuncs and helpers
//    record a fault (their pointers are trusted, as the kernel trusts the verifier's proof).
//  - a bpf_timer is a timer_list of jiffy (1 ms) resolution: it fires on the first jiffy at or
//    after its expiry; every clock id is the machine clock; its callback runs from a work item
//    on the unbound workqueue that the expiry queues (the shim's timer context has no vCPU), so
//    BPF_F_TIMER_CPU_PIN has no effect.
//  - the verifier lets the timer callback of a sleepable program (SYSCALL) call sleepable
//    kfuncs, as the kernel's in_sleepable() does (the program's flag): such a callback runs under
//    the RCU-tasks-trace read side, where it may sleep; a non-sleepable program's under
//    rcu_read_lock() (the kernel runs both in softirq context).
//  - bpf_timer_cancel() does not wait for a callback running on another vCPU (the kernel's
//    hrtimer_cancel() spins until it returned): it may be called where sleeping is not allowed.
//  - bpf_map_release_async() sleeps until the map's states are freed: it must run on a machine
//    task when any was initialised.
#pragma once

#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include <vector>

#include "bpfvm/kfunc.h"
#include "shim/types.h"

namespace umemcg {

struct bpf_map;

/**
 * bpf_obj_free_fields - cancel and free the async objects of one map value
 * @map: the map the value belongs to
 * @value: the value, unlinked from the map or about to be overwritten
 *
 * Does not sleep: the state is freed by a work item. Called by the maps themselves.
 */
void bpf_obj_free_fields(bpf_map *map, void *value);

/**
 * bpf_map_release_async - cancel every async object of a map and wait for them to be freed
 * @map: the map, whose values are still in place
 *
 * After it returns no callback of the map runs or will run. Sleeps while a callback runs; must
 * be called on a machine task if the map ever had an async object. Idempotent.
 */
void bpf_map_release_async(bpf_map *map);

namespace emu {

/**
 * bpf_wq_init - allocate the state of a struct bpf_wq
 * @wq: the struct bpf_wq inside a value of @map
 * @map: the map
 * @flags: must be 0
 *
 * Return: 0, -EINVAL for flags or a map without a bpf_wq, -EBUSY if already initialised.
 */
int bpf_wq_init(void *wq, bpf_map *map, unsigned int flags);

/**
 * bpf_wq_set_callback_impl - set the callback a started bpf_wq runs
 * @wq: an initialised struct bpf_wq
 * @callback_fn: a BPF_PSEUDO_FUNC value of the running program
 * @flags: must be 0
 * @aux: ignored (aux__prog: the kernel's verifier passes the program here; here the run
 *   context says it)
 *
 * Return: 0, or -EINVAL (flags, not initialised, no program running, not a callback of it).
 */
int bpf_wq_set_callback_impl(void *wq, u64 callback_fn, unsigned int flags, void *aux);

/**
 * bpf_wq_start - queue the callback of a bpf_wq on the system workqueue
 * @wq: a struct bpf_wq with a callback
 * @flags: must be 0
 *
 * Queueing a pending bpf_wq does nothing (one execution). Return: 0, or -EINVAL (flags, not
 * initialised, no callback).
 */
int bpf_wq_start(void *wq, unsigned int flags);

/**
 * bpf_timer_init - allocate the state of a struct bpf_timer
 * @timer: the struct bpf_timer inside a value of @map
 * @map: the map
 * @flags: the clock id (CLOCK_MONOTONIC, CLOCK_REALTIME or CLOCK_BOOTTIME)
 *
 * Return: 0, -EINVAL (another clock, a map without a bpf_timer), -EBUSY (initialised), -EPERM
 * (the map was released).
 */
int bpf_timer_init(void *timer, bpf_map *map, u64 flags);
// bpf_timer_set_callback - as bpf_wq_set_callback_impl(): 0 or -EINVAL.
int bpf_timer_set_callback(void *timer, u64 callback_fn);
/**
 * bpf_timer_start - arm a bpf_timer with a callback
 * @timer: the struct bpf_timer
 * @nsecs: the delay, or with BPF_F_TIMER_ABS the expiry on the clock
 * @flags: BPF_F_TIMER_ABS, BPF_F_TIMER_CPU_PIN
 *
 * Re-arms an armed timer. Return: 0, or -EINVAL (flags, not initialised, no callback).
 */
int bpf_timer_start(void *timer, u64 nsecs, u64 flags);
/**
 * bpf_timer_cancel - disarm a bpf_timer and drop its callback
 * @timer: the struct bpf_timer
 *
 * Return: 1 if it was armed (or its callback was due and not started), 0 if not, -EINVAL if not
 * initialised, -EDEADLK from the timer's own callback.
 */
int bpf_timer_cancel(void *timer);

// The helper table's entries (bpfvm/helpers_impl.cc) for the four timer helpers: r0 = f(r1..r5).
u64 bpf_timer_init_helper(u64, u64, u64, u64, u64);
u64 bpf_timer_set_callback_helper(u64, u64, u64, u64, u64);
u64 bpf_timer_start_helper(u64, u64, u64, u64, u64);
u64 bpf_timer_cancel_helper(u64, u64, u64, u64, u64);

// The kfunc descriptors (KF_* flags, argument kinds) of bpf_wq_init, bpf_wq_set_callback_impl,
// bpf_wq_set_callback and bpf_wq_start, for every program type.
std::vector<KfuncDesc> bpf_async_kfuncs();

}  // namespace emu
}  // namespace umemcg
