// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/interp.cc: the eBPF interpreter: prepare (pre-decode to threaded code) and the two run
// modes, one handler per opcode-table row.
//
// Mirrors: kernel/bpf/core.c (___bpf_prog_run(), Linux 6.19)
// Emulation: see bpfvm/interp.h. The handler table is generated from bpfvm/opcodes.def, so every
//   row has exactly one handler (a missing label is a compile error). Both modes are one template
//   body: BpfInterp<true> adds the checks at dispatch and in the memory handlers.
#include "bpfvm/interp.h"
#include "bpfvm/interp_safe.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "bpfvm/helper_proto.h"
#include "shim/bug.h"
#include "shim/compiler.h"

namespace umemcg::emu {

namespace {

using namespace bpf_opc;

// RFC 9669 section 4.1: division by zero gives 0, modulo by zero leaves dst unchanged (the ALU
// forms zero-extend it like every 32-bit result); signed INT_MIN / -1 == INT_MIN and
// INT_MIN % -1 == 0 (Documentation/bpf/standardization/instruction-set.rst); signed modulo
// truncates like C.
inline u64 div64(u64 a, u64 b) { return b ? a / b : 0; }
inline u32 div32(u32 a, u32 b) { return b ? a / b : 0; }
inline u64 mod64(u64 a, u64 b) { return b ? a % b : a; }
inline u32 mod32(u32 a, u32 b) { return b ? a % b : a; }
inline u64 sdiv64(u64 a, u64 b) {
  if (b == 0) return 0;
  if ((s64)b == -1) return 0 - a;  // wraps: INT64_MIN / -1 == INT64_MIN
  return (u64)((s64)a / (s64)b);
}
inline u32 sdiv32(u32 a, u32 b) {
  if (b == 0) return 0;
  if ((s32)b == -1) return 0u - a;
  return (u32)((s32)a / (s32)b);
}
inline u64 smod64(u64 a, u64 b) {
  if (b == 0) return a;
  if ((s64)b == -1) return 0;
  return (u64)((s64)a % (s64)b);
}
inline u32 smod32(u32 a, u32 b) {
  if (b == 0) return a;
  if ((s32)b == -1) return 0;
  return (u32)((s32)a % (s32)b);
}

// A program's plain loads and stores. Two programs (a bpf_timer and a bpf_wq callback, say)
// may access one map value at once with plain instructions: a race BPF allows, and which the
// kernel's sanitizers never see, since JIT-ed code is not instrumented.
// Emulation: likewise these two are left uninstrumented by ThreadSanitizer; the helpers' and the
// atomic instructions' accesses stay checked.
template <typename T>
__attribute__((no_sanitize("thread"))) inline T load_mem(u64 addr) {
  T v;
  std::memcpy(&v, (const void *)(uintptr_t)addr, sizeof(T));
  return v;
}
template <typename T>
__attribute__((no_sanitize("thread"))) inline void store_mem(u64 addr, T v) {
  std::memcpy((void *)(uintptr_t)addr, &v, sizeof(T));
}
template <typename T>
inline T *atomic_ptr(u64 addr) {
  return reinterpret_cast<T *>((uintptr_t)addr);
}

constexpr u32 kCallerSaved = 0x3e;  // r1-r5
constexpr u32 kFpBit = 1u << BPF_REG_FP;

// Extra fast-mode handlers after the opcode-table rows: loads and stores based on r10, and the
// bpf-to-bpf call and exit of a subprogram that leaves r6-r9 alone (no save, no restore).
enum : int {
  kLdxFpDw = BPF_OPC_NR,
  kLdxFpW,
  kStxFpDw,
  kStxFpW,
  kCallLocalNoSave,
  kExitNoSave,
  // Safe mode: loads and stores at a constant offset >= 0 from a register that holds the
  // context pointer (bpf_ctx_regs()), unchecked: the run checks the whole extent once.
  kLdxCtxB,
  kLdxCtxH,
  kLdxCtxW,
  kLdxCtxDw,
  kStxCtxB,
  kStxCtxH,
  kStxCtxW,
  kStxCtxDw,
  kStCtxB,
  kStCtxH,
  kStCtxW,
  kStCtxDw,
  kFpEnd
};
constexpr int kFpForms = (int)kFpEnd - (int)BPF_OPC_NR;
constexpr u32 kCalleeSaved = 0x3c0;  // r6-r9

// The fast-mode handler index of an instruction with opcode-table row id. keeps_r6_r9: for a
// local call, the callee's subprogram writes none of r6-r9; for an exit, its own subprogram.
int fast_handler(int id, const bpf_insn &in, bool keeps_r6_r9) {
  if (id == BPF_OPC_LDX_MEM_DW && in.src_reg == BPF_REG_FP) return kLdxFpDw;
  if (id == BPF_OPC_LDX_MEM_W && in.src_reg == BPF_REG_FP) return kLdxFpW;
  if (id == BPF_OPC_STX_MEM_DW && in.dst_reg == BPF_REG_FP) return kStxFpDw;
  if (id == BPF_OPC_STX_MEM_W && in.dst_reg == BPF_REG_FP) return kStxFpW;
  if (id == BPF_OPC_JMP_CALL_LOCAL && keeps_r6_r9) return kCallLocalNoSave;
  if (id == BPF_OPC_JMP_EXIT && keeps_r6_r9) return kExitNoSave;
  return id;
}

// The safe mode's context form of a load or store (kLdxCtxB...), or -1. ctx: the registers that
// hold the context pointer here (bpf_ctx_regs()). *end: the offset just past the access.
int ctx_handler(int id, const bpf_insn &in, u16 ctx, u64 *end) {
  int h = -1, w = 0;
  u8 base = in.dst_reg;
  switch (id) {
    case BPF_OPC_LDX_MEM_B: h = kLdxCtxB, w = 1, base = in.src_reg; break;
    case BPF_OPC_LDX_MEM_H: h = kLdxCtxH, w = 2, base = in.src_reg; break;
    case BPF_OPC_LDX_MEM_W: h = kLdxCtxW, w = 4, base = in.src_reg; break;
    case BPF_OPC_LDX_MEM_DW: h = kLdxCtxDw, w = 8, base = in.src_reg; break;
    case BPF_OPC_STX_MEM_B: h = kStxCtxB, w = 1; break;
    case BPF_OPC_STX_MEM_H: h = kStxCtxH, w = 2; break;
    case BPF_OPC_STX_MEM_W: h = kStxCtxW, w = 4; break;
    case BPF_OPC_STX_MEM_DW: h = kStxCtxDw, w = 8; break;
    case BPF_OPC_ST_MEM_B: h = kStCtxB, w = 1; break;
    case BPF_OPC_ST_MEM_H: h = kStCtxH, w = 2; break;
    case BPF_OPC_ST_MEM_W: h = kStCtxW, w = 4; break;
    case BPF_OPC_ST_MEM_DW: h = kStCtxDw, w = 8; break;
    default: return -1;
  }
  if (in.off < 0 || !(ctx & (1u << base))) return -1;
  *end = (u64)in.off + (u64)w;
  return h;
}

// The safe-mode handler index: the r10 forms only for an access inside the current frame; the
// no-save call and exit forms only when the program's subprograms are closed
// (bpf_subprogs_closed()).
int safe_handler(int id, const bpf_insn &in, bool keeps_r6_r9) {
  const int h = fast_handler(id, in, keeps_r6_r9);
  const s32 off = in.off;
  switch (h) {
    case kLdxFpDw:
    case kStxFpDw:
      return off >= -MAX_BPF_STACK && off <= -8 ? h : id;
    case kLdxFpW:
    case kStxFpW:
      return off >= -MAX_BPF_STACK && off <= -4 ? h : id;
    default:
      return h;
  }
}

// Registers an instruction writes (the opcode table's data flow; a call's clobbers of r1-r5
// are left out: only r6-r9 matter here).
u32 insn_writes(const bpf_form_desc &f, const bpf_insn &in) {
  u32 w = 0;
  if (f.flow & WR_DST) w |= 1u << in.dst_reg;
  if (f.flow & WR_SRC) w |= 1u << in.src_reg;
  if (f.flow & WR_R0) w |= 1u;
  return w;
}

}  // namespace

// BpfInterp is declared in interp.h.
template <bool Checked, bool Safe, bool Cov>
u64 BpfInterp<Checked, Safe, Cov>::run(const BpfExecProg *prog, const u64 *args, u64 ctx,
                                       const BpfCheckedRunOpts *opts, BpfRunResult *res,
                                       const void *const **labels_out) {
  // One handler per opcode-table row, then the fast mode's frame-pointer forms (kFpForms).
  static const void *const kLabels[BPF_OPC_NR + kFpForms] = {
#define BPF_OPCODE(name, code, sel, selval, cpu, groups, form, mnemonic, sym) &&op_##name,
#include "bpfvm/opcodes.def"
#undef BPF_OPCODE
      &&op_LDX_FP_DW, &&op_LDX_FP_W, &&op_STX_FP_DW, &&op_STX_FP_W,
      &&op_CALL_LOCAL_NOSAVE, &&op_EXIT_NOSAVE,
      &&op_LDX_CTX_B, &&op_LDX_CTX_H, &&op_LDX_CTX_W, &&op_LDX_CTX_DW,
      &&op_STX_CTX_B, &&op_STX_CTX_H, &&op_STX_CTX_W, &&op_STX_CTX_DW,
      &&op_ST_CTX_B, &&op_ST_CTX_H, &&op_ST_CTX_W, &&op_ST_CTX_DW,
  };
  if (labels_out) {
    *labels_out = kLabels;
    return 0;
  }

  // Safe mode: the code with the unchecked context forms when the first declared region starts
  // at the context pointer (r1) and holds every such access (writable if any stores), the same
  // decision the first region's check would make at each of them; else the code without them.
  const DInsn *base = Checked ? prog->ccode_.data() : prog->code_.data();
  // Coverage mode: its own code (the handlers of this loop), and the recording arrays, indexed
  // like the code.
  [[maybe_unused]] u8 *cov_hit = nullptr;
  [[maybe_unused]] u8 *cov_taken = nullptr;
  [[maybe_unused]] u8 *cov_fall = nullptr;
  if constexpr (Cov) {
    base = prog->covcode_.data();
    cov_hit = prog->cov_.hit;
    cov_taken = prog->cov_.taken;
    cov_fall = prog->cov_.fall;
  }
  if constexpr (Safe) {
    const BpfMemRegion *r = opts->regions.empty() ? nullptr : &opts->regions[0];
    const bool ctx_fits =
        r && r->start == args[0] && r->len >= prog->ctx_end_rd_ &&
        (prog->ctx_end_wr_ == 0 || (r->writable && r->len >= prog->ctx_end_wr_));
    base = ctx_fits || prog->scode_noctx_.empty() ? prog->scode_.data()
                                                  : prog->scode_noctx_.data();
  }
  const DInsn *pc = base;
  // The checked mode calls helpers and kfuncs through the tables. The other modes' code holds
  // each call's function pointer (inline_fn()) and only callx reads the helper table, at the
  // call: the loop keeps neither table in a register.
  const bpf_func_t *const helpers = Checked ? prog->helpers_.data() : nullptr;
  const bpf_func_t *const kfuncs = Checked ? prog->kfuncs_.data() : nullptr;

  // Every register starts at zero but the arguments and r10, as in the kernel's interpreter
  // entry (set below register by register: an `= {}` here becomes a `rep stos`, whose start-up
  // costs more than the whole entry of a short program).
  alignas(16) u64 R[MAX_BPF_REG];
  alignas(16) u8 stack[MAX_CALL_FRAMES * MAX_BPF_STACK];
  const u64 stack_top = (u64)(uintptr_t)(stack + sizeof(stack));
  // The caller frames of the active calls: frames[0, top). A pointer rather than an index: the
  // call and exit paths then need no multiply by sizeof(Frame).
  Frame frames[MAX_CALL_FRAMES];
  Frame *top = frames;
  Frame *const frames_full = frames + (MAX_CALL_FRAMES - 1);

  // Checked-mode state.
  u32 init = kFpBit;
  u64 budget = 0;
  const BpfExecProg::CheckMeta *const meta = prog->meta_.data();
  char why[160];  // written by every path to `fault` before it jumps there

  R[0] = 0;
  if (args) {
    for (int i = 0; i < 5; i++) R[i + 1] = args[i];
  } else {
    R[1] = ctx;  // (only the fast mode enters this way)
    R[2] = R[3] = R[4] = R[5] = 0;
  }
  R[6] = R[7] = R[8] = R[9] = 0;
  R[BPF_REG_FP] = stack_top;
  // The frame pointer, kept in a local (a register) as well as in R[10]: stack accesses are
  // most of the memory traffic of compiled programs, and this saves them the R[10] load.
  u64 fp = stack_top;
  if constexpr (kMemChecked) {
    // Deterministic: a program never reads the host's stack garbage.
    std::memset(stack, 0, sizeof(stack));
    budget = opts->insn_budget;
    if (opts->stack_out) {
      opts->stack_out[0] = (u64)(uintptr_t)stack;
      opts->stack_out[1] = stack_top;
    }
  }
  if constexpr (Checked)
    for (int i = 0; i < opts->nargs && i < 5; i++) init |= 1u << (i + 1);

  // Checked mode: bounds of one access against the active frames' stack, the declared regions
  // and the oracle. Overflow-safe: never computes addr + len.
  // The first declared region is copied into locals: stores of the program may alias *opts as
  // far as the compiler knows, and would otherwise force reloads at every access.
  BpfMemRegion region0{1, 0, false};  // (matches nothing when there is no region)
  if constexpr (kMemChecked)
    if (!opts->regions.empty()) region0 = opts->regions[0];
  const u64 r0_start = region0.start, r0_len = region0.len;
  const bool r0_writable = region0.writable;
  // The common case first: inside the first region, with two compares (an addr below the
  // start wraps to a huge offset); r0_wlen is its length for writes (0 if read-only). No
  // per-width tables: locals below R[] in the frame push its offsets out of the short
  // addressing form, which every handler pays for.
  const u64 r0_wlen = r0_writable ? r0_len : 0;
  auto mem_ok = [&](u64 addr, u64 len, bool write) -> bool {
    const u64 o = addr - r0_start;
    const u64 lim = write ? r0_wlen : r0_len;
    if (likely(o < lim && len <= lim - o)) return true;
    // The slow path: the first region again (a refused write stays refused), the stack of the
    // active frames, the other regions, the oracle.
    if (o < r0_len && len <= r0_len - o) return !write || r0_writable;
    const u64 lo = R[BPF_REG_FP] - MAX_BPF_STACK;
    if (addr >= lo && addr <= stack_top && len <= stack_top - addr) return true;
    for (const BpfMemRegion &r : opts->regions) {
      if (addr >= r.start && addr - r.start <= r.len && len <= r.len - (addr - r.start))
        return !write || r.writable;
    }
    return opts->mem_ok && opts->mem_ok(opts->mem_ok_opaque, addr, len, write);
  };

#define DISPATCH()                                                                     \
  do {                                                                                 \
    if constexpr (Checked) {                                                           \
      const BpfExecProg::CheckMeta &m_ = meta[pc - base];                               \
      /* A subprogram's exit hands r0 to its caller as it is, set or not (the verifier */ \
      /* refuses only a read of it there); the program's own exit must set it. */         \
      const u32 rd_ = m_.id == BPF_OPC_JMP_EXIT && top != frames ? 0u : m_.rd;           \
      if (unlikely(rd_ & ~init)) {                                                     \
        std::snprintf(why, sizeof(why), "R%d !read_ok", __builtin_ctz(rd_ & ~init));   \
        goto fault;                                                                    \
      }                                                                                \
      if (unlikely(budget-- == 0)) {                                                   \
        std::snprintf(why, sizeof(why), "instruction budget of %llu exhausted",        \
                      (unsigned long long)opts->insn_budget);                          \
        goto fault;                                                                    \
      }                                                                                \
      init |= m_.wr;                                                                   \
    }                                                                                  \
    if constexpr (Cov) __atomic_store_n(&cov_hit[pc - base], 1, __ATOMIC_RELAXED);     \
    goto *pc->op;                                                                      \
  } while (0)
#define NEXT() \
  do {         \
    ++pc;      \
    DISPATCH(); \
  } while (0)
// Safe mode: a taken backward jump is charged the instructions it jumps back over (one loop
// iteration's straight-line length), so that every loop runs down the budget.
#define BACK_EDGE(delta)                                                                   \
  do {                                                                                     \
    if constexpr (Safe) {                                                                  \
      if ((delta) < 0) {                                                                   \
        const u64 cost_ = (u64)(-(s64)(delta));                                            \
        if (unlikely(budget < cost_)) {                                                    \
          std::snprintf(why, sizeof(why), "instruction budget of %llu exhausted",          \
                        (unsigned long long)opts->insn_budget);                            \
          goto fault;                                                                      \
        }                                                                                  \
        budget -= cost_;                                                                   \
      }                                                                                    \
    }                                                                                      \
  } while (0)
// Coverage mode: each direction of a conditional jump is recorded (two arrays: the stores of
// concurrent runs never read-modify-write a shared byte).
#define JUMP_IF(cond)                                                                  \
  do {                                                                                 \
    if (cond) {                                                                        \
      if constexpr (Cov) __atomic_store_n(&cov_taken[pc - base], 1, __ATOMIC_RELAXED); \
      BACK_EDGE(pc->off);                                                              \
      pc += pc->off;                                                                   \
    } else {                                                                           \
      if constexpr (Cov) __atomic_store_n(&cov_fall[pc - base], 1, __ATOMIC_RELAXED);  \
    }                                                                                  \
    ++pc;                                                                              \
    DISPATCH();                                                                        \
  } while (0)
#define MEMCHECK(addr, len, write)                                                             \
  do {                                                                                         \
    if constexpr (kMemChecked) {                                                                   \
      if (unlikely(!mem_ok((addr), (len), (write)))) {                                         \
        std::snprintf(why, sizeof(why), "invalid memory %s of %d bytes at 0x%llx",             \
                      (write) ? "write" : "read", (int)(len), (unsigned long long)(addr));     \
        goto fault;                                                                            \
      }                                                                                        \
    }                                                                                          \
  } while (0)
#define ATOMICCHECK(addr, len)                                                                   \
  do {                                                                                           \
    MEMCHECK(addr, len, true);                                                                   \
    if constexpr (kMemChecked) {                                                                     \
      if (unlikely((addr) % (len))) {                                                            \
        std::snprintf(why, sizeof(why), "misaligned atomic access of %d bytes at 0x%llx",        \
                      (int)(len), (unsigned long long)(addr));                                   \
        goto fault;                                                                              \
      }                                                                                          \
    }                                                                                            \
  } while (0)

#define D R[pc->dst]
#define S R[pc->src]
#define IMM64 ((u64)(s64)pc->imm)
#define IMM32 ((u32)pc->imm)

  DISPATCH();

  // --- ALU / ALU64 ------------------------------------------------------------------------
#define BINOP(NAME, OP)                         \
  op_ALU64_##NAME##_K : D = D OP IMM64;         \
  NEXT();                                       \
  op_ALU64_##NAME##_X : D = D OP S;             \
  NEXT();                                       \
  op_ALU_##NAME##_K : D = (u32)((u32)D OP IMM32); \
  NEXT();                                       \
  op_ALU_##NAME##_X : D = (u32)((u32)D OP(u32) S); \
  NEXT();
  BINOP(ADD, +)
  BINOP(SUB, -)
  BINOP(MUL, *)
  BINOP(OR, |)
  BINOP(AND, &)
  BINOP(XOR, ^)
#undef BINOP

#define SHIFT(NAME, EXPR64, EXPR32)                   \
  op_ALU64_##NAME##_K : D = EXPR64(D, pc->imm & 63);  \
  NEXT();                                             \
  op_ALU64_##NAME##_X : D = EXPR64(D, S & 63);        \
  NEXT();                                             \
  op_ALU_##NAME##_K : D = EXPR32((u32)D, pc->imm & 31); \
  NEXT();                                             \
  op_ALU_##NAME##_X : D = EXPR32((u32)D, S & 31);     \
  NEXT();
#define LSH64(a, n) ((u64)(a) << (n))
#define RSH64(a, n) ((u64)(a) >> (n))
#define ARSH64(a, n) ((u64)((s64)(a) >> (n)))
#define LSH32(a, n) ((u32)((u32)(a) << (n)))
#define RSH32(a, n) ((u32)((u32)(a) >> (n)))
#define ARSH32(a, n) ((u32)((s32)(a) >> (n)))
  SHIFT(LSH, LSH64, LSH32)
  SHIFT(RSH, RSH64, RSH32)
  SHIFT(ARSH, ARSH64, ARSH32)
#undef SHIFT

#define DIVMOD(NAME, FN64, FN32)                       \
  op_ALU64_##NAME##_K : D = FN64(D, IMM64);            \
  NEXT();                                              \
  op_ALU64_##NAME##_X : D = FN64(D, S);                \
  NEXT();                                              \
  op_ALU_##NAME##_K : D = FN32((u32)D, IMM32);         \
  NEXT();                                              \
  op_ALU_##NAME##_X : D = FN32((u32)D, (u32)S);        \
  NEXT();
  DIVMOD(DIV, div64, div32)
  DIVMOD(SDIV, sdiv64, sdiv32)
  DIVMOD(MOD, mod64, mod32)
  DIVMOD(SMOD, smod64, smod32)
#undef DIVMOD

op_ALU64_NEG:
  D = 0 - D;
  NEXT();
op_ALU_NEG:
  D = (u32)(0u - (u32)D);
  NEXT();
op_ALU64_MOV_K:
  D = IMM64;
  NEXT();
op_ALU64_MOV_X:
  D = S;
  NEXT();
op_ALU_MOV_K:
  D = IMM32;
  NEXT();
op_ALU_MOV_X:
  D = (u32)S;
  NEXT();
op_ALU64_MOVSX8_X:
  D = (u64)(s64)(s8)S;
  NEXT();
op_ALU64_MOVSX16_X:
  D = (u64)(s64)(s16)S;
  NEXT();
op_ALU64_MOVSX32_X:
  D = (u64)(s64)(s32)S;
  NEXT();
op_ALU_MOVSX8_X:
  D = (u32)(s32)(s8)S;
  NEXT();
op_ALU_MOVSX16_X:
  D = (u32)(s32)(s16)S;
  NEXT();

  // Byte order: this host is little-endian (static_assert below), so to_le truncates and
  // to_be / bswap swap.
op_ALU_TO_LE16:
  D = (u16)D;
  NEXT();
op_ALU_TO_LE32:
  D = (u32)D;
  NEXT();
op_ALU_TO_LE64:
  NEXT();
op_ALU_TO_BE16:
op_ALU64_BSWAP16:
  D = __builtin_bswap16((u16)D);
  NEXT();
op_ALU_TO_BE32:
op_ALU64_BSWAP32:
  D = __builtin_bswap32((u32)D);
  NEXT();
op_ALU_TO_BE64:
op_ALU64_BSWAP64:
  D = __builtin_bswap64(D);
  NEXT();

  // --- JMP / JMP32 ------------------------------------------------------------------------
op_JMP_JA:
  BACK_EDGE(pc->off);
  pc += pc->off + 1;
  DISPATCH();
op_JMP32_JA:
  BACK_EDGE(pc->imm);
  pc += (s64)pc->imm + 1;
  DISPATCH();

#define JCC(NAME, OP, T64, T32)                            \
  op_JMP_##NAME##_K : JUMP_IF((T64)D OP(T64) IMM64);       \
  op_JMP_##NAME##_X : JUMP_IF((T64)D OP(T64) S);           \
  op_JMP32_##NAME##_K : JUMP_IF((T32)D OP(T32) pc->imm);   \
  op_JMP32_##NAME##_X : JUMP_IF((T32)D OP(T32) S);
  JCC(JEQ, ==, u64, u32)
  JCC(JNE, !=, u64, u32)
  JCC(JGT, >, u64, u32)
  JCC(JGE, >=, u64, u32)
  JCC(JLT, <, u64, u32)
  JCC(JLE, <=, u64, u32)
  JCC(JSGT, >, s64, s32)
  JCC(JSGE, >=, s64, s32)
  JCC(JSLT, <, s64, s32)
  JCC(JSLE, <=, s64, s32)
  JCC(JSET, &, u64, u32)
#undef JCC

  // Fast mode: prepare() stored the function pointer in the operand bytes (inline_fn()), one
  // dependent load less than the table.
op_JMP_CALL_HELPER:
  if constexpr (Checked) {
    R[0] = helpers[pc->imm](R[1], R[2], R[3], R[4], R[5]);
    init = (init & ~kCallerSaved) | 1u;
  } else {
    R[0] = BpfExecProg::inline_fn(*pc)(R[1], R[2], R[3], R[4], R[5]);
  }
  NEXT();
op_JMP_CALL_KFUNC:
  if constexpr (Checked) {
    R[0] = kfuncs[pc->imm](R[1], R[2], R[3], R[4], R[5]);
    init = (init & ~kCallerSaved) | 1u;
  } else {
    R[0] = BpfExecProg::inline_fn(*pc)(R[1], R[2], R[3], R[4], R[5]);
  }
  NEXT();
op_JMP_CALLX: {
  const u64 id = D;
  const std::vector<bpf_func_t> &table = prog->helpers_;
  if (unlikely(id >= table.size() || !table[id])) {
    std::snprintf(why, sizeof(why), "callx to invalid helper id %llu", (unsigned long long)id);
    goto fault;
  }
  R[0] = table[id](R[1], R[2], R[3], R[4], R[5]);
  if constexpr (Checked) init = (init & ~kCallerSaved) | 1u;
  NEXT();
}
op_JMP_CALL_LOCAL: {
  if (unlikely(top == frames_full)) {
    std::snprintf(why, sizeof(why), "the call stack of %d frames is too deep",
                  (int)(top - frames) + 2);
    goto fault;
  }
  Frame &f = *top++;
  f.ret = pc + 1;
  f.saved[0] = R[6];
  f.saved[1] = R[7];
  f.saved[2] = R[8];
  f.saved[3] = R[9];
  if constexpr (Checked) f.init = init;
  R[BPF_REG_FP] -= MAX_BPF_STACK;
  fp -= MAX_BPF_STACK;
  // The callee sees r1-r5 and its own frame pointer; r0 and r6-r9 are not initialised for it.
  if constexpr (Checked) init = (init & kCallerSaved) | kFpBit;
  pc += (s64)pc->imm + 1;
  DISPATCH();
}
  // Fast and safe modes: a call into a subprogram whose instructions write none of r6-r9
  // (prepare() checked; for the safe mode, also that control cannot leave the subprogram but by
  // its exits): the caller's r6-r9 survive the call without a copy. Its exits are EXIT_NOSAVE.
op_CALL_LOCAL_NOSAVE: {
  if (unlikely(top == frames_full)) {
    std::snprintf(why, sizeof(why), "the call stack of %d frames is too deep",
                  (int)(top - frames) + 2);
    goto fault;
  }
  (top++)->ret = pc + 1;
  R[BPF_REG_FP] -= MAX_BPF_STACK;
  fp -= MAX_BPF_STACK;
  pc += (s64)pc->imm + 1;
  DISPATCH();
}
op_EXIT_NOSAVE:
  if (top == frames) {
    if constexpr (Safe) goto op_JMP_EXIT;  // (the result bookkeeping; never dispatched when Checked)
    return R[0];
  }
  pc = (--top)->ret;
  R[BPF_REG_FP] += MAX_BPF_STACK;
  fp += MAX_BPF_STACK;
  DISPATCH();
op_JMP_EXIT: {
  if (top == frames) {
    if constexpr (kMemChecked) {
      res->ok = true;
      res->r0 = R[0];
      res->executed = opts->insn_budget - budget;
    }
    return R[0];
  }
  const Frame &f = *--top;
  R[6] = f.saved[0];
  R[7] = f.saved[1];
  R[8] = f.saved[2];
  R[9] = f.saved[3];
  R[BPF_REG_FP] += MAX_BPF_STACK;
  fp += MAX_BPF_STACK;
  // Back in the caller: r0 holds the result (initialised if the callee set it), r1-r5 are
  // scratched, r6-r9 are the caller's.
  if constexpr (Checked) init = (f.init & ~(kCallerSaved | 1u)) | (init & 1u) | kFpBit;
  pc = f.ret;
  DISPATCH();
}

  // --- LD (ld_imm64) ------------------------------------------------------------------------
op_LD_IMM64:
  D = (u64)(u32)pc->imm | ((u64)(u32)pc[1].imm << 32);
  pc += 2;
  DISPATCH();
op_LD_IMM64_MAP_FD:
op_LD_IMM64_MAP_VALUE:
op_LD_IMM64_BTF_ID:
op_LD_IMM64_FUNC:
op_LD_IMM64_MAP_IDX:
op_LD_IMM64_MAP_IDX_VALUE:
op_LD_ABS_W:
op_LD_ABS_H:
op_LD_ABS_B:
op_LD_IND_W:
op_LD_IND_H:
op_LD_IND_B:
  // prepare() refuses these; reaching one means the pre-decoded program is corrupt.
  std::snprintf(why, sizeof(why), "unsupported instruction");
  goto fault;

  // --- LDX / ST / STX -------------------------------------------------------------------------
#define LDX(NAME, T, EXT)                        \
  op_##NAME : {                                  \
    const u64 a_ = S + (s64)pc->off;             \
    MEMCHECK(a_, sizeof(T), false);              \
    D = (u64)(EXT)load_mem<T>(a_);               \
    NEXT();                                      \
  }
  LDX(LDX_MEM_B, u8, u64)
  LDX(LDX_MEM_H, u16, u64)
  LDX(LDX_MEM_W, u32, u64)
  LDX(LDX_MEM_DW, u64, u64)
  LDX(LDX_MEMSX_B, s8, s64)
  LDX(LDX_MEMSX_H, s16, s64)
  LDX(LDX_MEMSX_W, s32, s64)
#undef LDX

  // Fast mode only (prepare() picks them when the base register is r10): the verifier proved
  // the access within the frame.
op_LDX_FP_DW:
  D = load_mem<u64>(fp + (s64)pc->off);
  NEXT();
op_LDX_FP_W:
  D = load_mem<u32>(fp + (s64)pc->off);
  NEXT();
op_STX_FP_DW:
  store_mem<u64>(fp + (s64)pc->off, S);
  NEXT();
op_STX_FP_W:
  store_mem<u32>(fp + (s64)pc->off, (u32)S);
  NEXT();

  // Safe mode only (prepare() picks them for a constant offset >= 0 from the context pointer;
  // run() takes the code with them only when the first region holds every such access).
  // The other loops never dispatch them: there each is a jump to the plain handler, so that
  // their code keeps its layout.
#define CTX_LDX(NAME, PLAIN, T)                              \
  op_##NAME : if constexpr (!Safe) goto op_##PLAIN;          \
  D = (u64)load_mem<T>(S + (s64)pc->off);                    \
  NEXT();
#define CTX_STORE(NAME, PLAIN, T, VAL)                       \
  op_##NAME : if constexpr (!Safe) goto op_##PLAIN;          \
  store_mem<T>(D + (s64)pc->off, (T)(VAL));                  \
  NEXT();
  CTX_LDX(LDX_CTX_B, LDX_MEM_B, u8)
  CTX_LDX(LDX_CTX_H, LDX_MEM_H, u16)
  CTX_LDX(LDX_CTX_W, LDX_MEM_W, u32)
  CTX_LDX(LDX_CTX_DW, LDX_MEM_DW, u64)
  CTX_STORE(STX_CTX_B, STX_MEM_B, u8, S)
  CTX_STORE(STX_CTX_H, STX_MEM_H, u16, S)
  CTX_STORE(STX_CTX_W, STX_MEM_W, u32, S)
  CTX_STORE(STX_CTX_DW, STX_MEM_DW, u64, S)
  CTX_STORE(ST_CTX_B, ST_MEM_B, u8, pc->imm)
  CTX_STORE(ST_CTX_H, ST_MEM_H, u16, pc->imm)
  CTX_STORE(ST_CTX_W, ST_MEM_W, u32, pc->imm)
  CTX_STORE(ST_CTX_DW, ST_MEM_DW, u64, IMM64)
#undef CTX_LDX
#undef CTX_STORE

#define STORE(NAME, T, VAL)                      \
  op_##NAME : {                                  \
    const u64 a_ = D + (s64)pc->off;             \
    MEMCHECK(a_, sizeof(T), true);               \
    store_mem<T>(a_, (T)(VAL));                  \
    NEXT();                                      \
  }
  STORE(ST_MEM_B, u8, pc->imm)
  STORE(ST_MEM_H, u16, pc->imm)
  STORE(ST_MEM_W, u32, pc->imm)
  STORE(ST_MEM_DW, u64, IMM64)
  STORE(STX_MEM_B, u8, S)
  STORE(STX_MEM_H, u16, S)
  STORE(STX_MEM_W, u32, S)
  STORE(STX_MEM_DW, u64, S)
#undef STORE

  // --- atomics: the non-fetching ones are relaxed RMWs (kernel: atomic_add() and friends),
  // the fetching ones, xchg and cmpxchg are fully ordered (atomic_fetch_add() and friends).
#define ATOMIC(W, T, NAME, BUILTIN)                                                 \
  op_STX_ATOMIC##W##_##NAME : {                                                     \
    const u64 a_ = D + (s64)pc->off;                                                \
    ATOMICCHECK(a_, sizeof(T));                                                     \
    BUILTIN(atomic_ptr<T>(a_), (T)S, __ATOMIC_RELAXED);                             \
    NEXT();                                                                         \
  }                                                                                 \
  op_STX_ATOMIC##W##_FETCH_##NAME : {                                               \
    const u64 a_ = D + (s64)pc->off;                                                \
    ATOMICCHECK(a_, sizeof(T));                                                     \
    S = (u64)BUILTIN(atomic_ptr<T>(a_), (T)S, __ATOMIC_SEQ_CST);                    \
    NEXT();                                                                         \
  }
  ATOMIC(64, u64, ADD, __atomic_fetch_add)
  ATOMIC(64, u64, OR, __atomic_fetch_or)
  ATOMIC(64, u64, AND, __atomic_fetch_and)
  ATOMIC(64, u64, XOR, __atomic_fetch_xor)
  ATOMIC(32, u32, ADD, __atomic_fetch_add)
  ATOMIC(32, u32, OR, __atomic_fetch_or)
  ATOMIC(32, u32, AND, __atomic_fetch_and)
  ATOMIC(32, u32, XOR, __atomic_fetch_xor)
#undef ATOMIC

#define XCHG(W, T)                                                                   \
  op_STX_ATOMIC##W##_XCHG : {                                                        \
    const u64 a_ = D + (s64)pc->off;                                                 \
    ATOMICCHECK(a_, sizeof(T));                                                      \
    S = (u64)__atomic_exchange_n(atomic_ptr<T>(a_), (T)S, __ATOMIC_SEQ_CST);         \
    NEXT();                                                                          \
  }                                                                                  \
  op_STX_ATOMIC##W##_CMPXCHG : {                                                     \
    const u64 a_ = D + (s64)pc->off;                                                 \
    ATOMICCHECK(a_, sizeof(T));                                                      \
    T expected_ = (T)R[0];                                                           \
    __atomic_compare_exchange_n(atomic_ptr<T>(a_), &expected_, (T)S, false,          \
                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                 \
    R[0] = (u64)expected_;                                                           \
    NEXT();                                                                          \
  }
  XCHG(64, u64)
  XCHG(32, u32)
#undef XCHG

fault:
  if constexpr (kMemChecked) {
    res->ok = false;
    res->insn = (size_t)(pc - base);
    res->reason = why;
    res->executed = opts->insn_budget - budget;
  } else {
    // Emulation: a verified program cannot get here except through callx or a call chain
    // deeper than the verifier allowed; the fast mode then stops the program with r0 = 0.
    WARN_ONCE(1, "bpf fast mode: %s at insn %zu", why, (size_t)(pc - base));
  }
  return 0;

#undef DISPATCH
#undef NEXT
#undef JUMP_IF
#undef BACK_EDGE
#undef MEMCHECK
#undef ATOMICCHECK
#undef D
#undef S
#undef IMM64
#undef IMM32
}

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the interpreter assumes a little-endian host");

template struct BpfInterp<false, false, false>;
template struct BpfInterp<false, true, false>;
template struct BpfInterp<true, false, false>;
template struct BpfInterp<false, false, true>;

namespace {

absl::Status insn_error(size_t i, const std::string &why) {
  return absl::InvalidArgumentError(why + " at insn " + std::to_string(i));
}

// The opcode rows of @lp's instructions: the verifier's decode when it gave one (what is cheap
// to check is checked: one row per instruction, each for that instruction's opcode, the second
// slot of an ld_imm64 empty; the rest is the caller's contract), else the layout check's own,
// kept in @decoded.
absl::Status prepare_rows(const BpfLinkedProg &lp, std::vector<const bpf_opcode_desc *> *decoded,
                          std::span<const bpf_opcode_desc *const> *rows) {
  const bpf_insn *insns = lp.insns.data();
  const size_t cnt = lp.insns.size();
  *rows = lp.rows;
  if (rows->empty()) {
    std::string err;
    size_t bad = 0;
    if (!bpf_check_prog_layout(insns, cnt, &err, &bad, BPF_CPU_V4, decoded))
      return absl::InvalidArgumentError(err);
    *rows = *decoded;
    return absl::OkStatus();
  }
  bool match = rows->size() == cnt && cnt > 0;
  for (size_t i = 0; match && i < cnt; i++) {
    const bpf_opcode_desc *d = (*rows)[i];
    if (!d || d->code != insns[i].code) {
      match = false;
      break;
    }
    if (bpf_form_of(*d).slots == 2) {
      if (i + 1 >= cnt || (*rows)[i + 1]) match = false;
      i++;
    }
  }
  if (!match) return absl::InvalidArgumentError("decoded rows do not match the program");
  return absl::OkStatus();
}

// Subprograms for the fast mode's call/exit forms: a local call's target starts one; each runs
// to the next start. Per subprogram, whether any of its own instructions writes r6-r9 (its
// callees save and restore for themselves). A callback subprogram that no call names here
// merges into the one before it, which can only add writes: the choice stays safe.
struct SubprogWrites {
  std::vector<u32> starts = {0};
  std::vector<u8> writes;  // by subprogram: 1 if it writes a callee-saved register
  size_t of(size_t i) const {
    return (size_t)(std::upper_bound(starts.begin(), starts.end(), (u32)i) - starts.begin()) - 1;
  }
};

SubprogWrites subprog_writes(const bpf_insn *insns, size_t cnt,
                             std::span<const bpf_opcode_desc *const> rows) {
  SubprogWrites sw;
  for (size_t i = 0; i < cnt; i++)
    if (rows[i] && rows[i]->id == BPF_OPC_JMP_CALL_LOCAL)
      sw.starts.push_back((u32)bpf_jump_target(*rows[i], insns[i], i));
  std::sort(sw.starts.begin(), sw.starts.end());
  sw.starts.erase(std::unique(sw.starts.begin(), sw.starts.end()), sw.starts.end());
  sw.writes.assign(sw.starts.size(), 0);
  for (size_t i = 0, sp = 0; i < cnt; i++) {
    while (sp + 1 < sw.starts.size() && sw.starts[sp + 1] <= i) sp++;
    if (rows[i] && (insn_writes(bpf_form_of(*rows[i]), insns[i]) & kCalleeSaved))
      sw.writes[sp] = 1;
  }
  return sw;
}

// What no mode runs: legacy packet access, an ld_imm64 the loader did not link, a write of r10.
absl::Status check_runnable(const bpf_form_desc &f, const bpf_insn &in, size_t i) {
  if (f.kind == K_PACKET)
    return insn_error(i, "legacy packet access (BPF_ABS/BPF_IND) is not supported");
  if (f.kind == K_LD_IMM64 && in.src_reg != BPF_LD_IMM64_PLAIN)
    return insn_error(i, "ld_imm64 with src_reg " + std::to_string(in.src_reg) + " is not linked");
  if (((f.flow & WR_DST) && in.dst_reg == BPF_REG_FP) ||
      ((f.flow & WR_SRC) && in.src_reg == BPF_REG_FP))
    return insn_error(i, "frame pointer is read only");
  return absl::OkStatus();
}

// A helper call's function: the helper table's entry, or an error naming the helper.
absl::StatusOr<bpf_func_t> link_helper(std::span<const bpf_func_t> helpers, const bpf_insn &in,
                                       size_t i) {
  if (in.imm >= 0 && (size_t)in.imm < helpers.size() && helpers[(size_t)in.imm])
    return helpers[(size_t)in.imm];
  const char *name = in.imm < 0 ? "unknown" : bpf_func_id_name((u32)in.imm);
  if (!std::strcmp(name, "unknown")) return insn_error(i, "invalid func unknown#" + std::to_string(in.imm));
  return insn_error(i, std::string("helper bpf_") + name + "#" + std::to_string(in.imm) +
                           " is not implemented by the emulator");
}

// A kfunc call's function: the linked kfunc of the call's (btf_id, fd index).
absl::StatusOr<bpf_func_t> link_kfunc(std::span<const BpfKfunc> kfuncs, const bpf_insn &in,
                                      size_t i) {
  for (const BpfKfunc &k : kfuncs)
    if (k.btf_id == in.imm && k.btf_fd_idx == in.off) return k.fn;
  return insn_error(i, "kfunc btf_id " + std::to_string(in.imm) + " (fd_idx " +
                           std::to_string(in.off) + ") is not linked");
}

}  // namespace

absl::StatusOr<BpfExecProg> BpfExecProg::prepare(const BpfLinkedProg &lp,
                                                 const BpfPrepareOpts &opts) {
  const bpf_insn *insns = lp.insns.data();
  const size_t cnt = lp.insns.size();
  std::vector<const bpf_opcode_desc *> decoded;
  std::span<const bpf_opcode_desc *const> rows;
  if (absl::Status st = prepare_rows(lp, &decoded, &rows); !st.ok()) return st;

  const void *const *fast_labels = nullptr;
  const void *const *safe_labels = nullptr;
  const void *const *checked_labels = nullptr;
  BpfInterp<false, false, false>::run(nullptr, nullptr, 0, nullptr, nullptr, &fast_labels);
  BpfInterp<false, true, false>::run(nullptr, nullptr, 0, nullptr, nullptr, &safe_labels);
  BpfInterp<true, false, false>::run(nullptr, nullptr, 0, nullptr, nullptr, &checked_labels);
  const SubprogWrites sw = subprog_writes(insns, cnt, rows);

  // The safe mode's analyses, only when it is wanted.
  const bool safe = opts.safe_mode;
  const bool closed = safe && bpf_subprogs_closed(insns, cnt, rows, sw.starts);
  const std::vector<u16> ctx_regs = safe ? bpf_ctx_regs(insns, cnt, rows) : std::vector<u16>{};
  std::vector<size_t> ctx_insns;  // instructions with a safe-mode context form

  BpfExecProg p;
  p.code_.resize(cnt);
  if (safe) p.scode_.resize(cnt);
  p.ccode_.resize(cnt);
  p.meta_.resize(cnt);
  p.helpers_.assign(lp.helpers.begin(), lp.helpers.end());
  for (size_t i = 0; i < cnt; i++) {
    const bpf_opcode_desc *d = rows[i];
    const bpf_insn &in = insns[i];
    const bpf_form_desc &f = bpf_form_of(*d);
    if (absl::Status st = check_runnable(f, in, i); !st.ok()) return st;
    bool keeps_r6_r9 = false;
    if (d->id == BPF_OPC_JMP_CALL_LOCAL)
      keeps_r6_r9 = !sw.writes[sw.of((size_t)bpf_jump_target(*d, in, i))];
    else if (d->id == BPF_OPC_JMP_EXIT)
      keeps_r6_r9 = !sw.writes[sw.of(i)];
    DInsn di{fast_labels[fast_handler(d->id, in, keeps_r6_r9)], in.imm, in.off, in.dst_reg,
             in.src_reg};
    bpf_func_t call_fn = nullptr;  // a helper or kfunc call's function, inlined in the fast code
    if (d->id == BPF_OPC_JMP_CALL_HELPER) {
      auto fn = link_helper(p.helpers_, in, i);
      if (!fn.ok()) return fn.status();
      call_fn = *fn;
    } else if (d->id == BPF_OPC_JMP_CALL_KFUNC) {
      auto fn = link_kfunc(lp.kfuncs, in, i);
      if (!fn.ok()) return fn.status();
      call_fn = *fn;
      di.imm = (s32)p.kfuncs_.size();
      p.kfuncs_.push_back(call_fn);
    }
    CheckMeta m{};
    if (f.flow & RD_DST) m.rd |= 1u << in.dst_reg;
    if (f.flow & RD_SRC) m.rd |= 1u << in.src_reg;
    if (f.flow & RD_R0) m.rd |= 1u;
    if (f.flow & WR_DST) m.wr |= 1u << in.dst_reg;
    if (f.flow & WR_SRC) m.wr |= 1u << in.src_reg;
    if (f.flow & WR_R0) m.wr |= 1u;
    m.id = d->id;
    m.bytes = (u8)bpf_opcode_mem_bytes(*d);
    p.code_[i] = di;
    if (call_fn) set_inline_fn(p.code_[i], call_fn);
    // Safe mode: the fast handlers, except the no-save call forms when an unverified program
    // may leave a subprogram by a jump or a fall-through, and r10 forms whose access is not
    // inside the frame.
    if (safe) {
      p.scode_[i] = p.code_[i];
      p.scode_[i].op = safe_labels[safe_handler(d->id, in, closed && keeps_r6_r9)];
      u64 end = 0;
      if (const int h = ctx_handler(d->id, in, ctx_regs[i], &end); h >= 0) {
        ctx_insns.push_back(i);
        p.scode_[i].op = safe_labels[h];
        u64 &ctx_end = f.kind == K_LOAD ? p.ctx_end_rd_ : p.ctx_end_wr_;
        ctx_end = std::max(ctx_end, end);
      }
    }
    di.op = checked_labels[d->id];
    p.ccode_[i] = di;
    p.meta_[i] = m;
    if (f.slots == 2) {
      // The second slot carries the high immediate; it is never dispatched.
      i++;
      p.code_[i] = DInsn{nullptr, insns[i].imm, 0, 0, 0};
      p.ccode_[i] = p.code_[i];
      if (safe) p.scode_[i] = p.code_[i];
      p.meta_[i] = m;
    }
  }
  // The safe code for runs whose first region does not hold the context accesses: the context
  // forms go back to the bounds-checked handlers.
  if (!ctx_insns.empty()) {
    p.scode_noctx_ = p.scode_;
    for (size_t i : ctx_insns)
      p.scode_noctx_[i].op = safe_labels[safe_handler(p.meta_[i].id, insns[i], false)];
  }
  return p;
}

u64 BpfExecProg::run_fast(const u64 args[5]) const {
  // The one coverage test of a run, outside the interpreter loop.
  if (unlikely(cov_.hit != nullptr))
    return BpfInterp<false, false, true>::run(this, args, 0, nullptr, nullptr, nullptr);
  return BpfInterp<false, false, false>::run(this, args, 0, nullptr, nullptr, nullptr);
}

u64 BpfExecProg::run_fast_cov(const void *ctx) const {
  return BpfInterp<false, false, true>::run(this, nullptr, (u64)(uintptr_t)ctx, nullptr, nullptr,
                                            nullptr);
}

void BpfExecProg::set_coverage(const BpfCovArrays &cov) {
  if (!cov.hit) {
    cov_ = {};
    covcode_.clear();
    return;
  }
  const void *const *fast_labels = nullptr;
  const void *const *cov_labels = nullptr;
  BpfInterp<false, false, false>::run(nullptr, nullptr, 0, nullptr, nullptr, &fast_labels);
  BpfInterp<false, false, true>::run(nullptr, nullptr, 0, nullptr, nullptr, &cov_labels);
  // The fast code with each handler replaced by the coverage loop's handler of the same row
  // (handlers sharing a label share it in both loops).
  std::vector<std::pair<const void *, const void *>> map;
  for (int k = 0; k < (int)BPF_OPC_NR + kFpForms; k++) map.emplace_back(fast_labels[k], cov_labels[k]);
  std::sort(map.begin(), map.end());
  covcode_ = code_;
  for (DInsn &d : covcode_) {
    if (!d.op) continue;  // the second slot of an ld_imm64
    auto it = std::lower_bound(map.begin(), map.end(), std::make_pair(d.op, (const void *)nullptr));
    BUG_ON(it == map.end() || it->first != d.op);
    d.op = it->second;
  }
  cov_ = cov;
}

BpfRunResult BpfExecProg::run_safe(const BpfCheckedRunOpts &opts) const {
  BpfRunResult res;
  if (scode_.empty()) {
    res.reason = "the program was prepared without the safe mode (BpfPrepareOpts::safe_mode)";
    return res;
  }
  BpfInterp<false, true, false>::run(this, opts.args.data(), 0, &opts, &res, nullptr);
  return res;
}

BpfRunResult BpfExecProg::run_checked(const BpfCheckedRunOpts &opts) const {
  BpfRunResult res;
  BpfInterp<true, false, false>::run(this, opts.args.data(), 0, &opts, &res, nullptr);
  return res;
}

bool BpfExecProg::regs_initialised_before_use(u8 nargs) const {
  // A must-analysis over the control-flow graph: in[i] = registers written on every path from
  // the entry to i, met by AND. The transfer functions are the checked mode's bookkeeping.
  const size_t cnt = code_.size();
  if (!cnt) return true;
  std::vector<u16> in(cnt, 0);
  std::vector<u8> seen(cnt, 0);
  std::vector<u32> work;
  auto merge = [&](s64 t, u32 m) {
    if (t < 0 || (size_t)t >= cnt) return;  // (prepare() checked every target)
    const u16 mm = (u16)m;
    if (!seen[t]) {
      seen[t] = 1;
      in[t] = mm;
      work.push_back((u32)t);
    } else if ((in[t] & mm) != in[t]) {
      in[t] &= mm;
      work.push_back((u32)t);
    }
  };
  u32 entry = kFpBit;
  for (int r = 1; r <= nargs && r <= 5; r++) entry |= 1u << r;
  merge(0, entry);
  while (!work.empty()) {
    const u32 i = work.back();
    work.pop_back();
    const CheckMeta &m = meta_[i];
    const bpf_opcode_desc &d = bpf_opcode_table[m.id];
    const bpf_form_desc &f = bpf_form_of(d);
    const DInsn &di = ccode_[i];
    const u32 cur = in[i];
    const u32 out = cur | m.wr;
    switch (f.kind) {
      case K_EXIT:
        break;
      case K_JUMP:
        merge((s64)i + 1 + (d.form == F_GOTOL ? di.imm : di.off), out);
        break;
      case K_COND_JUMP:
        merge((s64)i + 1, out);
        merge((s64)i + 1 + di.off, out);
        break;
      case K_CALL:
        if (m.id == BPF_OPC_JMP_CALL_LOCAL) merge((s64)i + 1 + di.imm, (cur & kCallerSaved) | kFpBit);
        merge((s64)i + 1, (out & ~kCallerSaved) | 1u);
        break;
      default:
        merge((s64)i + f.slots, out);
        break;
    }
  }
  for (size_t i = 0; i < cnt; i++)
    if (seen[i] && (meta_[i].rd & ~in[i])) return false;
  return true;
}

}  // namespace umemcg::emu
