// SPDX-License-Identifier: GPL-2.0-only
// shim/prandom.h: a seeded pseudo-random draw from a caller-held state, for choices the kernel
// makes at random (the stocks' eviction victim: get_random_u32_below()).
//
// Mirrors: include/linux/random.h (get_random_u32_below), include/linux/prandom.h (a caller-held
//   state, as prandom_u32_state()) (Linux 6.19)
// Emulation: xorshift64* on a state the caller seeds from the machine seed, not the kernel's
//   CSPRNG, so that a simulated run draws the same values for the same seed.
#pragma once

#include "shim/types.h"

namespace umemcg {

// A value in [0, n) from *state (advanced). Uniform enough for picking one of a few slots: the
// multiply-shift maps the top 32 bits onto [0, n) with a bias below 2^-29.
inline u32 prandom_u32_below_state(u64 *state, u32 n) {
  u64 x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  const u64 r = (x * 0x2545F4914F6CDD1Dull) >> 32;
  return static_cast<u32>((r * n) >> 32);
}

}  // namespace umemcg
