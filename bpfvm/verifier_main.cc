// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_main.cc: bpf_check() and the exploration loop (do_check): one path at a time,
// alternatives queued on a stack, pruned against explored checkpoints, bounded by the
// 1,000,000-instruction complexity limit.
//
// Mirrors: kernel/bpf/verifier.c (bpf_check, do_check, do_check_common, push_stack, pop_stack,
//          push_async_cb, check_ld_imm, check_return_code, process_bpf_exit) (Linux 6.19)
// Emulation: see verifier.h (privileged semantics without pointer leaks). Legacy packet loads
//   and callx are rejected (no skb, no callx in the kernel).
#include <algorithm>
#include <chrono>

#include "absl/strings/str_format.h"
#include "bpfvm/kfunc.h"
#include "bpfvm/verifier_state.h"

namespace umemcg {

namespace {

constexpr u32 BPF_COMPLEXITY_LIMIT_JMP_SEQ = 8192;

// States of finished bpf_check() calls on this thread, handed to the next call's
// bpf_verifier_env::free_states: a program verified after another starts with recycled states
// instead of allocating one per branch and checkpoint (the fuzz target verifies thousands of
// programs a second). Bounded: a huge exploration does not pin its memory.
constexpr size_t kStatePoolMax = 256;
thread_local std::vector<std::unique_ptr<bpf_verifier_state>> t_state_pool;

}  // namespace

bpf_verifier_state *push_stack(bpf_verifier_env &env, u32 insn_idx, u32 prev_insn_idx) {
  if (env.stack.size() >= BPF_COMPLEXITY_LIMIT_JMP_SEQ) {
    env.verbose_err("The sequence of %u jumps is too complex.", (u32)env.stack.size());
    return nullptr;
  }
  auto st = env.copy_state(*env.cur);
  st->insn_idx = insn_idx;
  st->prev_insn_idx = prev_insn_idx;
  st->log_pos = env.res.log.size();
  if (st->parent) st->parent->branches++;
  env.stack.push_back(std::move(st));
  return env.stack.back().get();
}

bpf_verifier_state *push_async_cb(bpf_verifier_env &env, u32 subprog, u32 prev_insn_idx,
                                  bool sleepable) {
  if (env.stack.size() >= BPF_COMPLEXITY_LIMIT_JMP_SEQ) {
    env.verbose_err("The sequence of %u jumps is too complex for async cb.",
                    (u32)env.stack.size());
    return nullptr;
  }
  // Not a copy of the caller's state: the callback runs later, on a stack of its own.
  auto st = std::make_unique<bpf_verifier_state>();
  st->frame.emplace_back();
  bpf_func_state &f = st->frame.back();
  for (bpf_reg_state &r : f.regs) mark_reg_not_init(r);
  mark_reg_ptr(f.regs[BPF_REG_FP], PTR_TO_STACK);
  f.subprogno = subprog;
  f.in_async_callback_fn = true;
  st->in_sleepable = sleepable;
  st->async_entry_cnt = env.cur->async_entry_cnt + 1;
  st->insn_idx = env.subprogs[subprog].start;
  st->prev_insn_idx = prev_insn_idx;
  st->log_pos = env.res.log.size();
  env.stack.push_back(std::move(st));
  return env.stack.back().get();
}

void drop_pushed_state(bpf_verifier_env &env) {
  std::unique_ptr<bpf_verifier_state> st = std::move(env.stack.back());
  env.stack.pop_back();
  update_branch_counts(env, st->parent);
  env.free_state(std::move(st));
}

void pop_into_cur(bpf_verifier_env &env) {
  update_branch_counts(env, env.cur->parent);
  env.free_state(std::move(env.cur));
  env.cur = std::move(env.stack.back());
  env.stack.pop_back();
}

namespace {

int check_ld_imm(bpf_verifier_env &env, const bpf_insn &insn, u32 idx) {
  if (int err = check_reg_arg(env, insn.dst_reg, DST_OP)) return err;
  bpf_reg_state &dst = env.cur->cur().regs[insn.dst_reg];
  const bpf_insn &hi = env.insns[idx + 1];
  switch (insn.src_reg) {
    case BPF_LD_IMM64_PLAIN:
      __mark_reg_known(dst, bpf_ldimm64_value(insn, hi));
      return 0;
    case BPF_PSEUDO_MAP_FD:
    case BPF_PSEUDO_MAP_IDX:
    case BPF_PSEUDO_MAP_VALUE:
    case BPF_PSEUDO_MAP_IDX_VALUE: {
      if (insn.imm < 0 || (size_t)insn.imm >= env.opts.maps.size()) {
        env.verbose_err("fd %d is not pointing to valid bpf_map", insn.imm);
        return -EBADF;
      }
      const bpf_verifier_map *map = &env.opts.maps[(size_t)insn.imm];
      const bool value = insn.src_reg == BPF_PSEUDO_MAP_VALUE || insn.src_reg == BPF_PSEUDO_MAP_IDX_VALUE;
      if (!value) {
        mark_reg_ptr(dst, CONST_PTR_TO_MAP);
      } else {
        if (map->map_type != BPF_MAP_TYPE_ARRAY || map->max_entries != 1) {
          env.verbose_err("no direct value access support for this map type");
          return -EINVAL;
        }
        if ((u32)hi.imm >= map->value_size) {
          env.verbose_err("invalid access to map value pointer, value_size=%u off=%u",
                          map->value_size, (u32)hi.imm);
          return -EINVAL;
        }
        mark_reg_ptr(dst, PTR_TO_MAP_VALUE);
        dst.off = hi.imm;
      }
      dst.map_ptr = map;
      dst.map_idx = (u32)insn.imm;
      return 0;
    }
    case BPF_PSEUDO_BTF_ID:
      // The address of a kfunc (bpf_ksym_exists()): read-only memory of size 0.
      if (insn.imm < 0 || (size_t)insn.imm >= env.opts.kfuncs.size() ||
          !env.opts.kfuncs[(size_t)insn.imm]) {
        env.verbose_err("ldimm64 insn specifies invalid btf_id %d", insn.imm);
        return -EINVAL;
      }
      mark_reg_ptr(dst, PTR_TO_MEM | MEM_RDONLY);
      dst.mem_size = 0;
      return 0;
    case BPF_PSEUDO_FUNC: {
      // Emulation: the kernel refuses a global function here ("callback function not
      //   static") from .BTF.ext func_info, which is not read: every subprogram is static.
      const u32 target = (u32)((s64)idx + insn.imm + 1);
      mark_reg_ptr(dst, PTR_TO_FUNC);
      dst.subprogno = find_subprog(env, target);
      return 0;
    }
    default:
      env.verbose_err("unrecognized bpf_ld_imm64 insn");
      return -EINVAL;
  }
}

}  // namespace

std::string scalar_has(const bpf_reg_state &r0) {
  std::string has;
  if (r0.smin_value != INT64_MIN) has += absl::StrFormat(" smin=%d", r0.smin_value);
  if (r0.smax_value != INT64_MAX) has += absl::StrFormat(" smax=%d", r0.smax_value);
  if (has.empty()) has = " unknown scalar value";
  return has;
}

namespace {

int check_return_code(bpf_verifier_env &env) {
  if (int err = check_reg_arg(env, BPF_REG_0, SRC_OP)) return err;
  const bpf_reg_state &r0 = env.cur->cur().regs[BPF_REG_0];
  const bpf_prog_type_desc &pt = env.ptype;
  if (env.cur->cur().in_async_callback_fn) {
    // Async callbacks (bpf_wq, bpf_timer) return 0.
    if (is_pointer(r0) && !env.opts.allow_ptr_leaks) {
      env.verbose_err("R0 leaks addr as return value");
      return -EACCES;
    }
    if (r0.type != SCALAR_VALUE) {
      env.verbose_err("At async callback return the register R0 is not a known value (%s)",
                      reg_type_name(r0.type).c_str());
      return -EINVAL;
    }
    if (r0.smin_value < 0 || r0.smax_value > 0) {
      env.verbose_err("At async callback return the register R0 has%s should have been in [0, 0]",
                      scalar_has(r0).c_str());
      return -EINVAL;
    }
    return 0;
  }
  if (pt.has_retval_range) {
    if (r0.type != SCALAR_VALUE) {
      env.verbose_err("At program exit the register R0 is not a known value (%s)",
                      reg_type_name(r0.type).c_str());
      return -EINVAL;
    }
    if (r0.smin_value < pt.ret_min || r0.smax_value > pt.ret_max) {
      const std::string has = scalar_has(r0);
      env.verbose_err("At program exit the register R0 has%s should have been in [%lld, %lld]",
                      has.c_str(), (long long)pt.ret_min, (long long)pt.ret_max);
      return -EINVAL;
    }
    return 0;
  }
  if (is_pointer(r0) && !env.opts.allow_ptr_leaks) {
    env.verbose_err("R0 leaks addr as return value");
    return -EACCES;
  }
  return 0;
}

void init_state(bpf_verifier_env &env) {
  auto st = std::make_unique<bpf_verifier_state>();
  st->frame.emplace_back();
  bpf_func_state &f = st->frame.back();
  for (bpf_reg_state &r : f.regs) mark_reg_not_init(r);
  mark_reg_ptr(f.regs[BPF_REG_FP], PTR_TO_STACK);
  if (env.ptype.ctx_kind == bpf_ctx_kind::raw_mem) {
    mark_reg_ptr(f.regs[BPF_REG_1], PTR_TO_MEM);
    f.regs[BPF_REG_1].mem_size = env.opts.ctx_mem_size;
    mark_reg_known_zero(f.regs[BPF_REG_2]);
    __mark_reg_known(f.regs[BPF_REG_2], env.opts.ctx_mem_size);
  } else {
    mark_reg_ptr(f.regs[BPF_REG_1], PTR_TO_CTX);
  }
  env.cur = std::move(st);
}

// The current path ended (exit of the main program, or pruned). Continue with a queued one;
// the log then shows where it resumes ("from X to Y:", print_state). Below level 2 the log
// forgets the path that ended: it goes back to its length when the resumed path was queued
// (kernel: pop_stack() with pop_log), so a rejected program's log is the path to the error.
bool pop_stack(bpf_verifier_env &env, bool *print_state) {
  update_branch_counts(env, env.cur->parent);
  if (env.stack.empty()) return false;
  env.free_state(std::move(env.cur));
  env.cur = std::move(env.stack.back());
  env.stack.pop_back();
  if (!env.log_on(BPF_LOG_LEVEL2) && env.cur->log_pos < env.res.log.size())
    env.res.log.resize(env.cur->log_pos);
  // mark_verifier_state_scratched(): the resumed path's state prints whole.
  env.scratched_regs = 0xffff;
  env.scratched_stack = ~0ull;
  *print_state = true;
  return true;
}

int do_check(bpf_verifier_env &env) {
  const u32 cnt = (u32)env.insns.size();
  // Level 1 prints the instructions and states of the walk as level 2 does (kernel:
  // BPF_LOG_LEVEL, both bits), without the whole state at the start of each path.
  const bool log1 = env.log_on(BPF_LOG_LEVEL1 | BPF_LOG_LEVEL2);
  const bool log2 = env.log_on(BPF_LOG_LEVEL2);
  bool print_state = false;
  // The entry state prints whole before the first instruction.
  env.scratched_regs = 0xffff;
  env.scratched_stack = ~0ull;
  for (;;) {
    const u32 idx = env.cur->insn_idx;
    if (idx >= cnt) {
      env.verbose_err("invalid insn idx %u insn_cnt %u", idx, cnt);
      return -EFAULT;
    }
    if (++env.insn_processed > env.opts.insn_limit) {
      env.verbose_err("BPF program is too large. Processed %u insn", env.insn_processed);
      return -E2BIG;
    }
    env.aux[idx].seen = true;
    if (env.aux[idx].prune_point) {
      const int r = is_state_visited(env, idx);
      if (r < 0) return r;
      if (r == 1) {
        if (log1) {
          if (print_state)
            env.log("\nfrom %u to %u: safe\n", env.cur->prev_insn_idx, idx);
          else
            env.log("%u: safe\n", idx);
        }
        if (!pop_stack(env, &print_state)) return 0;
        continue;
      }
    }
    const bpf_insn &insn = env.insns[idx];
    const bpf_opcode_desc &d = *env.aux[idx].desc;
    if (log2 && print_state) {
      env.log("\nfrom %u to %u:", env.cur->prev_insn_idx, idx);
      print_verifier_state(env, env.cur->cur(), true);
      print_state = false;
    }
    if (log1) {
      if (env.scratched_regs || env.scratched_stack) print_insn_state(env, env.cur->cur());
      verbose_linfo(env, idx, "; ");
      env.prev_log_pos = env.res.log.size();
      // A kfunc call by name, as the kernel's log prints it (call <name>#<btf id>).
      const emu::KfuncDesc *kf =
          d.id == BPF_OPC_JMP_CALL_KFUNC && insn.imm >= 0 &&
                  (size_t)insn.imm < env.opts.kfuncs.size()
              ? env.opts.kfuncs[(size_t)insn.imm]
              : nullptr;
      if (kf)
        env.log("%u: (%02x) call %s#%d\n", idx, insn.code, kf->name.c_str(), insn.imm);
      else
        env.log("%u: (%02x) %s\n", idx, insn.code, bpf_insn_str(env.insns, idx).c_str());
      env.prev_insn_print_pos = env.res.log.size() - env.prev_log_pos;
      env.prev_log_pos = env.res.log.size();
    }

    u32 next = idx + 1;
    int err = 0;
    bool path_done = false;
    switch (bpf_form_of(d).kind) {
      case bpf_opc::K_ALU:
        err = check_alu_op(env, insn, d);
        break;
      case bpf_opc::K_LOAD:
      case bpf_opc::K_STORE:
        err = check_load_store(env, insn, d, idx);
        break;
      case bpf_opc::K_ATOMIC:
        err = check_atomic(env, insn, d, idx);
        break;
      case bpf_opc::K_LD_IMM64:
        err = check_ld_imm(env, insn, idx);
        next = idx + 2;
        break;
      case bpf_opc::K_JUMP:
        env.jmps_processed++;
        next = (u32)bpf_jump_target(d, insn, idx);
        break;
      case bpf_opc::K_COND_JUMP:
        env.jmps_processed++;
        next = idx;
        err = check_cond_jmp_op(env, insn, d, &next);
        // The path this state continues on, printed before the next instruction is looked at
        // (check_cond_jmp_op() prints it).
        if (!err && log1) print_insn_state(env, env.cur->cur());
        break;
      case bpf_opc::K_CALL:
        env.jmps_processed++;
        if (d.id == BPF_OPC_JMP_CALL_HELPER) {
          next = idx;
          err = check_helper_call(env, insn, &next);
        } else if (d.id == BPF_OPC_JMP_CALL_KFUNC) {
          err = check_kfunc_call(env, insn, idx);
        } else if (d.id == BPF_OPC_JMP_CALL_LOCAL) {
          next = idx;
          err = check_func_call(env, insn, &next);
        } else {
          env.verbose_err("callx is not supported by the kernel verifier");
          err = -EINVAL;
        }
        break;
      case bpf_opc::K_EXIT:
        env.jmps_processed++;
        // The lock must be released by the main program's exit; a subprogram may return with
        // it held (its caller releases it), a callback may not.
        if (env.cur->active_lock.held &&
            (env.cur->curframe() == 0 || env.cur->cur().in_callback_fn)) {
          if (env.cur->curframe() == 0)
            env.verbose_err("BPF_EXIT instruction in main prog cannot be used inside bpf_spin_lock-ed region");
          else
            env.verbose_err("bpf_spin_unlock is missing");
          err = -EINVAL;
          break;
        }
        if (env.cur->curframe() > 0) {
          // A callback's references go back to its caller as a subprogram's do (Linux 6.13+:
          // check_reference_leak() looks at the main program's exit only).
          next = idx;
          err = prepare_func_exit(env, &next);
          print_state = true;
          break;
        }
        if ((err = check_reference_leak(env, false))) break;
        if ((err = check_return_code(env))) break;
        path_done = true;
        break;
      case bpf_opc::K_PACKET:
        env.verbose_err("BPF_LD_[ABS|IND] instructions not allowed for this program type");
        err = -EINVAL;
        break;
    }
    if (err) return err;
    if (path_done) {
      if (!pop_stack(env, &print_state)) return 0;
      continue;
    }
    env.cur->prev_insn_idx = idx;
    env.cur->insn_idx = next;
  }
}

// The map types a sleepable program may use (check_map_prog_compatibility()).
bool map_type_sleepable_ok(u32 type) {
  switch (type) {
    case BPF_MAP_TYPE_HASH:
    case BPF_MAP_TYPE_LRU_HASH:
    case BPF_MAP_TYPE_ARRAY:
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_PERCPU_ARRAY:
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
    case BPF_MAP_TYPE_ARRAY_OF_MAPS:
    case BPF_MAP_TYPE_HASH_OF_MAPS:
    case BPF_MAP_TYPE_RINGBUF:
    case BPF_MAP_TYPE_USER_RINGBUF:
    case BPF_MAP_TYPE_INODE_STORAGE:
    case BPF_MAP_TYPE_SK_STORAGE:
    case BPF_MAP_TYPE_TASK_STORAGE:
    case 32:  // BPF_MAP_TYPE_CGRP_STORAGE (uapi 6.2)
    case BPF_MAP_TYPE_QUEUE:
    case BPF_MAP_TYPE_STACK:
    case 33:  // BPF_MAP_TYPE_ARENA (uapi 6.9)
      return true;
    default:
      return false;
  }
}

// check_map_prog_compatibility(): the program may use this map at all. Like the kernel it is
// asked at every ld_imm64 that names a map, reachable or not, before the program is walked.
// Emulation: the bpf_spin_lock, bpf_timer and bpf_wq rules for tracing and socket filter
//   programs are checked where the field is used (verifier_calls.cc), not here.
int check_map_prog_compatibility(bpf_verifier_env &env, const bpf_verifier_map &map, u32 idx) {
  if (map.map_type == BPF_MAP_TYPE_STRUCT_OPS) {
    env.res.error_insn = (int)idx;
    env.verbose_err("bpf_struct_ops map cannot be used in prog");
    return -EINVAL;
  }
  if (env.opts.sleepable && !map_type_sleepable_ok(map.map_type)) {
    env.res.error_insn = (int)idx;
    env.verbose_err("Sleepable programs can only use array, hash, ringbuf and local storage maps");
    return -EINVAL;
  }
  return 0;
}

// The reference of the ld_imm64 at idx exists (map index, kfunc index for BTF_ID).
int check_ld_imm_ref(bpf_verifier_env &env, u32 idx) {
  const bpf_insn &insn = env.insns[idx];
  switch (insn.src_reg) {
    case BPF_PSEUDO_MAP_FD:
    case BPF_PSEUDO_MAP_IDX:
    case BPF_PSEUDO_MAP_VALUE:
    case BPF_PSEUDO_MAP_IDX_VALUE:
      if (insn.imm < 0 || (size_t)insn.imm >= env.opts.maps.size() ||
          (env.opts.maps_by_reloc &&
           (insn.src_reg == BPF_PSEUDO_MAP_FD || insn.src_reg == BPF_PSEUDO_MAP_VALUE) &&
           !std::binary_search(env.opts.map_reloc_insns.begin(), env.opts.map_reloc_insns.end(),
                               idx))) {
        env.res.error_insn = (int)idx;
        env.verbose_err("fd %d is not pointing to valid bpf_map", insn.imm);
        return -EBADF;
      }
      return check_map_prog_compatibility(env, env.opts.maps[(size_t)insn.imm], idx);
    case BPF_PSEUDO_BTF_ID:
      if (insn.imm < 0 || (size_t)insn.imm >= env.opts.kfuncs.size() ||
          !env.opts.kfuncs[(size_t)insn.imm]) {
        env.res.error_insn = (int)idx;
        env.verbose_err("ldimm64 insn specifies invalid btf_id %d", insn.imm);
        return -EINVAL;
      }
      return 0;
    default:
      return 0;
  }
}

// The kfunc a call at idx names exists: off 0 (vmlinux BTF) and imm an index of a resolved
// kfunc. The kernel resolves every call site up front, dead code too.
int check_kfunc_call_ref(bpf_verifier_env &env, u32 idx) {
  const bpf_insn &insn = env.insns[idx];
  if (insn.off) {
    env.res.error_insn = (int)idx;
    env.verbose_err("kfunc call with a module BTF fd index (off=%d) is not supported", insn.off);
    return -EINVAL;
  }
  if (insn.imm < 0 || (size_t)insn.imm >= env.opts.kfuncs.size()) {
    env.res.error_insn = (int)idx;
    env.verbose_err("kernel btf_id %d is not a function", insn.imm);
    return -EINVAL;
  }
  return 0;
}

int prepare_insns(bpf_verifier_env &env) {
  std::string why;
  size_t bad = 0;
  // The caller's buffer, or this thread's (its capacity stays: no allocation per program).
  thread_local std::vector<const bpf_opcode_desc *> t_rows;
  std::vector<const bpf_opcode_desc *> &rows = env.opts.decoded ? *env.opts.decoded : t_rows;
  if (!bpf_check_prog_layout(env.insns.data(), env.insns.size(), &why, &bad, env.opts.max_cpu,
                             &rows)) {
    rows.clear();
    env.res.error_insn = (int)bad;
    // bpf_check_prog_layout() says "<reason> at insn N"; the kernel's line is the reason alone
    // (the index is in error_insn).
    const std::string at = " at insn " + std::to_string(bad);
    if (why.size() > at.size() && why.compare(why.size() - at.size(), at.size(), at) == 0)
      why.resize(why.size() - at.size());
    env.verbose_err("%s", why.c_str());
    return -EINVAL;
  }
  env.aux.assign(env.insns.size(), bpf_insn_aux_data{});
  for (size_t i = 0; i < env.insns.size(); i++) {
    env.aux[i].desc = rows[i];
    if (rows[i]->id == BPF_OPC_JMP_CALL_KFUNC) {
      // As the kernel's add_subprog_and_kfunc(): every kfunc call site names an existing
      // kfunc, reachable or not (the dead ones are not linkable either).
      if (int err = check_kfunc_call_ref(env, (u32)i)) return err;
      continue;
    }
    if (bpf_form_of(*env.aux[i].desc).slots == 2) i++;
  }
  return 0;
}

// As the kernel's resolve_pseudo_ldimm64(), after the func and line info checks: every
// ld_imm64's map or BTF reference is resolved up front, reachable or not; checking only on
// visit accepted dead code that names no map, which nothing after the verifier can link.
int resolve_pseudo_ldimm64(bpf_verifier_env &env) {
  for (size_t i = 0; i < env.insns.size(); i++) {
    if (!env.aux[i].desc || bpf_form_of(*env.aux[i].desc).slots != 2) continue;
    if (int err = check_ld_imm_ref(env, (u32)i)) return err;
    i++;
  }
  return 0;
}

}  // namespace

bpf_verifier_result bpf_check(std::span<const bpf_insn> insns, const bpf_verifier_opts &opts) {
  bpf_verifier_result res;
  if (!opts.prog_type) {
    res.err = -EINVAL;
    res.error = "no program type";
    return res;
  }
  const auto t0 = std::chrono::steady_clock::now();
  bpf_verifier_env env(insns, opts, res);
  env.free_states.swap(t_state_pool);
  const bpf_prog_type_desc &pt = *opts.prog_type;
  int err = 0;
  if (opts.sleepable && pt.sleepable == bpf_sleepable::never) {
    env.verbose_err("%s", pt.not_sleepable_msg.empty()
                              ? "Only fentry/fexit/fmod_ret, lsm, iter, uprobe, and struct_ops "
                                "programs can be sleepable"
                              : pt.not_sleepable_msg.c_str());
    err = -EINVAL;
  }
  env.sleepable = pt.sleepable == bpf_sleepable::always ||
                  (pt.sleepable == bpf_sleepable::optional && opts.sleepable);
  if (!err) err = prepare_insns(env);
  if (!err) err = check_subprogs(env);
  if (!err) err = check_btf_func(env);
  if (!err) err = check_btf_line(env);
  if (!err) err = resolve_pseudo_ldimm64(env);
  if (!err) err = check_cfg(env);
  if (!err) mark_fastcall_patterns(env);
  if (!err) {
    // Liveness is computed by is_state_visited() on the first comparison of states: most
    // rejected programs never get there.
    env.explored.resize(insns.size());
    init_state(env);
    err = do_check(env);
    // A program that passes leaves no walk in a level-1 log (kernel: do_check_common() resets
    // the log), only what follows and the summary.
    if (!err && opts.log_level && !(opts.log_level & BPF_LOG_LEVEL2)) res.log.clear();
  }
  if (!err) remove_fastcall_spills_fills(env);
  if (!err) err = check_max_stack_depth(env);

  res.err = err;
  res.insn_processed = env.insn_processed;
  res.total_states = env.total_states;
  res.peak_states = env.peak_states;
  for (const bpf_subprog_info &sp : env.subprogs) {
    res.subprog_starts.push_back(sp.start);
    res.subprog_stack_depth.push_back(sp.stack_depth);
  }
  if (opts.log_level) {
    res.log += absl::StrFormat(
        "processed %u insns (limit %u) max_states_per_insn %u total_states %u peak_states %u\n",
        res.insn_processed, opts.insn_limit, res.max_states_per_insn, res.total_states,
        res.peak_states);
  }
  if (opts.log_level & BPF_LOG_STATS) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - t0)
                        .count();
    std::string depths;
    for (u32 d : res.subprog_stack_depth) depths += (depths.empty() ? "" : "+") + std::to_string(d);
    res.log += absl::StrFormat("verification time %d usec\nstack depth %s\n", us, depths);
  }
  if (err && res.error.empty()) res.error = "verification failed";

  // Every state of this run back to the thread's pool.
  env.free_state(std::move(env.cur));
  for (auto &st : env.stack) env.free_state(std::move(st));
  for (auto &list : env.explored)
    for (bpf_verifier_state_list &sl : list) env.free_state(std::move(sl.state));
  if (env.free_states.size() > kStatePoolMax) env.free_states.resize(kStatePoolMax);
  t_state_pool.swap(env.free_states);
  return res;
}

}  // namespace umemcg
