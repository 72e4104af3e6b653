// SPDX-License-Identifier: GPL-2.0-only
// shim/completion.cc: completions (see completion.h), built on a wait queue.
#include "shim/completion.h"

#include <climits>

namespace umemcg {

namespace {
// Consumes one "done" if there is one. The wait queue's lock guards done.
bool take_done(completion *c) NO_THREAD_SAFETY_ANALYSIS {
  bool ok = false;
  spin_lock(&c->wait.lock);
  if (c->done) {
    if (c->done != UINT_MAX) c->done--;
    ok = true;
  }
  spin_unlock(&c->wait.lock);
  return ok;
}
}  // namespace

void complete(completion *c) NO_THREAD_SAFETY_ANALYSIS {
  spin_lock(&c->wait.lock);
  if (c->done != UINT_MAX) c->done++;
  spin_unlock(&c->wait.lock);
  wake_up(&c->wait);
}

void complete_all(completion *c) NO_THREAD_SAFETY_ANALYSIS {
  spin_lock(&c->wait.lock);
  c->done = UINT_MAX;
  spin_unlock(&c->wait.lock);
  wake_up_all(&c->wait);
}

void wait_for_completion(completion *c) {
  for (;;) {
    wait_queue_entry e;
    prepare_to_wait_exclusive(&c->wait, &e, TASK_UNINTERRUPTIBLE);
    if (take_done(c)) {
      finish_wait(&c->wait, &e);
      return;
    }
    emu::set_wait_reason("wait_for_completion");
    schedule();
    finish_wait(&c->wait, &e);
  }
}

int wait_for_completion_killable(completion *c) {
  for (;;) {
    wait_queue_entry e;
    prepare_to_wait_exclusive(&c->wait, &e, TASK_KILLABLE);
    if (take_done(c)) {
      finish_wait(&c->wait, &e);
      return 0;
    }
    if (fatal_signal_pending(current)) {
      finish_wait(&c->wait, &e);
      return -ERESTARTSYS;
    }
    emu::set_wait_reason("wait_for_completion_killable");
    schedule();
    finish_wait(&c->wait, &e);
  }
}

unsigned long wait_for_completion_timeout(completion *c, unsigned long timeout) {
  long left = static_cast<long>(timeout);
  for (;;) {
    wait_queue_entry e;
    prepare_to_wait_exclusive(&c->wait, &e, TASK_UNINTERRUPTIBLE);
    if (take_done(c)) {
      finish_wait(&c->wait, &e);
      return left ? static_cast<unsigned long>(left) : 1;
    }
    if (!left) {
      finish_wait(&c->wait, &e);
      return 0;
    }
    emu::set_wait_reason("wait_for_completion_timeout");
    left = schedule_timeout(left);
    finish_wait(&c->wait, &e);
  }
}

bool try_wait_for_completion(completion *c) { return take_done(c); }

bool completion_done(completion *c) NO_THREAD_SAFETY_ANALYSIS {
  spin_lock(&c->wait.lock);
  bool d = c->done != 0;
  spin_unlock(&c->wait.lock);
  return d;
}

}  // namespace umemcg
