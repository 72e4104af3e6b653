// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/tnum.h: tristate numbers, the verifier's per-bit knowledge of a 64-bit value.
//
// A tnum {value, mask} stands for every u64 x with (x & ~mask) == value: bits set in mask are
// unknown, the other bits are known and equal to the bits of value. value & mask is always 0.
// The operations over-approximate: the result contains every outcome of the operation applied
// to members of the operands.
//
// Mirrors: include/linux/tnum.h, kernel/bpf/tnum.c (Linux 6.19)
// Emulation: a C++ struct with inline helpers; the names and semantics are the kernel's.
#pragma once

#include <string>

#include "shim/types.h"

namespace umemcg {

struct tnum {
  u64 value;
  u64 mask;
  friend bool operator==(const tnum &a, const tnum &b) = default;
};

inline constexpr tnum tnum_unknown = {0, ~0ull};

inline constexpr tnum tnum_const(u64 value) { return {value, 0}; }
// The smallest tnum containing every value of [min, max].
tnum tnum_range(u64 min, u64 max);

tnum tnum_lshift(tnum a, u8 shift);
tnum tnum_rshift(tnum a, u8 shift);
// Arithmetic shift of the low insn_bitness (32 or 64) bits.
tnum tnum_arshift(tnum a, u8 min_shift, u8 insn_bitness);
tnum tnum_add(tnum a, tnum b);
tnum tnum_sub(tnum a, tnum b);
tnum tnum_neg(tnum a);
tnum tnum_and(tnum a, tnum b);
tnum tnum_or(tnum a, tnum b);
tnum tnum_xor(tnum a, tnum b);
tnum tnum_mul(tnum a, tnum b);
// Values in both a and b (the caller knows they overlap).
tnum tnum_intersect(tnum a, tnum b);
// Keeps the low `size` bytes.
tnum tnum_cast(tnum a, u8 size);

inline constexpr bool tnum_is_const(tnum a) { return !a.mask; }
inline constexpr bool tnum_equals_const(tnum a, u64 b) { return tnum_is_const(a) && a.value == b; }
inline constexpr bool tnum_is_unknown(tnum a) { return !~a.mask; }
// Every member of a is a multiple of size (a power of two).
bool tnum_is_aligned(tnum a, u64 size);
// Every member of b is a member of a.
bool tnum_in(tnum a, tnum b);

// The 32-bit subregister views.
tnum tnum_subreg(tnum a);
tnum tnum_clear_subreg(tnum a);
tnum tnum_with_subreg(tnum reg, tnum subreg);
tnum tnum_const_subreg(tnum a, u32 value);
inline bool tnum_subreg_is_const(tnum a) { return !(u32)a.mask; }

// "(0x0; 0xff)" as the verifier log prints it (tnum_strn; a constant as its value, "0x10"), and
// the binary form (tnum_sbin).
std::string tnum_str(tnum a);
std::string tnum_sbin(tnum a);

}  // namespace umemcg
