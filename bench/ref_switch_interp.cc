// SPDX-License-Identifier: GPL-2.0-only
// bench/ref_switch_interp.cc: the S5 reference interpreter (see the header).
#include "bench/ref_switch_interp.h"

#include <linux/bpf.h>

#include <cstring>

namespace umemcg::bench {

namespace {

struct RefFrame {
  size_t ret_pc;
  u64 saved[4];  // r6-r9
};

}  // namespace

RefRunResult ref_switch_run(std::span<const bpf_insn> insns, void *mem, size_t mem_len,
                            std::span<const emu::bpf_func_t> helpers, u64 budget) {
  RefRunResult res;
  u64 reg[MAX_BPF_REG] = {};
  alignas(16) u8 stack[MAX_CALL_FRAMES * MAX_BPF_STACK];
  std::memset(stack, 0, sizeof(stack));
  RefFrame frames[MAX_CALL_FRAMES];
  int depth = 0;
  const u64 mem_lo = (u64)(uintptr_t)mem;
  const u64 stack_base = (u64)(uintptr_t)stack;
  reg[1] = mem_lo;
  reg[2] = mem_len;
  reg[10] = stack_base + sizeof(stack);
  const size_t cnt = insns.size();
  size_t pc = 0;

  auto fault = [&](const char *why) {
    res.error = std::string(why) + " at insn " + std::to_string(pc);
    return res;
  };
  // The access [addr, addr + n) is inside the input memory or the active frame's stack.
  auto in_bounds = [&](u64 addr, u64 n) {
    if (addr >= mem_lo && addr - mem_lo <= mem_len && n <= mem_len - (addr - mem_lo)) return true;
    const u64 lo = stack_base + (u64)(MAX_CALL_FRAMES - 1 - depth) * MAX_BPF_STACK;
    const u64 hi = lo + MAX_BPF_STACK;
    return addr >= lo && addr <= hi && n <= hi - addr;
  };

  for (;;) {
    if (pc >= cnt) return fault("pc out of range");
    if (res.executed++ >= budget) return fault("instruction budget exhausted");
    const bpf_insn in = insns[pc++];
    if (in.dst_reg >= MAX_BPF_REG || in.src_reg >= MAX_BPF_REG) return fault("bad register");
    u64 &dst = reg[in.dst_reg];
    const u64 src = reg[in.src_reg];
    const u64 imm = (u64)(s64)in.imm;
    switch (in.code) {
#define ALU(OPC, EXPR64, EXPR32)                                       \
  case BPF_ALU64 | OPC | BPF_K: { const u64 b = imm; dst = (EXPR64); break; } \
  case BPF_ALU64 | OPC | BPF_X: { const u64 b = src; dst = (EXPR64); break; } \
  case BPF_ALU | OPC | BPF_K: { const u32 b = (u32)imm; dst = (u32)(EXPR32); break; } \
  case BPF_ALU | OPC | BPF_X: { const u32 b = (u32)src; dst = (u32)(EXPR32); break; }
      ALU(BPF_ADD, dst + b, (u32)dst + b)
      ALU(BPF_SUB, dst - b, (u32)dst - b)
      ALU(BPF_MUL, dst * b, (u32)dst * b)
      ALU(BPF_OR, dst | b, (u32)dst | b)
      ALU(BPF_AND, dst & b, (u32)dst & b)
      ALU(BPF_XOR, dst ^ b, (u32)dst ^ b)
      ALU(BPF_LSH, dst << (b & 63), (u32)dst << (b & 31))
      ALU(BPF_RSH, dst >> (b & 63), (u32)dst >> (b & 31))
      ALU(BPF_ARSH, (u64)((s64)dst >> (b & 63)), (u32)((s32)dst >> (b & 31)))
      ALU(BPF_DIV, b ? dst / b : 0, b ? (u32)dst / b : 0)
      ALU(BPF_MOD, b ? dst % b : dst, b ? (u32)dst % b : (u32)dst)
      ALU(BPF_MOV, b, b)
#undef ALU
      case BPF_ALU64 | BPF_NEG: dst = -dst; break;
      case BPF_ALU | BPF_NEG: dst = (u32)-(u32)dst; break;
      case BPF_LD | BPF_IMM | BPF_DW:
        if (pc >= cnt) return fault("truncated ld_imm64");
        dst = (u64)(u32)in.imm | ((u64)(u32)insns[pc].imm << 32);
        pc++;
        break;
#define LDX(SZ, T)                                                       \
  case BPF_LDX | BPF_MEM | SZ: {                                          \
    const u64 a = src + (u64)(s64)in.off;                                \
    if (!in_bounds(a, sizeof(T))) return fault("out-of-bounds load");    \
    T v;                                                                 \
    std::memcpy(&v, (const void *)(uintptr_t)a, sizeof(T));             \
    dst = v;                                                             \
    break;                                                               \
  }
      LDX(BPF_B, u8)
      LDX(BPF_H, u16)
      LDX(BPF_W, u32)
      LDX(BPF_DW, u64)
#undef LDX
#define STORE(CLS, SZ, T, VAL)                                           \
  case CLS | BPF_MEM | SZ: {                                             \
    const u64 a = dst + (u64)(s64)in.off;                                \
    if (!in_bounds(a, sizeof(T))) return fault("out-of-bounds store");   \
    const T v = (T)(VAL);                                                \
    std::memcpy((void *)(uintptr_t)a, &v, sizeof(T));                    \
    break;                                                               \
  }
      STORE(BPF_STX, BPF_B, u8, src)
      STORE(BPF_STX, BPF_H, u16, src)
      STORE(BPF_STX, BPF_W, u32, src)
      STORE(BPF_STX, BPF_DW, u64, src)
      STORE(BPF_ST, BPF_B, u8, imm)
      STORE(BPF_ST, BPF_H, u16, imm)
      STORE(BPF_ST, BPF_W, u32, imm)
      STORE(BPF_ST, BPF_DW, u64, imm)
#undef STORE
      case BPF_JMP | BPF_JA:
        pc += (size_t)(s64)in.off;
        break;
#define JCC(OPC, T64, T32, OP)                                                        \
  case BPF_JMP | OPC | BPF_K: if ((T64)dst OP (T64)imm) pc += (size_t)(s64)in.off; break; \
  case BPF_JMP | OPC | BPF_X: if ((T64)dst OP (T64)src) pc += (size_t)(s64)in.off; break; \
  case BPF_JMP32 | OPC | BPF_K: if ((T32)dst OP (T32)imm) pc += (size_t)(s64)in.off; break; \
  case BPF_JMP32 | OPC | BPF_X: if ((T32)dst OP (T32)src) pc += (size_t)(s64)in.off; break;
      JCC(BPF_JEQ, u64, u32, ==)
      JCC(BPF_JNE, u64, u32, !=)
      JCC(BPF_JGT, u64, u32, >)
      JCC(BPF_JGE, u64, u32, >=)
      JCC(BPF_JLT, u64, u32, <)
      JCC(BPF_JLE, u64, u32, <=)
      JCC(BPF_JSGT, s64, s32, >)
      JCC(BPF_JSGE, s64, s32, >=)
      JCC(BPF_JSLT, s64, s32, <)
      JCC(BPF_JSLE, s64, s32, <=)
      JCC(BPF_JSET, u64, u32, &)
#undef JCC
      case BPF_JMP | BPF_CALL:
        if (in.src_reg == BPF_PSEUDO_CALL) {
          if (depth + 1 >= MAX_CALL_FRAMES) return fault("call stack too deep");
          RefFrame &f = frames[depth++];
          f.ret_pc = pc;
          std::memcpy(f.saved, &reg[6], sizeof(f.saved));
          reg[10] -= MAX_BPF_STACK;
          pc += (size_t)(s64)in.imm;
        } else {
          if (in.imm < 0 || (size_t)in.imm >= helpers.size() || !helpers[(size_t)in.imm])
            return fault("unknown helper");
          reg[0] = helpers[(size_t)in.imm](reg[1], reg[2], reg[3], reg[4], reg[5]);
        }
        break;
      case BPF_JMP | BPF_EXIT:
        if (depth == 0) {
          res.ok = true;
          res.r0 = reg[0];
          return res;
        }
        {
          const RefFrame &f = frames[--depth];
          pc = f.ret_pc;
          std::memcpy(&reg[6], f.saved, sizeof(f.saved));
          reg[10] += MAX_BPF_STACK;
        }
        break;
      default:
        return fault("unsupported opcode");
    }
  }
}

}  // namespace umemcg::bench
