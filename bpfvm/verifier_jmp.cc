// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_jmp.cc: conditional jumps: deciding branches on known values, refining the
// ranges of both operands on each side, and NULL checks of _OR_NULL pointers.
//
// Mirrors: kernel/bpf/verifier.c (check_cond_jmp_op, is_branch_taken, is_scalar_branch_taken,
//          regs_refine_cond_op, reg_set_min_max, mark_ptr_or_null_regs,
//          mark_ptr_not_null_reg, reg_not_null, sync_linked_regs)
//          (Linux 6.19)
// Emulation: a refinement that leaves a register with an empty range marks that side of the
//   branch unreachable (no value can take it) instead of reporting a verifier bug. No pointer
//   leaks (verifier.h): a pointer may be compared only with NULL or with a pointer of the same
//   type unless opts.allow_ptr_leaks.
#include <algorithm>

#include "bpfvm/verifier_state.h"

namespace umemcg {

namespace {

// One width's view of a scalar.
struct view {
  u64 umin, umax;
  s64 smin, smax;
  tnum t;
};

view view_of(const bpf_reg_state &r, bool is32) {
  if (is32)
    return {r.u32_min_value, r.u32_max_value, r.s32_min_value, r.s32_max_value,
            tnum_subreg(r.var_off)};
  return {r.umin_value, r.umax_value, r.smin_value, r.smax_value, r.var_off};
}

void store_view(bpf_reg_state &r, const view &v, bool is32) {
  if (is32) {
    r.u32_min_value = (u32)v.umin;
    r.u32_max_value = (u32)v.umax;
    r.s32_min_value = (s32)v.smin;
    r.s32_max_value = (s32)v.smax;
    r.var_off = tnum_with_subreg(r.var_off, v.t);
  } else {
    r.umin_value = v.umin;
    r.umax_value = v.umax;
    r.smin_value = v.smin;
    r.smax_value = v.smax;
    r.var_off = v.t;
  }
}

u8 flip_opcode(u8 op) {  // a op b  <=>  b flip(op) a
  switch (op) {
    case BPF_JGT: return BPF_JLT;
    case BPF_JGE: return BPF_JLE;
    case BPF_JLT: return BPF_JGT;
    case BPF_JLE: return BPF_JGE;
    case BPF_JSGT: return BPF_JSLT;
    case BPF_JSGE: return BPF_JSLE;
    case BPF_JSLT: return BPF_JSGT;
    case BPF_JSLE: return BPF_JSGE;
    default: return op;
  }
}

// The condition that holds on the fall-through side. JSET's negation has no opcode: 0xf0.
constexpr u8 kJsetFalse = 0xf0;
u8 negate_opcode(u8 op) {
  switch (op) {
    case BPF_JEQ: return BPF_JNE;
    case BPF_JNE: return BPF_JEQ;
    case BPF_JGT: return BPF_JLE;
    case BPF_JGE: return BPF_JLT;
    case BPF_JLT: return BPF_JGE;
    case BPF_JLE: return BPF_JGT;
    case BPF_JSGT: return BPF_JSLE;
    case BPF_JSGE: return BPF_JSLT;
    case BPF_JSLT: return BPF_JSGE;
    case BPF_JSLE: return BPF_JSGT;
    case BPF_JSET: return kJsetFalse;
    default: return op;
  }
}

// 1: always taken, 0: never, -1: unknown.
int scalar_branch_taken(const view &a, const view &b, u8 op) {
  switch (op) {
    case BPF_JEQ:
    case BPF_JNE: {
      int eq = -1;
      if (tnum_is_const(a.t) && tnum_is_const(b.t) && a.umin == a.umax && b.umin == b.umax)
        eq = a.t.value == b.t.value;
      else if (a.umin > b.umax || a.umax < b.umin || a.smin > b.smax || a.smax < b.smin ||
               ((a.t.value ^ b.t.value) & ~(a.t.mask | b.t.mask)))
        eq = 0;
      if (eq < 0) return -1;
      return op == BPF_JEQ ? eq : !eq;
    }
    case BPF_JSET:
      if (a.t.value & b.t.value) return 1;
      if (!((a.t.value | a.t.mask) & (b.t.value | b.t.mask))) return 0;
      return -1;
    case kJsetFalse: {
      int r = scalar_branch_taken(a, b, BPF_JSET);
      return r < 0 ? -1 : !r;
    }
    case BPF_JGT:
      if (a.umin > b.umax) return 1;
      if (a.umax <= b.umin) return 0;
      return -1;
    case BPF_JGE:
      if (a.umin >= b.umax) return 1;
      if (a.umax < b.umin) return 0;
      return -1;
    case BPF_JLT:
    case BPF_JLE:
    case BPF_JSLT:
    case BPF_JSLE:
      return scalar_branch_taken(b, a, flip_opcode(op));
    case BPF_JSGT:
      if (a.smin > b.smax) return 1;
      if (a.smax <= b.smin) return 0;
      return -1;
    case BPF_JSGE:
      if (a.smin >= b.smax) return 1;
      if (a.smax < b.smin) return 0;
      return -1;
    default:
      return -1;
  }
}

// Narrows a and b to the values for which `a op b` holds (regs_refine_cond_op).
void refine(view &a, view &b, u8 op) {
  switch (op) {
    case BPF_JEQ: {
      a.umin = b.umin = std::max(a.umin, b.umin);
      a.umax = b.umax = std::min(a.umax, b.umax);
      a.smin = b.smin = std::max(a.smin, b.smin);
      a.smax = b.smax = std::min(a.smax, b.smax);
      a.t = b.t = tnum_intersect(a.t, b.t);
      break;
    }
    case BPF_JNE: {
      // Only a constant on one side can shave a bound of the other.
      auto shave = [](view &x, const view &k) {
        if (!tnum_is_const(k.t)) return;
        const u64 v = k.t.value;
        if (x.umin == v && x.umin < x.umax) x.umin++;
        else if (x.umax == v && x.umin < x.umax) x.umax--;
        if (x.smin == (s64)v && x.smin < x.smax) x.smin++;
        else if (x.smax == (s64)v && x.smin < x.smax) x.smax--;
      };
      shave(a, b);
      shave(b, a);
      break;
    }
    case BPF_JSET:
      // A single-bit mask that is set must be set in a.
      if (tnum_is_const(b.t) && b.t.value && !(b.t.value & (b.t.value - 1)))
        a.t = tnum_or(a.t, b.t);
      break;
    case kJsetFalse:
      if (tnum_is_const(b.t)) a.t = tnum_and(a.t, tnum_const(~b.t.value));
      break;
    // One case per comparison on purpose, unsigned then signed, as regs_refine_cond_op() has them.
    case BPF_JGT:
      a.umin = std::max(a.umin, b.umin + 1);
      b.umax = std::min(b.umax, a.umax - 1);
      break;
    case BPF_JGE:
      a.umin = std::max(a.umin, b.umin);
      b.umax = std::min(b.umax, a.umax);
      break;
    case BPF_JSGT:
      a.smin = std::max(a.smin, b.smin + 1);
      b.smax = std::min(b.smax, a.smax - 1);
      break;
    case BPF_JSGE:
      a.smin = std::max(a.smin, b.smin);
      b.smax = std::min(b.smax, a.smax);
      break;
    case BPF_JLT:
    case BPF_JLE:
    case BPF_JSLT:
    case BPF_JSLE:
      refine(b, a, flip_opcode(op));
      break;
    default:
      break;
  }
}

// Copies the refined reg into every register linked to it (same scalar id).
void sync_linked_regs(bpf_verifier_state &st, const bpf_reg_state &reg) {
  if (reg.type != SCALAR_VALUE || !reg.id) return;
  bpf_for_each_reg(st, [&](bpf_reg_state &r) {
    if (r.type == SCALAR_VALUE && r.id == reg.id) r = reg;
  });
}

// Applies `dst op src` to state st's registers. False if no value satisfies it.
bool reg_set_min_max(bpf_verifier_state &st, u32 dregno, int sregno, const bpf_reg_state &imm,
                     u8 op, bool is32) {
  bpf_func_state &f = st.cur();
  bpf_reg_state &dst = f.regs[dregno];
  bpf_reg_state src_copy = sregno >= 0 ? f.regs[sregno] : imm;
  if (dst.type != SCALAR_VALUE || src_copy.type != SCALAR_VALUE) return true;
  view a = view_of(dst, is32), b = view_of(src_copy, is32);
  refine(a, b, op);
  if (a.umin > a.umax || a.smin > a.smax || b.umin > b.umax || b.smin > b.smax) return false;
  if ((a.t.value & a.t.mask) || (b.t.value & b.t.mask)) return false;
  store_view(dst, a, is32);
  store_view(src_copy, b, is32);
  reg_bounds_sync(dst);
  reg_bounds_sync(src_copy);
  if (!reg_bounds_sane(dst) || !reg_bounds_sane(src_copy)) return false;
  sync_linked_regs(st, dst);
  if (sregno >= 0) {
    f.regs[sregno] = src_copy;
    sync_linked_regs(st, src_copy);
  }
  return true;
}

// Pointer types whose base is never NULL (a bounded offset cannot wrap it to 0). A context or
// stack pointer compared with 0 explores both sides, as in the kernel.
bool reg_not_null(const bpf_reg_state &r) {
  if (type_may_be_null(r.type)) return false;
  if (r.smin_value <= -BPF_MAX_VAR_OFF || r.smax_value >= BPF_MAX_VAR_OFF) return false;
  switch (base_type(r.type)) {
    case PTR_TO_MAP_VALUE:
    case PTR_TO_MAP_KEY:
    case PTR_TO_MEM:
    case CONST_PTR_TO_MAP:
      return true;
    case PTR_TO_BTF_ID:
      return !(r.type & PTR_UNTRUSTED);
    default:
      return false;
  }
}

// A pointer proven non-NULL. A map-in-map lookup's value is the inner map (its template).
void mark_ptr_not_null_reg(bpf_reg_state &r) {
  if (base_type(r.type) == PTR_TO_MAP_VALUE && r.map_ptr && r.map_ptr->inner_map) {
    r.type = CONST_PTR_TO_MAP;
    r.map_ptr = r.map_ptr->inner_map;
    return;
  }
  r.type &= ~PTR_MAYBE_NULL;
}

// After `if (ptr == NULL)`: every copy of the pointer (same id) becomes NULL or non-NULL.
void mark_ptr_or_null_regs(bpf_verifier_env &env, bpf_verifier_state &st, u32 id, bool is_null) {
  u32 ref_obj_id = 0;
  bpf_for_each_reg(st, [&](bpf_reg_state &r) {
    if (!is_pointer(r) || r.id != id || !type_may_be_null(r.type)) return;
    if (is_null) {
      if (r.ref_obj_id) ref_obj_id = r.ref_obj_id;
      mark_reg_known_zero(r);
    } else {
      mark_ptr_not_null_reg(r);
      // Keep the id only where it still links something (a reference's copies use ref_obj_id):
      // a map value with a bpf_spin_lock names its lock by it (reg_may_point_to_spin_lock()).
      if (!(r.type == PTR_TO_MAP_VALUE && r.map_ptr && r.map_ptr->spin_lock_off >= 0)) r.id = 0;
    }
  });
  if (is_null && ref_obj_id) {
    // A NULL result holds no reference.
    auto &refs = st.refs;
    refs.erase(std::remove_if(refs.begin(), refs.end(),
                              [&](const bpf_reference_state &s) { return s.id == ref_obj_id; }),
               refs.end());
  }
  (void)env;
}

}  // namespace

int check_cond_jmp_op(bpf_verifier_env &env, const bpf_insn &insn, const bpf_opcode_desc &d,
                      u32 *insn_idx) {
  const u32 idx = *insn_idx;
  const u8 op = BPF_OP(insn.code);
  const bool is32 = BPF_CLASS(insn.code) == BPF_JMP32;
  const bool is_x = d.form == bpf_opc::F_JCC_X;
  const u32 target = (u32)bpf_jump_target(d, insn, idx);

  if (int err = check_reg_arg(env, insn.dst_reg, SRC_OP)) return err;
  if (is_x)
    if (int err = check_reg_arg(env, insn.src_reg, SRC_OP)) return err;

  bpf_func_state &f = env.cur->cur();
  const bpf_reg_state &dst = f.regs[insn.dst_reg];
  bpf_reg_state imm;
  __mark_reg_unknown(imm);
  __mark_reg_known(imm, is32 ? (u64)(u32)insn.imm : (u64)(s64)insn.imm);
  const bpf_reg_state &src = is_x ? f.regs[insn.src_reg] : imm;

  int pred = -1;
  bool null_check = false;
  u32 null_id = 0;
  if (is_pointer(dst) || is_pointer(src)) {
    const bpf_reg_state &ptr = is_pointer(dst) ? dst : src;
    const bpf_reg_state &other = is_pointer(dst) ? src : dst;
    if (!is32 && (op == BPF_JEQ || op == BPF_JNE) && register_is_null(other)) {
      if (type_may_be_null(ptr.type)) {
        null_check = true;
        null_id = ptr.id;
      } else if (reg_not_null(ptr)) {
        pred = op == BPF_JNE;
      }
    } else if (!env.opts.allow_ptr_leaks &&
               !(is_pointer(dst) && is_pointer(src) && base_type(dst.type) == base_type(src.type))) {
      env.verbose_err("R%u pointer comparison prohibited", insn.dst_reg);
      return -EACCES;
    }
  } else {
    pred = scalar_branch_taken(view_of(dst, is32), view_of(src, is32), op);
  }

  if (pred == 1) {
    *insn_idx = target;
    return 0;
  }
  if (pred == 0) {
    *insn_idx = idx + 1;
    return 0;
  }

  bpf_verifier_state *other = push_stack(env, target, idx);
  if (!other) return -E2BIG;
  if (null_check) {
    // JEQ: the jump side sees NULL. JNE: the fall-through side does.
    mark_ptr_or_null_regs(env, *other, null_id, op == BPF_JEQ);
    mark_ptr_or_null_regs(env, *env.cur, null_id, op != BPF_JEQ);
  } else if (!is_pointer(dst) && !is_pointer(src)) {
    const int sregno = is_x ? insn.src_reg : -1;
    const bool taken_ok = reg_set_min_max(*other, insn.dst_reg, sregno, imm, op, is32);
    const bool fall_ok = reg_set_min_max(*env.cur, insn.dst_reg, sregno, imm, negate_opcode(op), is32);
    if (!taken_ok) drop_pushed_state(env);
    if (!fall_ok) {
      // Only the jump side is possible: continue there.
      if (!taken_ok) {
        env.verbose_err("verifier bug: both sides of the branch at insn %u are impossible", idx);
        return -EFAULT;
      }
      pop_into_cur(env);
      *insn_idx = env.cur->insn_idx;
      return 0;
    }
  }
  *insn_idx = idx + 1;
  return 0;
}

}  // namespace umemcg
