// SPDX-License-Identifier: GPL-2.0-only
// test/progs/memcg_async_reclaim_user.h: user space's view of memcg_async_reclaim.bpf.c (seed
// 001's reclaimer): its SYSCALL program's context (struct start_args), its configuration and
// statistics in .bss (struct stats), and its ring buffer record (struct event), field for field,
// for the tests and the async-reclaim scenario that read them.
#pragma once

#include "shim/types.h"

namespace umemcg::progs::memcg_async_reclaim {

struct start_args {
  u64 high_cgid, low_cgid, period_ns, reclaim_size, min_delta;
  s32 swappiness = -1;  // -1: the memcg's own
  s32 ret = 1;          // 0, or the failing call's errno
};

struct stats {
  u64 high_cgid, low_cgid, period_ns, reclaim_size, min_delta;
  s64 swappiness;
  u64 ticks, wq_starts, wq_start_failures, timer_failures;
  u64 reclaims, reclaimed_bytes, target_gone, events_lost;
  s64 last_reclaim_err;
  u64 stopped;
};

// event::kind (enum outcome).
enum { RECLAIMED = 1, RECLAIM_FAILED = 2, TARGET_GONE = 3 };

struct event {
  u32 kind;
  s32 err;
  u64 bytes, refault_delta, time_ns;
};

}  // namespace umemcg::progs::memcg_async_reclaim
