// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_cfg.cc: the program's shape before exploration: subprogram layout, control
// flow graph checks (jumps inside their subprogram, every instruction reachable), prune
// points, static register liveness, and the combined stack depth of call chains.
//
// Mirrors: kernel/bpf/verifier.c (check_subprogs, check_cfg, visit_insn, mark_prune_point,
//          compute_live_registers, check_max_stack_depth) (Linux 6.19)
// Emulation: back-edges are always allowed (privileged loader); loops are proven bounded by
//   exploration. Liveness is a plain backward data-flow over the CFG, used only to ignore
//   dead registers when comparing states.
#include <algorithm>

#include "bpfvm/verifier_state.h"

namespace umemcg {

namespace {

bool is_func_ref(const bpf_insn &insn) {
  return bpf_is_ldimm64(insn) && insn.src_reg == BPF_PSEUDO_FUNC;
}

}  // namespace

u32 find_subprog(const bpf_verifier_env &env, u32 insn_idx) {
  auto it = std::upper_bound(env.subprogs.begin(), env.subprogs.end(), insn_idx,
                             [](u32 v, const bpf_subprog_info &s) { return v < s.start; });
  return (u32)(it - env.subprogs.begin()) - 1;
}

int check_subprogs(bpf_verifier_env &env) {
  const size_t cnt = env.insns.size();
  std::vector<u32> starts = {0};
  for (size_t i = 0; i < cnt; i++) {
    const bpf_opcode_desc *d = env.aux[i].desc;
    if (!d) continue;
    const bpf_insn &insn = env.insns[i];
    if (bpf_pseudo_call(insn) || is_func_ref(insn)) {
      const s64 t = (s64)i + insn.imm + 1;
      if (t < 0 || t >= (s64)cnt || !env.aux[t].desc) {
        env.verbose_err(is_func_ref(insn) ? "invalid func pointer at insn %zu" : "call to invalid destination at insn %zu", i);
        return -EINVAL;
      }
      starts.push_back((u32)t);
    }
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  env.subprogs.clear();
  for (size_t s = 0; s < starts.size(); s++) {
    bpf_subprog_info sp;
    sp.start = starts[s];
    sp.end = s + 1 < starts.size() ? starts[s + 1] : (u32)cnt;
    env.subprogs.push_back(sp);
  }
  for (u32 s = 0; s < env.subprogs.size(); s++) {
    bpf_subprog_info &sp = env.subprogs[s];
    u32 last = sp.start;
    for (u32 i = sp.start; i < sp.end; i++) {
      env.aux[i].subprogno = s;
      const bpf_opcode_desc *d = env.aux[i].desc;
      if (!d) continue;
      last = i;
      const bpf_form_desc &f = bpf_form_of(*d);
      const bpf_insn &insn = env.insns[i];
      if (f.kind == bpf_opc::K_JUMP || f.kind == bpf_opc::K_COND_JUMP) {
        const s64 t = bpf_jump_target(*d, insn, i);
        if (t < sp.start || t >= sp.end) {
          env.res.error_insn = (int)i;
          env.verbose_err("jump out of range from insn %u to %lld", i, (long long)t);
          return -EINVAL;
        }
      }
      if (bpf_pseudo_call(insn) || is_func_ref(insn)) {
        const u32 callee = find_subprog(env, (u32)((s64)i + insn.imm + 1));
        sp.callees.push_back(callee);
        if (is_func_ref(insn)) env.subprogs[callee].is_callback = true;
      }
    }
    const bpf_form_desc &lf = bpf_form_of(*env.aux[last].desc);
    if (lf.kind != bpf_opc::K_EXIT && lf.kind != bpf_opc::K_JUMP) {
      env.res.error_insn = (int)last;
      env.verbose_err("last insn is not an exit or jmp");
      return -EINVAL;
    }
  }
  return 0;
}

// Successors of insn i inside its subprogram, into out[0..return value) (at most 2; calls: the
// next instruction; callees are entered through callee_entry()). No container: this runs for
// every instruction on every pass of the data-flow fixpoints below.
static int successors(const bpf_verifier_env &env, u32 i, u32 out[2]) {
  const bpf_opcode_desc *d = env.aux[i].desc;
  const bpf_form_desc &f = bpf_form_of(*d);
  const bpf_insn &insn = env.insns[i];
  switch (f.kind) {
    case bpf_opc::K_EXIT:
      return 0;
    case bpf_opc::K_JUMP:
      out[0] = (u32)bpf_jump_target(*d, insn, i);
      return 1;
    case bpf_opc::K_COND_JUMP:
      out[0] = i + 1;
      out[1] = (u32)bpf_jump_target(*d, insn, i);
      return 2;
    default:
      out[0] = i + f.slots;
      return 1;
  }
}

// The subprogram a bpf-to-bpf call or a callback reference at insn i enters, or -1.
static s64 callee_entry(const bpf_verifier_env &env, u32 i) {
  const bpf_insn &insn = env.insns[i];
  if (bpf_pseudo_call(insn) || is_func_ref(insn)) return (s64)i + insn.imm + 1;
  return -1;
}

int check_cfg(bpf_verifier_env &env) {
  const u32 cnt = (u32)env.insns.size();
  std::vector<u8> seen(cnt, 0);
  std::vector<u32> work;
  work.reserve(cnt);
  work.push_back(0);
  seen[0] = 1;
  env.aux[0].prune_point = true;
  while (!work.empty()) {
    const u32 i = work.back();
    work.pop_back();
    u32 succ[2];
    const int n = successors(env, i, succ);
    const bpf_form_desc &f = bpf_form_of(*env.aux[i].desc);
    for (int k = 0; k < n; k++) {
      const u32 s = succ[k];
      if (f.kind == bpf_opc::K_JUMP || f.kind == bpf_opc::K_COND_JUMP || f.kind == bpf_opc::K_CALL)
        env.aux[s].prune_point = true;
      if (!seen[s]) {
        seen[s] = 1;
        work.push_back(s);
      }
    }
    const s64 e = callee_entry(env, i);
    if (e >= 0) {
      const u32 s = (u32)e;
      env.aux[s].prune_point = true;
      if (!seen[s]) {
        seen[s] = 1;
        work.push_back(s);
      }
    }
  }
  for (u32 i = 0; i < cnt; i++) {
    if (env.aux[i].desc && !seen[i]) {
      env.res.error_insn = (int)i;
      env.verbose_err("unreachable insn %u", i);
      return -EINVAL;
    }
  }
  return 0;
}

void compute_live_registers(bpf_verifier_env &env) {
  using namespace bpf_opc;
  const u32 cnt = (u32)env.insns.size();
  std::vector<u16> use(cnt, 0), def(cnt, 0);
  for (u32 i = 0; i < cnt; i++) {
    const bpf_opcode_desc *d = env.aux[i].desc;
    if (!d) continue;
    const bpf_form_desc &f = bpf_form_of(*d);
    const bpf_insn &insn = env.insns[i];
    u16 u = 0, w = 0;
    if (f.flow & RD_DST) u |= 1u << insn.dst_reg;
    if (f.flow & RD_SRC) u |= 1u << insn.src_reg;
    if (f.flow & RD_R0) u |= 1u;
    if (f.flow & WR_DST) w |= 1u << insn.dst_reg;
    if (f.flow & WR_SRC) w |= 1u << insn.src_reg;
    if (f.flow & WR_R0) w |= 1u;
    if (f.flow & CLOBBER_CALLER_SAVED) {
      u |= 0x3e;  // r1-r5 may be arguments
      w |= 0x3f;
    }
    if (f.kind == K_PACKET) u |= 1u << BPF_REG_6;
    // A register both read and written by one instruction is read first.
    def[i] = (u16)(w & ~u);
    use[i] = u;
  }
  bool changed = true;
  while (changed) {
    changed = false;
    for (u32 k = cnt; k-- > 0;) {
      if (!env.aux[k].desc) continue;
      u32 succ[2];
      const int n = successors(env, k, succ);
      u16 out = 0;
      for (int j = 0; j < n; j++)
        if (succ[j] < cnt) out |= env.aux[succ[j]].live_in;
      const u16 in = (u16)(use[k] | (out & ~def[k]) | (1u << BPF_REG_FP));
      if (in != env.aux[k].live_in) {
        env.aux[k].live_in = in;
        changed = true;
      }
    }
  }
}

void compute_precise_registers(bpf_verifier_env &env) {
  using namespace bpf_opc;
  const u32 cnt = (u32)env.insns.size();
  bool changed = true;
  while (changed) {
    changed = false;
    for (u32 k = cnt; k-- > 0;) {
      const bpf_opcode_desc *d = env.aux[k].desc;
      if (!d) continue;
      const bpf_form_desc &f = bpf_form_of(*d);
      const bpf_insn &insn = env.insns[k];
      u32 succ[2];
      const int n = successors(env, k, succ);
      u16 out = 0;
      for (int j = 0; j < n; j++)
        if (succ[j] < cnt) out |= env.aux[succ[j]].precise_in;
      const u16 dst = (u16)(1u << insn.dst_reg), src = (u16)(1u << insn.src_reg);
      u16 in = out;
      switch (f.kind) {
        case K_ALU: {
          const bool needed = out & dst;
          in &= (u16)~dst;
          if (needed) {
            if (f.flow & RD_DST) in |= dst;
            if (f.flow & RD_SRC) in |= src;
          }
          break;
        }
        case K_LD_IMM64:
          in &= (u16)~dst;
          break;
        case K_LOAD:
          in = (u16)((in & ~dst) | src);
          break;
        case K_STORE:
        case K_ATOMIC:
          // The address, and the stored value (it may be reloaded from the stack).
          if (f.flow & WR_SRC) in &= (u16)~src;
          if (f.flow & WR_R0) in &= (u16)~1u;
          in |= dst;
          if (f.flow & RD_SRC) in |= src;
          if (f.flow & RD_R0) in |= 1u;
          break;
        case K_COND_JUMP:
          in |= dst;
          if (f.flow & RD_SRC) in |= src;
          break;
        case K_CALL:
        case K_PACKET:
          in = (u16)((in & ~0x3fu) | 0x3eu | (1u << BPF_REG_6));
          if (f.flow & RD_DST) in |= dst;
          break;
        case K_EXIT:
          in = (env.aux[k].subprogno > 0 || env.ptype.has_retval_range) ? 1u : 0u;
          break;
        case K_JUMP:
          break;
      }
      in |= (u16)(1u << BPF_REG_FP);
      in &= env.aux[k].live_in;
      if (in != env.aux[k].precise_in) {
        env.aux[k].precise_in = in;
        changed = true;
      }
    }
  }
}

namespace {

// Frame bytes of the deepest call chain from subprog s (call graphs here are acyclic or limited
// by frame depth).
u32 deepest_chain(const bpf_verifier_env &env, std::vector<u8> &visiting, u32 s, u32 depth) {
  if (depth >= (u32)MAX_CALL_FRAMES || visiting[s]) return 0;
  visiting[s] = 1;
  u32 best = 0;
  for (u32 c : env.subprogs[s].callees) best = std::max(best, deepest_chain(env, visiting, c, depth + 1));
  visiting[s] = 0;
  const u32 d = std::max<u32>(env.subprogs[s].stack_depth, 1);
  return (d + 31) / 32 * 32 + best;
}

}  // namespace

int check_max_stack_depth(bpf_verifier_env &env) {
  std::vector<u8> visiting(env.subprogs.size(), 0);
  const u32 total = deepest_chain(env, visiting, 0, 0);
  if (total > (u32)MAX_BPF_STACK) {
    env.verbose_err("combined stack size of %zu calls is %u. Too large", env.subprogs.size(), total);
    return -EACCES;
  }
  return 0;
}

}  // namespace umemcg
