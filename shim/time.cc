// SPDX-License-Identifier: GPL-2.0-only
// shim/time.cc: the machine clock seen as ktime and jiffies; msleep and friends.
#include "shim/jiffies.h"
#include "shim/emu/machine_impl.h"
#include "shim/sched.h"

namespace umemcg {

u64 ktime_get_ns() { return emu::g_machine ? emu::g_machine->now() : 0; }

u64 get_jiffies_64() { return ktime_get_ns() / NSEC_PER_JIFFY; }

// Both sleep one jiffy longer than asked, as the kernel's do: the first jiffy may be partial.
void msleep(unsigned int ms) {
  long timeout = static_cast<long>(msecs_to_jiffies(ms)) + 1;
  while (timeout) timeout = schedule_timeout_uninterruptible(timeout);
}

unsigned long msleep_interruptible(unsigned int ms) {
  long timeout = static_cast<long>(msecs_to_jiffies(ms)) + 1;
  while (timeout && !signal_pending(current)) timeout = schedule_timeout_interruptible(timeout);
  return jiffies_to_msecs(static_cast<unsigned long>(timeout));
}

// Emulation: hrtimer-precision sleeps are rounded up to whole jiffies of the machine clock.
void usleep_range(unsigned long min_us, unsigned long max_us) {
  (void)max_us;
  long timeout = static_cast<long>((min_us * NSEC_PER_USEC + NSEC_PER_JIFFY - 1) / NSEC_PER_JIFFY);
  while (timeout) timeout = schedule_timeout_uninterruptible(timeout);
}

void fsleep(unsigned long us) { usleep_range(us, us); }

}  // namespace umemcg
