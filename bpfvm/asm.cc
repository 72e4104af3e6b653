// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/asm.cc: the conformance-syntax assembler. Encodings come from the opcode table: the
// mnemonic selects rows, the operand shapes pick one, the row's selector value fills its field.
//
// Emulation: emulator tooling, no kernel counterpart.
#include "bpfvm/asm.h"

#include <cctype>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "bpfvm/opcodes.h"

namespace umemcg::emu {

namespace {

using namespace bpf_opc;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace((unsigned char)s.front())) s.remove_prefix(1);
  while (!s.empty() && std::isspace((unsigned char)s.back())) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char &c : r) c = (char)std::tolower((unsigned char)c);
  return r;
}

// Signed or unsigned integer: [+-]digits or [+-]0xhex. Values are kept as u64 bit patterns.
std::optional<u64> parse_num(std::string_view s) {
  s = trim(s);
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
    s = trim(s);
  }
  if (s.empty()) return std::nullopt;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  u64 v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return std::nullopt;
    if (v > (~0ull - (u64)d) / (u64)base) return std::nullopt;  // overflow
    v = v * (u64)base + (u64)d;
  }
  return neg ? 0 - v : v;
}

// r0..r15 (with or without %): r11-r15 encode, for negative tests of runtimes.
std::optional<u8> parse_reg(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s[0] == '%') s.remove_prefix(1);
  if (s.size() < 2 || (s[0] != 'r' && s[0] != 'R')) return std::nullopt;
  auto n = parse_num(s.substr(1));
  if (!n || *n > 15 || !std::isdigit((unsigned char)s[1])) return std::nullopt;
  return (u8)*n;
}

struct Mem {
  u8 reg;
  s16 off;
};

class Assembler {
 public:
  absl::StatusOr<std::vector<bpf_insn>> run(std::string_view text);

 private:
  struct Fixup {
    size_t insn;
    std::string label;
    bool in_imm;
    int line;
  };

  absl::Status err(const std::string &msg) const {
    return absl::InvalidArgumentError("line " + std::to_string(line_) + ": " + msg);
  }
  absl::Status line(std::string_view text);
  // encode(): the instruction of row @d with operands @ops appended to out_; *matched false
  // (and nothing appended) when the operands do not fit the row's form. The encode_* parts
  // take the instruction with its code and selector set.
  absl::Status encode(const bpf_opcode_desc &d, const std::vector<std::string_view> &ops,
                      bool *matched);
  absl::Status encode_alu_jcc(const bpf_opcode_desc &d, const std::vector<std::string_view> &ops,
                              bpf_insn in, bool *matched);
  absl::Status encode_call(const bpf_opcode_desc &d, const std::vector<std::string_view> &ops,
                           bpf_insn in, bool *matched);
  absl::Status encode_lddw(const bpf_opcode_desc &d, const std::vector<std::string_view> &ops,
                           bpf_insn in, bool *matched);
  absl::Status encode_mem(const bpf_opcode_desc &d, const std::vector<std::string_view> &ops,
                          bpf_insn in, bool *matched);
  std::optional<Mem> parse_mem(std::string_view s, std::string *why) const;
  absl::Status imm32(std::string_view s, s32 *out) const;
  bool target(std::string_view s, bool in_imm, s32 *out);

  std::vector<bpf_insn> out_;
  std::map<std::string, size_t> labels_;
  std::vector<Fixup> fixups_;
  std::optional<size_t> first_exit_;
  int line_ = 0;
};

absl::StatusOr<std::vector<bpf_insn>> Assembler::run(std::string_view text) {
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    line_++;
    if (absl::Status s = line(text.substr(pos, nl - pos)); !s.ok()) return s;
    pos = nl + 1;
  }
  for (const Fixup &f : fixups_) {
    size_t target;
    auto it = labels_.find(f.label);
    if (it != labels_.end()) {
      target = it->second;
    } else if (f.label == "exit" && first_exit_) {
      target = *first_exit_;  // the conformance assembler's implicit label
    } else {
      line_ = f.line;
      return err("undefined label '" + f.label + "'");
    }
    const s64 delta = (s64)target - (s64)f.insn - 1;
    if (f.in_imm) {
      out_[f.insn].imm = (s32)delta;
    } else {
      if (delta < -32768 || delta > 32767) {
        line_ = f.line;
        return err("jump to '" + f.label + "' out of 16-bit range");
      }
      out_[f.insn].off = (s16)delta;
    }
  }
  return std::move(out_);
}

absl::Status Assembler::line(std::string_view text) {
  if (size_t h = text.find('#'); h != std::string_view::npos) text = text.substr(0, h);
  if (size_t h = text.find("//"); h != std::string_view::npos) text = text.substr(0, h);
  text = trim(text);
  // Labels: "name:" possibly followed by an instruction.
  while (true) {
    size_t colon = text.find(':');
    if (colon == std::string_view::npos) break;
    std::string_view name = trim(text.substr(0, colon));
    bool ident = !name.empty();
    for (char c : name)
      ident = ident && (std::isalnum((unsigned char)c) || c == '_' || c == '.');
    if (!ident) break;
    if (!labels_.emplace(std::string(name), out_.size()).second)
      return err("duplicate label '" + std::string(name) + "'");
    text = trim(text.substr(colon + 1));
  }
  if (text.empty()) return absl::OkStatus();

  // Mnemonic words: "lock [fetch] op", "call local|helper|runtime".
  size_t sp = text.find_first_of(" \t");
  std::string mn = lower(text.substr(0, sp));
  std::string_view rest = sp == std::string_view::npos ? std::string_view() : trim(text.substr(sp));
  auto take_word = [&]() {
    size_t e = rest.find_first_of(" \t");
    std::string w = lower(rest.substr(0, e));
    rest = e == std::string_view::npos ? std::string_view() : trim(rest.substr(e));
    return w;
  };
  if (mn == "lock") {
    std::string w = take_word();
    if (w == "fetch") w += " " + take_word();
    mn += " " + w;
  } else if (mn == "call") {
    size_t e = rest.find_first_of(" \t");
    std::string w = lower(rest.substr(0, e));
    if (w == "local" || w == "runtime") {
      take_word();
      mn += " " + w;
    } else if (w == "helper") {
      take_word();
    } else if (parse_reg(rest)) {
      mn = "callx";
    }
  }

  std::vector<std::string_view> ops;
  if (!rest.empty()) {
    size_t p = 0;
    while (true) {
      size_t c = rest.find(',', p);
      ops.push_back(trim(rest.substr(p, c == std::string_view::npos ? c : c - p)));
      if (c == std::string_view::npos) break;
      p = c + 1;
    }
  }

  // Aliases of the conformance assembler and of llvm.
  std::vector<std::string> names = {mn};
  if (mn.size() > 2 && mn.compare(mn.size() - 2, 2, "64") == 0 && mn.rfind("movsx", 0) != 0 &&
      mn.rfind("swap", 0) != 0 && mn.rfind("bswap", 0) != 0 && mn.rfind("le", 0) != 0 &&
      mn.rfind("be", 0) != 0)
    names.push_back(mn.substr(0, mn.size() - 2));  // add64 -> add
  if (mn.rfind("swap", 0) == 0) names.push_back("b" + mn);
  if (mn == "movsx8" || mn == "movsx16" || mn == "movsx32") names.push_back(mn + "64");
  if (mn == "gotol") names.push_back("ja32");
  if (mn == "lddw")  // the pseudo sources are rows of their own; the operand picks one
    for (const bpf_opcode_desc &d : bpf_opcode_table)
      if (d.form == F_LDDW && d.sel_value != BPF_LD_IMM64_PLAIN) names.push_back(d.mnemonic);
  if (mn == "ldxbsx" || mn == "ldxhsx" || mn == "ldxwsx")
    names.push_back(std::string("ldxs") + mn[3]);

  bool known = false;
  for (const std::string &n : names) {
    const bpf_opcode_desc *rows[8];
    size_t cnt = bpf_opcode_by_mnemonic(n, rows, 8);
    for (size_t i = 0; i < cnt && i < 8; i++) {
      known = true;
      bool matched = false;
      absl::Status s = encode(*rows[i], ops, &matched);
      if (matched) return s;
    }
  }
  if (!known) return err("unknown mnemonic '" + mn + "'");
  return err("invalid operands for '" + mn + "'");
}

std::optional<Mem> Assembler::parse_mem(std::string_view s, std::string *why) const {
  s = trim(s);
  if (s.size() < 3 || s.front() != '[' || s.back() != ']') return std::nullopt;
  s = trim(s.substr(1, s.size() - 2));
  size_t sign = s.find_first_of("+-");
  auto reg = parse_reg(s.substr(0, sign));
  if (!reg) return std::nullopt;
  s64 off = 0;
  if (sign != std::string_view::npos) {
    auto n = parse_num(s.substr(sign));
    if (!n) return std::nullopt;
    off = (s64)*n;
    if (off < -32768 || off > 65535) {
      *why = "offset out of range";
      return std::nullopt;
    }
  }
  return Mem{*reg, (s16)(u16)off};
}

absl::Status Assembler::imm32(std::string_view s, s32 *out) const {
  auto n = parse_num(s);
  if (!n) return err("bad immediate '" + std::string(s) + "'");
  const s64 v = (s64)*n;
  if (v < INT32_MIN || v > (s64)UINT32_MAX) return err("immediate out of range '" + std::string(s) + "'");
  *out = (s32)(u32)v;
  return absl::OkStatus();
}

// A jump target: +N / -N / N, or a label resolved later.
bool Assembler::target(std::string_view s, bool in_imm, s32 *out) {
  s = trim(s);
  if (s.empty()) return false;
  if (auto n = parse_num(s)) {
    *out = (s32)*n;
    return true;
  }
  for (char c : s)
    if (!std::isalnum((unsigned char)c) && c != '_' && c != '.') return false;
  fixups_.push_back({out_.size(), std::string(s), in_imm, line_});
  *out = 0;
  return true;
}

// ALU and conditional jumps, with an immediate (_K) or a source register (_X).
absl::Status Assembler::encode_alu_jcc(const bpf_opcode_desc &d,
                                       const std::vector<std::string_view> &ops, bpf_insn in,
                                       bool *matched) {
  const bool k = d.form == F_ALU_K || d.form == F_MOV_K || d.form == F_JCC_K;
  const bool jcc = d.form == F_JCC_K || d.form == F_JCC_X;
  *matched = false;
  if (ops.size() != (jcc ? 3u : 2u) || !parse_reg(ops[0])) return absl::OkStatus();
  if (k ? (parse_reg(ops[1]) || !parse_num(ops[1])) : !parse_reg(ops[1])) return absl::OkStatus();
  *matched = true;
  in.dst_reg = *parse_reg(ops[0]);
  if (k) {
    if (absl::Status st = imm32(ops[1], &in.imm); !st.ok()) return st;
  } else {
    in.src_reg = *parse_reg(ops[1]);
  }
  if (jcc) {
    s32 t;
    if (!target(ops[2], false, &t)) return err("bad jump target '" + std::string(ops[2]) + "'");
    in.off = (s16)t;
  }
  out_.push_back(in);
  return absl::OkStatus();
}

// Helper, local (call local LABEL) and kfunc calls (call runtime ID [, FD_IDX]).
absl::Status Assembler::encode_call(const bpf_opcode_desc &d,
                                    const std::vector<std::string_view> &ops, bpf_insn in,
                                    bool *matched) {
  *matched = d.form == F_CALL ? ops.size() == 1 : ops.size() == 1 || ops.size() == 2;
  if (!*matched) return absl::OkStatus();
  if (d.form == F_CALL && d.sel_value == BPF_PSEUDO_CALL) {
    if (!target(ops[0], true, &in.imm)) return err("bad call target '" + std::string(ops[0]) + "'");
  } else if (absl::Status st = imm32(ops[0], &in.imm); !st.ok()) {
    return st;
  }
  if (ops.size() == 2) {
    s32 off;
    if (absl::Status st = imm32(ops[1], &off); !st.ok()) return st;
    in.off = (s16)off;
  }
  out_.push_back(in);
  return absl::OkStatus();
}

// lddw: a 64-bit immediate, or one of the pseudo forms (map_by_fd(N), map_by_idx(N),
// map_val(...) + M, var_addr(N), code_addr(LABEL)); the form must be the row's.
absl::Status Assembler::encode_lddw(const bpf_opcode_desc &d,
                                    const std::vector<std::string_view> &ops, bpf_insn in,
                                    bool *matched) {
  *matched = ops.size() == 2 && parse_reg(ops[0]);
  if (!*matched) return absl::OkStatus();
  // From here an error is this row's (a malformed pseudo form), unless the form is another
  // row's.
  in.dst_reg = *parse_reg(ops[0]);
  std::string e = lower(trim(ops[1]));
  std::string_view v = e;
  auto call_arg = [&](std::string_view fn, std::string_view *arg) {
    if (v.rfind(fn, 0) != 0 || v.size() <= fn.size() || v[fn.size()] != '(') return false;
    size_t close = v.find(')');
    *arg = v.substr(fn.size() + 1, close == std::string_view::npos ? 0 : close - fn.size() - 1);
    return close != std::string_view::npos;
  };
  std::string_view arg;
  s32 next = 0;
  u8 want_src = BPF_LD_IMM64_PLAIN;
  if (v.rfind("map_val(", 0) == 0) {
    // map_val(map_by_fd(N)) + M, map_val(map_by_idx(N)) + M
    size_t close2 = v.find("))");
    if (close2 == std::string_view::npos) return err("bad map_val expression");
    std::string_view after = trim(v.substr(close2 + 2));
    if (!after.empty()) {
      if (after[0] != '+') return err("bad map_val expression");
      if (absl::Status st = imm32(after.substr(1), &next); !st.ok()) return st;
    }
    v = v.substr(8);
    if (call_arg("map_by_fd", &arg)) want_src = BPF_PSEUDO_MAP_VALUE;
    else if (call_arg("map_by_idx", &arg)) want_src = BPF_PSEUDO_MAP_IDX_VALUE;
    else return err("bad map_val expression");
  } else if (call_arg("map_by_fd", &arg)) {
    want_src = BPF_PSEUDO_MAP_FD;
  } else if (call_arg("map_by_idx", &arg)) {
    want_src = BPF_PSEUDO_MAP_IDX;
  } else if (call_arg("var_addr", &arg)) {
    want_src = BPF_PSEUDO_BTF_ID;
  } else if (call_arg("code_addr", &arg)) {
    want_src = BPF_PSEUDO_FUNC;
  }
  if (want_src != d.sel_value) {
    *matched = false;
    return absl::OkStatus();
  }
  bpf_insn hi{};
  if (want_src == BPF_LD_IMM64_PLAIN) {
    auto n = parse_num(ops[1]);
    if (!n) return err("bad 64-bit immediate '" + std::string(ops[1]) + "'");
    in.imm = (s32)(u32)*n;
    hi.imm = (s32)(u32)(*n >> 32);
  } else if (want_src == BPF_PSEUDO_FUNC) {
    if (!target(arg, true, &in.imm)) return err("bad code_addr target");
  } else {
    if (absl::Status st = imm32(arg, &in.imm); !st.ok()) return st;
    hi.imm = next;
  }
  // Fixups recorded for code_addr point at the first slot, which is right: the offset is
  // relative to the ld_imm64 instruction like a call's.
  out_.push_back(in);
  out_.push_back(hi);
  return absl::OkStatus();
}

// Memory loads (ldx), stores (st, stx) and atomics: a [reg+off] operand and a register or an
// immediate.
absl::Status Assembler::encode_mem(const bpf_opcode_desc &d,
                                   const std::vector<std::string_view> &ops, bpf_insn in,
                                   bool *matched) {
  std::string why;
  // A malformed [reg+off] operand is this row's error (*matched true).
  auto bad_mem = [&] {
    *matched = !why.empty();
    return why.empty() ? absl::OkStatus() : err(why);
  };
  *matched = false;
  if (ops.size() != 2) return absl::OkStatus();
  if (d.form == F_LDX) {
    if (!parse_reg(ops[0])) return absl::OkStatus();
    auto m = parse_mem(ops[1], &why);
    if (!m) return bad_mem();
    in.dst_reg = *parse_reg(ops[0]);
    in.src_reg = m->reg;
    in.off = m->off;
  } else {
    auto m = parse_mem(ops[0], &why);
    if (!m) return bad_mem();
    in.dst_reg = m->reg;
    in.off = m->off;
    if (d.form == F_ST) {
      if (!parse_num(ops[1])) return absl::OkStatus();
      *matched = true;
      if (absl::Status st = imm32(ops[1], &in.imm); !st.ok()) return st;
    } else {
      if (!parse_reg(ops[1])) return absl::OkStatus();
      in.src_reg = *parse_reg(ops[1]);
    }
  }
  *matched = true;
  out_.push_back(in);
  return absl::OkStatus();
}

absl::Status Assembler::encode(const bpf_opcode_desc &d, const std::vector<std::string_view> &ops,
                               bool *matched) {
  bpf_insn in{};
  in.code = d.code;
  switch (d.sel) {
  case SEL_OFF: in.off = (s16)d.sel_value; break;
  case SEL_IMM: in.imm = d.sel_value; break;
  case SEL_SRC: in.src_reg = (u8)d.sel_value; break;
  case SEL_NONE: break;
  }
  auto nops = [&](size_t n) { return ops.size() == n; };
  auto reg = [&](size_t i) { return parse_reg(ops[i]); };
  *matched = true;
  switch (d.form) {
  case F_ALU_K:
  case F_MOV_K:
  case F_JCC_K:
  case F_ALU_X:
  case F_MOV_X:
  case F_JCC_X:
    return encode_alu_jcc(d, ops, in, matched);
  case F_CALL:
  case F_CALL_KFUNC:
    return encode_call(d, ops, in, matched);
  case F_LDDW:
    return encode_lddw(d, ops, in, matched);
  case F_LDX:
  case F_ST:
  case F_STX:
  case F_ATOMIC:
  case F_ATOMIC_FETCH:
  case F_ATOMIC_CMPXCHG:
    return encode_mem(d, ops, in, matched);
  case F_NEG:
  case F_END:
  case F_CALLX:
    if (!nops(1) || !reg(0)) break;
    in.dst_reg = *reg(0);
    out_.push_back(in);
    return absl::OkStatus();
  case F_JA:
  case F_GOTOL: {
    if (!nops(1)) break;
    s32 t;
    if (!target(ops[0], d.form == F_GOTOL, &t)) return err("bad jump target '" + std::string(ops[0]) + "'");
    if (d.form == F_GOTOL) in.imm = t;
    else in.off = (s16)t;
    out_.push_back(in);
    return absl::OkStatus();
  }
  case F_EXIT:
    if (!ops.empty()) break;
    if (!first_exit_) first_exit_ = out_.size();
    out_.push_back(in);
    return absl::OkStatus();
  case F_LD_ABS:
    if (!nops(1)) break;
    if (absl::Status st = imm32(ops[0], &in.imm); !st.ok()) return st;
    out_.push_back(in);
    return absl::OkStatus();
  case F_LD_IND:
    if (!nops(2) || !reg(0)) break;
    in.src_reg = *reg(0);
    if (absl::Status st = imm32(ops[1], &in.imm); !st.ok()) return st;
    out_.push_back(in);
    return absl::OkStatus();
  case F_NR:
    break;
  }
  *matched = false;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<bpf_insn>> bpf_assemble(std::string_view text) {
  Assembler a;
  return a.run(text);
}

}  // namespace umemcg::emu
