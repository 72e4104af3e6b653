// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/isa_data.cc: parsing and running the ISA test data files.
#include "test/bpfvm/isa_data.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "bpfvm/asm.h"

namespace umemcg::emu::test {

namespace {

u64 helper_sum(u64 a, u64 b, u64 c, u64 d, u64 e) { return a + b + c + d + e; }
u64 helper_double(u64 a, u64, u64, u64, u64) { return a * 2; }
u64 helper_identity(u64 a, u64, u64, u64, u64) { return a; }
u64 helper_const(u64, u64, u64, u64, u64) { return 0x1122334455667788ull; }
u64 kfunc_sub(u64 a, u64 b, u64, u64, u64) { return a - b; }
u64 kfunc_77(u64, u64, u64, u64, u64) { return 0x77; }

const bpf_func_t kHelpers[] = {nullptr, helper_sum, helper_double, nullptr, nullptr,
                               helper_identity, helper_const};
const BpfKfunc kKfuncs[] = {{42, 0, kfunc_sub}, {7, 1, kfunc_77}};

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool parse_u64(const std::string &tok, int base, u64 *out) {
  if (tok.empty()) return false;
  char *end = nullptr;
  errno = 0;
  *out = std::strtoull(tok.c_str(), &end, base);
  return errno == 0 && end && *end == 0;
}

}  // namespace

IsaDataFile load_isa_data_file(const std::string &path) {
  IsaDataFile f;
  f.path = path;
  std::ifstream in(path);
  if (!in) {
    f.parse_error = "cannot open";
    return f;
  }
  enum { NONE, ASM, RAW, MEM, RESULT, ERROR } state = NONE;
  std::string asm_text, line;
  std::vector<u8> raw_bytes;
  bool have_raw = false, have_asm = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string t = trim(line);
    if (t.rfind("--", 0) == 0) {
      std::string sec = trim(t.substr(2));
      if (sec == "asm") state = ASM, have_asm = true;
      else if (sec == "raw") state = RAW, have_raw = true;
      else if (sec == "mem") state = MEM;
      else if (sec == "result") state = RESULT;
      else if (sec == "error") state = ERROR;
      else {
        f.parse_error = "unknown section '" + sec + "'";
        return f;
      }
      continue;
    }
    if (state == ASM) {
      asm_text += line + "\n";
      continue;
    }
    if (size_t h = t.find('#'); h != std::string::npos) t = trim(t.substr(0, h));
    if (t.empty()) continue;
    std::istringstream ss(t);
    std::string tok;
    switch (state) {
    case RAW:
      while (ss >> tok) {
        u64 v;
        std::string digits = tok.rfind("0x", 0) == 0 ? tok.substr(2) : tok;
        if (!parse_u64(digits, 16, &v)) {
          f.parse_error = "bad raw token '" + tok + "'";
          return f;
        }
        if (digits.size() == 16) {
          for (int i = 0; i < 8; i++) raw_bytes.push_back((u8)(v >> (8 * i)));
        } else if (digits.size() <= 2) {
          raw_bytes.push_back((u8)v);
        } else {
          f.parse_error = "raw token '" + tok + "' is neither a byte nor a 64-bit word";
          return f;
        }
      }
      break;
    case MEM:
      while (ss >> tok) {
        u64 v;
        if (tok.rfind("0x", 0) == 0) tok = tok.substr(2);
        if (!parse_u64(tok, 16, &v) || v > 0xff) {
          f.parse_error = "bad mem byte '" + tok + "'";
          return f;
        }
        f.mem.push_back((u8)v);
      }
      break;
    case RESULT: {
      u64 v;
      bool hex = t.rfind("0x", 0) == 0;
      if (!parse_u64(hex ? t.substr(2) : t, hex ? 16 : 10, &v)) {
        f.parse_error = "bad result '" + t + "'";
        return f;
      }
      f.result = v;
      break;
    }
    case ERROR:
      f.error = t;
      break;
    default:
      f.parse_error = "text outside a section: '" + t + "'";
      return f;
    }
  }
  if (have_asm == have_raw) {
    f.parse_error = "needs exactly one of -- asm / -- raw";
    return f;
  }
  if (f.result.has_value() == f.error.has_value()) {
    f.parse_error = "needs exactly one of -- result / -- error";
    return f;
  }
  if (have_asm) {
    auto prog = bpf_assemble(asm_text);
    if (!prog.ok()) {
      // An assembler error is a legitimate outcome for a negative test (-- error).
      f.asm_error = std::string(prog.status().message());
      if (!f.error) f.parse_error = f.asm_error;
      return f;
    }
    f.insns = std::move(*prog);
  } else {
    if (raw_bytes.size() % 8) {
      f.parse_error = "raw program is not a multiple of 8 bytes";
      return f;
    }
    f.insns.resize(raw_bytes.size() / 8);
    std::memcpy(f.insns.data(), raw_bytes.data(), raw_bytes.size());
  }
  return f;
}

IsaRunOutcome run_isa_program(const std::vector<bpf_insn> &insns, std::vector<u8> mem,
                              bool *fast_mismatch) {
  IsaRunOutcome out;
  *fast_mismatch = false;
  BpfLinkedProg lp{insns, kHelpers, kKfuncs};
  auto prog = BpfProgram::prepare(lp);
  if (!prog.ok()) {
    out.error = std::string(prog.status().message());
    return out;
  }
  std::vector<u8> mem_fast = mem;
  // A zero-length memory still needs a distinct, non-null address.
  u8 dummy = 0;
  u8 *m = mem.empty() ? &dummy : mem.data();
  BpfMemRegion region{(u64)(uintptr_t)m, mem.size(), true};
  BpfCheckedRunOpts opts;
  opts.args = {(u64)(uintptr_t)m, mem.size(), 0, 0, 0};
  opts.nargs = 2;
  opts.regions = {&region, 1};
  opts.insn_budget = 10'000'000;
  BpfRunResult r = prog->run_checked(opts);
  if (!r.ok) {
    out.error = r.reason + " at insn " + std::to_string(r.insn);
    return out;
  }
  out.ok = true;
  out.r0 = r.r0;
  u8 *mf = mem_fast.empty() ? &dummy : mem_fast.data();
  const u64 args[5] = {(u64)(uintptr_t)mf, mem_fast.size(), 0, 0, 0};
  const u64 fast = prog->run_fast(args);
  *fast_mismatch = fast != r.r0 || mem_fast != mem;
  return out;
}

}  // namespace umemcg::emu::test
