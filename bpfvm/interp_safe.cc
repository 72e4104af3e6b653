// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/interp_safe.cc: the safe mode's prepare-time analyses (see bpfvm/interp_safe.h).
//
// Mirrors: nothing in the kernel (see bpfvm/interp_safe.h).
// Emulation: the kernel runs no unverified programs; these analyses exist for the safe mode.
#include "bpfvm/interp_safe.h"

namespace umemcg::emu {

using namespace bpf_opc;

bool bpf_subprogs_closed(const bpf_insn *insns, size_t cnt,
                         std::span<const bpf_opcode_desc *const> rows,
                         const std::vector<u32> &starts) {
  for (size_t k = 1; k < starts.size(); k++) {
    const size_t s = starts[k];
    // rows[s - 1] is nullptr when s - 1 is the second slot of a ld_imm64, which falls through.
    if (s == 0 || s > cnt || !rows[s - 1]) return false;
    const u8 kind = bpf_form_of(*rows[s - 1]).kind;
    if (kind != K_EXIT && kind != K_JUMP) return false;
  }
  for (size_t i = 0, sp = 0; i < cnt; i++) {
    while (sp + 1 < starts.size() && starts[sp + 1] <= i) sp++;
    if (!rows[i]) continue;
    const u8 kind = bpf_form_of(*rows[i]).kind;
    if (kind != K_JUMP && kind != K_COND_JUMP) continue;
    const s64 t = bpf_jump_target(*rows[i], insns[i], i);
    const s64 lo = starts[sp];
    const s64 hi = sp + 1 < starts.size() ? (s64)starts[sp + 1] : (s64)cnt;
    if (t < lo || t >= hi) return false;
  }
  return true;
}

std::vector<u16> bpf_ctx_regs(const bpf_insn *insns, size_t cnt,
                              std::span<const bpf_opcode_desc *const> rows) {
  constexpr u16 kCallerSaved = 0x3e;  // r1-r5
  constexpr u16 kCalleeSaved = 0x3c0;  // r6-r9
  std::vector<u16> in(cnt, 0);
  if (!cnt) return in;
  // Optimistic iteration to the greatest fixed point: a first visit takes the incoming set,
  // later ones intersect; every change re-queues the instruction. Sets only shrink, so this
  // ends after at most 10 changes per instruction.
  std::vector<u8> seen(cnt, 0);
  std::vector<u32> work;
  auto merge = [&](s64 t, u16 m) {
    if (t < 0 || (size_t)t >= cnt || !rows[t]) return;  // (prepare() checked every target)
    if (!seen[t]) {
      seen[t] = 1;
      in[t] = m;
      work.push_back((u32)t);
    } else if ((in[t] & m) != in[t]) {
      in[t] &= m;
      work.push_back((u32)t);
    }
  };
  merge(0, 1u << BPF_REG_1);
  while (!work.empty()) {
    const u32 i = work.back();
    work.pop_back();
    const bpf_opcode_desc &d = *rows[i];
    const bpf_form_desc &f = bpf_form_of(d);
    const bpf_insn &insn = insns[i];
    const u16 cur = in[i];
    u16 wr = 0;
    if (f.flow & WR_DST) wr |= (u16)(1u << insn.dst_reg);
    if (f.flow & WR_SRC) wr |= (u16)(1u << insn.src_reg);
    if (f.flow & WR_R0) wr |= 1u;
    u16 out = cur & (u16)~wr;
    if (d.id == BPF_OPC_ALU64_MOV_X && (cur & (1u << insn.src_reg)))
      out |= (u16)(1u << insn.dst_reg);
    switch (f.kind) {
      case K_EXIT:
        break;
      case K_JUMP:
      case K_COND_JUMP:
        if (f.kind == K_COND_JUMP) merge((s64)i + 1, out);
        merge(bpf_jump_target(d, insn, i), out);
        break;
      case K_CALL:
        // The callee sees the caller's r1-r5; after the call r0-r5 are the callee's or
        // scratched, r6-r9 are the caller's (restored from the frame, or never written by a
        // callee the call form does not save for).
        if (d.id == BPF_OPC_JMP_CALL_LOCAL) merge(bpf_jump_target(d, insn, i), cur & kCallerSaved);
        merge((s64)i + 1, cur & kCalleeSaved);
        break;
      default:
        merge((s64)i + f.slots, out);
        break;
    }
  }
  return in;
}

}  // namespace umemcg::emu
