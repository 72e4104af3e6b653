// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_alu.cc: ALU instructions: scalar range tracking and pointer arithmetic.
//
// Mirrors: kernel/bpf/verifier.c (check_alu_op, adjust_reg_min_max_vals,
//          adjust_scalar_min_max_vals, scalar(32)_min_max_{add,sub,mul,and,or,xor,lsh,rsh,arsh},
//          adjust_ptr_min_max_vals, check_reg_sane_offset) (Linux 6.19)
// Emulation: division, modulo, negation and byte swaps of non-constant scalars give an
//   unknown value of the operation's width (the kernel has range rules for some of them);
//   constants are folded exactly for every operation. No pointer leaks (verifier.h): a 32-bit
//   move of a pointer and pointer-minus-pointer are rejected unless opts.allow_ptr_leaks.
#include <algorithm>
#include <climits>
#include <limits>

#include "bpfvm/verifier_state.h"

namespace umemcg {

namespace {

template <typename U, typename S>
struct rng {
  S smin, smax;
  U umin, umax;
};

template <typename U, typename S>
void full_signed(rng<U, S> &r) {
  r.smin = std::numeric_limits<S>::min();
  r.smax = std::numeric_limits<S>::max();
}
template <typename U, typename S>
void full_unsigned(rng<U, S> &r) {
  r.umin = 0;
  r.umax = std::numeric_limits<U>::max();
}

template <typename U, typename S>
rng<U, S> range_add(const rng<U, S> &a, const rng<U, S> &b) {
  rng<U, S> r;
  const bool s1 = __builtin_add_overflow(a.smin, b.smin, &r.smin);
  const bool s2 = __builtin_add_overflow(a.smax, b.smax, &r.smax);
  if (s1 || s2) full_signed(r);
  const bool u1 = __builtin_add_overflow(a.umin, b.umin, &r.umin);
  const bool u2 = __builtin_add_overflow(a.umax, b.umax, &r.umax);
  if (u1 || u2) full_unsigned(r);
  return r;
}

template <typename U, typename S>
rng<U, S> range_sub(const rng<U, S> &a, const rng<U, S> &b) {
  rng<U, S> r;
  const bool s1 = __builtin_sub_overflow(a.smin, b.smax, &r.smin);
  const bool s2 = __builtin_sub_overflow(a.smax, b.smin, &r.smax);
  if (s1 || s2) full_signed(r);
  if (a.umin < b.umax) {
    full_unsigned(r);  // may wrap below zero
  } else {
    r.umin = a.umin - b.umax;
    r.umax = a.umax - b.umin;
  }
  return r;
}

template <typename U, typename S>
rng<U, S> range_mul(const rng<U, S> &a, const rng<U, S> &b) {
  rng<U, S> r;
  if (__builtin_mul_overflow(a.umax, b.umax, &r.umax)) {
    full_unsigned(r);
  } else {
    r.umin = a.umin * b.umin;
  }
  S p[4];
  bool ovf = false;
  ovf = __builtin_mul_overflow(a.smin, b.smin, &p[0]) || ovf;
  ovf = __builtin_mul_overflow(a.smin, b.smax, &p[1]) || ovf;
  ovf = __builtin_mul_overflow(a.smax, b.smin, &p[2]) || ovf;
  ovf = __builtin_mul_overflow(a.smax, b.smax, &p[3]) || ovf;
  if (ovf) {
    full_signed(r);
  } else {
    r.smin = *std::min_element(p, p + 4);
    r.smax = *std::max_element(p, p + 4);
  }
  return r;
}

// Bitwise results: unsigned bounds from the result's tnum; signed bounds only when both
// operands are non-negative (then the result is too).
template <typename U, typename S>
rng<U, S> range_bitwise(u8 op, const rng<U, S> &a, const rng<U, S> &b, tnum res) {
  rng<U, S> r;
  r.umin = (U)res.value;
  r.umax = (U)(res.value | res.mask);
  if (op == BPF_AND) r.umax = std::min({r.umax, a.umax, b.umax});
  if (op == BPF_OR) r.umin = std::max({r.umin, a.umin, b.umin});
  if (a.smin >= 0 && b.smin >= 0 && (S)r.umax >= 0) {
    r.smin = (S)r.umin;
    r.smax = (S)r.umax;
  } else {
    full_signed(r);
  }
  return r;
}

template <typename U, typename S>
rng<U, S> range_shift(u8 op, const rng<U, S> &a, u8 k) {
  rng<U, S> r;
  full_signed(r);
  full_unsigned(r);
  if (op == BPF_LSH) {
    if (a.umax <= (std::numeric_limits<U>::max() >> k)) {
      r.umin = a.umin << k;
      r.umax = a.umax << k;
    }
  } else if (op == BPF_RSH) {
    r.umin = a.umin >> k;
    r.umax = a.umax >> k;
  } else {  // BPF_ARSH
    r.smin = a.smin >> k;
    r.smax = a.smax >> k;
  }
  return r;
}

rng<u64, s64> range64(const bpf_reg_state &r) {
  return {r.smin_value, r.smax_value, r.umin_value, r.umax_value};
}
rng<u32, s32> range32(const bpf_reg_state &r) {
  return {r.s32_min_value, r.s32_max_value, r.u32_min_value, r.u32_max_value};
}

u64 bswap(u64 v, int width) {
  switch (width) {
    case 16: return __builtin_bswap16((u16)v);
    case 32: return __builtin_bswap32((u32)v);
    default: return __builtin_bswap64(v);
  }
}

// Exact result of op on constants (the ISA's semantics: division by zero gives 0, modulo by
// zero keeps the dividend, INT_MIN / -1 wraps). False if the result is not defined (shift by
// the width or more), in which case the caller makes it unknown.
bool alu_fold(u8 op, bool alu32, bool is_signed, u64 a, u64 b, u64 *out) {
  if (alu32) {
    const u32 x = (u32)a, y = (u32)b;
    u32 r;
    switch (op) {
      case BPF_ADD: r = x + y; break;
      case BPF_SUB: r = x - y; break;
      case BPF_MUL: r = x * y; break;
      case BPF_OR: r = x | y; break;
      case BPF_AND: r = x & y; break;
      case BPF_XOR: r = x ^ y; break;
      case BPF_LSH: if (y >= 32) return false; r = x << y; break;
      case BPF_RSH: if (y >= 32) return false; r = x >> y; break;
      case BPF_ARSH: if (y >= 32) return false; r = (u32)((s32)x >> y); break;
      case BPF_DIV:
        if (!y) r = 0;
        else if (is_signed) r = (s32)y == -1 ? (u32)0 - x : (u32)((s32)x / (s32)y);
        else r = x / y;
        break;
      case BPF_MOD:
        if (!y) r = x;
        else if (is_signed) r = (s32)y == -1 ? 0 : (u32)((s32)x % (s32)y);
        else r = x % y;
        break;
      default: return false;
    }
    *out = r;
    return true;
  }
  switch (op) {
    case BPF_ADD: *out = a + b; return true;
    case BPF_SUB: *out = a - b; return true;
    case BPF_MUL: *out = a * b; return true;
    case BPF_OR: *out = a | b; return true;
    case BPF_AND: *out = a & b; return true;
    case BPF_XOR: *out = a ^ b; return true;
    case BPF_LSH: if (b >= 64) return false; *out = a << b; return true;
    case BPF_RSH: if (b >= 64) return false; *out = a >> b; return true;
    case BPF_ARSH: if (b >= 64) return false; *out = (u64)((s64)a >> b); return true;
    case BPF_DIV:
      if (!b) *out = 0;
      else if (is_signed) *out = (s64)b == -1 ? (u64)0 - a : (u64)((s64)a / (s64)b);
      else *out = a / b;
      return true;
    case BPF_MOD:
      if (!b) *out = a;
      else if (is_signed) *out = (s64)b == -1 ? 0 : (u64)((s64)a % (s64)b);
      else *out = a % b;
      return true;
    default: return false;
  }
}

void mark_unknown_width(bpf_reg_state &dst, bool alu32) {
  __mark_reg_unknown(dst);
  if (alu32) zext_32_to_64(dst);
}

// dst op= src for scalars (adjust_scalar_min_max_vals).
void adjust_scalar_min_max_vals(bpf_reg_state &dst, const bpf_reg_state &src, u8 op, bool alu32,
                                bool is_signed) {
  const bool dst_const = alu32 ? tnum_subreg_is_const(dst.var_off) : tnum_is_const(dst.var_off);
  const bool src_const = alu32 ? tnum_subreg_is_const(src.var_off) : tnum_is_const(src.var_off);
  if (dst_const && src_const) {
    u64 v;
    if (alu_fold(op, alu32, is_signed, dst.var_off.value, src.var_off.value, &v)) {
      __mark_reg_unknown(dst);
      __mark_reg_known(dst, v);
    } else {
      mark_unknown_width(dst, alu32);
    }
    return;
  }
  const u8 width = alu32 ? 32 : 64;
  const bool shift = op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH;
  const bool supported = op == BPF_ADD || op == BPF_SUB || op == BPF_MUL || op == BPF_AND ||
                         op == BPF_OR || op == BPF_XOR ||
                         (shift && src_const && (src.var_off.value & (alu32 ? 0xffffffffull : ~0ull)) < width);
  if (!supported) {
    mark_unknown_width(dst, alu32);
    return;
  }
  const tnum a = alu32 ? tnum_subreg(dst.var_off) : dst.var_off;
  const tnum b = alu32 ? tnum_subreg(src.var_off) : src.var_off;
  const u8 k = (u8)src.var_off.value;
  tnum t;
  switch (op) {
    case BPF_ADD: t = tnum_add(a, b); break;
    case BPF_SUB: t = tnum_sub(a, b); break;
    case BPF_MUL: t = tnum_mul(a, b); break;
    case BPF_AND: t = tnum_and(a, b); break;
    case BPF_OR: t = tnum_or(a, b); break;
    case BPF_XOR: t = tnum_xor(a, b); break;
    case BPF_LSH: t = tnum_lshift(a, k); break;
    case BPF_RSH: t = tnum_rshift(a, k); break;
    default: t = tnum_arshift(a, k, width); break;
  }
  if (alu32) t = tnum_subreg(t);

  auto compute = [&](auto ra, auto rb) {
    switch (op) {
      case BPF_ADD: return range_add(ra, rb);
      case BPF_SUB: return range_sub(ra, rb);
      case BPF_MUL: return range_mul(ra, rb);
      case BPF_AND: case BPF_OR: case BPF_XOR: return range_bitwise(op, ra, rb, t);
      default: return range_shift(op, ra, k);
    }
  };
  // The 32- and 64-bit stores are written out side by side on purpose, as the kernel writes
  // each operation's scalar32_min_max_*() and scalar_min_max_*() pair.
  if (alu32) {
    const rng<u32, s32> r = compute(range32(dst), range32(src));
    __mark_reg_unknown(dst);
    dst.var_off = t;
    dst.s32_min_value = r.smin;
    dst.s32_max_value = r.smax;
    dst.u32_min_value = r.umin;
    dst.u32_max_value = r.umax;
    zext_32_to_64(dst);
  } else {
    rng<u64, s64> r = compute(range64(dst), range64(src));
    // __scalar64_min_max_lsh(): << 32 (the first half of the compiler's sign extension
    // "<<= 32; s>>= 32") keeps the signed bounds of a subregister whose bounds are
    // non-negative.
    if (op == BPF_LSH && k == 32) {
      if (dst.s32_max_value >= 0) r.smax = (s64)((u64)(u32)dst.s32_max_value << 32);
      if (dst.s32_min_value >= 0) r.smin = (s64)((u64)(u32)dst.s32_min_value << 32);
    }
    __mark_reg_unknown(dst);
    dst.var_off = t;
    dst.smin_value = r.smin;
    dst.smax_value = r.smax;
    dst.umin_value = r.umin;
    dst.umax_value = r.umax;
    reg_bounds_sync(dst);
  }
}

// The kernel's check_reg_sane_offset(): pointer math must keep offsets far from overflow.
int check_reg_sane_offset(bpf_verifier_env &env, const bpf_reg_state &reg, u32 ptr_type) {
  const std::string t = reg_type_name(ptr_type);
  if (tnum_is_const(reg.var_off)) {
    const s64 val = (s64)reg.var_off.value;
    if (val >= BPF_MAX_VAR_OFF || val <= -BPF_MAX_VAR_OFF) {
      env.verbose_err("math between %s pointer and %lld is not allowed", t.c_str(),
                      (long long)val);
      return -EACCES;
    }
  }
  if (reg.off >= BPF_MAX_VAR_OFF || reg.off <= -BPF_MAX_VAR_OFF) {
    env.verbose_err("%s pointer offset %d is not allowed", t.c_str(), reg.off);
    return -EACCES;
  }
  if (reg.smin_value == LLONG_MIN) {
    env.verbose_err("math between %s pointer and register with unbounded min value is not allowed",
                    t.c_str());
    return -EACCES;
  }
  if (reg.smin_value >= BPF_MAX_VAR_OFF || reg.smin_value <= -BPF_MAX_VAR_OFF) {
    env.verbose_err("value %lld makes %s pointer be out of bounds", (long long)reg.smin_value,
                    t.c_str());
    return -EACCES;
  }
  return 0;
}

// dst = ptr op scalar (adjust_ptr_min_max_vals); ptr is dst or the source of a commuted add.
int adjust_ptr_min_max_vals(bpf_verifier_env &env, const bpf_insn &insn, u8 op,
                            bpf_reg_state &dst, const bpf_reg_state &ptr,
                            const bpf_reg_state &off_reg) {
  const u32 dreg = insn.dst_reg;
  if (type_may_be_null(ptr.type)) {
    env.verbose_err("R%u pointer arithmetic on %s prohibited, null-check it first", dreg,
                    reg_type_name(ptr.type).c_str());
    return -EACCES;
  }
  switch (base_type(ptr.type)) {
    case CONST_PTR_TO_MAP:
      // A map pointer may only be added a known zero.
      if (op == BPF_ADD && tnum_is_const(off_reg.var_off) && off_reg.var_off.value == 0) break;
      [[fallthrough]];
    case PTR_TO_FUNC:
      env.verbose_err("R%u pointer arithmetic on %s prohibited", dreg,
                      reg_type_name(ptr.type).c_str());
      return -EACCES;
    default:
      break;
  }
  if (op != BPF_ADD && op != BPF_SUB) {
    if (op == BPF_AND || op == BPF_OR || op == BPF_XOR)
      env.verbose_err("R%u bitwise operator %s on pointer prohibited", dreg,
                      bpf_opcode_sym(insn.code));
    else
      env.verbose_err("R%u pointer arithmetic with %s operator prohibited", dreg,
                      bpf_opcode_sym(insn.code));
    return -EACCES;
  }
  if (int err = check_reg_sane_offset(env, off_reg, ptr.type)) return err;
  if (int err = check_reg_sane_offset(env, ptr, ptr.type)) return err;
  if (op == BPF_SUB && base_type(ptr.type) == PTR_TO_STACK) {
    // The kernel refuses it whatever the value (JITs may not handle it).
    env.verbose_err("R%u subtraction from stack pointer prohibited", dreg);
    return -EACCES;
  }

  bpf_reg_state res = ptr;
  if (tnum_is_const(off_reg.var_off)) {
    const s64 v = (s64)off_reg.var_off.value;
    res.off = (s32)(op == BPF_ADD ? ptr.off + v : ptr.off - v);
  } else {
    // The variable parts add up; the fixed offset stays.
    const rng<u64, s64> r = op == BPF_ADD ? range_add(range64(ptr), range64(off_reg))
                                          : range_sub(range64(ptr), range64(off_reg));
    res.var_off = op == BPF_ADD ? tnum_add(ptr.var_off, off_reg.var_off)
                                : tnum_sub(ptr.var_off, off_reg.var_off);
    res.smin_value = r.smin;
    res.smax_value = r.smax;
    res.umin_value = r.umin;
    res.umax_value = r.umax;
    res.s32_min_value = INT_MIN;
    res.s32_max_value = INT_MAX;
    res.u32_min_value = 0;
    res.u32_max_value = UINT_MAX;
    reg_bounds_sync(res);
  }
  if (int err = check_reg_sane_offset(env, res, ptr.type)) return err;
  dst = res;
  return 0;
}

int check_ptr_alu(bpf_verifier_env &env, const bpf_insn &insn, u8 op, bool alu32,
                  bpf_reg_state &dst, const bpf_reg_state &src) {
  const u32 dreg = insn.dst_reg;
  if (alu32) {
    env.verbose_err("R%u 32-bit pointer arithmetic prohibited", dreg);
    return -EACCES;
  }
  if (is_pointer(dst) && is_pointer(src)) {
    if (op == BPF_SUB && env.opts.allow_ptr_leaks) {
      __mark_reg_unknown(dst);
      return 0;
    }
    env.verbose_err("R%u pointer %s pointer prohibited", dreg, bpf_opcode_sym(insn.code));
    return -EACCES;
  }
  if (is_pointer(src)) {
    if (op == BPF_SUB) {
      env.verbose_err("R%u tried to subtract pointer from scalar", dreg);
      return -EACCES;
    }
    const bpf_reg_state scalar = dst;
    return adjust_ptr_min_max_vals(env, insn, op, dst, src, scalar);
  }
  const bpf_reg_state ptr = dst;
  return adjust_ptr_min_max_vals(env, insn, op, dst, ptr, src);
}

}  // namespace

int check_reg_arg(bpf_verifier_env &env, u32 regno, reg_arg_type t) {
  if (regno >= MAX_BPF_REG) {
    env.verbose_err("R%u is invalid", regno);
    return -EINVAL;
  }
  bpf_reg_state &reg = env.cur->cur().regs[regno];
  // Read or written, the register is in the log's state after the instruction.
  env.scratched_regs |= 1u << regno;
  if (t == SRC_OP) {
    if (reg.type == NOT_INIT) {
      env.verbose_err("R%u !read_ok", regno);
      return -EACCES;
    }
    return 0;
  }
  if (regno == BPF_REG_FP) {
    env.verbose_err("frame pointer is read only");
    return -EACCES;
  }
  if (t == DST_OP) __mark_reg_unknown(reg);
  return 0;
}

int check_alu_op(bpf_verifier_env &env, const bpf_insn &insn, const bpf_opcode_desc &d) {
  const bpf_form_desc &f = bpf_form_of(d);
  const u8 op = BPF_OP(insn.code);
  const bool alu32 = BPF_CLASS(insn.code) == BPF_ALU;
  bpf_func_state &fr = env.cur->cur();

  if (f.flow & bpf_opc::RD_SRC)
    if (int err = check_reg_arg(env, insn.src_reg, SRC_OP)) return err;
  if (f.flow & bpf_opc::RD_DST)
    if (int err = check_reg_arg(env, insn.dst_reg, SRC_OP)) return err;
  if (int err = check_reg_arg(env, insn.dst_reg, DST_OP_NO_MARK)) return err;

  bpf_reg_state &dst = fr.regs[insn.dst_reg];

  if (d.form == bpf_opc::F_ALU_K) {
    if ((op == BPF_DIV || op == BPF_MOD) && insn.imm == 0) {
      env.verbose_err("div by zero");
      return -EINVAL;
    }
    const int size = alu32 ? 32 : 64;
    if ((op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH) && (insn.imm < 0 || insn.imm >= size)) {
      env.verbose_err("invalid shift %d", insn.imm);
      return -EINVAL;
    }
  }
  if (d.form == bpf_opc::F_MOV_K) {
    __mark_reg_unknown(dst);
    __mark_reg_known(dst, alu32 ? (u64)(u32)insn.imm : (u64)(s64)insn.imm);
    return 0;
  }
  if (d.form == bpf_opc::F_MOV_X) {
    bpf_reg_state &src = fr.regs[insn.src_reg];
    if (insn.off == 0 && !alu32) {
      // A full copy. Copies of a non-constant scalar share an id so that a bound learned on
      // one applies to the other (sync_linked_regs()).
      if (src.type == SCALAR_VALUE && !tnum_is_const(src.var_off) && !src.id)
        src.id = env.new_id();
      dst = src;
      return 0;
    }
    if (is_pointer(src)) {
      if (!env.opts.allow_ptr_leaks) {
        if (insn.off)
          env.verbose_err("R%u sign-extension part of pointer", insn.src_reg);
        else
          env.verbose_err("R%u partial copy of pointer", insn.src_reg);
        return -EACCES;
      }
      // A loader allowed to leak pointers gets an unknown scalar.
      __mark_reg_unknown(dst);
      if (alu32) zext_32_to_64(dst);
      return 0;
    }
    // The copy equals its source when the source fits the width kept (no sign extension, or
    // no high half lost): the two are then linked as a full copy is.
    const u64 umax = src.umax_value;
    const bool same_value = insn.off ? umax < (1ull << (insn.off - 1))
                                     : umax <= 0xffffffffull;
    if (same_value && src.type == SCALAR_VALUE && !tnum_is_const(src.var_off) && !src.id)
      src.id = env.new_id();
    dst = src;
    if (!same_value) dst.id = 0;
    if (insn.off) coerce_reg_to_size_sx(dst, insn.off / 8);
    if (alu32) coerce_reg_to_size(dst, 4);
    return 0;
  }

  bpf_reg_state &srcref = fr.regs[insn.src_reg];
  bpf_reg_state src;
  if (d.form == bpf_opc::F_ALU_X) {
    src = srcref;
  } else {
    __mark_reg_unknown(src);
    __mark_reg_known(src, alu32 ? (u64)(u32)insn.imm : (u64)(s64)insn.imm);
  }

  if (d.form == bpf_opc::F_NEG || d.form == bpf_opc::F_END) {
    if (is_pointer(dst)) {
      if (!env.opts.allow_ptr_leaks) {
        env.verbose_err("R%u pointer arithmetic prohibited", insn.dst_reg);
        return -EACCES;
      }
      // A loader allowed to leak pointers gets an unknown scalar.
      __mark_reg_unknown(dst);
      return 0;
    }
    const bool cnst = alu32 && d.form == bpf_opc::F_NEG ? tnum_subreg_is_const(dst.var_off)
                                                        : tnum_is_const(dst.var_off);
    u64 v = dst.var_off.value;
    if (d.form == bpf_opc::F_NEG) {
      if (cnst) {
        __mark_reg_unknown(dst);
        __mark_reg_known(dst, alu32 ? (u64)(u32)(0u - (u32)v) : 0 - v);
      } else {
        mark_unknown_width(dst, alu32);
      }
      return 0;
    }
    // Byte order: to_le on this little-endian machine truncates; to_be and bswap swap.
    const int width = insn.imm;
    const bool swap = BPF_CLASS(insn.code) == BPF_ALU64 || BPF_SRC(insn.code) == BPF_TO_BE;
    if (!swap) {
      if (width < 64) {
        dst.id = 0;
        coerce_reg_to_size(dst, width / 8);
      }
      return 0;
    }
    __mark_reg_unknown(dst);
    if (cnst) {
      __mark_reg_known(dst, bswap(v, width));
    } else if (width < 64) {
      coerce_reg_to_size(dst, width / 8);
    }
    return 0;
  }

  if (is_pointer(dst) || is_pointer(src)) return check_ptr_alu(env, insn, op, alu32, dst, src);

  const bool is_signed = insn.off == 1;  // sdiv/smod
  adjust_scalar_min_max_vals(dst, src, op, alu32, is_signed);
  return 0;
}

}  // namespace umemcg
