// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/disasm.cc: the verifier-log style disassembler, driven by the opcode table.
//
// Mirrors: kernel/bpf/disasm.c (Linux 6.19)
// Emulation: see bpfvm/disasm.h.
#include "bpfvm/disasm.h"

#include <cstdarg>
#include <cstdio>

#include "bpfvm/opcodes.h"

namespace umemcg::emu {

namespace {

using namespace bpf_opc;

#define BPFVM_HELPER_NAME(x) "bpf_" #x
const char *const kHelperNames[] = {__BPF_FUNC_MAPPER(BPFVM_HELPER_NAME)};
#undef BPFVM_HELPER_NAME

// Indexed by BPF_SIZE(code) >> 3.
const char *const kLdst[4] = {"u32", "u16", "u8", "u64"};
const char *const kLdsx[4] = {"s32", "s16", "s8", "?"};

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...) {
  char buf[192];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof(buf), f, ap);
  va_end(ap);
  return buf;
}

}  // namespace

const char *bpf_helper_name(s32 id) {
  if (id < 0 || (size_t)id >= sizeof(kHelperNames) / sizeof(kHelperNames[0])) return nullptr;
  return kHelperNames[id];
}

std::string bpf_disasm_insn(std::span<const bpf_insn> prog, size_t idx, const BpfDisasmOpts &opts) {
  std::string err;
  const bpf_opcode_desc *d = bpf_opcode_decode(prog.data(), prog.size(), idx, &err);
  if (!d) return opts.verifier_log ? fmt("(invalid %02x)", prog[idx].code) : "invalid: " + err;
  const bpf_insn &in = prog[idx];
  const u8 cls = BPF_CLASS(in.code);
  const char w = (cls == BPF_ALU || cls == BPF_JMP32) ? 'w' : 'r';
  const char *size = kLdst[BPF_SIZE(in.code) >> 3];
  const char *op = d->sym;  // the row's operator symbol (bpfvm/opcodes.def)
  const int dst = in.dst_reg, src = in.src_reg, off = in.off, imm = in.imm;
  std::string s;
  switch (d->form) {
  case F_ALU_K:
  case F_MOV_K:
    s = fmt("%c%d %s %d", w, dst, op, imm);
    break;
  case F_ALU_X:
    s = fmt("%c%d %s %c%d", w, dst, op, w, src);
    break;
  case F_MOV_X:
    if (off) s = fmt("%c%d = (s%d)%c%d", w, dst, off, w, src);
    else s = fmt("%c%d = %c%d", w, dst, w, src);
    break;
  case F_NEG:
    s = fmt("%c%d = %s%c%d", w, dst, op, w, dst);
    break;
  case F_END:
    s = fmt("r%d = %s%d r%d", dst, op, imm, dst);
    break;
  case F_JA:
    s = fmt("%s pc%+d", op, off);
    break;
  case F_GOTOL:
    s = fmt("%s pc%+d", op, imm);
    break;
  case F_JCC_K:
    s = fmt("if %c%d %s 0x%x goto pc%+d", w, dst, op, (unsigned)imm, off);
    break;
  case F_JCC_X:
    s = fmt("if %c%d %s %c%d goto pc%+d", w, dst, op, w, src, off);
    break;
  case F_CALL:
    if (in.src_reg == BPF_PSEUDO_CALL) {
      s = fmt("call pc%+d", imm);
    } else {
      const char *name = bpf_helper_name(imm);
      s = fmt("call %s#%d", name ? name : "unknown", imm);
    }
    break;
  case F_CALL_KFUNC: {
    const char *name = opts.kfunc_name ? opts.kfunc_name(imm, in.off, opts.opaque) : nullptr;
    // The kernel's disassembler names an unresolved kfunc "kernel-function".
    s = fmt("call %s#%d", name ? name : opts.verifier_log ? "kernel-function" : "kfunc", imm);
    break;
  }
  case F_CALLX:
    s = fmt("callx r%d", dst);
    break;
  case F_EXIT:
    s = "exit";
    break;
  case F_LDDW: {
    const bpf_insn &hi = prog[idx + 1];
    switch (in.src_reg) {
    case BPF_PSEUDO_MAP_FD:
      // The verifier log names a map by its index in the object (its fd is the loader's).
      s = fmt(opts.verifier_log ? "r%d = map[idx:%d]" : "r%d = map[fd:%d]", dst, imm);
      break;
    case BPF_PSEUDO_MAP_VALUE:
      s = fmt(opts.verifier_log ? "r%d = map[idx:%d][0]+%d" : "r%d = map[fd:%d][0]+%d", dst, imm,
              hi.imm);
      break;
    case BPF_PSEUDO_BTF_ID: s = fmt(opts.verifier_log ? "r%d = ksym#%d" : "r%d = btf_id[%d]", dst, imm); break;
    case BPF_PSEUDO_FUNC:
      // The verifier log prints the callback's pc-relative offset as the kernel's log does:
      // the raw 64-bit immediate.
      s = opts.verifier_log ? fmt("r%d = 0x%llx", dst, (unsigned long long)bpf_ldimm64_value(in, hi))
                            : fmt("r%d = func pc%+d", dst, imm);
      break;
    case BPF_PSEUDO_MAP_IDX: s = fmt("r%d = map[idx:%d]", dst, imm); break;
    case BPF_PSEUDO_MAP_IDX_VALUE: s = fmt("r%d = map[idx:%d][0]+%d", dst, imm, hi.imm); break;
    default:
      s = fmt("r%d = 0x%llx", dst, (unsigned long long)bpf_ldimm64_value(in, hi));
    }
    break;
  }
  case F_LD_ABS:
    s = fmt("r0 = *(%s *)skb[%d]", size, imm);
    break;
  case F_LD_IND:
    s = fmt("r0 = *(%s *)skb[r%d + %d]", size, src, imm);
    break;
  case F_LDX:
    s = fmt("r%d = *(%s *)(r%d %+d)", dst,
            BPF_MODE(in.code) == BPF_MEMSX ? kLdsx[BPF_SIZE(in.code) >> 3] : size, src, off);
    break;
  case F_ST:
    s = fmt("*(%s *)(r%d %+d) = %d", size, dst, off, imm);
    break;
  case F_STX:
    s = fmt("*(%s *)(r%d %+d) = r%d", size, dst, off, src);
    break;
  case F_ATOMIC:
    s = fmt("lock *(%s *)(r%d %+d) %s r%d", size, dst, off, op, src);
    break;
  case F_ATOMIC_FETCH: {
    const char *width = BPF_SIZE(in.code) == BPF_DW ? "64" : "";
    s = fmt("r%d = atomic%s_%s((%s *)(r%d %+d), r%d)", src, width, op, size, dst, off, src);
    break;
  }
  case F_ATOMIC_CMPXCHG:
    s = fmt("r0 = atomic%s_%s((%s *)(r%d %+d), r0, r%d)", BPF_SIZE(in.code) == BPF_DW ? "64" : "",
            op, size, dst, off, src);
    break;
  case F_NR:
    break;
  }
  if (opts.show_code) s = fmt("(%02x) ", in.code) + s;
  return s;
}

std::string bpf_disasm_prog(std::span<const bpf_insn> prog, const BpfDisasmOpts &opts) {
  std::string out;
  for (size_t i = 0; i < prog.size(); i++) {
    out += std::to_string(i) + ": " + bpf_disasm_insn(prog, i, opts) + "\n";
    if (bpf_is_ldimm64(prog[i])) i++;
  }
  return out;
}

}  // namespace umemcg::emu
