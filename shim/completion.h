// SPDX-License-Identifier: GPL-2.0-only
// shim/completion.h: completions.
//
// Mirrors: include/linux/completion.h, kernel/sched/completion.c (Linux 6.19)
// complete() lets one waiter (or a later wait) through; complete_all() lets everyone through
// until reinit_completion().
#pragma once

#include "shim/wait.h"

namespace umemcg {

struct completion {
  unsigned int done = 0;  // guarded by wait.lock; UINT_MAX after complete_all()
  wait_queue_head wait;
};

#define DECLARE_COMPLETION(x) ::umemcg::completion x
inline void init_completion(completion *c) {
  c->done = 0;
  init_waitqueue_head(&c->wait);
}
inline void reinit_completion(completion *c) { c->done = 0; }

void complete(completion *c);
void complete_all(completion *c);
void wait_for_completion(completion *c);
// 0 when completed, -ERESTARTSYS on a fatal signal.
int wait_for_completion_killable(completion *c);
// 0 on timeout, else the jiffies left (at least 1).
unsigned long wait_for_completion_timeout(completion *c, unsigned long timeout);
bool try_wait_for_completion(completion *c);
bool completion_done(completion *c);

}  // namespace umemcg
