// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_log.cc: the verifier log: instructions in the kernel's C-like syntax and
// register/stack states as print_verifier_state() prints them.
//
// Mirrors: kernel/bpf/disasm.c (print_bpf_insn), kernel/bpf/log.c (print_verifier_state,
//          print_insn_state, the "processed N insns" summary) (Linux 6.19)
// Emulation: the instruction printer is the verifier's own (the kernel's syntax, not the
//   conformance assembler's); map references print as map[idx:N] (no map ids here). The
//   kernel aligns the state column; here it follows " ; ".
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "bpfvm/verifier_state.h"

namespace umemcg {

namespace {

const char *const kAluOps[16] = {"+=", "-=", "*=", "/=", "|=", "&=", "<<=", ">>=",
                                 "neg", "%=", "^=", "=", "s>>=", "endian", "?", "?"};
const char *const kJmpOps[16] = {"goto", "==", ">", ">=", "&", "!=", "s>", "s>=",
                                 "call", "exit", "<", "<=", "s<", "s<=", "?", "?"};
const char *const kSizeName[4] = {"u32", "u16", "u8", "u64"};
const char *const kSignedSizeName[4] = {"s32", "s16", "s8", "s64"};

std::string imm_str(s64 v) {
  if (v >= -0x80000000ll && v <= 0xffffffffll) return std::to_string(v);
  return absl::StrFormat("0x%x", (u64)v);
}

std::string atomic_str(const bpf_insn &in) {
  const bool dw = BPF_SIZE(in.code) == BPF_DW;
  const char *sz = dw ? "u64" : "u32";
  const char *bits = dw ? "64" : "";
  const std::string addr = absl::StrFormat("(%s *)(r%d %+d)", sz, in.dst_reg, in.off);
  const int op = in.imm & ~BPF_FETCH;
  static const char *const names[16] = {"add", "", "", "", "or", "and", "", "", "", "", "xor"};
  if (in.imm == BPF_CMPXCHG)
    return absl::StrFormat("r0 = atomic%s_cmpxchg(%s, r0, r%d)", bits, addr, in.src_reg);
  if (in.imm == BPF_XCHG)
    return absl::StrFormat("r%d = atomic%s_xchg(%s, r%d)", in.src_reg, bits, addr, in.src_reg);
  const char *name = (op >> 4) < 16 ? names[op >> 4] : "?";
  if (in.imm & BPF_FETCH)
    return absl::StrFormat("r%d = atomic%s_fetch_%s(%s, r%d)", in.src_reg, bits, name, addr,
                           in.src_reg);
  return absl::StrFormat("lock *%s %s r%d", addr, kAluOps[(op >> 4) & 0xf], in.src_reg);
}

}  // namespace

std::string bpf_insn_str(std::span<const bpf_insn> insns, u32 idx) {
  const bpf_insn &in = insns[idx];
  const bpf_opcode_desc *d = bpf_opcode_decode(insns.data(), insns.size(), idx, nullptr);
  if (!d) return absl::StrFormat("(invalid %02x)", in.code);
  const bool w = BPF_CLASS(in.code) == BPF_ALU || BPF_CLASS(in.code) == BPF_JMP32;
  const char r = w ? 'w' : 'r';
  const char *op = kAluOps[BPF_OP(in.code) >> 4];
  using namespace bpf_opc;
  switch (d->form) {
    case F_ALU_K:
      return absl::StrFormat("%c%d %s %s", r, in.dst_reg, op, imm_str(in.imm));
    case F_ALU_X:
      return absl::StrFormat("%c%d %s %c%d", r, in.dst_reg, op, r, in.src_reg);
    case F_MOV_K:
      return absl::StrFormat("%c%d = %s", r, in.dst_reg, imm_str(in.imm));
    case F_MOV_X:
      if (in.off) return absl::StrFormat("%c%d = (s%d)%c%d", r, in.dst_reg, in.off, r, in.src_reg);
      return absl::StrFormat("%c%d = %c%d", r, in.dst_reg, r, in.src_reg);
    case F_NEG:
      return absl::StrFormat("%c%d = -%c%d", r, in.dst_reg, r, in.dst_reg);
    case F_END: {
      const char *kind = BPF_CLASS(in.code) == BPF_ALU64 ? "bswap"
                         : BPF_SRC(in.code) == BPF_TO_BE ? "be"
                                                         : "le";
      return absl::StrFormat("r%d = %s%d r%d", in.dst_reg, kind, in.imm, in.dst_reg);
    }
    case F_JA:
      return absl::StrFormat("goto pc%+d", in.off);
    case F_GOTOL:
      return absl::StrFormat("gotol pc%+d", in.imm);
    case F_JCC_K:
      return absl::StrFormat("if %c%d %s 0x%x goto pc%+d", r, in.dst_reg,
                             kJmpOps[BPF_OP(in.code) >> 4], (u32)in.imm, in.off);
    case F_JCC_X:
      return absl::StrFormat("if %c%d %s %c%d goto pc%+d", r, in.dst_reg,
                             kJmpOps[BPF_OP(in.code) >> 4], r, in.src_reg, in.off);
    case F_CALL:
      if (in.src_reg == BPF_PSEUDO_CALL) return absl::StrFormat("call pc%+d", in.imm);
      return absl::StrFormat("call bpf_%s#%d", bpf_func_id_name((u32)in.imm), in.imm);
    case F_CALL_KFUNC:
      return absl::StrFormat("call kernel-function#%d", in.imm);
    case F_CALLX:
      return absl::StrFormat("callx r%d", in.dst_reg);
    case F_EXIT:
      return "exit";
    case F_LDDW: {
      const u64 v = idx + 1 < insns.size() ? bpf_ldimm64_value(in, insns[idx + 1]) : (u32)in.imm;
      switch (in.src_reg) {
        case BPF_PSEUDO_MAP_FD:
        case BPF_PSEUDO_MAP_IDX:
          return absl::StrFormat("r%d = map[idx:%d]", in.dst_reg, in.imm);
        case BPF_PSEUDO_MAP_VALUE:
        case BPF_PSEUDO_MAP_IDX_VALUE:
          return absl::StrFormat("r%d = map[idx:%d][0]+%d", in.dst_reg, in.imm,
                                 idx + 1 < insns.size() ? insns[idx + 1].imm : 0);
        case BPF_PSEUDO_BTF_ID:
          return absl::StrFormat("r%d = ksym#%d", in.dst_reg, in.imm);
        case BPF_PSEUDO_FUNC:
          return absl::StrFormat("r%d = func pc%+d", in.dst_reg, in.imm);
        default:
          return absl::StrFormat("r%d = 0x%x ll", in.dst_reg, v);
      }
    }
    case F_LD_ABS:
      return absl::StrFormat("r0 = *(%s *)skb[%d]", kSizeName[BPF_SIZE(in.code) >> 3], in.imm);
    case F_LD_IND:
      return absl::StrFormat("r0 = *(%s *)skb[r%d + %d]", kSizeName[BPF_SIZE(in.code) >> 3],
                             in.src_reg, in.imm);
    case F_LDX:
      return absl::StrFormat("r%d = *(%s *)(r%d %+d)", in.dst_reg,
                             (BPF_MODE(in.code) == BPF_MEMSX ? kSignedSizeName : kSizeName)[BPF_SIZE(in.code) >> 3],
                             in.src_reg, in.off);
    case F_ST:
      return absl::StrFormat("*(%s *)(r%d %+d) = %d", kSizeName[BPF_SIZE(in.code) >> 3],
                             in.dst_reg, in.off, in.imm);
    case F_STX:
      return absl::StrFormat("*(%s *)(r%d %+d) = r%d", kSizeName[BPF_SIZE(in.code) >> 3],
                             in.dst_reg, in.off, in.src_reg);
    case F_ATOMIC:
    case F_ATOMIC_FETCH:
    case F_ATOMIC_CMPXCHG:
      return atomic_str(in);
    default:
      return d->mnemonic;
  }
}

std::string print_reg_state(const bpf_reg_state &reg) {
  if (reg.type == NOT_INIT) return "?";
  if (reg.type == SCALAR_VALUE && tnum_is_const(reg.var_off)) return imm_str((s64)reg.var_off.value);
  std::string out;
  auto add = [&](const std::string &s) {
    if (!out.empty()) out += ",";
    out += s;
  };
  if (base_type(reg.type) == PTR_TO_STACK && !reg.id && !reg.ref_obj_id &&
      tnum_equals_const(reg.var_off, 0))
    return absl::StrFormat("fp%d", reg.off);
  if (reg.id) add(absl::StrFormat("id=%u", reg.id));
  if (reg.ref_obj_id) add(absl::StrFormat("ref_obj_id=%u", reg.ref_obj_id));
  switch (base_type(reg.type)) {
    case CONST_PTR_TO_MAP:
    case PTR_TO_MAP_VALUE:
    case PTR_TO_MAP_KEY:
      if (reg.map_ptr)
        add(absl::StrFormat("map=%s,ks=%u,vs=%u", reg.map_ptr->name, reg.map_ptr->key_size,
                            reg.map_ptr->value_size));
      break;
    case PTR_TO_MEM:
      add(absl::StrFormat("sz=%u", reg.mem_size));
      break;
    case PTR_TO_FUNC:
      add(absl::StrFormat("subprog=%u", reg.subprogno));
      break;
    case PTR_TO_STACK:
      add(absl::StrFormat("frame=%u", reg.frameno));
      break;
    default:
      break;
  }
  if (is_pointer(reg) && reg.off) add(absl::StrFormat("off=%d", reg.off));
  if (!tnum_is_const(reg.var_off) || reg.type == SCALAR_VALUE) {
    if (reg.smin_value != INT64_MIN) add(absl::StrFormat("smin=%d", reg.smin_value));
    if (reg.smax_value != INT64_MAX) add(absl::StrFormat("smax=%d", reg.smax_value));
    if (reg.umin_value) add(absl::StrFormat("umin=%u", reg.umin_value));
    if (reg.umax_value != UINT64_MAX) add(absl::StrFormat("umax=%u", reg.umax_value));
    if (reg.s32_min_value != INT32_MIN) add(absl::StrFormat("smin32=%d", reg.s32_min_value));
    if (reg.s32_max_value != INT32_MAX) add(absl::StrFormat("smax32=%d", reg.s32_max_value));
    if (reg.u32_min_value) add(absl::StrFormat("umin32=%u", reg.u32_min_value));
    if (reg.u32_max_value != UINT32_MAX) add(absl::StrFormat("umax32=%u", reg.u32_max_value));
    if (!tnum_is_unknown(reg.var_off)) add("var_off=" + tnum_str(reg.var_off));
  }
  std::string name = reg_type_name(reg.type);
  if (base_type(reg.type) == PTR_TO_BTF_ID && reg.btf_name) name += reg.btf_name;
  return name + "(" + out + ")";
}

namespace {

std::string slot_str(const bpf_stack_state &s) {
  if (s.slot_type[0] == STACK_SPILL) return print_reg_state(s.spilled_ptr);
  std::string out;
  for (int i = BPF_REG_SIZE - 1; i >= 0; i--) {
    switch (s.slot_type[i]) {
      case STACK_MISC: out += 'm'; break;
      case STACK_ZERO: out += '0'; break;
      case STACK_SPILL: out += 'r'; break;
      default: out += '?'; break;
    }
  }
  return out;
}

void print_frame(bpf_verifier_env &env, const bpf_func_state &f, bool print_all, bool current,
                 std::string &out) {
  for (int r = 0; r < MAX_BPF_REG; r++) {
    const bpf_reg_state &reg = f.regs[r];
    const bool written = current && (env.scratched_regs & (1u << r));
    if (reg.type == NOT_INIT || (!print_all && !written)) continue;
    out += absl::StrFormat(" R%d%s=%s", r, written ? "_w" : "", print_reg_state(reg));
  }
  for (size_t spi = 0; spi < f.stack.size(); spi++) {
    const bpf_stack_state &s = f.stack[spi];
    bool any = false;
    for (u8 t : s.slot_type) any |= t != STACK_INVALID;
    const bool written = current && spi < 64 && (env.scratched_stack & (1ull << spi));
    if (!any || (!print_all && !written)) continue;
    out += absl::StrFormat(" fp%d%s=%s", -(int)(spi + 1) * BPF_REG_SIZE, written ? "_w" : "",
                           slot_str(s));
  }
}

}  // namespace

void print_verifier_state(bpf_verifier_env &env, const bpf_verifier_state &st, bool print_all) {
  std::string out;
  for (size_t i = 0; i < st.frame.size(); i++) {
    std::string fr;
    print_frame(env, st.frame[i], print_all, i + 1 == st.frame.size(), fr);
    if (st.frame.size() > 1) out += absl::StrFormat(" frame%d:", (int)i);
    out += fr;
  }
  for (const bpf_reference_state &r : st.refs) out += absl::StrFormat(" refs=%u", r.id);
  env.log("%s\n", out.empty() ? "" : out.c_str() + 1);
}

void print_insn_state(bpf_verifier_env &env, const bpf_verifier_state &st, u32 insn_idx) {
  (void)insn_idx;
  std::string out;
  print_frame(env, st.cur(), false, true, out);
  env.log("%s\n", out.c_str());
}

void bpf_verifier_env::log(const char *fmt, ...) {
  if (!opts.log_level) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  res.log += buf;
}

void bpf_verifier_env::verbose_err(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (!res.error.empty()) res.error += "\n";
  else if (res.error_insn < 0 && cur) res.error_insn = (int)cur->insn_idx;
  res.error += buf;
  if (opts.log_level & BPF_LOG_LEVEL2) {
    res.log += buf;
    res.log += "\n";
  }
}

}  // namespace umemcg
