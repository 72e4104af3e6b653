// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_regs.cc: register states and the bound deduction between a register's tnum
// and its signed/unsigned 32/64-bit ranges.
//
// Mirrors: kernel/bpf/verifier.c (__mark_reg_known, __mark_reg_unknown, __update_reg_bounds,
//          __reg_deduce_bounds, __reg_bound_offset, reg_bounds_sync, coerce_reg_to_size,
//          reg_type_str) (Linux 6.19)
// Emulation: the deduction rules are written from the invariants they maintain (each range
//   and the tnum describe the same set of values); they may be less precise than the kernel's
//   latest rules in corner cases, never less sound.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "bpfvm/verifier_state.h"

namespace umemcg {

void __mark_reg_known(bpf_reg_state &reg, u64 imm) {
  reg.var_off = tnum_const(imm);
  reg.smin_value = reg.smax_value = (s64)imm;
  reg.umin_value = reg.umax_value = imm;
  reg.s32_min_value = reg.s32_max_value = (s32)imm;
  reg.u32_min_value = reg.u32_max_value = (u32)imm;
}

void __mark_reg32_known(bpf_reg_state &reg, u64 imm) {
  reg.var_off = tnum_const_subreg(reg.var_off, (u32)imm);
  reg.s32_min_value = reg.s32_max_value = (s32)imm;
  reg.u32_min_value = reg.u32_max_value = (u32)imm;
}

void __mark_reg_unbounded(bpf_reg_state &reg) {
  reg.smin_value = LLONG_MIN;
  reg.smax_value = LLONG_MAX;
  reg.umin_value = 0;
  reg.umax_value = ULLONG_MAX;
  reg.s32_min_value = INT_MIN;
  reg.s32_max_value = INT_MAX;
  reg.u32_min_value = 0;
  reg.u32_max_value = UINT_MAX;
}

void __mark_reg_unknown(bpf_reg_state &reg) {
  reg = bpf_reg_state{};
  reg.type = SCALAR_VALUE;
  reg.var_off = tnum_unknown;
  __mark_reg_unbounded(reg);
}

void mark_reg_not_init(bpf_reg_state &reg) {
  __mark_reg_unknown(reg);
  reg.type = NOT_INIT;
}

void mark_reg_known_zero(bpf_reg_state &reg) {
  __mark_reg_unknown(reg);
  __mark_reg_known(reg, 0);
}

void mark_reg_ptr(bpf_reg_state &reg, u32 type) {
  mark_reg_known_zero(reg);
  reg.type = type;
}

namespace {

// Bounds implied by the tnum (__update_reg32_bounds / __update_reg64_bounds).
void update_reg_bounds(bpf_reg_state &reg) {
  const tnum v32 = tnum_subreg(reg.var_off);
  reg.s32_min_value = std::max(reg.s32_min_value, (s32)(u32)(v32.value | (v32.mask & 0x80000000u)));
  reg.s32_max_value = std::min(reg.s32_max_value, (s32)(u32)(v32.value | (v32.mask & 0x7fffffffu)));
  reg.u32_min_value = std::max(reg.u32_min_value, (u32)v32.value);
  reg.u32_max_value = std::min(reg.u32_max_value, (u32)(v32.value | v32.mask));

  const tnum v = reg.var_off;
  reg.smin_value = std::max(reg.smin_value, (s64)(v.value | (v.mask & (1ull << 63))));
  reg.smax_value = std::min(reg.smax_value, (s64)(v.value | (v.mask & ~(1ull << 63))));
  reg.umin_value = std::max(reg.umin_value, v.value);
  reg.umax_value = std::min(reg.umax_value, v.value | v.mask);
}

// 32-bit bounds from the 64-bit ones and from each other.
// Shaped as reg64_deduce_bounds() on purpose: the kernel writes out its 32- and 64-bit halves too.
void reg32_deduce_bounds(bpf_reg_state &reg) {
  // A 64-bit range spanning at most 2^32 values maps its low halves onto one contiguous
  // (modulo 2^32) interval; when that interval does not wrap, it bounds the subregister.
  if (reg.umax_value - reg.umin_value <= 0xffffffffull) {
    if ((u32)reg.umin_value <= (u32)reg.umax_value) {
      reg.u32_min_value = std::max(reg.u32_min_value, (u32)reg.umin_value);
      reg.u32_max_value = std::min(reg.u32_max_value, (u32)reg.umax_value);
    }
    if ((s32)reg.umin_value <= (s32)reg.umax_value) {
      reg.s32_min_value = std::max(reg.s32_min_value, (s32)reg.umin_value);
      reg.s32_max_value = std::min(reg.s32_max_value, (s32)reg.umax_value);
    }
  }
  if ((u64)reg.smax_value - (u64)reg.smin_value <= 0xffffffffull) {
    if ((u32)reg.smin_value <= (u32)reg.smax_value) {
      reg.u32_min_value = std::max(reg.u32_min_value, (u32)reg.smin_value);
      reg.u32_max_value = std::min(reg.u32_max_value, (u32)reg.smax_value);
    }
    if ((s32)reg.smin_value <= (s32)reg.smax_value) {
      reg.s32_min_value = std::max(reg.s32_min_value, (s32)reg.smin_value);
      reg.s32_max_value = std::min(reg.s32_max_value, (s32)reg.smax_value);
    }
  }
  // A u32 range that does not cross the sign bit is also a s32 range, and vice versa.
  if ((s32)reg.u32_min_value <= (s32)reg.u32_max_value) {
    reg.s32_min_value = std::max(reg.s32_min_value, (s32)reg.u32_min_value);
    reg.s32_max_value = std::min(reg.s32_max_value, (s32)reg.u32_max_value);
  }
  if ((u32)reg.s32_min_value <= (u32)reg.s32_max_value) {
    reg.u32_min_value = std::max(reg.u32_min_value, (u32)reg.s32_min_value);
    reg.u32_max_value = std::min(reg.u32_max_value, (u32)reg.s32_max_value);
  } else {
    // The s32 range crosses the sign bit: as u32 it is [0, s32_max] plus [(u32)s32_min, max].
    // A u32 range meeting only one of the two pieces lies in it.
    if (reg.u32_max_value < (u32)reg.s32_min_value) {
      reg.s32_min_value = (s32)reg.u32_min_value;
      reg.u32_max_value = std::min(reg.u32_max_value, (u32)reg.s32_max_value);
    } else if ((u32)reg.s32_max_value < reg.u32_min_value) {
      reg.s32_max_value = (s32)reg.u32_max_value;
      reg.u32_min_value = std::max(reg.u32_min_value, (u32)reg.s32_min_value);
    }
  }
}

// Shaped as reg32_deduce_bounds() on purpose: the kernel writes out its 32- and 64-bit halves too.
void reg64_deduce_bounds(bpf_reg_state &reg) {
  if ((s64)reg.umin_value <= (s64)reg.umax_value) {
    reg.smin_value = std::max(reg.smin_value, (s64)reg.umin_value);
    reg.smax_value = std::min(reg.smax_value, (s64)reg.umax_value);
  }
  if ((u64)reg.smin_value <= (u64)reg.smax_value) {
    reg.umin_value = std::max(reg.umin_value, (u64)reg.smin_value);
    reg.umax_value = std::min(reg.umax_value, (u64)reg.smax_value);
  } else {
    // The s64 range crosses the sign bit: as u64 it is [0, smax] plus [(u64)smin, U64_MAX]. A
    // u64 range meeting only one of the two pieces lies in it.
    if (reg.umax_value < (u64)reg.smin_value) {
      reg.smin_value = (s64)reg.umin_value;
      reg.umax_value = std::min(reg.umax_value, (u64)reg.smax_value);
    } else if ((u64)reg.smax_value < reg.umin_value) {
      reg.smax_value = (s64)reg.umax_value;
      reg.umin_value = std::max(reg.umin_value, (u64)reg.smin_value);
    }
  }
}

// 64-bit bounds tightened by the 32-bit ones: a value >= umin whose low half is >= u32_min is
// >= (upper half of umin | u32_min), and likewise for the other bounds.
void reg_deduce_mixed_bounds(bpf_reg_state &reg) {
  const u64 hi = 0xffffffff00000000ull;
  u64 new_umin = (reg.umin_value & hi) | reg.u32_min_value;
  u64 new_umax = (reg.umax_value & hi) | reg.u32_max_value;
  reg.umin_value = std::max(reg.umin_value, new_umin);
  reg.umax_value = std::min(reg.umax_value, new_umax);
  s64 new_smin = (s64)(((u64)reg.smin_value & hi) | reg.u32_min_value);
  s64 new_smax = (s64)(((u64)reg.smax_value & hi) | reg.u32_max_value);
  reg.smin_value = std::max(reg.smin_value, new_smin);
  reg.smax_value = std::min(reg.smax_value, new_smax);
}

// The tnum implied by the ranges (__reg_bound_offset).
void reg_bound_offset(bpf_reg_state &reg) {
  if (reg.umin_value > reg.umax_value || reg.u32_min_value > reg.u32_max_value) return;
  const tnum var64 = tnum_intersect(reg.var_off, tnum_range(reg.umin_value, reg.umax_value));
  const tnum var32 =
      tnum_intersect(tnum_subreg(var64), tnum_range(reg.u32_min_value, reg.u32_max_value));
  reg.var_off = tnum_or(tnum_clear_subreg(var64), var32);
}

}  // namespace

void reg_bounds_sync(bpf_reg_state &reg) {
  update_reg_bounds(reg);
  // Two rounds: each deduction can enable another (the kernel runs its set twice too).
  for (int i = 0; i < 2; i++) {
    reg32_deduce_bounds(reg);
    reg64_deduce_bounds(reg);
    reg_deduce_mixed_bounds(reg);
  }
  reg_bound_offset(reg);
  update_reg_bounds(reg);
}

bool reg_bounds_sane(const bpf_reg_state &reg) {
  if (reg.umin_value > reg.umax_value || reg.smin_value > reg.smax_value ||
      reg.u32_min_value > reg.u32_max_value || reg.s32_min_value > reg.s32_max_value)
    return false;
  // Every bound must admit the tnum's fixed bits.
  if (reg.var_off.value & reg.var_off.mask) return false;
  if (tnum_is_const(reg.var_off) &&
      (reg.umin_value != reg.var_off.value || reg.umax_value != reg.var_off.value))
    return false;
  if (reg.umin_value > (reg.var_off.value | reg.var_off.mask) ||
      reg.umax_value < reg.var_off.value)
    return false;
  return true;
}

void zext_32_to_64(bpf_reg_state &reg) {
  reg.var_off = tnum_subreg(reg.var_off);
  reg.umin_value = reg.u32_min_value;
  reg.umax_value = reg.u32_max_value;
  reg.smin_value = reg.u32_min_value;
  reg.smax_value = reg.u32_max_value;
  reg_bounds_sync(reg);
}

void coerce_reg_to_size(bpf_reg_state &reg, int size) {
  if (size >= 8) return;
  const u64 mask = (1ull << (size * 8)) - 1;
  reg.var_off = tnum_cast(reg.var_off, (u8)size);
  if ((reg.umin_value & ~mask) == (reg.umax_value & ~mask)) {
    reg.umin_value &= mask;
    reg.umax_value &= mask;
  } else {
    reg.umin_value = 0;
    reg.umax_value = mask;
  }
  reg.smin_value = (s64)reg.umin_value;
  reg.smax_value = (s64)reg.umax_value;
  reg.u32_min_value = (u32)reg.umin_value;
  reg.u32_max_value = (u32)reg.umax_value;
  reg.s32_min_value = INT_MIN;
  reg.s32_max_value = INT_MAX;
  if (size < 4 || (s32)reg.u32_min_value <= (s32)reg.u32_max_value) {
    reg.s32_min_value = (s32)reg.u32_min_value;
    reg.s32_max_value = (s32)reg.u32_max_value;
  }
  reg_bounds_sync(reg);
}

void coerce_reg_to_size_sx(bpf_reg_state &reg, int size) {
  // Sign-extend the low `size` bytes. Constants stay constants; otherwise the result lies in
  // the signed range of the width, narrowed when the source's signed range already fits.
  const int bits = size * 8;
  const s64 lo = -(1ll << (bits - 1)), hi = (1ll << (bits - 1)) - 1;
  if (tnum_is_const(reg.var_off)) {
    const u64 v = reg.var_off.value;
    const s64 sx = (s64)(v << (64 - bits)) >> (64 - bits);
    __mark_reg_known(reg, (u64)sx);
    return;
  }
  s64 smin = lo, smax = hi;
  if (reg.smin_value >= lo && reg.smax_value <= hi) {
    smin = reg.smin_value;
    smax = reg.smax_value;
  }
  const u32 keep_type = reg.type;
  __mark_reg_unknown(reg);
  reg.type = keep_type;
  reg.smin_value = smin;
  reg.smax_value = smax;
  reg_bounds_sync(reg);
}

const char *reg_type_str(u32 type, char *buf, size_t len) {
  static const char *const names[__BPF_REG_TYPE_MAX] = {
      "?", "scalar", "ctx", "map_ptr", "map_value", "map_key", "fp", "ptr_", "mem", "func",
  };
  const u32 base = base_type(type);
  if (base >= __BPF_REG_TYPE_MAX) {
    std::snprintf(buf, len, "invalid");
    return buf;
  }
  if (type == SCALAR_VALUE || type == NOT_INIT) {
    std::snprintf(buf, len, "%s", names[base]);
    return buf;
  }
  std::string prefix;
  if (type & MEM_RDONLY) prefix += "rdonly_";
  if (type & MEM_RINGBUF) prefix += "ringbuf_";
  if (type & MEM_RCU) prefix += "rcu_";
  if (type & PTR_UNTRUSTED) prefix += "untrusted_";
  if (type & PTR_TRUSTED) prefix += "trusted_";
  const char *postfix = "";
  if (type & PTR_MAYBE_NULL) postfix = base == PTR_TO_BTF_ID ? "or_null_" : "_or_null";
  std::snprintf(buf, len, "%s%s%s", prefix.c_str(), names[base], postfix);
  return buf;
}

std::string reg_type_name(u32 type) {
  char buf[64];
  return reg_type_str(type, buf, sizeof(buf));
}

}  // namespace umemcg
