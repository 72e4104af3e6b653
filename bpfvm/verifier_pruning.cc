// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_pruning.cc: state pruning. At prune points the current state is compared
// with checkpoints saved earlier at the same instruction; if a completely explored checkpoint
// covers it (every live register and stack byte of the checkpoint admits at least the values
// of the current state), the current path is safe and is not explored further.
//
// Soundness notes:
//  - Only checkpoints whose subtree is fully explored (branch counter 0) can prune. One still
//    being explored is an ancestor of the current path: the path looped back. If the two
//    states are equal the loop makes no progress ("infinite loop detected"); otherwise the
//    loop is unrolled further (bounded by the complexity limit). At a bpf_loop call the
//    callback's exit comes back: an iteration covered by an earlier one there (range_within)
//    has converged and is pruned; before the comparison, the callers' scalars that are not
//    precise and changed since the previous iteration are widened (widen_callback_iteration()).
//  - Registers and stack slots dead at the instruction (static liveness) are ignored; scalars
//    (registers and spilled) no later safety check depends on compare equal; everything else
//    is compared with range_within/tnum_in and consistent id mappings (check_ids), so that
//    registers linked in the checkpoint are linked in the current state too.
//
// Mirrors: kernel/bpf/verifier.c (is_state_visited, states_equal, func_states_equal, regsafe,
//          stacksafe, refsafe, check_ids, range_within, update_branch_counts, find_prev_entry,
//          widen_imprecise_scalars, maybe_widen_reg) (Linux 6.19)
// Emulation: precision is the static analysis of verifier_cfg.cc, not the kernel's
//   backtracking (mark_chain_precision): it marks at least what the kernel would, so it prunes
//   less than the kernel but never more. Checkpoint heuristics follow the kernel (a new
//   checkpoint after >= 2 jumps and >= 8 instructions, in a loop only every 20 jumps or 100
//   instructions; evict after many misses). A callback's widening reads the loose static
//   precision (verifier_cfg.cc), which leaves out a value stored through a pointer as the
//   kernel's backtracking does; widening is safe whatever it decides. The comparison at the
//   call ignores dead and imprecise registers and slots as any other prune point does (the
//   kernel compares every register by range there).
#include <algorithm>
#include <cstring>

#include "bpfvm/verifier_state.h"

namespace umemcg {

namespace {

// Consistent old-id -> cur-id mapping of one states_equal() call (check_ids). It lives on the
// stack: states_equal() runs at every prune point, and a heap vector per call was the verifier's
// most frequent allocation. Past kInline pairs (rare: that many linked registers and spills) it
// spills to a vector.
struct idmap {
  static constexpr size_t kInline = 32;
  // Plain pairs: entries past n are never read, so the array is left uninitialised (a
  // std::pair array would be zeroed at every states_equal() call).
  struct id_pair {
    u32 first, second;
  };
  id_pair inl[kInline];
  size_t n = 0;
  std::vector<std::pair<u32, u32>> more;
  u32 tmp = 0x80000000u;
  bool check(u32 old_id, u32 cur_id) {
    if (!old_id && !cur_id) return true;
    if (!old_id || !cur_id) return false;
    for (size_t i = 0; i < n; i++) {
      if (inl[i].first == old_id) return inl[i].second == cur_id;
      if (inl[i].second == cur_id) return false;
    }
    for (auto &p : more) {
      if (p.first == old_id) return p.second == cur_id;
      if (p.second == cur_id) return false;
    }
    if (n < kInline)
      inl[n++] = {old_id, cur_id};
    else
      more.emplace_back(old_id, cur_id);
    return true;
  }
  // Scalars: a zero id is a fresh id that links nothing. Two fresh ids can never be looked up
  // again, so that pair is not recorded.
  bool check_scalar(u32 old_id, u32 cur_id) {
    if (!old_id && !cur_id) return true;
    const u32 o = old_id ? old_id : ++tmp;
    const u32 c = cur_id ? cur_id : ++tmp;
    return check(o, c);
  }
};

bool range_within(const bpf_reg_state &o, const bpf_reg_state &c) {
  return o.umin_value <= c.umin_value && o.umax_value >= c.umax_value &&
         o.smin_value <= c.smin_value && o.smax_value >= c.smax_value &&
         o.u32_min_value <= c.u32_min_value && o.u32_max_value >= c.u32_max_value &&
         o.s32_min_value <= c.s32_min_value && o.s32_max_value >= c.s32_max_value;
}

bool same_bounds(const bpf_reg_state &o, const bpf_reg_state &c) {
  return o.var_off == c.var_off && o.umin_value == c.umin_value && o.umax_value == c.umax_value &&
         o.smin_value == c.smin_value && o.smax_value == c.smax_value &&
         o.u32_min_value == c.u32_min_value && o.u32_max_value == c.u32_max_value &&
         o.s32_min_value == c.s32_min_value && o.s32_max_value == c.s32_max_value;
}

bool names_equal(const char *a, const char *b) {
  return a == b || (a && b && !std::strcmp(a, b));
}

bool regsafe(const bpf_reg_state &o, const bpf_reg_state &c, idmap &ids, bpf_exact exact,
             bool precise = true) {
  if (o.type == NOT_INIT) return exact == bpf_exact::range_within || c.type == NOT_INIT;
  if (c.type == NOT_INIT || o.type != c.type) return false;
  // An imprecise scalar: no later safety decision depends on its value.
  if (o.type == SCALAR_VALUE && !precise && exact == bpf_exact::range_within) return true;
  const bool bounds_ok = exact == bpf_exact::exact
                             ? same_bounds(o, c)
                             : range_within(o, c) && tnum_in(o.var_off, c.var_off);
  if (o.type == SCALAR_VALUE) return bounds_ok && ids.check_scalar(o.id, c.id);
  if (o.off != c.off || o.map_ptr != c.map_ptr || o.mem_size != c.mem_size ||
      o.subprogno != c.subprogno || o.frameno != c.frameno || !names_equal(o.btf_name, c.btf_name))
    return false;
  return bounds_ok && ids.check(o.id, c.id) && ids.check(o.ref_obj_id, c.ref_obj_id);
}

// The slot as one scalar register, if it is one (kernel: scalar_reg_for_stack()): a 64-bit
// scalar spill, or eight scalar bytes (MISC, or INVALID where uninitialised reads are allowed),
// an unknown scalar.
const bpf_reg_state *scalar_reg_for_stack(const bpf_stack_state &s, bool allow_uninit) {
  static const bpf_reg_state unbound = [] {
    bpf_reg_state r;
    __mark_reg_unknown(r);
    return r;
  }();
  bool spill = true, misc = true;
  for (u8 t : s.slot_type) {
    spill &= t == STACK_SPILL;
    misc &= t == STACK_MISC || (allow_uninit && t == STACK_INVALID);
  }
  if (spill && s.spilled_ptr.type == SCALAR_VALUE) return &s.spilled_ptr;
  if (misc) return &unbound;
  return nullptr;
}

// precise: bit spi set when the slot's scalar value may still decide a safety check.
bool stacksafe(const bpf_func_state &o, const bpf_func_state &c, idmap &ids, bpf_exact exact,
               u64 precise, u64 live, bool allow_uninit) {
  for (size_t spi = 0; spi < o.stack.size(); spi++) {
    const bpf_stack_state &os = o.stack[spi];
    const bpf_stack_state *cs = spi < c.stack.size() ? &c.stack[spi] : nullptr;
    if (exact == bpf_exact::exact) {
      for (int b = 0; b < BPF_REG_SIZE; b++)
        if (os.slot_type[b] != (cs ? cs->slot_type[b] : (u8)STACK_INVALID)) return false;
    }
    // A slot no path from here reads (kernel: no REG_LIVE_READ mark).
    if (exact == bpf_exact::range_within && spi < 64 && !((live >> spi) & 1)) continue;
    bool used = false;
    for (u8 t : os.slot_type)
      used |= t != STACK_INVALID && !(allow_uninit && t == STACK_MISC);
    if (!used) continue;
    if (!cs) return false;
    const bool slot_precise = spi >= 64 || (precise >> spi) & 1;
    const bpf_reg_state *oreg = scalar_reg_for_stack(os, allow_uninit);
    const bpf_reg_state *creg = oreg ? scalar_reg_for_stack(*cs, allow_uninit) : nullptr;
    if (oreg && creg) {
      if (!regsafe(*oreg, *creg, ids, exact, slot_precise)) return false;
      continue;
    }
    for (int b = 0; b < BPF_REG_SIZE; b++) {
      const u8 ot = os.slot_type[b];
      const u8 ct = cs->slot_type[b];
      switch (ot) {
        case STACK_INVALID:
          continue;
        case STACK_MISC:
          if (allow_uninit || ct == STACK_MISC || ct == STACK_ZERO) continue;
          if (ct == STACK_SPILL && cs->spilled_ptr.type == SCALAR_VALUE) continue;
          return false;
        case STACK_ZERO:
          if (ct == STACK_ZERO) continue;
          if (ct == STACK_SPILL && register_is_null(cs->spilled_ptr)) continue;
          return false;
        case STACK_SPILL:
          if (ct != STACK_SPILL) return false;
          continue;
        default:
          return false;
      }
    }
    // A narrower spill (byte 0, the lowest address, starts it) or a spilled pointer.
    if (os.slot_type[0] == STACK_SPILL &&
        !regsafe(os.spilled_ptr, cs->spilled_ptr, ids, exact, slot_precise))
      return false;
  }
  if (exact == bpf_exact::exact) {
    for (size_t spi = o.stack.size(); spi < c.stack.size(); spi++)
      for (u8 t : c.stack[spi].slot_type)
        if (t != STACK_INVALID) return false;
  }
  return true;
}

// Registers that matter in frame i of a state whose current instruction is insn_idx: the
// current frame's live registers, and in a caller the registers live after its call returns
// (r0-r5 are rewritten by the return).
u16 frame_mask(const bpf_verifier_env &env, const bpf_verifier_state &st, size_t i,
               bool precise) {
  auto pick = [&](u32 idx) {
    return precise ? env.aux[idx].precise_in : env.aux[idx].live_in;
  };
  if (i + 1 == st.frame.size()) return pick(st.insn_idx);
  const u32 ret = (u32)st.frame[i + 1].callsite + 1;
  if (ret >= env.aux.size()) return 0xffff;
  return (u16)(pick(ret) & ~0x3fu);
}

}  // namespace


namespace {

// The live and precise register masks of each frame of a state (frame_mask()): they depend on
// the current state only, so is_state_visited() computes them once for all the checkpoints it
// compares with.
struct frame_masks {
  u16 live[MAX_CALL_FRAMES];
  u16 precise[MAX_CALL_FRAMES];
  u64 precise_stack[MAX_CALL_FRAMES];
  u64 live_stack[MAX_CALL_FRAMES];
};

// Precise stack slots of frame i (the precise_stack_in of its current or return instruction);
// all of them while a deeper frame may read this one's stack through a pointer.
u64 frame_stack_mask(const bpf_verifier_env &env, const bpf_verifier_state &st, size_t i) {
  if (i + 1 == st.frame.size()) return env.aux[st.insn_idx].precise_stack_in;
  for (size_t j = i + 1; j < st.frame.size(); j++) {
    const u32 sp = st.frame[j].subprogno;
    if (sp >= env.reads_caller_stack.size() || env.reads_caller_stack[sp]) return ~0ull;
  }
  const u32 ret = (u32)st.frame[i + 1].callsite + 1;
  if (ret >= env.aux.size()) return ~0ull;
  return env.aux[ret].precise_stack_in;
}

void compute_frame_masks(const bpf_verifier_env &env, const bpf_verifier_state &cur,
                         frame_masks &m) {
  const size_t n = std::min(cur.frame.size(), (size_t)MAX_CALL_FRAMES);
  for (size_t i = 0; i < n; i++) {
    m.live[i] = frame_mask(env, cur, i, false);
    m.precise[i] = frame_mask(env, cur, i, true);
    m.precise_stack[i] = frame_stack_mask(env, cur, i);
    // A caller's slots: those live across its call (the call reads what it passes on).
    m.live_stack[i] = i + 1 == cur.frame.size()
                          ? env.aux[cur.insn_idx].live_stack_in
                          : ((u32)cur.frame[i + 1].callsite < env.aux.size()
                                 ? env.aux[cur.frame[i + 1].callsite].live_stack_in
                                 : ~0ull);
  }
}

bool states_equal_masked(const bpf_verifier_state &old, const bpf_verifier_state &cur,
                         bpf_exact exact, const frame_masks &masks, bool allow_uninit) {
  if (old.frame.size() != cur.frame.size() || cur.frame.size() > (size_t)MAX_CALL_FRAMES)
    return false;
  if (old.active_lock.held != cur.active_lock.held || old.active_lock.map != cur.active_lock.map)
    return false;
  if (old.in_sleepable != cur.in_sleepable) return false;
  idmap ids;
  if (old.active_lock.held && !ids.check(old.active_lock.id, cur.active_lock.id)) return false;
  for (size_t i = 0; i < old.frame.size(); i++) {
    const bpf_func_state &o = old.frame[i], &c = cur.frame[i];
    if (o.callsite != c.callsite || o.in_callback_fn != c.in_callback_fn ||
        o.in_async_callback_fn != c.in_async_callback_fn)
      return false;
    // A checkpoint that queued more callback iterations than the current state does not cover
    // it: the current state's remaining iterations were not explored (func_states_equal).
    if (o.callback_depth > c.callback_depth) return false;
    const u16 live = masks.live[i];
    const u16 precise = masks.precise[i];
    for (int r = 0; r < MAX_BPF_REG; r++) {
      if (!(live & (1u << r))) continue;
      if (!regsafe(o.regs[r], c.regs[r], ids, exact, precise & (1u << r))) return false;
    }
    if (!stacksafe(o, c, ids, exact, masks.precise_stack[i], masks.live_stack[i], allow_uninit))
      return false;
  }
  // The same references, acquired in the same places (refsafe).
  if (old.refs.size() != cur.refs.size()) return false;
  for (size_t i = 0; i < old.refs.size(); i++) {
    if (old.refs[i].kind != cur.refs[i].kind || !ids.check(old.refs[i].id, cur.refs[i].id))
      return false;
  }
  return true;
}

}  // namespace

bool states_equal(const bpf_verifier_env &env, const bpf_verifier_state &old,
                  const bpf_verifier_state &cur, bpf_exact exact) {
  if (old.frame.size() != cur.frame.size() || cur.frame.size() > (size_t)MAX_CALL_FRAMES)
    return false;
  frame_masks masks;
  compute_frame_masks(env, cur, masks);
  return states_equal_masked(old, cur, exact, masks, env.opts.allow_uninit_stack);
}

namespace {

// The register's value is the same in both states, ids mapped consistently (regs_exact).
bool regs_exact(const bpf_reg_state &o, const bpf_reg_state &c, idmap &ids) {
  return o.type == c.type && same_bounds(o, c) && o.off == c.off && o.map_ptr == c.map_ptr &&
         o.frameno == c.frameno && ids.check_scalar(o.id, c.id) &&
         ids.check_scalar(o.ref_obj_id, c.ref_obj_id);
}

// maybe_widen_reg(): an imprecise scalar that changed since the previous iteration loses its
// value.
void maybe_widen_reg(const bpf_reg_state &o, bpf_reg_state &c, bool precise, idmap &ids) {
  if (o.type != SCALAR_VALUE || c.type != SCALAR_VALUE) return;
  if (precise || regs_exact(o, c, ids)) return;
  __mark_reg_unknown(c);
}

}  // namespace

void ensure_liveness(bpf_verifier_env &env) {
  if (env.liveness_done) return;
  compute_live_registers(env);
  compute_live_stack(env);
  compute_precise_registers(env);
  env.liveness_done = true;
}

void widen_callback_iteration(bpf_verifier_env &env, u32 callback_subprog) {
  bpf_verifier_state &cur = *env.cur;
  const u32 insn_idx = cur.insn_idx;
  // find_prev_entry(): the nearest checkpoint at the call site on this path (its branch node
  // is an ancestor of the current path's), with the same call sites.
  std::vector<const bpf_branch_node *> chain;
  for (const bpf_branch_node *n = cur.parent; n; n = n->parent) chain.push_back(n);
  const auto &list = env.explored[insn_idx];
  const bpf_verifier_state *prev = nullptr;
  size_t best = SIZE_MAX;
  for (const bpf_verifier_state_list &sl : list) {
    if (!sl.state || sl.node->branches == 0) continue;
    const auto at = std::find(chain.begin(), chain.end(), sl.node);
    if (at == chain.end() || (size_t)(at - chain.begin()) >= best) continue;
    const bpf_verifier_state &st = *sl.state;
    if (st.frame.size() != cur.frame.size()) continue;
    bool same = true;
    for (size_t i = 0; i < st.frame.size(); i++) same &= st.frame[i].callsite == cur.frame[i].callsite;
    if (!same) continue;
    prev = &st;
    best = (size_t)(at - chain.begin());
  }
  if (!prev) return;
  ensure_liveness(env);
  // Precise here: the registers the static analysis marks at the call; the stack slots a use
  // after the call may need (precise_stack_in of the next instruction, and of each caller's
  // return), all of them in every frame when the callback loads a value it needs through a
  // pointer (its context may point into any of these frames), and all of a frame's while a
  // deeper frame may read its stack.
  // All in the loose precision (see bpf_verifier_env::loose_precise_in).
  const std::vector<u8> &rcp = env.callback_reads_precise;
  const bool cb_reads = callback_subprog >= rcp.size() || rcp[callback_subprog];
  const std::vector<u16> &lreg = env.loose_precise_in;
  const std::vector<u64> &lstack = env.loose_precise_stack_in;
  idmap ids;
  const size_t top = cur.frame.size() - 1;
  for (size_t i = cur.frame.size(); i-- > 0;) {
    bpf_func_state &fc = cur.frame[i];
    const bpf_func_state &fo = prev->frame[i];
    const u32 at = i == top ? insn_idx : (u32)cur.frame[i + 1].callsite;
    const u32 after = at + 1 < lreg.size() ? at + 1 : at;
    u16 preg = 0xffff;
    u64 pstack = ~0ull;
    if (after < lreg.size()) {
      preg = i == top ? lreg[at] : (u16)(lreg[after] & ~0x3fu);
      pstack = cb_reads ? ~0ull : lstack[after];
    }
    for (size_t j = i + 1; j < cur.frame.size(); j++) {
      const u32 sp = cur.frame[j].subprogno;
      if (sp >= rcp.size() || rcp[sp]) pstack = ~0ull;
    }
    for (int r = 0; r < MAX_BPF_REG; r++)
      maybe_widen_reg(fo.regs[r], fc.regs[r], (preg >> r) & 1, ids);
    const size_t slots = std::min(fo.stack.size(), fc.stack.size());
    for (size_t spi = 0; spi < slots; spi++) {
      const bpf_stack_state &so = fo.stack[spi];
      bpf_stack_state &sc = fc.stack[spi];
      // A spill of any size starts at the slot's lowest byte (is_spilled_reg()).
      if (so.slot_type[0] != STACK_SPILL || sc.slot_type[0] != STACK_SPILL) continue;
      maybe_widen_reg(so.spilled_ptr, sc.spilled_ptr, spi >= 64 || ((pstack >> spi) & 1), ids);
    }
  }
}

void update_branch_counts(bpf_verifier_env &env, bpf_branch_node *node) {
  (void)env;
  while (node) {
    if (--node->branches) break;
    node = node->parent;
  }
}

int is_state_visited(bpf_verifier_env &env, u32 insn_idx) {
  bpf_verifier_state &cur = *env.cur;
  auto &list = env.explored[insn_idx];
  bool add_new_state = env.jmps_processed - env.prev_jmps_processed >= 2 &&
                       env.insn_processed - env.prev_insn_processed >= 8;
  // A callback-calling instruction always takes a checkpoint: the callback's iterations come
  // back to it and converge against it (mark_force_checkpoint).
  const bool force_new_state = env.aux[insn_idx].calls_callback;
  add_new_state |= force_new_state;
  // states_equal() ignores dead registers: the static liveness is needed from here on.
  if (!list.empty()) ensure_liveness(env);
  frame_masks masks;
  if (!list.empty()) compute_frame_masks(env, cur, masks);
  const bool uninit = env.opts.allow_uninit_stack;
  for (size_t i = 0; i < list.size();) {
    bpf_verifier_state_list &sl = list[i];
    bool miss = true;
    if (sl.node->branches > 0 && force_new_state) {
      // A callback iteration came back to its call: it converged if an earlier iteration's
      // state covers it. Different iterations are not an infinite loop.
      if (states_equal_masked(*sl.state, cur, bpf_exact::range_within, masks, uninit)) {
        sl.hit_cnt++;
        return 1;
      }
    } else if (sl.node->branches > 0) {
      // An ancestor of this path: the program looped back here. A path that came through one
      // more async callback is a later run of the callback, not a loop (async_entry_cnt), and
      // one queued through more callback iterations is a later iteration
      // (callback_unroll_depth).
      if (sl.state->async_entry_cnt == cur.async_entry_cnt &&
          sl.state->callback_unroll_depth == cur.callback_unroll_depth &&
          states_equal_masked(*sl.state, cur, bpf_exact::exact, masks, uninit)) {
        // The source line, the reason, then both states (the kernel's last line before the
        // summary is the old one's).
        verbose_linfo(env, insn_idx, "; ");
        env.verbose_err("infinite loop detected at insn %u", insn_idx);
        const bpf_func_state &old_f =
            sl.state->frame[std::min<size_t>(cur.curframe(), sl.state->frame.size() - 1)];
        // The explored state's registers that the loop's decisions read are the ones the
        // kernel's backtracking has marked precise there ("P"); the current state has no marks
        // yet.
        const u16 precise = env.aux[insn_idx].precise_in;
        env.verbose_err("cur state:%s", verifier_state_str(env, cur, cur.cur(), 0).c_str());
        env.verbose_err("old state:%s", verifier_state_str(env, *sl.state, old_f, precise).c_str());
        return -EINVAL;
      }
      // In a loop, iterations differ: a checkpoint only every 20 jumps or 100 instructions.
      if (env.jmps_processed - env.prev_jmps_processed < 20 &&
          env.insn_processed - env.prev_insn_processed < 100)
        add_new_state = false;
    } else if (states_equal_masked(*sl.state, cur, bpf_exact::range_within, masks, uninit)) {
      sl.hit_cnt++;
      return 1;
    }
    if (miss) sl.miss_cnt++;
    // A callback call's checkpoint on the current path is the previous iteration the next
    // one is compared and widened with: kept longer.
    const u32 n = force_new_state && sl.node->branches > 0 ? 64 : 3;
    if (sl.miss_cnt > sl.hit_cnt * n + n) {
      // Unlikely to help: drop it (its branch node stays for the paths below it).
      env.free_state(std::move(list[i].state));
      list[i] = std::move(list.back());
      list.pop_back();
      env.live_states--;
      continue;
    }
    i++;
  }
  if (!add_new_state) return 0;
  env.prev_jmps_processed = env.jmps_processed;
  env.prev_insn_processed = env.insn_processed;
  if (!env.nodes) env.nodes.emplace();
  env.nodes->push_back(bpf_branch_node{cur.parent, 1});
  bpf_branch_node *node = &env.nodes->back();
  bpf_verifier_state_list sl;
  sl.state = env.copy_state(cur);
  sl.state->parent = nullptr;
  sl.node = node;
  cur.parent = node;
  list.push_back(std::move(sl));
  env.total_states++;
  env.live_states++;
  env.peak_states = std::max(env.peak_states, env.live_states);
  env.res.max_states_per_insn = std::max(env.res.max_states_per_insn, (u32)list.size());
  return 0;
}

}  // namespace umemcg
