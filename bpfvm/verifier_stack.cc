// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_stack.cc: stack accesses: bounds, register spills and fills, per-byte slot
// states, variable-offset reads and writes, and helper (indirect) stack accesses.
//
// Mirrors: kernel/bpf/verifier.c (check_stack_access_within_bounds,
//          check_stack_write_fixed_off, check_stack_write_var_off, check_stack_read_fixed_off,
//          check_stack_read_var_off, check_stack_range_initialized, grow_stack_state,
//          save_register_state) (Linux 6.19)
// Emulation: reading an uninitialised stack byte is an error unless opts.allow_uninit_stack
//   (the kernel allows it to CAP_PERFMON loaders); a variable-offset write that may hit an
//   uninitialised byte is rejected for the same reason. A partial overwrite of a spilled
//   pointer is rejected unless opts.allow_ptr_leaks.
#include <algorithm>

#include "bpfvm/verifier_mem_internal.h"
#include "bpfvm/verifier_state.h"

namespace umemcg {

namespace {

int byte_idx(s64 off) { return (int)(((off % BPF_REG_SIZE) + BPF_REG_SIZE) % BPF_REG_SIZE); }

bool slot_is_spilled_ptr(const bpf_stack_state &s) {
  return s.slot_type[0] == STACK_SPILL && s.spilled_ptr.type != SCALAR_VALUE;
}

// The spilled register's bytes become plain scalar bytes (the kernel's __mark_reg_unknown of
// a broken spill); ZERO stays ZERO.
void scrub_spill(bpf_stack_state &s) {
  if (s.slot_type[0] != STACK_SPILL) return;
  for (u8 &t : s.slot_type)
    if (t == STACK_SPILL) t = STACK_MISC;
}

void note_depth(bpf_verifier_env &env, const bpf_func_state &f, s64 lowest_off) {
  bpf_subprog_info &sp = env.subprogs[f.subprogno];
  sp.stack_depth = std::max<u32>(sp.stack_depth, (u32)-lowest_off);
}

}  // namespace

bpf_stack_state *stack_slot(bpf_func_state &f, s64 off, bool grow) {
  if (off >= 0 || off < -MAX_BPF_STACK) return nullptr;
  const size_t spi = (size_t)((-off - 1) / BPF_REG_SIZE);
  if (spi >= f.stack.size()) {
    if (!grow) return nullptr;
    f.stack.resize(spi + 1);
  }
  return &f.stack[spi];
}

int grow_stack_state(bpf_verifier_env &env, bpf_func_state &f, s64 lowest_off) {
  if (lowest_off < -MAX_BPF_STACK) return -EACCES;
  if (lowest_off < 0) {
    stack_slot(f, lowest_off, true);
    note_depth(env, f, lowest_off);
  }
  return 0;
}

int check_stack_access_within_bounds(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg,
                                     s32 off, int size, bpf_access_type t,
                                     s64 *min_off, s64 *max_off) {
  // A helper's access is a read or a write as its argument says (the kernel's
  // check_stack_range_initialized() passes the helper's access type since Linux 6.14).
  const char *extra = t == BPF_READ ? " read from" : " write to";
  if (tnum_is_const(reg.var_off)) {
    *min_off = (s64)reg.var_off.value + reg.off + off;
    *max_off = *min_off + size;
  } else {
    if (reg.smax_value >= BPF_MAX_VAR_OFF || reg.smin_value <= -BPF_MAX_VAR_OFF) {
      env.verbose_err("invalid unbounded variable-offset%s stack R%u", extra, regno);
      return -EACCES;
    }
    *min_off = reg.smin_value + reg.off + off;
    *max_off = reg.smax_value + reg.off + off + size;
  }
  if (*min_off < -MAX_BPF_STACK || *max_off > 0 || (size == 0 && *min_off >= 0)) {
    if (tnum_is_const(reg.var_off))
      env.verbose_err("invalid%s stack R%u off=%lld size=%d", extra, regno,
                      (long long)((s64)reg.var_off.value + reg.off + off), size);
    else
      env.verbose_err("invalid variable-offset%s stack R%u var_off=%s off=%d size=%d", extra,
                      regno, tnum_str(reg.var_off).c_str(), off, size);
    return -EACCES;
  }
  return 0;
}

// check_fastcall_stack_contract(): an access below a subprogram's fastcall region's top by an
// instruction outside the patterns keeps every pattern of that subprogram.
void check_fastcall_stack_contract(bpf_verifier_env &env, const bpf_func_state &f, s64 off) {
  bpf_subprog_info &sp = env.subprogs[f.subprogno];
  const u32 idx = env.cur->insn_idx;
  if (sp.fastcall_stack_off <= off || env.aux[idx].fastcall_pattern) return;
  sp.fastcall_stack_off = INT16_MIN;
  for (u32 i = sp.start; i < sp.end; i++) {
    env.aux[i].fastcall_spills_num = 0;
    env.aux[i].fastcall_pattern = false;
  }
}

int check_stack_write(bpf_verifier_env &env, bpf_func_state &f, u32 regno, s64 min_off,
                      s64 max_off, int size, const bpf_reg_state &val, bool var_off) {
  check_fastcall_stack_contract(env, f, min_off);
  if (int err = grow_stack_state(env, f, min_off)) return err;
  const bool leaks_ok = env.opts.allow_ptr_leaks;
  if (!var_off) {
    bpf_stack_state *s = stack_slot(f, min_off, true);
    const int idx = byte_idx(min_off);
    if (is_pointer(val) && size != BPF_REG_SIZE) {
      env.verbose_err("invalid size of register spill");
      return -EACCES;
    }
    if (slot_is_spilled_ptr(*s) && size != BPF_REG_SIZE && !leaks_ok) {
      env.verbose_err("attempt to corrupt spilled pointer on stack");
      return -EACCES;
    }
    const bool zero = register_is_null(val);
    if (idx == 0) {
      // A spill, at any size for a scalar (a register, or BPF_ST's immediate): the register's
      // state is kept (save_register_state). A narrower spill covers the low-addressed bytes;
      // the rest of the slot keeps its known zeros and uninitialised bytes, other bytes become
      // scalar bytes (mark_stack_slot_misc()).
      s->spilled_ptr = val;
      for (int i = 0; i < BPF_REG_SIZE; i++) {
        if (i < size) s->slot_type[i] = STACK_SPILL;
        else if (s->slot_type[i] != STACK_ZERO && s->slot_type[i] != STACK_INVALID)
          s->slot_type[i] = STACK_MISC;
      }
    } else {
      scrub_spill(*s);
      for (int i = idx; i < idx + size; i++) s->slot_type[i] = zero ? STACK_ZERO : STACK_MISC;
    }
    env.scratched_stack |= 1ull << ((-min_off - 1) / BPF_REG_SIZE);
    return 0;
  }
  // Variable offset: any byte in [min_off, max_off) may be written.
  if (is_pointer(val)) {
    env.verbose_err("spilled ptr in range of var-offset stack write; insn %u, off: %lld",
                    env.cur->insn_idx, (long long)min_off);
    return -EINVAL;
  }
  const bool zero = register_is_null(val);
  for (s64 o = min_off; o < max_off; o++) {
    bpf_stack_state *s = stack_slot(f, o, true);
    const int i = byte_idx(o);
    if (-o - 1 < 64 * BPF_REG_SIZE) env.scratched_stack |= 1ull << ((-o - 1) / BPF_REG_SIZE);
    if (slot_is_spilled_ptr(*s) && !leaks_ok) {
      env.verbose_err("attempt to corrupt spilled pointer on stack");
      return -EACCES;
    }
    if (s->slot_type[i] == STACK_INVALID && !env.opts.allow_uninit_stack) {
      env.verbose_err("uninit stack in range of var-offset write prohibited for !root; insn %u, off: %lld",
                      env.cur->insn_idx, (long long)o);
      return -EINVAL;
    }
    scrub_spill(*s);
    if (!(zero && s->slot_type[i] == STACK_ZERO)) s->slot_type[i] = STACK_MISC;
  }
  (void)regno;
  return 0;
}

int check_stack_read(bpf_verifier_env &env, bpf_func_state &f, u32 regno, const bpf_reg_state &ptr,
                     s64 min_off, s64 max_off, int size, bpf_reg_state *out, bool sign_ext) {
  check_fastcall_stack_contract(env, f, min_off);
  const bool allow_uninit = env.opts.allow_uninit_stack;
  if (tnum_is_const(ptr.var_off)) {
    env.scratched_stack |= 1ull << ((-min_off - 1) / BPF_REG_SIZE);
    bpf_stack_state *s = stack_slot(f, min_off, false);
    const int idx = byte_idx(min_off);
    if (s && s->slot_type[idx] == STACK_SPILL) {
      const bpf_reg_state &sp = s->spilled_ptr;
      int spill_size = 0;
      while (spill_size < BPF_REG_SIZE && s->slot_type[spill_size] == STACK_SPILL) spill_size++;
      if (is_pointer(sp)) {
        if (size != BPF_REG_SIZE || idx != 0) {
          // Refused for every loader, ptr leaks allowed or not.
          env.verbose_err("invalid size of register fill");
          return -EACCES;
        }
        *out = sp;
        return 0;
      }
      if (idx == 0 && size <= spill_size) {
        *out = sp;
        if (size < BPF_REG_SIZE) {
          // A narrowing fill keeps the link to the spilled register when the value fits.
          if (sp.umax_value >> 1 >> (size * 8 - 1)) out->id = 0;
          if (sign_ext) {
            out->id = 0;
            coerce_reg_to_size_sx(*out, size);
          } else {
            coerce_reg_to_size(*out, size);
          }
        }
        return 0;
      }
      // Other bytes of a spilled scalar: a known zero if every byte read is a zero (spilled
      // constant 0 or STACK_ZERO), unknown otherwise.
      int spill_cnt = 0, zero_cnt = 0;
      for (int i = 0; i < size; i++) {
        const u8 t = s->slot_type[idx + i];
        if (t == STACK_SPILL) spill_cnt++;
        else if (t == STACK_ZERO) zero_cnt++;
        else if (t == STACK_INVALID && !allow_uninit) {
          env.verbose_err("invalid read from stack off %lld+%d size %d", (long long)min_off, i,
                          size);
          return -EACCES;
        }
      }
      if (zero_cnt == size || (spill_cnt == size && register_is_null(sp))) {
        __mark_reg_known(*out, 0);
        return 0;
      }
      __mark_reg_unknown(*out);
      if (sign_ext) coerce_reg_to_size_sx(*out, size);
      else coerce_reg_to_size(*out, size);
      return 0;
    }
    bool all_zero = true;
    for (int i = 0; i < size; i++) {
      const u8 t = s ? s->slot_type[idx + i] : (u8)STACK_INVALID;
      if (t == STACK_INVALID && !allow_uninit) {
        env.verbose_err("invalid read from stack off %lld+%d size %d", (long long)min_off, i, size);
        return -EACCES;
      }
      if (t != STACK_ZERO) all_zero = false;
    }
    __mark_reg_unknown(*out);
    if (all_zero) __mark_reg_known(*out, 0);
    else if (sign_ext) coerce_reg_to_size_sx(*out, size);
    else coerce_reg_to_size(*out, size);
    return 0;
  }
  for (s64 o = min_off; o < max_off; o++) {
    bpf_stack_state *s = stack_slot(f, o, false);
    const u8 t = s ? s->slot_type[byte_idx(o)] : (u8)STACK_INVALID;
    if (-o - 1 < 64 * BPF_REG_SIZE) env.scratched_stack |= 1ull << ((-o - 1) / BPF_REG_SIZE);
    if ((t == STACK_INVALID && !allow_uninit) ||
        (s && slot_is_spilled_ptr(*s) && !env.opts.allow_ptr_leaks)) {
      env.verbose_err("invalid read from stack R%u var_off %s+%lld size %d", regno,
                      tnum_str(ptr.var_off).c_str(), (long long)(o - min_off), size);
      return -EACCES;
    }
  }
  __mark_reg_unknown(*out);
  if (sign_ext) coerce_reg_to_size_sx(*out, size);
  else coerce_reg_to_size(*out, size);
  return 0;
}

int check_stack_helper_access(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg,
                              int size, bpf_access_type t) {
  s64 min_off, max_off;
  if (int err = check_stack_access_within_bounds(env, regno, reg, 0, size, t, &min_off,
                                                 &max_off))
    return err;
  bpf_func_state &f = env.cur->frame[reg.frameno];
  check_fastcall_stack_contract(env, f, min_off);
  if (int err = grow_stack_state(env, f, min_off)) return err;
  const bool var = !tnum_is_const(reg.var_off);
  for (s64 o = min_off; o < max_off; o++) {
    bpf_stack_state *s = stack_slot(f, o, true);
    const u8 ty = s->slot_type[byte_idx(o)];
    if (t == BPF_WRITE && !var) {
      if (slot_is_spilled_ptr(*s) && !env.opts.allow_ptr_leaks && size < BPF_REG_SIZE) {
        env.verbose_err("attempt to corrupt spilled pointer on stack");
        return -EACCES;
      }
      continue;
    }
    if (ty == STACK_INVALID && !env.opts.allow_uninit_stack) {
      if (var)
        env.verbose_err("invalid read from stack R%u var_off %s+%lld size %d", regno,
                        tnum_str(reg.var_off).c_str(), (long long)(o - min_off), size);
      else
        env.verbose_err("invalid read from stack R%u off %lld+%lld size %d", regno,
                        (long long)min_off, (long long)(o - min_off), size);
      return -EACCES;
    }
    if (t == BPF_READ && s->slot_type[0] == STACK_SPILL && is_pointer(s->spilled_ptr) &&
        !env.opts.allow_ptr_leaks) {
      env.verbose_err("R%u leaks addr into helper function", regno);
      return -EACCES;
    }
  }
  if (t == BPF_WRITE) {
    // The helper writes unknown bytes (MEM_UNINIT): spills in the range are destroyed. The
    // slots are in the log's state after the call (the kernel writes them byte by byte).
    for (s64 o = min_off; o < max_off; o++) {
      bpf_stack_state *s = stack_slot(f, o, true);
      env.scratched_stack |= 1ull << ((-o - 1) / BPF_REG_SIZE);
      if (s->slot_type[0] == STACK_SPILL) {
        for (u8 &b : s->slot_type) b = STACK_MISC;
      }
      s->slot_type[byte_idx(o)] = STACK_MISC;
    }
  }
  return 0;
}

}  // namespace umemcg
