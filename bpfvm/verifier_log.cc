// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_log.cc: the verifier log: instructions in the kernel's C-like syntax (printed
// by the disassembler, bpfvm/disasm.cc, in its verifier-log form) and register/stack states as
// print_verifier_state() prints them.
//
// Mirrors: kernel/bpf/disasm.c (print_bpf_insn), kernel/bpf/log.c (print_verifier_state,
//          print_reg_state, print_scalar_ranges, vlog_alignment, print_insn_state, the
//          "processed N insns" summary) (Linux 6.19)
// Emulation: map references print as map[idx:N] (no map ids here). Scalars carry no "P"
//   (precise) mark: precision here is computed ahead of the walk for the whole program
//   (bpf_insn_aux_data::precise_in), not marked on registers by backtracking. The one
//   exception is the explored state of an infinite-loop report, whose registers of the loop's
//   precise_in print with a "P", as the kernel's backtracking has marked them there.
#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "bpfvm/disasm.h"
#include "bpfvm/verifier_state.h"

namespace umemcg {

namespace {

// verbose_snum()/verbose_unum(): small numbers in decimal, others in hex.
bool is_unum_decimal(u64 v) { return v <= 0xffff; }
bool is_snum_decimal(s64 v) { return v >= -0x8000 && v <= 0x7fff; }
std::string snum(s64 v) {
  return is_snum_decimal(v) ? absl::StrFormat("%d", v) : absl::StrFormat("%#x", (u64)v);
}
std::string unum(u64 v) {
  return is_unum_decimal(v) ? absl::StrFormat("%u", v) : absl::StrFormat("%#x", v);
}

// print_scalar_ranges(): the bounds that say something, equal values of one sign merged
// ("smax=umax=0xffffffff"); 32-bit signed bounds printed in hex are not sign-extended.
void print_scalar_ranges(const bpf_reg_state &reg, std::string &out, const char *&sep) {
  struct MinMax {
    const char *name;
    u64 val;
    bool omit;
  } m[] = {
      {"smin", (u64)reg.smin_value, reg.smin_value == INT64_MIN},
      {"smax", (u64)reg.smax_value, reg.smax_value == INT64_MAX},
      {"umin", reg.umin_value, reg.umin_value == 0},
      {"umax", reg.umax_value, reg.umax_value == UINT64_MAX},
      {"smin32",
       is_snum_decimal(reg.s32_min_value) ? (u64)(s64)reg.s32_min_value : (u64)(u32)reg.s32_min_value,
       reg.s32_min_value == INT32_MIN},
      {"smax32",
       is_snum_decimal(reg.s32_max_value) ? (u64)(s64)reg.s32_max_value : (u64)(u32)reg.s32_max_value,
       reg.s32_max_value == INT32_MAX},
      {"umin32", reg.u32_min_value, reg.u32_min_value == 0},
      {"umax32", reg.u32_max_value, reg.u32_max_value == UINT32_MAX},
  };
  const size_t n = sizeof(m) / sizeof(m[0]);
  for (size_t i = 0; i < n; i++) {
    if (m[i].omit) continue;
    const bool neg1 = m[i].name[0] == 's' && (s64)m[i].val < 0;
    out += sep;
    out += m[i].name;
    out += "=";
    sep = ",";
    for (size_t j = i + 2; j < n; j += 2) {
      if (m[j].omit || m[j].val != m[i].val) continue;
      const bool neg2 = m[j].name[0] == 's' && (s64)m[j].val < 0;
      if (neg2 != neg1) continue;
      m[j].omit = true;
      out += m[j].name;
      out += "=";
    }
    out += m[i].name[0] == 's' ? snum((s64)m[i].val) : unum(m[i].val);
  }
}

}  // namespace

std::string bpf_insn_str(std::span<const bpf_insn> insns, u32 idx) {
  emu::BpfDisasmOpts opts;
  opts.verifier_log = true;
  return emu::bpf_disasm_insn(insns, idx, opts);
}

std::string print_reg_state(const bpf_func_state &f, const bpf_reg_state &reg) {
  if (reg.type == NOT_INIT) return "?";
  if (reg.type == SCALAR_VALUE && tnum_is_const(reg.var_off)) return snum((s64)reg.var_off.value);
  std::string out = reg_type_name(reg.type);
  if (base_type(reg.type) == PTR_TO_STACK) {
    if (f.frameno != reg.frameno) out += absl::StrFormat("[%u]", reg.frameno);
    if (tnum_is_const(reg.var_off)) return out + snum((s64)reg.var_off.value + reg.off);
  }
  if (base_type(reg.type) == PTR_TO_BTF_ID && reg.btf_name) out += reg.btf_name;
  out += "(";
  const char *sep = "";
  auto add = [&](const std::string &s) {
    out += sep;
    out += s;
    sep = ",";
  };
  if (reg.id) add(absl::StrFormat("id=%u", reg.id));
  if (reg.ref_obj_id) add(absl::StrFormat("ref_obj_id=%u", reg.ref_obj_id));
  switch (base_type(reg.type)) {
    case CONST_PTR_TO_MAP:
    case PTR_TO_MAP_VALUE:
    case PTR_TO_MAP_KEY:
      if (reg.map_ptr) {
        if (reg.map_ptr->name[0]) add(absl::StrFormat("map=%s", reg.map_ptr->name));
        add(absl::StrFormat("ks=%u,vs=%u", reg.map_ptr->key_size, reg.map_ptr->value_size));
      }
      break;
    default:
      break;
  }
  if (reg.type != SCALAR_VALUE && reg.off) add("off=" + snum(reg.off));
  if (base_type(reg.type) == PTR_TO_MEM) add("sz=" + unum(reg.mem_size));
  if (tnum_is_const(reg.var_off)) {
    if (reg.var_off.value) add("imm=" + snum((s64)reg.var_off.value));
  } else {
    print_scalar_ranges(reg, out, sep);
    if (!tnum_is_unknown(reg.var_off)) add("var_off=" + tnum_str(reg.var_off));
  }
  return out + ")";
}

namespace {

bool reg_scratched(const bpf_verifier_env &env, int r) { return env.scratched_regs & (1u << r); }
bool stack_slot_scratched(const bpf_verifier_env &env, size_t spi) {
  return spi < 64 && (env.scratched_stack & (1ull << spi));
}

// The slot types, highest address first, as slot_type_char prints them.
char slot_char(u8 t) {
  switch (t) {
    case STACK_SPILL: return 'r';
    case STACK_MISC: return 'm';
    case STACK_ZERO: return '0';
    default: return '?';
  }
}

}  // namespace

namespace {

// The state line of frame f of path st: all registers and slots, or the scratched ones.
// Scalars of registers in `precise` print with the kernel's "P" mark.
std::string verifier_state_line(const bpf_verifier_env &env, const bpf_verifier_state &st,
                                const bpf_func_state &f, bool print_all, u16 precise = 0) {
  std::string out;
  if (f.frameno) out += absl::StrFormat(" frame%u:", f.frameno);
  for (int r = 0; r < MAX_BPF_REG; r++) {
    const bpf_reg_state &reg = f.regs[r];
    if (reg.type == NOT_INIT || (!print_all && !reg_scratched(env, r))) continue;
    const bool p = reg.type == SCALAR_VALUE && (precise >> r) & 1;
    out += absl::StrFormat(" R%d=%s%s", r, p ? "P" : "", print_reg_state(f, reg));
  }
  for (size_t spi = 0; spi < f.stack.size(); spi++) {
    if (!print_all && !stack_slot_scratched(env, spi)) continue;
    const bpf_stack_state &s = f.stack[spi];
    std::string types;
    bool valid = false;
    for (int i = BPF_REG_SIZE - 1; i >= 0; i--) {
      valid |= s.slot_type[i] != STACK_INVALID;
      types += slot_char(s.slot_type[i]);
    }
    if (!valid) continue;
    out += absl::StrFormat(" fp%d=", -(int)(spi + 1) * BPF_REG_SIZE);
    if (s.slot_type[0] == STACK_SPILL) {
      // The bytes above a narrower spill, then the spilled register.
      out += types.substr(0, types.find('r'));
      out += print_reg_state(f, s.spilled_ptr);
    } else {
      out += types;
    }
  }
  if (f.frameno + 1 == st.frame.size() && !st.refs.empty()) {
    out += " refs=";
    for (size_t i = 0; i < st.refs.size(); i++)
      out += absl::StrFormat("%s%u", i ? "," : "", st.refs[i].id);
  }
  if (f.in_callback_fn) out += " cb";
  if (f.in_async_callback_fn) out += " async_cb";
  return out;
}

}  // namespace

std::string verifier_state_str(const bpf_verifier_env &env, const bpf_verifier_state &st,
                               const bpf_func_state &f, u16 precise) {
  return verifier_state_line(env, st, f, true, precise);
}

void print_verifier_state(bpf_verifier_env &env, const bpf_func_state &f, bool print_all) {
  const std::string out = verifier_state_line(env, *env.cur, f, print_all);
  if (env.opts.log_level) env.res.log += out + "\n";
  if (!print_all) {
    env.scratched_regs = 0;
    env.scratched_stack = 0;
  }
}

// print_insn_state(): the state an instruction left, after the instruction's line when nothing
// was logged since (in the column vlog_alignment() gives), else on a line of its own.
void print_insn_state(bpf_verifier_env &env, const bpf_func_state &f) {
  std::string &log = env.res.log;
  if (env.prev_log_pos != std::string::npos && env.prev_log_pos && env.prev_log_pos == log.size()) {
    log.resize(env.prev_log_pos - 1);  // the instruction line's newline
    const size_t pos = env.prev_insn_print_pos;
    const size_t width = (std::max<size_t>(pos + BPF_LOG_MIN_ALIGNMENT / 2, BPF_LOG_ALIGNMENT) +
                          BPF_LOG_MIN_ALIGNMENT - 1) / BPF_LOG_MIN_ALIGNMENT *
                             BPF_LOG_MIN_ALIGNMENT -
                         pos - 1;
    log += std::string(width ? width - 1 : 0, ' ');
    log += " ;";
  } else {
    env.log("%u:", env.cur->insn_idx);
  }
  print_verifier_state(env, f, false);
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
  if (opts.log_level) {
    res.log += buf;
    res.log += "\n";
  }
}

}  // namespace umemcg
