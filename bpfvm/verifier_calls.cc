// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_calls.cc: helper calls (checked against helper_proto.h), kfunc calls (checked
// against the kfunc registry's signatures and KF_* flags), bpf-to-bpf calls, the callbacks of
// bpf_loop, bpf_for_each_map_elem and bpf_find_vma (walked again from the call after each exit
// until the iterations converge) and async callbacks (bpf_wq_set_callback_impl,
// bpf_timer_set_callback: verified on a path of their own).
//
// Mirrors: kernel/bpf/verifier.c (check_helper_call, check_func_arg, check_reg_type,
//          check_mem_size_reg, check_map_func_compatibility, check_kfunc_call,
//          check_kfunc_args, check_func_call, prepare_func_exit, process_spin_lock,
//          set_loop_callback_state, set_map_elem_callback_state, set_find_vma_callback_state,
//          map_set_for_each_callback_args, check_map_field_pointer, process_wq_func,
//          process_timer_func, push_callback_call, set_timer_callback_state) (Linux 6.19)
// Emulation: kfunc pointer arguments must be trusted (or RCU with KF_RCU) whether or not the
//   kfunc says KF_TRUSTED_ARGS, and kfunc struct results are trusted, as in the 7.0 window
//   (see ../shared/reference/kernel-semantics.md 5.1). The only kfunc callback arguments are
//   the bpf_wq ones (async callbacks), found by the argument kind rather than by the kfunc's
//   BTF id.
//   bpf_timer callbacks are async callbacks too, not sleepable.
#include <algorithm>
#include <climits>
#include <cstring>

#include "bpfvm/kfunc.h"
#include "bpfvm/prog_type.h"
#include "bpfvm/verifier_state.h"
#include "shim/errno.h"
#include "shim/smp.h"

namespace umemcg {

namespace {

struct call_meta {
  const bpf_verifier_map *map = nullptr;
  u32 map_idx = 0;
  u64 mem_size = 0;
  u32 release_ref = 0;
  int subprogno = -1;
  bpf_reg_state callback_ctx;
  bool has_callback_ctx = false;
  bool spin_lock_arg = false;
  u32 spin_lock_id = 0;
  // The lookup's key, when it is a known constant (get_constant_map_key()); -1 otherwise.
  s64 const_map_key = -1;
  // The largest value of the last ARG_CONST_SIZE(_OR_ZERO) argument (msize_max_value).
  u64 msize_max_value = 0;
};

std::string helper_name(u32 func_id) { return std::string("bpf_") + bpf_func_id_name(func_id); }

void clear_caller_saved_regs(bpf_verifier_env &env) {
  bpf_func_state &f = env.cur->cur();
  for (int r = BPF_REG_1; r <= BPF_REG_5; r++) {
    mark_reg_not_init(f.regs[r]);
    env.scratched_regs |= 1u << r;
  }
}

// For a helper's memory argument: reg regno-1 points to memory, regno holds its size.
int check_mem_size_reg(bpf_verifier_env &env, u32 size_regno, bool zero_size_allowed,
                       bpf_access_type t) {
  const bpf_reg_state &reg = env.cur->cur().regs[size_regno];
  if (reg.type != SCALAR_VALUE) {
    env.verbose_err("R%u is not a scalar", size_regno);
    return -EACCES;
  }
  if (reg.smin_value < 0) {
    env.verbose_err("R%u min value is negative, either use unsigned or 'var &= const'", size_regno);
    return -EACCES;
  }
  if (reg.umin_value == 0 && !zero_size_allowed) {
    env.verbose_err("R%u invalid zero-sized read: u64=[%llu,%llu]", size_regno,
                    (unsigned long long)reg.umin_value, (unsigned long long)reg.umax_value);
    return -EACCES;
  }
  if (reg.umax_value >= (u64)BPF_MAX_VAR_SIZ) {
    env.verbose_err("R%u unbounded memory access, use 'var &= const' or 'if (var < const)'",
                    size_regno);
    return -EACCES;
  }
  const bpf_reg_state &mem = env.cur->cur().regs[size_regno - 1];
  // A zero-byte access through NULL is allowed whatever the pointer type; through a pointer,
  // its bounds are still checked.
  if (register_is_null(mem) && reg.umax_value == 0) return 0;
  return check_helper_mem_access(env, size_regno - 1, reg.umax_value, t, zero_size_allowed);
}

int type_mismatch(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg,
                  const char *expected) {
  env.verbose_err("R%u type=%s expected=%s", regno, reg_type_name(reg.type).c_str(), expected);
  return -EACCES;
}

bool is_mem_like(const bpf_reg_state &reg) {
  if (type_may_be_null(reg.type)) return false;
  switch (base_type(reg.type)) {
    case PTR_TO_STACK:
    case PTR_TO_MAP_VALUE:
    case PTR_TO_MAP_KEY:
    case PTR_TO_MEM:
      return true;
    default:
      return false;
  }
}

// The kernel's mem_types: what a helper's memory, map-key and map-value arguments accept. No
// context pointer, not even a SYSCALL program's (its bytes reach a helper copied to the stack
// first); no packet or buffer pointers exist here. The message lists the kernel's whole set.
bool is_helper_mem_type(const bpf_reg_state &reg) { return is_mem_like(reg); }
constexpr const char *kMemTypesExpected =
    "fp, pkt, pkt_meta, map_key, map_value, mem, ringbuf_mem, buf, trusted_ptr_";

// Does a handle to `have` at offset `off` point to a `want`? Follows embedded first members and
// fields (btf_struct_ids_match()).
bool btf_struct_ids_match(const bpf_verifier_env &env, const char *have, s32 off,
                          const std::string &want) {
  for (int depth = 0; depth < 8 && have; depth++) {
    if (off == 0 && want == have) return true;
    const bpf_btf_struct *st = env.opts.types ? env.opts.types->find_struct(have) : nullptr;
    if (!st) return false;
    const bpf_ctx_field *emb = nullptr;
    for (const bpf_ctx_field &f : st->fields)
      if (f.embedded && off >= (s32)f.off && off < (s32)(f.off + f.size)) emb = &f;
    if (!emb) return false;
    off -= (s32)emb->off;
    have = emb->btf_name.c_str();
  }
  return false;
}

// check_map_field_pointer(): regno points to the special field `what` of its map value, at
// field_off (-1: the value has none).
int check_map_field_pointer(bpf_verifier_env &env, u32 regno, const char *what, s32 field_off) {
  const bpf_reg_state &reg = env.cur->cur().regs[regno];
  if (!tnum_is_const(reg.var_off)) {
    env.verbose_err("R%u doesn't have constant offset. %s has to be at the constant offset", regno,
                    what);
    return -EINVAL;
  }
  if (field_off < 0) {
    env.verbose_err("map '%s' has no valid %s", reg.map_ptr->name.c_str(), what);
    return -EINVAL;
  }
  const s64 off = (s64)reg.var_off.value + reg.off;
  if (off != field_off) {
    env.verbose_err("off %lld doesn't point to 'struct %s' that is at %d", (long long)off, what,
                    field_off);
    return -EINVAL;
  }
  return 0;
}

// push_callback_call() of an async callback with set_timer_callback_state(): the callback's path
// is queued with r1 = the map, r2 = a key of it, r3 = a value of it (the one holding the
// bpf_wq/bpf_timer), r4 and r5 uninitialised. The caller continues after the call.
int push_async_callback(bpf_verifier_env &env, u32 subprog, u32 insn_idx,
                        const bpf_verifier_map *map, u32 map_idx, bool sleepable) {
  if (subprog >= env.subprogs.size() || !map) {
    env.verbose_err("verifier internal error: async callback without a subprogram or map");
    return -EFAULT;
  }
  bpf_verifier_state *st = push_async_cb(env, subprog, insn_idx, sleepable);
  if (!st) return -E2BIG;
  bpf_func_state &callee = st->frame[0];
  auto map_reg = [&](bpf_reg_state &r, u32 type) {
    mark_reg_ptr(r, type);
    r.map_ptr = map;
    r.map_idx = map_idx;
  };
  map_reg(callee.regs[BPF_REG_1], CONST_PTR_TO_MAP);
  map_reg(callee.regs[BPF_REG_2], PTR_TO_MAP_KEY);
  map_reg(callee.regs[BPF_REG_3], PTR_TO_MAP_VALUE);
  return 0;
}

// ARG_CONST_MAP_PTR: the map the later map key/value arguments are checked against.
int check_map_ptr_arg(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg,
                      const bpf_func_proto &fn, call_meta &meta) {
  if (reg.type != CONST_PTR_TO_MAP) return type_mismatch(env, regno, reg, "map_ptr");
  // bpf_timer_init(timer, map): the map holding the timer. Emulation: no map-in-map, so
  // every map_uid is 0.
  if (meta.map && meta.map != reg.map_ptr) {
    env.verbose_err("timer pointer in R1 map_uid=0 doesn't match map pointer in R%u map_uid=0",
                    regno);
    return -EINVAL;
  }
  meta.map = reg.map_ptr;
  meta.map_idx = reg.map_idx;
  // bpf_for_each_map_elem: the kernel checks the map after its callback is queued (the map
  // compatibility check comes last in check_helper_call()), and only the iterable maps it
  // lets through get there: push_sync_callback() refuses the others.
  if (fn.func_id == BPF_FUNC_for_each_map_elem) return 0;
  if (!bpf_map_func_compatible(reg.map_ptr->map_type, fn.func_id)) {
    env.verbose_err("cannot pass map_type %u into func %s#%u", reg.map_ptr->map_type, fn.name,
                    fn.func_id);
    return -EINVAL;
  }
  return 0;
}

// ARG_PTR_TO_MAP_KEY, ARG_PTR_TO_MAP_VALUE: memory of the map's key or value size.
int check_map_kv_arg(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg, u32 base,
                     const call_meta &meta) {
  if (!is_helper_mem_type(reg)) return type_mismatch(env, regno, reg, kMemTypesExpected);
  if (!meta.map) {
    env.verbose_err("invalid map_ptr to access map->%s", base == ARG_PTR_TO_MAP_KEY ? "key" : "value");
    return -EACCES;
  }
  const u32 sz = base == ARG_PTR_TO_MAP_KEY ? meta.map->key_size : meta.map->value_size;
  return check_helper_mem_access(env, regno, sz, BPF_READ, false);
}

// ARG_PTR_TO_MEM | MEM_RINGBUF: a ring buffer record, released by the call.
int check_ringbuf_mem_arg(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg,
                          call_meta &meta) {
  if (reg.type != (PTR_TO_MEM | MEM_RINGBUF)) return type_mismatch(env, regno, reg, "ringbuf_mem");
  if (reg.off || !tnum_equals_const(reg.var_off, 0)) {
    env.verbose_err("R%u must have zero offset when passed to release func or trusted arg to kfunc", regno);
    return -EACCES;
  }
  if (!reg.ref_obj_id) {
    env.verbose_err("R%u must be referenced when passed to release function", regno);
    return -EINVAL;
  }
  meta.release_ref = reg.ref_obj_id;
  return 0;
}

// ARG_PTR_TO_MEM: memory whose size is the next argument's, or the prototype's fixed size.
int check_mem_arg(bpf_verifier_env &env, u32 arg, u32 arg_type, const bpf_func_proto &fn,
                  call_meta &meta) {
  const u32 regno = arg + 1;
  const bpf_reg_state &reg = env.cur->cur().regs[regno];
  if (arg_type & MEM_RINGBUF) return check_ringbuf_mem_arg(env, regno, reg, meta);
  if (!is_helper_mem_type(reg)) return type_mismatch(env, regno, reg, kMemTypesExpected);
  if (!(arg_type & MEM_FIXED_SIZE)) return 0;  // the size argument checks the access
  // No size argument: the prototype's size, checked here.
  const u32 size = fn.arg_size[arg];
  if (int err = check_helper_mem_access(env, regno, size,
                                        (arg_type & MEM_WRITE) ? BPF_WRITE : BPF_READ, false))
    return err;
  if (arg_type & MEM_ALIGNED)
    return check_ptr_alignment(env, env.cur->cur().regs[regno], 0, (int)size, true);
  return 0;
}

// process_spin_lock(): the map value's bpf_spin_lock, at its constant offset.
int process_spin_lock(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg,
                      call_meta &meta) {
  if (reg.type != PTR_TO_MAP_VALUE) return type_mismatch(env, regno, reg, "map_value");
  if (!tnum_is_const(reg.var_off)) {
    env.verbose_err("R%u doesn't have constant offset. bpf_spin_lock has to be at the constant offset",
                    regno);
    return -EINVAL;
  }
  if (reg.map_ptr->spin_lock_off < 0) {
    env.verbose_err("map '%s' has no valid bpf_spin_lock", reg.map_ptr->name.c_str());
    return -EINVAL;
  }
  const s64 off = (s64)reg.var_off.value + reg.off;
  if (off != reg.map_ptr->spin_lock_off) {
    env.verbose_err("off %lld doesn't point to 'struct bpf_spin_lock' that is at %d",
                    (long long)off, reg.map_ptr->spin_lock_off);
    return -EINVAL;
  }
  meta.spin_lock_arg = true;
  meta.map = reg.map_ptr;
  meta.spin_lock_id = reg.id;
  return 0;
}

// ARG_PTR_TO_BTF_ID: a trusted (or referenced) pointer to the prototype's struct.
int check_btf_id_arg(bpf_verifier_env &env, u32 arg, const bpf_reg_state &reg,
                     const bpf_func_proto &fn) {
  const u32 regno = arg + 1;
  const char *want = fn.arg_btf_name[arg];
  // The kernel's btf_ptr_types: plain, trusted and RCU handles.
  if (base_type(reg.type) != PTR_TO_BTF_ID)
    return type_mismatch(env, regno, reg, "ptr_, trusted_ptr_, rcu_ptr_");
  if (type_may_be_null(reg.type)) {
    env.verbose_err("Possibly NULL pointer passed to helper arg%u", regno);
    return -EACCES;
  }
  if (!((reg.type & (PTR_TRUSTED | MEM_RCU)) || reg.ref_obj_id) || (reg.type & PTR_UNTRUSTED)) {
    env.verbose_err("R%u must be referenced or trusted", regno);
    return -EACCES;
  }
  if (!want || !btf_struct_ids_match(env, reg.btf_name, reg.off, want)) {
    env.verbose_err("R%u is of type %s but %s is expected", regno,
                    reg.btf_name ? reg.btf_name : "?", want ? want : "?");
    return -EACCES;
  }
  return 0;
}

// process_timer_func(): the map value's bpf_timer.
int process_timer_func(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg,
                       call_meta &meta) {
  if (reg.type != PTR_TO_MAP_VALUE) return type_mismatch(env, regno, reg, "map_value");
  if (int err = check_map_field_pointer(env, regno, "bpf_timer", reg.map_ptr->timer_off))
    return err;
  meta.map = reg.map_ptr;
  meta.map_idx = reg.map_idx;
  return 0;
}

// get_constant_map_key(): the value of the key_size bytes the stack pointer `key` points to
// when they are known: all STACK_ZERO, or a spilled constant scalar of exactly key_size bytes.
// -1 otherwise.
// Emulation: the kernel marks a spilled constant precise from here (mark_chain_precision);
//   precision here is static, and the key's slots are precise only where the call's r2 is
//   fp plus a constant set just before it (bpf_static_reg_value(), compute_precise_registers()).
//   A spilled constant key reached otherwise (a pointer into a caller's frame, a key address
//   set on several paths) is not used: the result stays maybe-NULL.
s64 get_constant_map_key(bpf_verifier_env &env, const bpf_reg_state &key, u32 key_size) {
  if (key.type != PTR_TO_STACK || !tnum_is_const(key.var_off) || key_size == 0 ||
      key_size > BPF_REG_SIZE)
    return -1;
  const s64 stack_off = key.off + (s64)key.var_off.value;
  if (stack_off >= 0) return -1;
  bpf_func_state &f = env.cur->frame[key.frameno];
  const size_t spi = (size_t)((-stack_off - 1) / BPF_REG_SIZE);
  if (spi >= f.stack.size()) return -1;
  const bpf_stack_state &s = f.stack[spi];
  // The key's first byte in the slot; the key reaches toward the slot's top.
  const int idx = (int)(stack_off + (s64)(spi + 1) * BPF_REG_SIZE);
  u32 zero_size = 0;
  for (int i = idx; i < BPF_REG_SIZE && s.slot_type[i] == STACK_ZERO; i++) zero_size++;
  if (zero_size >= key_size) return 0;
  if (s.slot_type[0] != STACK_SPILL || s.spilled_ptr.type != SCALAR_VALUE) return -1;
  u32 spill_size = 0;
  for (int i = idx; i < BPF_REG_SIZE && s.slot_type[i] == STACK_SPILL; i++) spill_size++;
  if (spill_size != key_size || !tnum_is_const(s.spilled_ptr.var_off)) return -1;
  const bpf_static_reg at = bpf_static_reg_value(env, env.cur->insn_idx, BPF_REG_2);
  if (key.frameno != env.cur->curframe() || at.kind != bpf_static_reg::fp_plus ||
      at.off != stack_off)
    return -1;
  return (s64)s.spilled_ptr.var_off.value;
}

// check_func_arg(): helper argument @arg (register arg + 1) against its prototype's type;
// what later arguments and the call need goes into @meta.
int check_func_arg(bpf_verifier_env &env, u32 arg, u32 arg_type, const bpf_func_proto &fn,
                   call_meta &meta) {
  const u32 regno = arg + 1;
  const u32 base = base_type(arg_type);
  if (base == ARG_DONTCARE) return 0;
  if (int err = check_reg_arg(env, regno, SRC_OP)) return err;
  bpf_reg_state &reg = env.cur->cur().regs[regno];

  if (base == ARG_ANYTHING) {
    if (is_pointer(reg) && !env.opts.allow_ptr_leaks) {
      env.verbose_err("R%u leaks addr into helper function", regno);
      return -EACCES;
    }
    return 0;
  }
  if ((arg_type & PTR_MAYBE_NULL) && register_is_null(reg)) {
    if (base == ARG_PTR_TO_STACK) meta.callback_ctx = reg, meta.has_callback_ctx = true;
    return 0;
  }

  switch (base) {
    case ARG_CONST_MAP_PTR:
      return check_map_ptr_arg(env, regno, reg, fn, meta);
    case ARG_PTR_TO_MAP_KEY:
      if (int err = check_map_kv_arg(env, regno, reg, base, meta)) return err;
      if (can_elide_value_nullness(*meta.map))
        meta.const_map_key = get_constant_map_key(env, reg, meta.map->key_size);
      return 0;
    case ARG_PTR_TO_MAP_VALUE:
      return check_map_kv_arg(env, regno, reg, base, meta);
    case ARG_PTR_TO_MEM:
      return check_mem_arg(env, arg, arg_type, fn, meta);
    case ARG_CONST_SIZE:
    case ARG_CONST_SIZE_OR_ZERO: {
      const u32 prev = fn.arg_type[arg - 1];
      meta.msize_max_value = reg.umax_value;
      return check_mem_size_reg(env, regno, base == ARG_CONST_SIZE_OR_ZERO,
                                (prev & MEM_UNINIT) ? BPF_WRITE : BPF_READ);
    }
    case ARG_CONST_ALLOC_SIZE_OR_ZERO:
      if (reg.type != SCALAR_VALUE || !tnum_is_const(reg.var_off)) {
        env.verbose_err("R%u is not a known constant'", regno);
        return -EACCES;
      }
      meta.mem_size = reg.var_off.value;
      return 0;
    case ARG_PTR_TO_CTX:
      if (reg.type != PTR_TO_CTX) return type_mismatch(env, regno, reg, "ctx");
      if (reg.off < 0) {
        env.verbose_err("negative offset ctx ptr R%u off=%d disallowed", regno, reg.off);
        return -EACCES;
      }
      if (reg.off || !tnum_equals_const(reg.var_off, 0)) {
        env.verbose_err("dereference of modified ctx ptr R%u off=%d disallowed", regno, reg.off);
        return -EACCES;
      }
      return 0;
    case ARG_PTR_TO_SPIN_LOCK:
      return process_spin_lock(env, regno, reg, meta);
    case ARG_PTR_TO_BTF_ID:
      return check_btf_id_arg(env, arg, reg, fn);
    case ARG_PTR_TO_TIMER:
      return process_timer_func(env, regno, reg, meta);
    case ARG_PTR_TO_BTF_ID_SOCK_COMMON:
      // Emulation: no register holds a socket here (the kernel's sock_types list).
      return type_mismatch(env, regno, reg, "sock_common, sock, tcp_sock, xdp_sock, ptr_, trusted_ptr_");
    case ARG_PTR_TO_FUNC:
      if (reg.type != PTR_TO_FUNC) return type_mismatch(env, regno, reg, "func");
      meta.subprogno = (int)reg.subprogno;
      return 0;
    case ARG_PTR_TO_STACK:
      if (reg.type != PTR_TO_STACK) return type_mismatch(env, regno, reg, "fp");
      meta.callback_ctx = reg;
      meta.has_callback_ctx = true;
      return 0;
    default:
      env.verbose_err("verifier internal error: unsupported arg type %u", arg_type);
      return -EFAULT;
  }
}

// Maps whose elements bpf_for_each_map_elem visits (the kernel's map_for_each_callback ops).
bool map_has_for_each_callback(u32 map_type) {
  switch (map_type) {
    case BPF_MAP_TYPE_ARRAY:
    case BPF_MAP_TYPE_PERCPU_ARRAY:
    case BPF_MAP_TYPE_HASH:
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_LRU_HASH:
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
      return true;
    default:
      return false;
  }
}

// push_callback_call() for the synchronous callback-calling helpers (bpf_loop,
// bpf_for_each_map_elem, bpf_find_vma): queues a path that enters the callback from this call,
// one iteration more than the caller frame has queued; the current path goes on after the call
// (no further iteration). The callback's exit comes back to this call (prepare_func_exit()),
// which queues the next iteration, until an iteration's state at the call is covered by an
// earlier one (is_state_visited()). bpf_loop also stops at nr_loops' bound; the others have
// none. The callback's registers are the helper's (set_loop_callback_state(): r1 the
// iteration index, r2 the context; set_map_elem_callback_state(): r1 the map, r2 a key, r3 a
// value, r4 the context; set_find_vma_callback_state(): r1 the task, r2 the VMA, r3 the
// context).
int push_sync_callback(bpf_verifier_env &env, const call_meta &meta, u32 idx, s32 func_id) {
  if (meta.subprogno < 0) return 0;
  bpf_func_state &caller = env.cur->cur();
  if (func_id == BPF_FUNC_loop) {
    const bpf_reg_state &nr_loops = caller.regs[BPF_REG_1];
    if (caller.callback_depth >= nr_loops.umax_value) {
      caller.callback_depth = 0;
      if (env.log_on(BPF_LOG_LEVEL2))
        env.log("frame%u bpf_loop iteration limit reached\n", env.cur->curframe());
      return 0;
    }
  }
  if (env.cur->curframe() + 1 >= (u32)MAX_CALL_FRAMES) {
    env.verbose_err("the call stack of %u frames is too deep", env.cur->curframe() + 2);
    return -E2BIG;
  }
  if (func_id == BPF_FUNC_for_each_map_elem &&
      (!meta.map || !map_has_for_each_callback(meta.map->map_type))) {
    env.verbose_err("callback function not allowed for map");
    return -ENOTSUPP;
  }
  bpf_verifier_state *st = push_stack(env, env.subprogs[(u32)meta.subprogno].start, idx);
  if (!st) return -E2BIG;
  bpf_func_state &from = st->cur();
  bpf_func_state callee;
  callee.callsite = (int)idx;
  callee.frameno = st->curframe() + 1;
  callee.subprogno = (u32)meta.subprogno;
  callee.in_callback_fn = true;
  for (bpf_reg_state &r : callee.regs) mark_reg_not_init(r);
  if (func_id == BPF_FUNC_for_each_map_elem) {
    // map_set_for_each_callback_args(): the caller's map, a key and a value of it, the context.
    callee.regs[BPF_REG_1] = from.regs[BPF_REG_1];
    auto map_reg = [&](bpf_reg_state &r, u32 type) {
      mark_reg_ptr(r, type);
      r.map_ptr = meta.map;
      r.map_idx = meta.map_idx;
    };
    map_reg(callee.regs[BPF_REG_2], PTR_TO_MAP_KEY);
    map_reg(callee.regs[BPF_REG_3], PTR_TO_MAP_VALUE);
    // The value takes an id of its own, as the kernel's log shows (map_value(id=N,...)).
    callee.regs[BPF_REG_3].id = env.new_id();
    callee.regs[BPF_REG_4] = from.regs[BPF_REG_3];
  } else if (func_id == BPF_FUNC_find_vma) {
    // set_find_vma_callback_state(): the caller's task, the VMA (an untrusted handle), the
    // context.
    callee.regs[BPF_REG_1] = from.regs[BPF_REG_1];
    mark_reg_ptr(callee.regs[BPF_REG_2], PTR_TO_BTF_ID);
    callee.regs[BPF_REG_2].btf_name = "vm_area_struct";
    callee.regs[BPF_REG_3] = from.regs[BPF_REG_4];
  } else {
    __mark_reg_unknown(callee.regs[BPF_REG_1]);  // the iteration index
    callee.regs[BPF_REG_2] = from.regs[BPF_REG_3];
  }
  mark_reg_ptr(callee.regs[BPF_REG_FP], PTR_TO_STACK);
  callee.regs[BPF_REG_FP].frameno = callee.frameno;
  st->callback_unroll_depth++;
  from.callback_depth++;
  st->frame.push_back(std::move(callee));
  env.cur->cur().callback_depth = 0;
  return 0;
}

}  // namespace

int check_helper_call(bpf_verifier_env &env, const bpf_insn &insn, u32 *insn_idx) {
  const u32 idx = *insn_idx;
  const s32 func_id = insn.imm;
  if (func_id < 0 || (u32)func_id >= kBpfFuncMaxId ||
      !std::strcmp(bpf_func_id_name((u32)func_id), "unknown")) {
    env.verbose_err("invalid func unknown#%d", func_id);
    return -EINVAL;
  }
  const bpf_func_proto *fn = bpf_helper_proto((u32)func_id);
  if (!fn || !env.ptype.helper_allowed((u32)func_id)) {
    env.verbose_err("program of this type cannot use helper %s#%d", helper_name((u32)func_id).c_str(),
                    func_id);
    return -EINVAL;
  }
  if (fn->gpl_only && !env.opts.gpl_compatible) {
    env.verbose_err("cannot call GPL-restricted function from non-GPL compatible program");
    return -EINVAL;
  }
  if (fn->might_sleep && !in_sleepable(env)) {
    env.verbose_err("helper call might sleep in a non-sleepable prog");
    return -EINVAL;
  }
  if (env.cur->active_lock.held && func_id != BPF_FUNC_spin_unlock) {
    env.verbose_err("function calls are not allowed while holding a lock");
    return -EINVAL;
  }
  call_meta meta;
  for (u32 i = 0; i < 5; i++)
    if (int err = check_func_arg(env, i, fn->arg_type[i], *fn, meta)) return err;
  // record_func_map(): a program may not change a map it may only read.
  if (meta.map && meta.map->rdonly_prog &&
      (func_id == BPF_FUNC_map_delete_elem || func_id == BPF_FUNC_map_update_elem ||
       func_id == BPF_FUNC_map_push_elem || func_id == BPF_FUNC_map_pop_elem)) {
    env.verbose_err("write into map forbidden");
    return -EACCES;
  }

  if (func_id == BPF_FUNC_spin_lock) {
    if (env.cur->active_lock.held) {
      env.verbose_err("Locking two bpf_spin_locks are not allowed");
      return -EINVAL;
    }
    env.cur->active_lock = {true, meta.map, meta.spin_lock_id};
  } else if (func_id == BPF_FUNC_spin_unlock) {
    if (!env.cur->active_lock.held) {
      env.verbose_err("bpf_spin_unlock without taking a lock");
      return -EINVAL;
    }
    if (env.cur->active_lock.map != meta.map || env.cur->active_lock.id != meta.spin_lock_id) {
      env.verbose_err("bpf_spin_unlock of different lock");
      return -EINVAL;
    }
    env.cur->active_lock = {};
  }
  if (meta.release_ref)
    if (int err = release_reference(env, meta.release_ref)) return err;
  // A timer callback: an async callback that may not sleep.
  if (func_id == BPF_FUNC_timer_set_callback)
    if (int err = push_async_callback(env, (u32)meta.subprogno, idx, meta.map, meta.map_idx, false))
      return err;
  // A synchronous callback, entered on a path of its own before the call's registers are
  // cleared.
  if (bpf_is_sync_callback_calling_function((u32)func_id))
    if (int err = push_sync_callback(env, meta, idx, func_id)) return err;

  clear_caller_saved_regs(env);
  bpf_reg_state &r0 = env.cur->cur().regs[BPF_REG_0];
  env.scratched_regs |= 1u;
  switch (fn->ret_type) {
    case RET_INTEGER:
      __mark_reg_unknown(r0);
      // do_refine_retval_range(): the CPU number is below the CPU count.
      if (func_id == BPF_FUNC_get_smp_processor_id) {
        const u32 ncpus = env.opts.nr_cpu_ids ? env.opts.nr_cpu_ids : (u32)NR_CPUS;
        r0.umin_value = r0.u32_min_value = 0;
        r0.smin_value = r0.s32_min_value = 0;
        r0.umax_value = r0.u32_max_value = ncpus - 1;
        r0.smax_value = r0.s32_max_value = (s32)(ncpus - 1);
        reg_bounds_sync(r0);
      }
      // do_refine_retval_range(): bpf_get_stack returns the bytes written, at most the size
      // asked, or an error.
      if (func_id == BPF_FUNC_get_stack) {
        r0.smax_value = (s64)meta.msize_max_value;
        r0.s32_max_value = (s32)meta.msize_max_value;
        r0.smin_value = -(s64)MAX_ERRNO;
        r0.s32_min_value = -(s32)MAX_ERRNO;
        reg_bounds_sync(r0);
      }
      break;
    case RET_VOID:
      mark_reg_not_init(r0);
      break;
    case RET_PTR_TO_MAP_VALUE_OR_NULL:
      if (!meta.map) {
        env.verbose_err("kernel subsystem misconfigured verifier");
        return -EINVAL;
      }
      // A constant key inside an array: the value exists (kernel 6.14+).
      if (func_id == BPF_FUNC_map_lookup_elem && can_elide_value_nullness(*meta.map) &&
          meta.const_map_key >= 0 && meta.const_map_key < (s64)meta.map->max_entries) {
        mark_reg_ptr(r0, PTR_TO_MAP_VALUE);
        // A value holding a lock takes an id of its own (the lock's identity).
        if (meta.map->spin_lock_off >= 0) r0.id = env.new_id();
      } else {
        mark_reg_ptr(r0, PTR_TO_MAP_VALUE | PTR_MAYBE_NULL);
        r0.id = env.new_id();
      }
      r0.map_ptr = meta.map;
      r0.map_idx = meta.map_idx;
      break;
    case RET_PTR_TO_BTF_ID_TRUSTED:
      // A kernel object that stays valid for the whole run (the current task).
      mark_reg_ptr(r0, PTR_TO_BTF_ID | PTR_TRUSTED);
      r0.btf_name = fn->ret_btf_name;
      break;
    case RET_PTR_TO_BTF_ID_OR_NULL:
      // A kernel object or NULL (the socket casts), checked for NULL through its id.
      mark_reg_ptr(r0, PTR_TO_BTF_ID | PTR_MAYBE_NULL);
      r0.btf_name = fn->ret_btf_name;
      r0.id = env.new_id();
      break;
    case RET_PTR_TO_RINGBUF_MEM_OR_NULL: {
      mark_reg_ptr(r0, PTR_TO_MEM | MEM_RINGBUF | PTR_MAYBE_NULL);
      r0.mem_size = (u32)std::min<u64>(meta.mem_size, UINT_MAX);
      // As the kernel: a may-be-NULL result takes an id, then the reference takes the next one
      // and replaces it (the ids the log prints are the kernel's).
      (void)env.new_id();
      const u32 ref = acquire_reference_state(env, idx, bpf_ref_kind::ringbuf);
      r0.id = ref;
      r0.ref_obj_id = ref;
      break;
    }
    default:
      env.verbose_err("unknown return type %u of func %s#%d", fn->ret_type, fn->name, func_id);
      return -EINVAL;
  }
  *insn_idx = idx + 1;
  return 0;
}

namespace {

// What the arguments of a kfunc call hand to the call (kernel: struct bpf_kfunc_call_arg_meta).
struct kfunc_call_meta {
  u32 release_ref = 0;  // the reference a KF_RELEASE kfunc releases
  // The map of a struct bpf_wq argument, and the callback subprogram (kernel: meta.map.ptr,
  // meta.subprogno).
  const bpf_verifier_map *wq_map = nullptr;
  int subprogno = -1;
};

// The checks of a kfunc call before its arguments (kernel: fetch_kfunc_meta() and the start of
// check_kfunc_call()): a registered kfunc that the program type, the program's sleepability
// and its lock state allow.
int check_kfunc_allowed(bpf_verifier_env &env, const bpf_insn &insn, const emu::KfuncDesc **out) {
  const s32 k = insn.imm;
  if (insn.off) {
    env.verbose_err("kfunc call with a module BTF fd index (off=%d) is not supported", insn.off);
    return -EINVAL;
  }
  if (k < 0 || (size_t)k >= env.opts.kfuncs.size()) {
    env.verbose_err("kernel btf_id %d is not a function", k);
    return -EINVAL;
  }
  const emu::KfuncDesc *kf = env.opts.kfuncs[(size_t)k];
  if (!kf) {
    env.verbose_err("invalid kernel function call not eliminated in verifier pass");
    return -EINVAL;
  }
  const char *name = kf->name.c_str();
  if (!kf->allowed_for(env.ptype.kfunc_prog_type)) {
    env.verbose_err("calling kernel function %s is not allowed", name);
    return -EACCES;
  }
  if (kf->has(KF_SLEEPABLE) && !in_sleepable(env)) {
    env.verbose_err("program must be sleepable to call sleepable kfunc %s", name);
    return -EACCES;
  }
  if (kf->has(KF_DESTRUCTIVE)) {
    env.verbose_err("destructive kfunc calls require CAP_SYS_BOOT capability");
    return -EACCES;
  }
  if (env.cur->active_lock.held) {
    env.verbose_err("function calls are not allowed while holding a lock");
    return -EINVAL;
  }
  *out = kf;
  return 0;
}

// process_kf_arg_ptr_to_btf_id(): argument @i, a trusted (or, for KF_RCU, RCU-protected)
// pointer to the argument's struct; the first argument of a KF_RELEASE kfunc is the reference
// the call releases.
int check_kfunc_arg_btf_id(bpf_verifier_env &env, const emu::KfuncDesc &kf, size_t i,
                           const bpf_reg_state &reg, kfunc_call_meta &meta) {
  const u32 regno = (u32)i + 1;
  const emu::KfuncArg &a = kf.args[i];
  const char *name = kf.name.c_str();
  if (a.nullable && register_is_null(reg)) return 0;
  if (base_type(reg.type) != PTR_TO_BTF_ID) {
    env.verbose_err("arg#%zu expected pointer to STRUCT %s but R%u is %s", i,
                    a.struct_name.c_str(), regno, reg_type_name(reg.type).c_str());
    return -EACCES;
  }
  if (type_may_be_null(reg.type)) {
    env.verbose_err("Possibly NULL pointer passed to trusted arg%zu", i);
    return -EACCES;
  }
  const bool trusted = ((reg.type & PTR_TRUSTED) || reg.ref_obj_id) && !(reg.type & PTR_UNTRUSTED);
  const bool rcu = (reg.type & MEM_RCU) && !(reg.type & PTR_UNTRUSTED);
  if (kf.has(KF_RCU) && !trusted && !rcu) {
    env.verbose_err("R%u must be a rcu pointer", regno);
    return -EACCES;
  }
  if (!kf.has(KF_RCU) && !trusted) {
    env.verbose_err("R%u must be referenced or trusted", regno);
    return -EACCES;
  }
  if (!tnum_equals_const(reg.var_off, 0) ||
      !btf_struct_ids_match(env, reg.btf_name, reg.off, a.struct_name)) {
    env.verbose_err("kernel function %s args#%zu expected pointer to STRUCT %s but R%u has a pointer to STRUCT %s",
                    name, i, a.struct_name.c_str(), regno, reg.btf_name ? reg.btf_name : "?");
    return -EACCES;
  }
  if (i == 0 && kf.has(KF_RELEASE)) {
    if (!reg.ref_obj_id) {
      env.verbose_err("release kernel function %s expects refcounted PTR_TO_BTF_ID", name);
      return -EINVAL;
    }
    if (reg.off) {
      env.verbose_err("R%u must have zero offset when passed to release func or trusted arg to kfunc", regno);
      return -EINVAL;
    }
    meta.release_ref = reg.ref_obj_id;
  }
  return 0;
}

// Argument @i, memory the kfunc reads (and, unless read-only, may write), whose size is
// another argument's.
int check_kfunc_arg_mem(bpf_verifier_env &env, const emu::KfuncArg &a, size_t i,
                        const bpf_reg_state &reg) {
  if (!is_mem_like(reg)) {
    env.verbose_err("arg#%zu expected pointer to memory but R%zu is %s", i, i + 1,
                    reg_type_name(reg.type).c_str());
    return -EACCES;
  }
  const u32 size_regno = (u32)a.size_arg + 1;
  if (int err = check_reg_arg(env, size_regno, SRC_OP)) return err;
  // Read (it must be initialised), then possibly written by the kfunc.
  if (int err = check_mem_size_reg(env, size_regno, true, BPF_READ)) return err;
  if (base_type(reg.type) != PTR_TO_MEM || !(reg.type & MEM_RDONLY))
    if (int err = check_mem_size_reg(env, size_regno, true, BPF_WRITE)) return err;
  return 0;
}

// check_kfunc_args(): every argument of the call against the kfunc's prototype.
int check_kfunc_args(bpf_verifier_env &env, const emu::KfuncDesc &kf, kfunc_call_meta &meta) {
  bpf_func_state &f = env.cur->cur();
  for (size_t i = 0; i < kf.args.size(); i++) {
    const u32 regno = (u32)i + 1;
    const emu::KfuncArg &a = kf.args[i];
    if (a.kind == emu::KfuncArgKind::kIgnored) continue;  // not even read
    if (int err = check_reg_arg(env, regno, SRC_OP)) return err;
    const bpf_reg_state &reg = f.regs[regno];
    int err = 0;
    switch (a.kind) {
      case emu::KfuncArgKind::kScalar:
      case emu::KfuncArgKind::kMemSize:
        if (reg.type != SCALAR_VALUE) {
          env.verbose_err("R%u is not a scalar", regno);
          return -EACCES;
        }
        break;
      case emu::KfuncArgKind::kPtrToStruct:
        err = check_kfunc_arg_btf_id(env, kf, i, reg, meta);
        break;
      case emu::KfuncArgKind::kPtrToMem:
        err = check_kfunc_arg_mem(env, a, i, reg);
        break;
      case emu::KfuncArgKind::kPtrToMap:
        if (reg.type != CONST_PTR_TO_MAP) return type_mismatch(env, regno, reg, "map_ptr");
        // bpf_wq_init(wq, map): the map holding the bpf_wq. Emulation: no map-in-map, so
        // every map_uid is 0.
        if (meta.wq_map && reg.map_ptr->wq_off >= 0 && meta.wq_map != reg.map_ptr) {
          env.verbose_err(
              "workqueue pointer in R1 map_uid=0 doesn't match map pointer in R%u map_uid=0", regno);
          return -EINVAL;
        }
        break;
      case emu::KfuncArgKind::kPtrToMapValue:
        if (reg.type != PTR_TO_MAP_VALUE) return type_mismatch(env, regno, reg, "map_value");
        break;
      case emu::KfuncArgKind::kPtrToWq:
        if (reg.type != PTR_TO_MAP_VALUE) {
          env.verbose_err("arg#%zu doesn't point to a map value", i);
          return -EINVAL;
        }
        err = check_map_field_pointer(env, regno, "bpf_wq", reg.map_ptr->wq_off);
        meta.wq_map = reg.map_ptr;
        break;
      case emu::KfuncArgKind::kCallback:
        if (reg.type != PTR_TO_FUNC) {
          env.verbose_err("arg%zu expected pointer to func", i);
          return -EINVAL;
        }
        meta.subprogno = (int)reg.subprogno;
        break;
      case emu::KfuncArgKind::kIgnored:
      case emu::KfuncArgKind::kVoid:
        break;
    }
    if (err) return err;
  }
  return 0;
}

// The kfunc's return value in r0: a trusted pointer to its struct (acquired for KF_ACQUIRE,
// maybe NULL for KF_RET_NULL), nothing, or a scalar of the return type's size.
void mark_kfunc_ret(bpf_verifier_env &env, const emu::KfuncDesc &kf, u32 insn_idx) {
  bpf_reg_state &r0 = env.cur->cur().regs[BPF_REG_0];
  env.scratched_regs |= 1u;
  switch (kf.ret.kind) {
    case emu::KfuncArgKind::kVoid:
      mark_reg_not_init(r0);
      break;
    case emu::KfuncArgKind::kPtrToStruct: {
      u32 t = PTR_TO_BTF_ID | PTR_TRUSTED;
      if (kf.has(KF_RET_NULL)) t |= PTR_MAYBE_NULL;
      mark_reg_ptr(r0, t);
      r0.btf_name = kf.ret.struct_name.c_str();
      // As the kernel: a may-be-NULL result takes an id first, then the reference its own.
      if (kf.has(KF_RET_NULL)) r0.id = env.new_id();
      if (kf.has(KF_ACQUIRE)) r0.ref_obj_id = acquire_reference_state(env, insn_idx, bpf_ref_kind::ptr);
      if (kf.has(KF_RET_NULL) && r0.ref_obj_id) r0.id = r0.ref_obj_id;
      break;
    }
    default:
      __mark_reg_unknown(r0);
      if (kf.ret.size && kf.ret.size < 8) {
        if (kf.ret.is_signed) coerce_reg_to_size_sx(r0, (int)kf.ret.size);
        else coerce_reg_to_size(r0, (int)kf.ret.size);
      }
      break;
  }
}

}  // namespace

int check_kfunc_call(bpf_verifier_env &env, const bpf_insn &insn, u32 insn_idx) {
  const emu::KfuncDesc *kf = nullptr;
  if (int err = check_kfunc_allowed(env, insn, &kf)) return err;
  kfunc_call_meta meta;
  if (int err = check_kfunc_args(env, *kf, meta)) return err;
  if (meta.release_ref)
    if (int err = release_reference(env, meta.release_ref)) return err;
  if (meta.subprogno >= 0) {
    // The only callback-taking kfuncs registered are bpf_wq_set_callback{,_impl}: an async,
    // sleepable callback called with the bpf_wq's (map, key, value).
    const bpf_func_state &f = env.cur->cur();
    if (int err = push_async_callback(env, (u32)meta.subprogno, insn_idx, f.regs[BPF_REG_1].map_ptr,
                                      f.regs[BPF_REG_1].map_idx, true)) {
      env.verbose_err("kfunc %s#%d failed callback verification", kf->name.c_str(), insn.imm);
      return err;
    }
  }
  clear_caller_saved_regs(env);
  mark_kfunc_ret(env, *kf, insn_idx);
  return 0;
}

int check_func_call(bpf_verifier_env &env, const bpf_insn &insn, u32 *insn_idx) {
  const u32 idx = *insn_idx;
  const u32 target = (u32)((s64)idx + insn.imm + 1);
  if (env.cur->curframe() + 1 >= (u32)MAX_CALL_FRAMES) {
    env.verbose_err("the call stack of %u frames is too deep", env.cur->curframe() + 2);
    return -E2BIG;
  }
  if (env.cur->active_lock.held) {
    env.verbose_err("function calls are not allowed while holding a lock");
    return -EINVAL;
  }
  bpf_func_state &caller = env.cur->cur();
  bpf_func_state callee;
  callee.callsite = (int)idx;
  callee.frameno = env.cur->curframe() + 1;
  callee.subprogno = find_subprog(env, target);
  for (bpf_reg_state &r : callee.regs) mark_reg_not_init(r);
  for (int r = BPF_REG_1; r <= BPF_REG_5; r++) callee.regs[r] = caller.regs[r];
  mark_reg_ptr(callee.regs[BPF_REG_FP], PTR_TO_STACK);
  callee.regs[BPF_REG_FP].frameno = callee.frameno;
  clear_caller_saved_regs(env);
  mark_reg_not_init(env.cur->cur().regs[BPF_REG_0]);
  env.cur->frame.push_back(std::move(callee));
  *insn_idx = target;
  // The callee's whole state is the log's state before its first instruction.
  env.scratched_regs = 0xffff;
  env.scratched_stack = ~0ull;
  if (env.log_on(BPF_LOG_LEVEL1 | BPF_LOG_LEVEL2)) {
    const bpf_verifier_state &st = *env.cur;
    env.log("caller:\n");
    print_verifier_state(env, st.frame[st.frame.size() - 2], true);
    env.log("callee:\n");
    print_verifier_state(env, st.cur(), true);
  }
  return 0;
}

int prepare_func_exit(bpf_verifier_env &env, u32 *insn_idx) {
  bpf_verifier_state &st = *env.cur;
  bpf_func_state &callee = st.cur();
  // A callback's r0 is its verdict and must be set; a subprogram's r0 is handed to its caller
  // as it is, set or not (the caller may never read it).
  if (callee.in_callback_fn)
    if (int err = check_reg_arg(env, BPF_REG_0, SRC_OP)) return err;
  const bpf_reg_state r0 = callee.regs[BPF_REG_0];
  const u32 callsite = (u32)callee.callsite;
  if (callee.in_callback_fn) {
    if (r0.type != SCALAR_VALUE || r0.smin_value < 0 || r0.smax_value > 1) {
      if (r0.type != SCALAR_VALUE)
        env.verbose_err("At callback return the register R0 is not a known value (%s)",
                        reg_type_name(r0.type).c_str());
      else
        env.verbose_err("At callback return the register R0 has%s should have been in [0, 1]",
                        scalar_has(r0).c_str());
      return -EINVAL;
    }
    // Back to the call: it queues the next iteration, or finds the iterations converged
    // (the caller's registers are those of the call; r0 is set when the call is left).
    const u32 subprog = callee.subprogno;
    if (env.log_on(BPF_LOG_LEVEL1 | BPF_LOG_LEVEL2)) {
      env.log("returning from callee:\n");
      print_verifier_state(env, callee, true);
    }
    st.frame.pop_back();
    if (env.log_on(BPF_LOG_LEVEL1 | BPF_LOG_LEVEL2)) {
      env.log("to caller at %u:\n", callsite);
      print_verifier_state(env, st.cur(), true);
    }
    st.insn_idx = callsite;
    widen_callback_iteration(env, subprog);
    env.scratched_regs = 0;
    env.scratched_stack = 0;
    *insn_idx = callsite;
    return 0;
  } else {
    if (base_type(r0.type) == PTR_TO_STACK && r0.frameno == callee.frameno) {
      env.verbose_err("cannot return stack pointer to the caller frame");
      return -EINVAL;
    }
    if (env.log_on(BPF_LOG_LEVEL1 | BPF_LOG_LEVEL2)) {
      env.log("returning from callee:\n");
      print_verifier_state(env, callee, true);
    }
    st.frame.pop_back();
    st.cur().regs[BPF_REG_0] = r0;
    if (env.log_on(BPF_LOG_LEVEL1 | BPF_LOG_LEVEL2)) {
      env.log("to caller at %u:\n", callsite + 1);
      print_verifier_state(env, st.cur(), true);
    }
  }
  // Nothing of the exit is in the log's state before the caller's next instruction: the lines
  // above print both frames whole.
  env.scratched_regs = 0;
  env.scratched_stack = 0;
  *insn_idx = callsite + 1;
  return 0;
}

}  // namespace umemcg
