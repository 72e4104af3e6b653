// SPDX-License-Identifier: GPL-2.0-only
// shim/emu/waitlist.h: the FIFO of sleeping tasks behind the shim's sleeping locks (mutex,
// rwsem, completion). Each lock keeps its state and its waiters under one internal raw lock
// (never held across a sleep); a waiter sleeps until the lock is handed to it ("granted").
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>

#include "shim/sched.h"

namespace umemcg::emu {

struct Waiter {
  task_struct *task = nullptr;
  bool granted = false;   // guarded by the owning lock's internal mutex
  bool writer = false;    // rwsem: waiting for write
  std::uint64_t enqueued_ns = 0;
};

// Sleeps in `state` (TASK_UNINTERRUPTIBLE or TASK_KILLABLE) until w is granted. lk (the lock's
// internal mutex) is held on entry and on return. Returns false if a fatal signal ended a
// killable wait before the grant; the caller then removes w from its queue.
bool wait_for_grant(std::unique_lock<std::mutex> &lk, Waiter &w, unsigned int state,
                    const char *reason);

// Removes w from q if present.
void remove_waiter(std::deque<Waiter *> &q, Waiter *w);

}  // namespace umemcg::emu
