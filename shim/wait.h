// SPDX-License-Identifier: GPL-2.0-only
// shim/wait.h: wait queues and the wait_event family.
//
// Mirrors: include/linux/wait.h, kernel/sched/wait.c (Linux 6.19)
// A waiter adds itself to the queue, sets its task state and re-tests the condition before
// sleeping (prepare_to_wait / finish_wait); wake_up() wakes every non-exclusive waiter and one
// exclusive waiter, wake_up_all() everyone.
// Emulation: no custom wake functions; entries always wake their task.
#pragma once

#include <list>

#include "shim/errno.h"
#include "shim/jiffies.h"
#include "shim/sched.h"
#include "shim/spinlock.h"

namespace umemcg {

struct wait_queue_entry {
  task_struct *task = nullptr;
  unsigned int flags = 0;
  bool queued = false;
  wait_queue_entry *prev = nullptr, *next = nullptr;
};
inline constexpr unsigned int WQ_FLAG_EXCLUSIVE = 0x01;

struct wait_queue_head {
  spinlock_t lock;
  wait_queue_entry *first = nullptr, *last = nullptr;  // guarded by lock
  const char *name = "waitqueue";
};
using wait_queue_head_t = wait_queue_head;

#define DECLARE_WAIT_QUEUE_HEAD(x) ::umemcg::wait_queue_head x{{}, nullptr, nullptr, #x}
inline void init_waitqueue_head(wait_queue_head *wq) {
  spin_lock_init(&wq->lock);
  wq->first = wq->last = nullptr;
}

void prepare_to_wait(wait_queue_head *wq, wait_queue_entry *e, unsigned int state);
void prepare_to_wait_exclusive(wait_queue_head *wq, wait_queue_entry *e, unsigned int state);
void finish_wait(wait_queue_head *wq, wait_queue_entry *e);
// Wakes all non-exclusive waiters and up to nr_exclusive exclusive ones (0: all).
void __wake_up(wait_queue_head *wq, unsigned int mode, int nr_exclusive);
inline void wake_up(wait_queue_head *wq) { __wake_up(wq, TASK_NORMAL, 1); }
inline void wake_up_all(wait_queue_head *wq) { __wake_up(wq, TASK_NORMAL, 0); }
inline void wake_up_interruptible(wait_queue_head *wq) { __wake_up(wq, TASK_INTERRUPTIBLE, 1); }
bool waitqueue_active(wait_queue_head *wq);

namespace emu {
void set_wait_reason(const char *reason);
}

// wait_event(wq, condition): sleeps uninterruptibly until condition is true.
#define wait_event(wq, condition)                                       \
  do {                                                                  \
    ::umemcg::wait_queue_entry __we;                                    \
    for (;;) {                                                          \
      ::umemcg::prepare_to_wait(&(wq), &__we, ::umemcg::TASK_UNINTERRUPTIBLE); \
      if (condition) break;                                             \
      ::umemcg::emu::set_wait_reason((wq).name);                        \
      ::umemcg::schedule();                                             \
    }                                                                   \
    ::umemcg::finish_wait(&(wq), &__we);                                \
  } while (0)

// Returns 0 when condition became true, -ERESTARTSYS on a fatal signal.
#define wait_event_killable(wq, condition)                              \
  ({                                                                    \
    int __ret = 0;                                                      \
    ::umemcg::wait_queue_entry __we;                                    \
    for (;;) {                                                          \
      ::umemcg::prepare_to_wait(&(wq), &__we, ::umemcg::TASK_KILLABLE); \
      if (condition) break;                                             \
      if (::umemcg::fatal_signal_pending(::umemcg::current)) {                    \
        __ret = -::umemcg::ERESTARTSYS;                                 \
        break;                                                          \
      }                                                                 \
      ::umemcg::emu::set_wait_reason((wq).name);                        \
      ::umemcg::schedule();                                             \
    }                                                                   \
    ::umemcg::finish_wait(&(wq), &__we);                                \
    __ret;                                                              \
  })

// Returns 0 if the timeout elapsed with condition false, else the jiffies left (at least 1).
#define wait_event_timeout(wq, condition, timeout)                      \
  ({                                                                    \
    long __t = (timeout);                                               \
    ::umemcg::wait_queue_entry __we;                                    \
    for (;;) {                                                          \
      ::umemcg::prepare_to_wait(&(wq), &__we, ::umemcg::TASK_UNINTERRUPTIBLE); \
      if (condition) {                                                  \
        if (!__t) __t = 1;                                              \
        break;                                                          \
      }                                                                 \
      if (!__t) break;                                                  \
      ::umemcg::emu::set_wait_reason((wq).name);                        \
      __t = ::umemcg::schedule_timeout(__t);                            \
    }                                                                   \
    ::umemcg::finish_wait(&(wq), &__we);                                \
    __t;                                                                \
  })

}  // namespace umemcg
