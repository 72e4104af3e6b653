// SPDX-License-Identifier: GPL-2.0-only
// shim/jiffies.h: HZ, jiffies, ktime, sleeping for a time.
//
// Mirrors: include/linux/jiffies.h, include/linux/timekeeping.h, include/linux/delay.h,
//   kernel/time/sleep_timeout.c (Linux 6.19)
// All on the machine clock: real time since boot in native mode, the virtual clock in simulated
// mode (where a task sleeping 2 s returns after 2 s of virtual time and milliseconds of wall time).
// Emulation: jiffies start at 0 at boot (the kernel starts 5 minutes before wrap) and are derived
//   from the clock (jiffies = ns / (NSEC_PER_SEC / HZ)) rather than counted by a tick.
#pragma once

#include <cstdint>

#include "shim/types.h"

namespace umemcg {

inline constexpr unsigned long HZ = 1000;
inline constexpr u64 NSEC_PER_SEC = 1000000000ull;
inline constexpr u64 NSEC_PER_MSEC = 1000000ull;
inline constexpr u64 NSEC_PER_USEC = 1000ull;
inline constexpr u64 NSEC_PER_JIFFY = NSEC_PER_SEC / HZ;

// Nanoseconds since machine boot.
u64 ktime_get_ns();
inline u64 ktime_get_boot_ns() { return ktime_get_ns(); }
inline u64 ktime_get_mono_fast_ns() { return ktime_get_ns(); }
u64 get_jiffies_64();
#define jiffies (static_cast<unsigned long>(::umemcg::get_jiffies_64()))

inline unsigned long msecs_to_jiffies(unsigned int m) { return m * HZ / 1000; }
inline unsigned int jiffies_to_msecs(unsigned long j) { return static_cast<unsigned>(j * 1000 / HZ); }
inline u64 jiffies_to_nsecs(unsigned long j) { return j * NSEC_PER_JIFFY; }
inline unsigned long nsecs_to_jiffies(u64 n) { return n / NSEC_PER_JIFFY; }

#define time_after(a, b) (static_cast<long>((b) - (a)) < 0)
#define time_before(a, b) time_after(b, a)
#define time_after_eq(a, b) (static_cast<long>((a) - (b)) >= 0)
#define time_before_eq(a, b) time_after_eq(b, a)

// Sleeps (uninterruptibly) for at least ms milliseconds.
void msleep(unsigned int ms);
// Sleeps for ms milliseconds unless a signal arrives; returns the milliseconds left.
unsigned long msleep_interruptible(unsigned int ms);
void usleep_range(unsigned long min_us, unsigned long max_us);
void fsleep(unsigned long us);

}  // namespace umemcg
