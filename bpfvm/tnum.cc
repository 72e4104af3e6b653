// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/tnum.cc: tristate number arithmetic.
//
// Mirrors: kernel/bpf/tnum.c (Linux 6.19)
// Emulation: none in behaviour; written fresh from the definition of a tnum (see tnum.h).
#include "bpfvm/tnum.h"

#include <cstdio>

namespace umemcg {

tnum tnum_range(u64 min, u64 max) {
  const u64 chi = min ^ max;
  if (!chi) return tnum_const(min);
  // Bits from the highest differing one down are unknown.
  const int bits = 64 - __builtin_clzll(chi);
  if (bits > 63) return tnum_unknown;
  const u64 delta = (1ull << bits) - 1;
  return {min & ~delta, delta};
}

tnum tnum_lshift(tnum a, u8 shift) { return {a.value << shift, a.mask << shift}; }
tnum tnum_rshift(tnum a, u8 shift) { return {a.value >> shift, a.mask >> shift}; }

tnum tnum_arshift(tnum a, u8 min_shift, u8 insn_bitness) {
  // An unknown sign bit shifts in unknown bits; a known one shifts in known copies.
  if (insn_bitness == 32)
    return {(u32)((s32)(u32)a.value >> min_shift), (u32)((s32)(u32)a.mask >> min_shift)};
  return {(u64)((s64)a.value >> min_shift), (u64)((s64)a.mask >> min_shift)};
}

tnum tnum_add(tnum a, tnum b) {
  const u64 sm = a.mask + b.mask;
  const u64 sv = a.value + b.value;
  const u64 sigma = sm + sv;
  // Bits where a carry may or may not arrive are unknown.
  const u64 chi = sigma ^ sv;
  const u64 mu = chi | a.mask | b.mask;
  return {sv & ~mu, mu};
}

tnum tnum_sub(tnum a, tnum b) {
  const u64 dv = a.value - b.value;
  const u64 alpha = dv + a.mask;
  const u64 beta = dv - b.mask;
  const u64 chi = alpha ^ beta;
  const u64 mu = chi | a.mask | b.mask;
  return {dv & ~mu, mu};
}

tnum tnum_neg(tnum a) { return tnum_sub(tnum_const(0), a); }

tnum tnum_and(tnum a, tnum b) {
  const u64 alpha = a.value | a.mask;
  const u64 beta = b.value | b.mask;
  const u64 v = a.value & b.value;
  return {v, alpha & beta & ~v};
}

tnum tnum_or(tnum a, tnum b) {
  const u64 v = a.value | b.value;
  const u64 mu = a.mask | b.mask;
  return {v, mu & ~v};
}

tnum tnum_xor(tnum a, tnum b) {
  const u64 v = a.value ^ b.value;
  const u64 mu = a.mask | b.mask;
  return {v & ~mu, mu};
}

tnum tnum_mul(tnum a, tnum b) {
  // Long multiplication: the known product of the values, plus for every bit of a the partial
  // product it may contribute (all of b's possible bits when the bit of a is unknown).
  const u64 acc_v = a.value * b.value;
  tnum acc_m = tnum_const(0);
  while (a.value || a.mask) {
    if (a.value & 1)
      acc_m = tnum_add(acc_m, tnum{0, b.mask});
    else if (a.mask & 1)
      acc_m = tnum_add(acc_m, tnum{0, b.value | b.mask});
    a = tnum_rshift(a, 1);
    b = tnum_lshift(b, 1);
  }
  return tnum_add(tnum_const(acc_v), acc_m);
}

tnum tnum_intersect(tnum a, tnum b) {
  const u64 v = a.value | b.value;
  const u64 mu = a.mask & b.mask;
  return {v & ~mu, mu};
}

tnum tnum_cast(tnum a, u8 size) {
  if (size >= 8) return a;
  const u64 keep = (1ull << (size * 8)) - 1;
  return {a.value & keep, a.mask & keep};
}

bool tnum_is_aligned(tnum a, u64 size) {
  if (!size) return true;
  return !((a.value | a.mask) & (size - 1));
}

bool tnum_in(tnum a, tnum b) {
  if (b.mask & ~a.mask) return false;
  return a.value == (b.value & ~a.mask);
}

tnum tnum_subreg(tnum a) { return tnum_cast(a, 4); }
tnum tnum_clear_subreg(tnum a) { return tnum_lshift(tnum_rshift(a, 32), 32); }
tnum tnum_with_subreg(tnum reg, tnum subreg) {
  return tnum_or(tnum_clear_subreg(reg), tnum_subreg(subreg));
}
tnum tnum_const_subreg(tnum a, u32 value) { return tnum_with_subreg(a, tnum_const(value)); }

std::string tnum_str(tnum a) {
  char buf[64];
  // A constant prints as its value, as the kernel's log does ("off 0+-8+2").
  if (tnum_is_const(a))
    std::snprintf(buf, sizeof(buf), "%#llx", (unsigned long long)a.value);
  else
    std::snprintf(buf, sizeof(buf), "(0x%llx; 0x%llx)", (unsigned long long)a.value,
                  (unsigned long long)a.mask);
  return buf;
}

std::string tnum_sbin(tnum a) {
  std::string s(64, '0');
  for (int i = 0; i < 64; i++) {
    const u64 bit = 1ull << (63 - i);
    s[i] = (a.mask & bit) ? 'x' : (a.value & bit) ? '1' : '0';
  }
  return s;
}

}  // namespace umemcg
