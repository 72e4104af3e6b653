// SPDX-License-Identifier: GPL-2.0-only
// kernel/eventfd.cc: eventfd counters, reads and the close hook (see eventfd.h).
//
// Mirrors: fs/eventfd.c (Linux 6.19): eventfd_signal_mask, eventfd_read, eventfd_release,
//   eventfd_ctx_put
#include "kernel/eventfd.h"

#include <climits>
#include <new>

#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/jiffies.h"
#include "shim/sched.h"

namespace umemcg {

eventfd_ctx *eventfd_ctx_create() {
  auto *ctx = new (std::nothrow) eventfd_ctx;
  if (!ctx) return nullptr;
  atomic_long_set(&ctx->refcnt, 1);
  init_waitqueue_head(&ctx->wqh);
  ctx->wqh.name = "eventfd";
  return ctx;
}

void eventfd_ctx_get(eventfd_ctx *ctx) { atomic_long_inc(&ctx->refcnt); }

void eventfd_ctx_put(eventfd_ctx *ctx) {
  if (atomic_long_sub_return(1, &ctx->refcnt) == 0) {
    WARN_ON(ctx->hooks);
    delete ctx;
  }
}

void eventfd_signal(eventfd_ctx *ctx) {
  unsigned long flags;
  spin_lock_irqsave(&ctx->wqh.lock, flags);
  if (ctx->count != ULLONG_MAX) ctx->count++;
  spin_unlock_irqrestore(&ctx->wqh.lock, flags);
  // wake_up_locked_poll(EPOLLIN): the readers re-test the count under the lock.
  wake_up_all(&ctx->wqh);
}

// The blocking read's loop (prepare_to_wait, test under the lock, signal, timeout, sleep) has
// the shape of inotify_read_event()'s (kernel/notify/inotify.cc): each mirrors its own kernel
// read (eventfd_read, inotify_read), which the kernel writes out separately too.
int eventfd_read_timeout(eventfd_ctx *ctx, long timeout, u64 *cnt) {
  unsigned long deadline = jiffies + static_cast<unsigned long>(timeout > 0 ? timeout : 0);
  wait_queue_entry we;
  int ret;
  unsigned long flags;
  for (;;) {
    prepare_to_wait(&ctx->wqh, &we, TASK_INTERRUPTIBLE);
    spin_lock_irqsave(&ctx->wqh.lock, flags);
    u64 c = ctx->count;
    ctx->count = 0;
    spin_unlock_irqrestore(&ctx->wqh.lock, flags);
    if (c) {
      *cnt = c;
      ret = 1;
      break;
    }
    if (signal_pending(current) || fatal_signal_pending(current)) {
      ret = -EINTR;
      break;
    }
    long left = static_cast<long>(deadline - jiffies);
    if (left <= 0) {
      ret = 0;
      break;
    }
    emu::set_wait_reason("eventfd_read");
    schedule_timeout(left);
  }
  finish_wait(&ctx->wqh, &we);
  return ret;
}

void eventfd_add_hup_hook(eventfd_ctx *ctx, eventfd_hup_hook *hook) {
  unsigned long flags;
  spin_lock_irqsave(&ctx->wqh.lock, flags);
  if (!ctx->released && !hook->queued) {
    hook->prev = nullptr;
    hook->next = ctx->hooks;
    if (ctx->hooks) ctx->hooks->prev = hook;
    ctx->hooks = hook;
    hook->queued = true;
  }
  spin_unlock_irqrestore(&ctx->wqh.lock, flags);
}

namespace {
void unlink_hook(eventfd_ctx *ctx, eventfd_hup_hook *hook) {
  if (!hook->queued) return;
  if (hook->prev)
    hook->prev->next = hook->next;
  else
    ctx->hooks = hook->next;
  if (hook->next) hook->next->prev = hook->prev;
  hook->prev = hook->next = nullptr;
  hook->queued = false;
}
}  // namespace

void eventfd_remove_hup_hook(eventfd_ctx *ctx, eventfd_hup_hook *hook) {
  unsigned long flags;
  spin_lock_irqsave(&ctx->wqh.lock, flags);
  unlink_hook(ctx, hook);
  spin_unlock_irqrestore(&ctx->wqh.lock, flags);
}

void eventfd_release(eventfd_ctx *ctx) {
  unsigned long flags;
  spin_lock_irqsave(&ctx->wqh.lock, flags);
  ctx->released = true;
  // wake_up_poll(EPOLLHUP): each hook's wake function, under the lock. A hook stays linked: its
  // owner unlinks it (remove_wait_queue) when it tears its registration down.
  for (eventfd_hup_hook *h = ctx->hooks; h;) {
    eventfd_hup_hook *next = h->next;
    h->func(h);
    h = next;
  }
  spin_unlock_irqrestore(&ctx->wqh.lock, flags);
  wake_up_all(&ctx->wqh);
  eventfd_ctx_put(ctx);
}

u64 eventfd_count(eventfd_ctx *ctx) {
  unsigned long flags;
  spin_lock_irqsave(&ctx->wqh.lock, flags);
  u64 c = ctx->count;
  spin_unlock_irqrestore(&ctx->wqh.lock, flags);
  return c;
}

}  // namespace umemcg
