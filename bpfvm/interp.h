// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/interp.h: the eBPF interpreter (RFC 9669, cpu v1-v4), fast and checked modes.
//
// Overview. A program goes through three steps:
//   1. link (not here: the ELF loader): pseudo ld_imm64 sources are rewritten to plain 64-bit
//      values (src_reg 0), helper ids index a helper table, kfunc calls name (BTF id, BTF fd
//      index) pairs that a kfunc table resolves. The result is a BpfLinkedProg.
//   2. prepare (BpfExecProg::prepare): every instruction is decoded through the opcode table
//      (bpfvm/opcodes.h, the only validity decision), the program layout is checked, helper
//      and kfunc calls are bound to function pointers, and each instruction becomes a 16-byte
//      pre-decoded form holding its handler address (threaded code). ld_imm64 keeps its two
//      slots, so pre-decoded index == instruction index (errors name the instruction index).
//   3. run:
//      - run_fast(): computed-goto dispatch with no per-instruction checks. For programs a
//        verifier accepted (memory safety, initialised registers, termination are its proofs).
//        Its pre-decoded code differs in two ways: helper and kfunc calls carry the function
//        pointer inline, and 4- and 8-byte loads/stores based on r10 have their own handlers
//        that keep the frame pointer in a register.
//      - run_checked(): the same handlers with defence-in-depth checks: every memory access is
//        bounds-checked against the stack of the active frames and the regions the caller
//        declares (plus a callback for other valid memory), reads of uninitialised registers
//        are caught, an instruction budget bounds the run, the call depth is limited to
//        MAX_CALL_FRAMES, and a fault returns the instruction index and a reason instead of
//        crashing. For tests, fuzzing and the conformance plugin.
//      - run_safe(): the fast handlers plus the checked mode's memory bounds checks, call depth
//        limit and a back-edge budget, without register tracking. For unverified programs whose
//        register initialisation a static analysis proves (regs_initialised_before_use()): the
//        conformance plugin's long loops run at the fast mode's speed and cannot crash the host.
//        Prepare-time analyses (bpfvm/interp_safe.h) take work off its hot paths: r10 accesses
//        inside the frame are unchecked (statically in bounds), loads and stores at constant
//        offsets from the context pointer (r1 at entry, tracked through 64-bit moves) are checked
//        once per run against the first region, and the no-save call forms are used when control
//        provably stays in each subprogram. Every other access tries the first region (two
//        compares) before the full check.
//      - coverage (BpfExecProg::set_coverage()): run_fast() on a separate instantiation of the
//        fast mode's loop that records each dispatched instruction and each direction taken by a
//        conditional jump (the policy fuzzer's coverage, bpfvm/coverage.h).
//
// Mirrors: kernel/bpf/core.c (___bpf_prog_run(), the interpreter; Linux 6.19)
// Emulation: the kernel interpreter trusts the verifier entirely; the checked and safe modes
//   are ours. The safe mode's budget charges each taken backward jump with the instructions it
//   jumps back over, an estimate of the executed count (the checked mode counts exactly).
// Emulation: r10 frames are MAX_BPF_STACK (512) bytes each, one per call depth, in one stack
//   array of the run (the kernel's interpreter sizes each frame to the verified stack depth).
// Emulation: callx (BPF_JMP | BPF_CALL | BPF_X) calls the helper whose id is in dst_reg, as the
//   conformance suite's runtimes do; the kernel has no callx.
// Emulation: the legacy packet loads (BPF_ABS/BPF_IND) are rejected by prepare: no skb here.
#pragma once

#include <array>
#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bpfvm/insn.h"
#include "bpfvm/opcodes.h"

namespace umemcg::emu {

// Helper and kfunc calling convention: r0 = fn(r1, r2, r3, r4, r5).
using bpf_func_t = u64 (*)(u64, u64, u64, u64, u64);

// A kfunc the link step resolved: calls with imm == btf_id and off == btf_fd_idx go to fn.
struct BpfKfunc {
  s32 btf_id;
  s16 btf_fd_idx;
  bpf_func_t fn;
};

// An already-linked program: the input of BpfExecProg::prepare().
struct BpfLinkedProg {
  std::span<const bpf_insn> insns;      // ld_imm64 must have src_reg 0 (resolved)
  std::span<const bpf_func_t> helpers;  // helper id -> function; nullptr: no such helper
  std::span<const BpfKfunc> kfuncs;     // kfunc call sites resolve here at prepare time
  // Optional: the opcode-table rows of insns as the verifier decoded them
  // (bpf_verifier_opts::decoded, from a layout check that passed on exactly these insns).
  // Empty: prepare decodes and checks the layout itself.
  std::span<const bpf_opcode_desc *const> rows;
};

// Memory a checked run may touch besides the stack.
struct BpfMemRegion {
  u64 start;
  u64 len;
  bool writable;
};

// Extra validity oracle for a checked run: true if [addr, addr + len) may be accessed.
using bpf_mem_ok_t = bool (*)(void *opaque, u64 addr, u64 len, bool write);

struct BpfCheckedRunOpts {
  std::array<u64, 5> args{};  // r1..r5 at entry
  u8 nargs = 1;               // r1..r<nargs> are initialised; the others are not
  std::span<const BpfMemRegion> regions;
  bpf_mem_ok_t mem_ok = nullptr;
  void *mem_ok_opaque = nullptr;
  u64 insn_budget = 100'000'000;  // instructions executed before the run is stopped
  // When set, the run stores its BPF stack's bounds [stack_out[0], stack_out[1]) there before
  // the first instruction, for helpers that check pointers into it (the array may be off the
  // host stack: ASan's use-after-return detection moves it to a fake stack frame).
  u64 *stack_out = nullptr;
};

struct BpfRunResult {
  bool ok = false;
  u64 r0 = 0;
  u64 executed = 0;   // instructions executed (ld_imm64 counts once)
  size_t insn = 0;    // faulting instruction index (when !ok)
  std::string reason; // why the run faulted (when !ok)
};

// Where a fast run records coverage (BpfExecProg::set_coverage()): three arrays of at least
// insn_cnt() bytes, indexed by instruction, each byte set to 1 (relaxed atomic stores: runs on
// several threads may share them) when the instruction is dispatched (hit), when its conditional
// jump is taken (taken), when it falls through (fall).
struct BpfCovArrays {
  u8 *hit = nullptr;
  u8 *taken = nullptr;
  u8 *fall = nullptr;
};

struct BpfPrepareOpts {
  // Build the safe mode's code and run its analyses (bpfvm/interp_safe.h). Programs a verifier
  // accepted run in the fast and checked modes only and can skip it; run_safe() then fails.
  bool safe_mode = true;
};

class BpfExecProg {
 public:
  // Decodes, validates and binds a linked program. Errors read "<reason> at insn <idx>".
  static absl::StatusOr<BpfExecProg> prepare(const BpfLinkedProg &prog,
                                             const BpfPrepareOpts &opts = {});

  // Fast mode: r1..r5 = args. Only for programs a verifier accepted.
  u64 run_fast(const u64 args[5]) const;
  // The same with r1 = ctx and r2..r5 = 0, entered without an argument array: the kernel's
  // __bpf_prog_run<stack size>(ctx, insn) (registers zeroed, r1 = ctx), the entry of
  // bpf_prog_run() and of the trampoline's programs. Inline (below the class): the caller
  // enters the interpreter loop directly.
  inline u64 run_fast(const void *ctx) const;
  // Coverage: with cov.hit set, run_fast() runs a separate instantiation of the fast mode that
  // records into cov (see BpfCovArrays); the fast mode's own loop is unchanged, and run_fast()
  // tests the setting once per run. cov.hit == nullptr turns it off. Not concurrent with runs.
  // Emulation: the checked and safe modes do not record coverage.
  void set_coverage(const BpfCovArrays &cov);

  // Safe mode: the fast handlers (same speed on loops and calls), with every memory access
  // bounds-checked like the checked mode (stack of the active frames, opts.regions, opts.mem_ok),
  // the call depth limit, and a budget: each taken backward jump is charged the instructions
  // it jumps back over, and the run stops when opts.insn_budget is spent (`executed` is that
  // charge). Registers are not tracked: r1..r5 start at opts.args, the others at 0, so use it
  // for programs where regs_initialised_before_use() holds; then its results are the checked
  // mode's. For unverified programs that must run fast (the conformance plugin). Fastest when
  // opts.regions[0] starts at opts.args[0] (the context) and holds all its constant-offset
  // accesses.
  BpfRunResult run_safe(const BpfCheckedRunOpts &opts) const;
  // Checked mode: same semantics, every fault reported.
  BpfRunResult run_checked(const BpfCheckedRunOpts &opts) const;
  // True when, on every path, each register is written before it is read (r1..r<nargs> and r10
  // are at entry; calls follow the checked mode's rules): the checked mode's "!read_ok" fault
  // cannot happen. Conservative: false may be a path the program never takes.
  bool regs_initialised_before_use(u8 nargs) const;

  size_t insn_cnt() const { return code_.size(); }

  // Pre-decoded instruction: the handler address and the operands (16 bytes).
  struct DInsn {
    const void *op;
    s32 imm;  // imm; helper id; kfunc index; ld_imm64 low (high in the next slot)
    s16 off;
    u8 dst;
    u8 src;
  };
  static_assert(sizeof(DInsn) == 16);
  // Fast-mode helper and kfunc calls hold the function pointer in the 8 operand bytes (a call
  // has no other operand the fast mode reads).
  static bpf_func_t inline_fn(const DInsn &d) {
    bpf_func_t fn;
    std::memcpy(&fn, reinterpret_cast<const char *>(&d) + offsetof(DInsn, imm), sizeof(fn));
    return fn;
  }
  static void set_inline_fn(DInsn &d, bpf_func_t fn) {
    std::memcpy(reinterpret_cast<char *>(&d) + offsetof(DInsn, imm), &fn, sizeof(fn));
  }
  static_assert(sizeof(bpf_func_t) == sizeof(DInsn) - offsetof(DInsn, imm));
  // Per-instruction facts for the checked mode (parallel to code_).
  struct CheckMeta {
    u16 rd;     // registers read (bit n = rn)
    u16 wr;     // registers written
    u16 id;     // bpf_opc_id
    u8 bytes;   // memory access width
    u8 pad;
  };

 private:
  BpfExecProg() = default;
  // run_fast(ctx) with coverage on (out of line: the fast entry's inline code stays small).
  u64 run_fast_cov(const void *ctx) const;
  template <bool Checked, bool Safe, bool Cov>
  friend struct BpfInterp;

  std::vector<DInsn> code_;     // fast-mode handlers
  std::vector<DInsn> scode_;    // safe-mode handlers
  // Safe mode without the unchecked context forms (empty when the program has none), for runs
  // whose first region does not hold [ctx, ctx + ctx_end_rd_) and, writable, ctx_end_wr_.
  std::vector<DInsn> scode_noctx_;
  u64 ctx_end_rd_ = 0;  // past the furthest context-form load (offset from the context pointer)
  u64 ctx_end_wr_ = 0;  // past the furthest context-form store
  std::vector<DInsn> ccode_;    // checked-mode handlers
  std::vector<DInsn> covcode_;  // coverage-mode handlers (set_coverage())
  BpfCovArrays cov_;
  std::vector<CheckMeta> meta_;
  std::vector<bpf_func_t> helpers_;
  std::vector<bpf_func_t> kfuncs_;  // by call-site kfunc index
};

// The interpreter loops, one instantiation per mode (interp.cc defines them). Declared here so
// that run_fast(ctx) enters the fast loop with one call.
// Checked: per-instruction register and budget checks, checked-mode handlers. Safe (only with
// !Checked): the fast handlers, with every memory access bounds-checked and the back-edge budget.
// Cov (only with neither): the fast mode recording coverage (BpfExecProg::set_coverage()); its
// additions are all `if constexpr (Cov)`, so the other instantiations compile as without them.
template <bool Checked, bool Safe, bool Cov>
struct BpfInterp {
  static_assert(!Cov || (!Checked && !Safe), "coverage is a fast-mode variant");
  static constexpr bool kMemChecked = Checked || Safe;  // bounds checks, faults reported
  using DInsn = BpfExecProg::DInsn;

  struct Frame {
    const DInsn *ret;
    u64 saved[4];  // r6-r9 of the caller
    u32 init;      // checked mode: the caller's initialised-register mask
  };

  // r1..r5 = args at entry; with args == nullptr, r1 = ctx and r2..r5 = 0 (the fast mode's
  // one-pointer entry). With labels_out set, only returns the handler table (indexed by
  // bpf_opc_id).
  static u64 run(const BpfExecProg *prog, const u64 *args, u64 ctx, const BpfCheckedRunOpts *opts,
                 BpfRunResult *res, const void *const **labels_out);
};

extern template struct BpfInterp<false, false, false>;
extern template struct BpfInterp<false, true, false>;
extern template struct BpfInterp<true, false, false>;
extern template struct BpfInterp<false, false, true>;

inline u64 BpfExecProg::run_fast(const void *ctx) const {
  // The one coverage test of a run, outside the interpreter loop.
  if (__builtin_expect(cov_.hit != nullptr, 0)) return run_fast_cov(ctx);
  return BpfInterp<false, false, false>::run(this, nullptr, (u64)(uintptr_t)ctx, nullptr, nullptr,
                                             nullptr);
}

}  // namespace umemcg::emu
