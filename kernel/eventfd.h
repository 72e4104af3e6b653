// SPDX-License-Identifier: GPL-2.0-only
// kernel/eventfd.h: eventfd objects: a 64-bit counter that kernel code signals (eventfd_signal)
// and user space reads (the whole count, which drops back to 0), and the poll hook through which
// a kernel user learns that the eventfd was closed (EPOLLHUP).
//
// Mirrors: fs/eventfd.c, include/linux/eventfd.h (Linux 6.19): struct eventfd_ctx,
//   eventfd_signal, eventfd_ctx_get/put, eventfd_read (non-semaphore mode), eventfd_release's
//   EPOLLHUP wake-up
// Emulation: the kernel's users of EPOLLHUP (memcg's cgroup.event_control) add a wait-queue entry
//   with their own wake function through vfs_poll(); here they add an eventfd_hup_hook, called
//   with the eventfd's wait-queue lock held (as a wake function is) when the eventfd is closed.
// Emulation: EFD_SEMAPHORE, EFD_NONBLOCK and write(2) to an eventfd are not provided (memcg's
//   notifications only signal; readers block with a timeout).
#pragma once

#include "shim/atomic.h"
#include "shim/types.h"
#include "shim/wait.h"

namespace umemcg {

struct eventfd_ctx;

// A kernel user's hook on an eventfd's close (its poll-table entry). func runs under the
// eventfd's wait-queue lock with interrupts off: it may take spinlocks and queue work, not sleep.
struct eventfd_hup_hook {
  void (*func)(eventfd_hup_hook *hook) = nullptr;
  eventfd_hup_hook *prev = nullptr, *next = nullptr;  // on the eventfd's list, under its lock
  bool queued = false;
};

struct eventfd_ctx {
  atomic_long_t refcnt;   // the file's reference and the kernel users'
  wait_queue_head_t wqh;  // readers; wqh.lock guards count and the hooks
  u64 count = 0;
  eventfd_hup_hook *hooks = nullptr;
  bool released = false;  // the file was closed (under wqh.lock)
};

// eventfd(0, 0): a new eventfd with one reference (the file's). nullptr on allocation failure.
eventfd_ctx *eventfd_ctx_create();
void eventfd_ctx_get(eventfd_ctx *ctx);
// Drops a reference; the last one frees the context.
void eventfd_ctx_put(eventfd_ctx *ctx);

/**
 * eventfd_signal - add 1 to @ctx's counter and wake its readers
 * The counter saturates at ULLONG_MAX. Context: any (takes the wait-queue lock irqsave).
 */
void eventfd_signal(eventfd_ctx *ctx);

/**
 * eventfd_read_timeout - read(2) of an eventfd: the whole count, which drops back to 0
 * @timeout: jiffies to wait for a non-zero count (0: do not wait)
 * Returns 1 with *cnt, 0 if the count stayed 0 for @timeout, -EINTR on a pending signal.
 * Context: task context, may sleep.
 */
int eventfd_read_timeout(eventfd_ctx *ctx, long timeout, u64 *cnt);

// The kernel users' hooks (vfs_poll / remove_wait_queue). Adding to a released eventfd calls
// nothing: the caller checks eventfd_released() afterwards if it cares.
void eventfd_add_hup_hook(eventfd_ctx *ctx, eventfd_hup_hook *hook);
void eventfd_remove_hup_hook(eventfd_ctx *ctx, eventfd_hup_hook *hook);

// close(2) of the eventfd file: every hook runs (EPOLLHUP), readers wake, the file's reference
// is dropped.
void eventfd_release(eventfd_ctx *ctx);

// The count (tests).
u64 eventfd_count(eventfd_ctx *ctx);

}  // namespace umemcg
