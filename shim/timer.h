// SPDX-License-Identifier: GPL-2.0-only
// shim/timer.h: timer_list on the machine clock.
//
// Mirrors: include/linux/timer.h, kernel/time/timer.c (the API, not the timer wheel) (Linux 6.19)
// Emulation: a timer fires at its exact expiry on the machine clock (no wheel granularity, no
//   slack). The callback runs in "softirq" context with no vCPU: it may queue work, wake tasks
//   and re-arm timers, but must not touch per-CPU data or sleep. Native mode: on the machine's
//   timer thread. Simulated mode: in the scheduler, between two task switches.
#pragma once

#include <cstdint>

#include "shim/types.h"

namespace umemcg {

struct timer_list {
  void (*function)(timer_list *) = nullptr;
  unsigned long expires = 0;  // jiffies
  u32 flags = 0;
  // Emulation bookkeeping.
  bool emu_pending = false;
  std::uint64_t emu_key_deadline = 0;
  std::uint64_t emu_key_seq = 0;
};

inline constexpr u32 TIMER_DEFERRABLE = 0x00080000;

void timer_setup(timer_list *timer, void (*fn)(timer_list *), u32 flags);
// Arms (or re-arms) the timer for `expires` (absolute jiffies). Returns whether it was pending.
int mod_timer(timer_list *timer, unsigned long expires);
void add_timer(timer_list *timer);
// Disarms the timer; returns whether it was pending.
int timer_delete(timer_list *timer);
// Disarms the timer and waits for a running callback to finish.
int timer_delete_sync(timer_list *timer);
inline int del_timer(timer_list *t) { return timer_delete(t); }
inline int del_timer_sync(timer_list *t) { return timer_delete_sync(t); }
bool timer_pending(const timer_list *timer);

}  // namespace umemcg
