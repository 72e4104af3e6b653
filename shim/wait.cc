// SPDX-License-Identifier: GPL-2.0-only
// shim/wait.cc: wait queues (see wait.h).
#include "shim/wait.h"

namespace umemcg {

namespace {
// wq->first is also read without the lock (waitqueue_active()), so its stores are WRITE_ONCE,
// as the kernel's list_add/list_del write the head's next pointer.
void add_locked(wait_queue_head *wq, wait_queue_entry *e, bool tail) {
  e->queued = true;
  if (tail) {
    e->prev = wq->last;
    e->next = nullptr;
    if (wq->last) wq->last->next = e; else WRITE_ONCE(wq->first, e);
    wq->last = e;
  } else {
    e->next = wq->first;
    e->prev = nullptr;
    if (wq->first) wq->first->prev = e; else wq->last = e;
    WRITE_ONCE(wq->first, e);
  }
}
void del_locked(wait_queue_head *wq, wait_queue_entry *e) {
  if (!e->queued) return;
  if (e->prev) e->prev->next = e->next; else WRITE_ONCE(wq->first, e->next);
  if (e->next) e->next->prev = e->prev; else wq->last = e->prev;
  e->prev = e->next = nullptr;
  e->queued = false;
}
void prepare(wait_queue_head *wq, wait_queue_entry *e, unsigned int state, bool exclusive) {
  unsigned long flags;
  spin_lock_irqsave(&wq->lock, flags);
  if (!e->queued) {
    // Under the lock: an entry still queued from the previous round of a wait loop is read by
    // wakers (e->task) while this task prepares again.
    e->task = current;
    // Exclusive waiters go to the tail, others to the head, as in the kernel.
    if (exclusive) e->flags |= WQ_FLAG_EXCLUSIVE; else e->flags &= ~WQ_FLAG_EXCLUSIVE;
    add_locked(wq, e, exclusive);
  }
  set_current_state(state);
  spin_unlock_irqrestore(&wq->lock, flags);
}
}  // namespace

void prepare_to_wait(wait_queue_head *wq, wait_queue_entry *e, unsigned int state) {
  prepare(wq, e, state, false);
}
void prepare_to_wait_exclusive(wait_queue_head *wq, wait_queue_entry *e, unsigned int state) {
  prepare(wq, e, state, true);
}

void finish_wait(wait_queue_head *wq, wait_queue_entry *e) {
  __set_current_state(TASK_RUNNING);
  emu::set_wait_reason("running");
  unsigned long flags;
  spin_lock_irqsave(&wq->lock, flags);
  del_locked(wq, e);
  spin_unlock_irqrestore(&wq->lock, flags);
}

void __wake_up(wait_queue_head *wq, unsigned int mode, int nr_exclusive) {
  unsigned long flags;
  spin_lock_irqsave(&wq->lock, flags);
  for (wait_queue_entry *e = wq->first; e;) {
    wait_queue_entry *next = e->next;
    const bool excl = e->flags & WQ_FLAG_EXCLUSIVE;
    if (wake_up_state(e->task, mode) && excl && nr_exclusive && --nr_exclusive == 0) break;
    e = next;
  }
  spin_unlock_irqrestore(&wq->lock, flags);
}

bool waitqueue_active(wait_queue_head *wq) { return READ_ONCE(wq->first) != nullptr; }

}  // namespace umemcg
