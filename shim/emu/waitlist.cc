// SPDX-License-Identifier: GPL-2.0-only
// shim/emu/waitlist.cc: sleeping until a lock is handed over (see waitlist.h).
#include "shim/emu/waitlist.h"

#include <algorithm>

#include "shim/machine.h"

namespace umemcg::emu {

bool wait_for_grant(std::unique_lock<std::mutex> &lk, Waiter &w, unsigned int state,
                    const char *reason) {
  for (;;) {
    // The state is set before granted is tested and both happen under lk, as the granter's
    // write of granted and its wake_up_process(): a grant after this test finds the state set
    // and makes schedule() return.
    set_current_state(state);
    if (w.granted) break;
    if ((state & TASK_WAKEKILL) && fatal_signal_pending(current)) {
      __set_current_state(TASK_RUNNING);
      return false;
    }
    set_wait_reason(reason);
    lk.unlock();
    schedule();
    lk.lock();
  }
  __set_current_state(TASK_RUNNING);
  set_wait_reason("running");
  return true;
}

void remove_waiter(std::deque<Waiter *> &q, Waiter *w) {
  auto it = std::find(q.begin(), q.end(), w);
  if (it != q.end()) q.erase(it);
}

}  // namespace umemcg::emu
