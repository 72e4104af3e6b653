// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_cfg.cc: the program's shape before exploration: subprogram layout, control
// flow graph checks (jumps inside their subprogram, every instruction reachable), prune
// points, static register and stack-slot liveness and precision, bpf_fastcall patterns, and
// the frames and combined stack depth of every call chain.
//
// Mirrors: kernel/bpf/verifier.c (check_subprogs, check_cfg, visit_insn, mark_prune_point,
//          compute_live_registers, mark_fastcall_patterns, remove_fastcall_spills_fills,
//          round_up_stack_depth, check_max_stack_depth_subprog), kernel/bpf/liveness.c
//          (stack slot liveness) (Linux 6.19)
// Emulation: back-edges are always allowed (privileged loader); loops are proven bounded by
//   exploration. Liveness and precision are plain data-flows over the CFG, used only to ignore
//   dead registers and slots, and the ranges of scalars no safety check depends on, when
//   comparing states; precision is static where the kernel backtracks from each check
//   (mark_chain_precision): a register that reaches a branch is precise even when the branch
//   is not decided.
#include <algorithm>
#include <climits>

#include "bpfvm/helper_proto.h"
#include "bpfvm/kfunc.h"
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
    if (env.log_on(BPF_LOG_LEVEL2)) env.log("func#%zu @%u\n", s, sp.start);
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
  while (!work.empty()) {
    const u32 i = work.back();
    work.pop_back();
    u32 succ[2];
    const int n = successors(env, i, succ);
    const bpf_form_desc &f = bpf_form_of(*env.aux[i].desc);
    // Prune points as the kernel's visit_insn() marks them: a conditional jump and its target,
    // a jump's target, the instruction after a call, a bpf-to-bpf call (or callback reference)
    // and the subprogram it enters.
    if (f.kind == bpf_opc::K_COND_JUMP) {
      env.aux[i].prune_point = true;
      env.aux[succ[1]].prune_point = true;
    } else if (f.kind == bpf_opc::K_JUMP || f.kind == bpf_opc::K_CALL) {
      env.aux[succ[0]].prune_point = true;
    }
    // A callback-calling helper: its callback's exit comes back to the call, where the
    // iterations are compared (mark_calls_callback, mark_force_checkpoint).
    if (f.kind == bpf_opc::K_CALL && env.insns[i].src_reg == 0 && env.insns[i].imm >= 0 &&
        bpf_is_sync_callback_calling_function((u32)env.insns[i].imm)) {
      env.aux[i].calls_callback = true;
      env.aux[i].prune_point = true;
    }
    for (int k = 0; k < n; k++) {
      const u32 s = succ[k];
      if (!seen[s]) {
        seen[s] = 1;
        work.push_back(s);
      }
    }
    const s64 e = callee_entry(env, i);
    if (e >= 0) {
      const u32 s = (u32)e;
      env.aux[i].prune_point = true;
      env.aux[i + f.slots < cnt ? i + f.slots : i].prune_point = true;
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

namespace {

// What a register may hold, for the stack liveness: a pointer into the current frame's stack at
// a known offset from fp, something that is certainly not one, or unknown (it may point
// anywhere in the frame's stack).
constexpr s64 kFpTop = INT64_MIN;
constexpr s64 kNotStack = INT64_MAX;
struct fp_regs {
  s64 r[MAX_BPF_REG];
  bool reached = false;
};

bool fp_meet(fp_regs &into, const fp_regs &from) {
  if (!from.reached) return false;
  if (!into.reached) {
    into = from;
    return true;
  }
  bool changed = false;
  for (int i = 0; i < MAX_BPF_REG; i++)
    if (into.r[i] != from.r[i] && into.r[i] != kFpTop) {
      into.r[i] = kFpTop;
      changed = true;
    }
  return changed;
}

// The registers after insn k, given them before it.
void fp_transfer(const bpf_verifier_env &env, u32 k, fp_regs &st) {
  using namespace bpf_opc;
  const bpf_opcode_desc *d = env.aux[k].desc;
  const bpf_form_desc &f = bpf_form_of(*d);
  const bpf_insn &insn = env.insns[k];
  s64 &dst = st.r[insn.dst_reg];
  const s64 src = st.r[insn.src_reg];
  switch (f.kind) {
    case K_ALU: {
      const bool alu64 = (insn.code & 7) == BPF_ALU64;
      const u8 op = insn.code & 0xf0;
      const bool x = (insn.code & BPF_X) == BPF_X && (f.flow & RD_SRC);
      if (!alu64) {
        dst = kNotStack;  // a 32-bit result is no pointer
      } else if (op == BPF_MOV) {
        dst = x ? (insn.off ? kNotStack : src) : kNotStack;
      } else if (!x && (op == BPF_ADD || op == BPF_SUB) && dst != kFpTop && dst != kNotStack) {
        dst = op == BPF_ADD ? dst + insn.imm : dst - insn.imm;
      } else if (dst == kNotStack && (!x || src == kNotStack)) {
        // scalar op scalar stays no stack pointer
      } else {
        dst = kFpTop;
      }
      break;
    }
    case K_LD_IMM64:
      dst = kNotStack;
      break;
    case K_LOAD:
      // A fill from the stack may be a spilled stack pointer; other memory holds none.
      dst = src == kNotStack ? kNotStack : kFpTop;
      break;
    case K_ATOMIC: {
      const s64 v = dst == kNotStack ? kNotStack : kFpTop;
      if (f.flow & WR_SRC) st.r[insn.src_reg] = v;
      if (f.flow & WR_R0) st.r[BPF_REG_0] = v;
      break;
    }
    case K_CALL:
    case K_PACKET:
      for (int i = 1; i <= 5; i++) st.r[i] = kNotStack;
      // A subprogram may return a pointer into its caller's stack; helpers and kfuncs return
      // none.
      st.r[BPF_REG_0] = f.kind == K_CALL && bpf_pseudo_call(insn) ? kFpTop : kNotStack;
      break;
    default:
      break;
  }
}

// Slots of [off, off + size) from fp, or every slot when the offset is unknown.
u64 fp_slots(s64 base, s64 off, s64 size) {
  if (base == kNotStack) return 0;
  if (base == kFpTop) return ~0ull;
  const s64 lo = base + off;
  if (lo >= 0 || lo < -MAX_BPF_STACK) return 0;
  const s64 hi = std::min<s64>(lo + size, 0);
  u64 m = 0;
  for (s64 a = lo; a < hi; a += BPF_REG_SIZE) m |= 1ull << ((-a - 1) / BPF_REG_SIZE);
  m |= 1ull << ((-(hi - 1) - 1) / BPF_REG_SIZE);
  return m;
}

int access_size(u8 code) {
  static constexpr int sizes[4] = {4, 2, 1, 8};
  return sizes[(code >> 3) & 3];
}

}  // namespace

void compute_live_stack(bpf_verifier_env &env) {
  using namespace bpf_opc;
  const u32 cnt = (u32)env.insns.size();
  // Forward: what each register may hold before each instruction.
  std::vector<fp_regs> in(cnt);
  for (const bpf_subprog_info &sp : env.subprogs) {
    if (sp.start >= cnt) continue;
    fp_regs entry;
    entry.reached = true;
    for (s64 &r : entry.r) r = kNotStack;  // arguments point into a caller's frame, if anywhere
    entry.r[BPF_REG_FP] = 0;
    fp_meet(in[sp.start], entry);
  }
  bool has_callbacks = false;
  for (const bpf_subprog_info &sp : env.subprogs) has_callbacks |= sp.is_callback;
  for (bool changed = true; changed;) {
    changed = false;
    for (u32 k = 0; k < cnt; k++) {
      if (!env.aux[k].desc || !in[k].reached) continue;
      fp_regs out = in[k];
      fp_transfer(env, k, out);
      u32 succ[2];
      const int n = successors(env, k, succ);
      for (int j = 0; j < n; j++)
        if (succ[j] < cnt) changed |= fp_meet(in[succ[j]], out);
    }
  }
  // Backward: slots read before fully written.
  std::vector<u64> use(cnt, 0), def(cnt, 0);
  for (u32 k = 0; k < cnt; k++) {
    const bpf_opcode_desc *d = env.aux[k].desc;
    if (!d) continue;
    const fp_regs &st = in[k];
    if (!st.reached) continue;
    const bpf_form_desc &f = bpf_form_of(*d);
    const bpf_insn &insn = env.insns[k];
    switch (f.kind) {
      case K_LOAD:
        use[k] = fp_slots(st.r[insn.src_reg], insn.off, access_size(insn.code));
        break;
      case K_ATOMIC:
        use[k] = fp_slots(st.r[insn.dst_reg], insn.off, access_size(insn.code));
        break;
      case K_STORE: {
        const s64 b = st.r[insn.dst_reg];
        if (b != kFpTop && b != kNotStack && access_size(insn.code) == BPF_REG_SIZE &&
            (b + insn.off) % BPF_REG_SIZE == 0)
          def[k] = fp_slots(b, insn.off, BPF_REG_SIZE);
        break;
      }
      case K_CALL: {
        // A helper reads from a stack pointer argument up to the frame's top; a subprogram or a
        // callback may read anywhere in the frame through it.
        const bool any_frame = bpf_pseudo_call(insn) || has_callbacks;
        for (int i = 1; i <= 5; i++) {
          const s64 a = st.r[i];
          if (a == kNotStack) continue;
          use[k] |= (a == kFpTop || any_frame) ? ~0ull : fp_slots(a, 0, -a);
        }
        break;
      }
      default:
        break;
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (u32 k = cnt; k-- > 0;) {
      const bpf_opcode_desc *d = env.aux[k].desc;
      if (!d) continue;
      u64 out = 0;
      if (bpf_form_of(*d).kind != K_EXIT) {
        u32 succ[2];
        const int n = successors(env, k, succ);
        for (int j = 0; j < n; j++)
          if (succ[j] < cnt) out |= env.aux[succ[j]].live_stack_in;
      }
      const u64 li = use[k] | (out & ~def[k]);
      if (li != env.aux[k].live_stack_in) {
        env.aux[k].live_stack_in = li;
        changed = true;
      }
    }
  }
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

namespace {

int mem_size(u8 code) {
  static constexpr int sizes[4] = {4, 2, 1, 8};
  return sizes[(code >> 3) & 3];
}

// Stack slots (bits spi) holding any byte of [off, off + size) from fp; 0 when outside the stack
// (check_mem_access() rejects that access).
u64 stack_slots(s64 off, int size) {
  if (off >= 0 || off < -MAX_BPF_STACK || off + size > 0) return 0;
  const u32 hi = (u32)((-off - 1) / BPF_REG_SIZE);
  const u32 lo = (u32)((-(off + size - 1) - 1) / BPF_REG_SIZE);
  u64 m = 0;
  for (u32 spi = lo; spi <= hi; spi++) m |= 1ull << spi;
  return m;
}

constexpr u64 kAllSlots = ~0ull;

}  // namespace

bool can_elide_value_nullness(const bpf_verifier_map &map) {
  if (map.map_flags & BPF_F_INNER_MAP) return false;
  return map.map_type == BPF_MAP_TYPE_ARRAY || map.map_type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

bpf_static_reg bpf_static_reg_value(const bpf_verifier_env &env, u32 k, u32 regno) {
  using namespace bpf_opc;
  bpf_static_reg v;
  s64 add = 0;
  for (u32 m = k;;) {
    // The value regno enters m with: from one straight-line predecessor only.
    if (env.aux[m].prune_point || m == 0) return v;
    u32 j = m - 1;
    if (!env.aux[j].desc) {
      if (j == 0) return v;
      j--;  // the second slot of an ld_imm64
    }
    const bpf_opcode_desc *d = env.aux[j].desc;
    if (!d) return v;
    const bpf_form_desc &f = bpf_form_of(*d);
    const bpf_insn &insn = env.insns[j];
    switch (f.kind) {
      case K_ALU:
        if (insn.dst_reg != regno) break;
        if (insn.code == (BPF_ALU64 | BPF_ADD | BPF_K)) {
          add += insn.imm;
          break;
        }
        if (insn.code == (BPF_ALU64 | BPF_SUB | BPF_K)) {
          add -= insn.imm;
          break;
        }
        if (insn.code == (BPF_ALU64 | BPF_MOV | BPF_X) && insn.off == 0 &&
            insn.src_reg == BPF_REG_FP) {
          v.kind = bpf_static_reg::fp_plus;
          v.off = add;
        }
        return v;
      case K_LD_IMM64:
        if (insn.dst_reg != regno) break;
        if (add == 0 && (insn.src_reg == BPF_PSEUDO_MAP_FD || insn.src_reg == BPF_PSEUDO_MAP_IDX) &&
            insn.imm >= 0 && (size_t)insn.imm < env.opts.maps.size()) {
          v.kind = bpf_static_reg::map_ref;
          v.map = &env.opts.maps[(size_t)insn.imm];
        }
        return v;
      case K_LOAD:
        if (insn.dst_reg == regno) return v;
        break;
      case K_STORE:
        break;
      case K_ATOMIC:
        if (((f.flow & WR_SRC) && insn.src_reg == regno) || ((f.flow & WR_R0) && regno == 0))
          return v;
        break;
      default:
        return v;
    }
    m = j;
  }
}

// One backward pass: returns whether any reg_in(k)/stack_in(k) changed (aux[].precise_in and
// precise_stack_in, or the loose sets of compute_callback_reads_precise()). loose: a value stored
// through a pointer other than fp is not made precise (the kernel's backtracking does not follow
// a store through a pointer; the strict sets must, as they decide pruning).
template <typename RegIn, typename StackIn>
static bool precise_pass(bpf_verifier_env &env, bool callbacks_read_caller_stack, bool loose,
                         RegIn reg_in, StackIn stack_in) {
  using namespace bpf_opc;
  const u32 cnt = (u32)env.insns.size();
  bool changed = false;
  for (u32 k = cnt; k-- > 0;) {
    const bpf_opcode_desc *d = env.aux[k].desc;
    if (!d) continue;
    const bpf_form_desc &f = bpf_form_of(*d);
    const bpf_insn &insn = env.insns[k];
    u32 succ[2];
    const int n = successors(env, k, succ);
    u16 out = 0;
    u64 sout = 0;
    for (int j = 0; j < n; j++) {
      if (succ[j] >= cnt) continue;
      out |= reg_in(succ[j]);
      sout |= stack_in(succ[j]);
    }
    const u16 dst = (u16)(1u << insn.dst_reg), src = (u16)(1u << insn.src_reg);
    u16 in = out;
    u64 sin = sout;
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
      case K_LOAD: {
        const bool needed = out & dst;
        in = (u16)((in & ~dst) | src);
        // A filled register that must stay precise makes the slots it came from precise; a
        // load through another pointer may read any stack slot.
        if (needed)
          sin |= insn.src_reg == BPF_REG_FP ? stack_slots(insn.off, mem_size(insn.code))
                                            : kAllSlots;
        break;
      }
      case K_STORE:
        // The address, and the stored value when it may be filled back into a precise
        // register: a slot of precise_stack_in, or anywhere through another pointer.
        in |= dst;
        if (insn.dst_reg == BPF_REG_FP) {
          const int size = mem_size(insn.code);
          const u64 slots = stack_slots(insn.off, size);
          if ((f.flow & RD_SRC) && (sout & slots)) in |= src;
          if (size == BPF_REG_SIZE && insn.off % BPF_REG_SIZE == 0) sin &= ~slots;
        } else if ((f.flow & RD_SRC) && !loose) {
          in |= src;
        }
        break;
      case K_ATOMIC:
        if (f.flow & WR_SRC) in &= (u16)~src;
        if (f.flow & WR_R0) in &= (u16)~1u;
        in |= dst;
        if (f.flow & RD_SRC) in |= src;
        if (f.flow & RD_R0) in |= 1u;
        sin |= insn.dst_reg == BPF_REG_FP ? stack_slots(insn.off, mem_size(insn.code))
                                          : ((f.flow & (WR_SRC | WR_R0)) ? kAllSlots : 0);
        break;
      case K_COND_JUMP:
        in |= dst;
        if (f.flow & RD_SRC) in |= src;
        break;
      case K_CALL:
      case K_PACKET:
        in = (u16)((in & ~0x3fu) | 0x3eu | (1u << BPF_REG_6));
        if (f.flow & RD_DST) in |= dst;
        if (f.kind == K_CALL) {
          if (bpf_pseudo_call(insn)) {
            const u64 t = (u64)k + (u64)(s64)insn.imm + 1;
            const std::vector<u8> &rcs = loose ? env.callback_reads_precise : env.reads_caller_stack;
            if (t < cnt && rcs[env.aux[t].subprogno]) sin = kAllSlots;
          } else if (callbacks_read_caller_stack) {
            sin = kAllSlots;
          }
          // A map lookup whose key's stack slot may hold a constant that proves the result
          // non-NULL (get_constant_map_key(), which marks the slot precise).
          if (insn.src_reg == 0 && insn.imm == BPF_FUNC_map_lookup_elem) {
            const bpf_static_reg m = bpf_static_reg_value(env, k, BPF_REG_1);
            const bpf_static_reg key = bpf_static_reg_value(env, k, BPF_REG_2);
            if (key.kind == bpf_static_reg::fp_plus &&
                (m.kind != bpf_static_reg::map_ref || can_elide_value_nullness(*m.map)))
              sin |= stack_slots(key.off, (int)(m.map ? m.map->key_size : 4));
          }
        }
        break;
      case K_EXIT:
        in = (env.aux[k].subprogno > 0 || env.ptype.has_retval_range) ? 1u : 0u;
        sin = 0;
        break;
      case K_JUMP:
        break;
    }
    in |= (u16)(1u << BPF_REG_FP);
    in &= env.aux[k].live_in;
    if (in != reg_in(k) || sin != stack_in(k)) {
      reg_in(k) = in;
      stack_in(k) = sin;
      changed = true;
    }
  }
  return changed;
}

// Closes a per-subprogram mark over the static call graph: a subprogram that calls a marked
// one (directly or through others) is marked too.
static void mark_callers(const bpf_verifier_env &env, std::vector<u8> *marks) {
  std::vector<u8> &r = *marks;
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t s = 0; s < r.size(); s++) {
      if (r[s]) continue;
      for (u32 c : env.subprogs[s].callees)
        if (c < r.size() && r[c]) {
          r[s] = 1;
          grew = true;
          break;
        }
    }
  }
}

// Subprograms that may load a precise value through a pointer other than fp (K_LOAD into a
// register of the next instruction's precise_in, or an atomic fetch), then closed over the
// static call graph.
static bool update_reads_caller_stack(bpf_verifier_env &env) {
  using namespace bpf_opc;
  const u32 cnt = (u32)env.insns.size();
  std::vector<u8> r(env.subprogs.size(), 0);
  for (u32 k = 0; k < cnt; k++) {
    const bpf_opcode_desc *d = env.aux[k].desc;
    if (!d) continue;
    const bpf_form_desc &f = bpf_form_of(*d);
    const bpf_insn &insn = env.insns[k];
    bool ptr_read = false;
    if (f.kind == K_LOAD && insn.src_reg != BPF_REG_FP && k + 1 < cnt)
      ptr_read = env.aux[k + 1].precise_in & (1u << insn.dst_reg);
    else if (f.kind == K_ATOMIC && insn.dst_reg != BPF_REG_FP)
      ptr_read = f.flow & (WR_SRC | WR_R0);
    if (ptr_read) r[env.aux[k].subprogno] = 1;
  }
  mark_callers(env, &r);
  const bool changed = r != env.reads_caller_stack;
  env.reads_caller_stack = std::move(r);
  return changed;
}

// The loose precision (precise_pass() with loose set) and env.callback_reads_precise: the
// subprograms that load, through a pointer other than fp, a value the loose precision needs,
// closed over the static call graph; iterated to a common fixpoint as the strict sets are.
// Computed only when the program has callbacks (they are what it is for).
static void compute_loose_precision(bpf_verifier_env &env) {
  using namespace bpf_opc;
  const u32 cnt = (u32)env.insns.size();
  env.callback_reads_precise.assign(env.subprogs.size(), 0);
  env.loose_precise_in.clear();
  env.loose_precise_stack_in.clear();
  bool has_callbacks = false;
  for (const bpf_subprog_info &sp : env.subprogs) has_callbacks |= sp.is_callback;
  if (!has_callbacks) return;
  std::vector<u16> &regs = env.loose_precise_in;
  std::vector<u64> &stack = env.loose_precise_stack_in;
  regs.assign(cnt, 0);
  stack.assign(cnt, 0);
  for (;;) {
    bool callbacks = false;
    for (size_t s = 0; s < env.subprogs.size(); s++)
      callbacks |= env.subprogs[s].is_callback && env.callback_reads_precise[s];
    while (precise_pass(env, callbacks, true, [&](u32 k) -> u16 & { return regs[k]; },
                        [&](u32 k) -> u64 & { return stack[k]; })) {
    }
    std::vector<u8> r(env.subprogs.size(), 0);
    for (u32 k = 0; k + 1 < cnt; k++) {
      const bpf_opcode_desc *d = env.aux[k].desc;
      if (!d) continue;
      const bpf_form_desc &f = bpf_form_of(*d);
      const bpf_insn &insn = env.insns[k];
      bool ptr_read = false;
      if (f.kind == K_LOAD && insn.src_reg != BPF_REG_FP)
        ptr_read = regs[k + 1] & (1u << insn.dst_reg);
      else if (f.kind == K_ATOMIC && insn.dst_reg != BPF_REG_FP)
        ptr_read = ((f.flow & WR_SRC) && (regs[k + 1] & (1u << insn.src_reg))) ||
                   ((f.flow & WR_R0) && (regs[k + 1] & 1u));
      if (ptr_read) r[env.aux[k].subprogno] = 1;
    }
    mark_callers(env, &r);
    if (r == env.callback_reads_precise) break;
    env.callback_reads_precise = std::move(r);
  }
}

void compute_precise_registers(bpf_verifier_env &env) {
  // Precise registers decide which subprograms read their callers' stacks, which widen the
  // precise slots at their call sites: iterate both to a common fixpoint (both only grow).
  env.reads_caller_stack.assign(env.subprogs.size(), 0);
  for (;;) {
    bool callbacks = false;
    for (size_t s = 0; s < env.subprogs.size(); s++)
      callbacks |= env.subprogs[s].is_callback && env.reads_caller_stack[s];
    while (precise_pass(env, callbacks, false,
                        [&](u32 k) -> u16 & { return env.aux[k].precise_in; },
                        [&](u32 k) -> u64 & { return env.aux[k].precise_stack_in; })) {
    }
    if (!update_reads_caller_stack(env)) break;
  }
  compute_loose_precision(env);
}

namespace {

// bpf_fastcall: a call whose callee clobbers fewer registers than the calling convention says
// (a helper's r0 and its arguments' registers) may be surrounded by spills and fills of the
// registers it keeps, at the lowest stack offsets of the subprogram, which the kernel removes
// when it inlines the call (bpf_get_smp_processor_id, inlined by the verifier on x86-64 with a
// JIT). mark_fastcall_patterns() finds the patterns; their stack region leaves the subprogram's
// stack depth (remove_fastcall_spills_fills()) unless another access reached it
// (check_fastcall_stack_contract()) or a pattern surrounds a call that is not inlined.
// Emulation: the spills and fills stay and run (the interpreter's frames are MAX_BPF_STACK
//   bytes each); only the stack depth follows the kernel's. No kfunc is inlined here.
void mark_fastcall_pattern_for_call(bpf_verifier_env &env, bpf_subprog_info &sp, u32 idx,
                                    s16 lowest_off, const std::vector<bool> &jump_target) {
  const bpf_insn &call = env.insns[idx];
  constexpr u32 kCallerSaved = 0x3f;  // r0-r5
  u32 clobbered = kCallerSaved;
  bool can_be_inlined = false;
  if (bpf_helper_call(call)) {
    const bpf_func_proto *fn = call.imm >= 0 ? bpf_helper_proto((u32)call.imm) : nullptr;
    if (!fn || !env.ptype.helper_allowed((u32)call.imm)) return;
    clobbered = fn->ret_type != RET_VOID ? 1u : 0u;
    for (int a = 0; a < 5; a++)
      if (fn->arg_type[a] != ARG_DONTCARE) clobbered |= 1u << (BPF_REG_1 + a);
    // allow_fastcall and verifier_inlines_helper_call() (x86-64 with a JIT).
    can_be_inlined = call.imm == BPF_FUNC_get_smp_processor_id;
  } else if (bpf_pseudo_kfunc_call(call)) {
    if (call.imm < 0 || (size_t)call.imm >= env.opts.kfuncs.size() || !env.opts.kfuncs[(size_t)call.imm])
      return;
    const emu::KfuncDesc &k = *env.opts.kfuncs[(size_t)call.imm];
    clobbered = k.ret.kind != emu::KfuncArgKind::kVoid ? 1u : 0u;
    for (size_t a = 0; a < k.args.size() && a < 5; a++) clobbered |= 1u << (BPF_REG_1 + a);
  }
  if (clobbered == kCallerSaved) return;
  u32 expected = ~clobbered & kCallerSaved;
  u32 i = 1;
  s16 off = lowest_off;
  for (; i <= 6; i++, off = (s16)(off + BPF_REG_SIZE)) {
    if (idx < i || idx + i >= env.insns.size()) break;
    if (jump_target[idx - i + 1] || jump_target[idx + i]) break;
    const bpf_insn &stx = env.insns[idx - i], &ldx = env.insns[idx + i];
    if (stx.code != (BPF_STX | BPF_MEM | BPF_DW) || ldx.code != (BPF_LDX | BPF_MEM | BPF_DW) ||
        stx.dst_reg != BPF_REG_10 || ldx.src_reg != BPF_REG_10)
      break;
    if (stx.src_reg != ldx.dst_reg || !((1u << stx.src_reg) & expected)) break;
    if (stx.off != off || ldx.off != off) break;
    expected &= ~(1u << stx.src_reg);
    env.aux[idx - i].fastcall_pattern = true;
    env.aux[idx + i].fastcall_pattern = true;
  }
  if (i == 1) return;
  if (can_be_inlined)
    env.aux[idx].fastcall_spills_num = (u8)(i - 1);
  else
    sp.keep_fastcall_stack = true;
  sp.fastcall_stack_off = std::min(sp.fastcall_stack_off, off);
}

// check_max_stack_depth_subprog(): walks the static call graph from subprogram s, called at
// frame `frame` with `depth` stack bytes below it, whatever the values that decide the calls:
// every call chain, recursive ones included, must fit in MAX_CALL_FRAMES frames and
// MAX_BPF_STACK bytes. walked[s * MAX_CALL_FRAMES + frame] - 1 is the deepest stack s was
// walked from at that frame without an error: a shallower walk cannot fail (this bounds the
// walk of call graphs with many paths to each subprogram).
int walk_call_chain(bpf_verifier_env &env, std::vector<u32> &walked, u32 s, u32 frame,
                    u32 depth) {
  u32 &seen = walked[(size_t)s * MAX_CALL_FRAMES + frame];
  if (seen && depth + 1 <= seen) return 0;
  // round_up_stack_depth() with a JIT (x86-64 always has one): 16-byte granules.
  // Emulation: the interpreter's frames are MAX_BPF_STACK bytes whatever this says.
  const u32 d = (env.subprogs[s].stack_depth + 15) / 16 * 16;
  depth += d;
  if (depth > (u32)MAX_BPF_STACK) {
    env.verbose_err("combined stack size of %u calls is %u. Too large", frame + 1, depth);
    return -EACCES;
  }
  const std::vector<u32> &callees = env.subprogs[s].callees;
  for (size_t i = 0; i < callees.size(); i++) {
    if (std::find(callees.begin(), callees.begin() + (long)i, callees[i]) !=
        callees.begin() + (long)i)
      continue;
    if (frame + 1 >= (u32)MAX_CALL_FRAMES) {
      env.verbose_err("the call stack of %u frames is too deep !", frame + 1);
      return -E2BIG;
    }
    if (int err = walk_call_chain(env, walked, callees[i], frame + 1, depth)) return err;
  }
  seen = std::max(seen, depth - d + 1);
  return 0;
}

}  // namespace

void mark_fastcall_patterns(bpf_verifier_env &env) {
  // bpf_is_jump_target(): the targets of jumps (the kernel's jmp_point).
  std::vector<bool> jump_target(env.insns.size() + 1, false);
  for (u32 i = 0; i < env.insns.size(); i++) {
    const bpf_opcode_desc *d = env.aux[i].desc;
    if (!d) continue;
    const bpf_form_desc &f = bpf_form_of(*d);
    if (f.kind != bpf_opc::K_JUMP && f.kind != bpf_opc::K_COND_JUMP) continue;
    const s64 t = bpf_jump_target(*d, env.insns[i], i);
    if (t >= 0 && t < (s64)env.insns.size()) jump_target[(size_t)t] = true;
  }
  for (bpf_subprog_info &sp : env.subprogs) {
    s16 lowest_off = 0;
    for (u32 i = sp.start; i < sp.end; i++) {
      const bpf_insn &in = env.insns[i];
      if (env.aux[i].desc && in.code == (BPF_STX | BPF_MEM | BPF_DW) && in.dst_reg == BPF_REG_10)
        lowest_off = std::min(lowest_off, in.off);
    }
    for (u32 i = sp.start; i < sp.end; i++)
      if (env.aux[i].desc && env.insns[i].code == (BPF_JMP | BPF_CALL))
        mark_fastcall_pattern_for_call(env, sp, i, lowest_off, jump_target);
  }
}

void remove_fastcall_spills_fills(bpf_verifier_env &env) {
  for (bpf_subprog_info &sp : env.subprogs) {
    bool modified = false;
    for (u32 i = sp.start; i < sp.end; i++) modified |= env.aux[i].fastcall_spills_num > 0;
    if (modified && !sp.keep_fastcall_stack) sp.stack_depth = (u32)-(s32)sp.fastcall_stack_off;
  }
}

int check_max_stack_depth(bpf_verifier_env &env) {
  std::vector<u32> walked(env.subprogs.size() * MAX_CALL_FRAMES, 0);
  return walk_call_chain(env, walked, 0, 0, 0);
}

}  // namespace umemcg
