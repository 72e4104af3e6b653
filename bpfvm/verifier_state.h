// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_state.h: the verifier's abstract machine state and its environment (internal
// to bpfvm/verifier_*.cc).
//
// A path's state (bpf_verifier_state) is the call frames (bpf_func_state: r0-r10 and the
// frame's stack, per byte), the references the path holds (acquired kernel objects and
// ring-buffer records), and the held spin lock. A register (bpf_reg_state) is a type plus,
// for scalars and for the variable part of a pointer's offset, a tnum and signed/unsigned
// 32/64-bit bounds kept consistent by reg_bounds_sync().
//
// Invariants:
//  - a SCALAR_VALUE or pointer register has consistent bounds: umin <= umax, smin <= smax,
//    u32_min <= u32_max, s32_min <= s32_max, and every bound agrees with var_off;
//  - registers sharing a non-zero `id` are copies: a NULL check or a comparison refining one
//    refines all of them (mark_ptr_or_null_regs(), sync_linked_regs());
//  - ref_obj_id != 0 names an entry of bpf_verifier_state::refs; releasing it invalidates every
//    register and spilled slot carrying it.
//
// Mirrors: include/linux/bpf_verifier.h (struct bpf_reg_state, bpf_stack_state,
//          bpf_func_state, bpf_verifier_state, bpf_verifier_env) (Linux 6.19)
// Emulation: the stack is a vector of 8-byte slots per frame grown on write, as the kernel's
//   grow_stack_state(); checkpoints keep their branch counters in separate nodes so that an
//   evicted checkpoint's state can be freed while paths below it are still running.
#pragma once

#include <cstdarg>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bpfvm/helper_proto.h"
#include "bpfvm/opcodes.h"
#include "bpfvm/tnum.h"
#include "bpfvm/verifier.h"
#include "bpfvm/verifier_types.h"

namespace umemcg {

inline constexpr int BPF_REG_SIZE = 8;
inline constexpr s64 BPF_MAX_VAR_OFF = 1ll << 29;
inline constexpr s64 BPF_MAX_VAR_SIZ = 1ll << 29;

struct bpf_reg_state {
  u32 type = NOT_INIT;
  s32 off = 0;  // fixed part of a pointer's offset
  // Type-specific data.
  const bpf_verifier_map *map_ptr = nullptr;  // CONST_PTR_TO_MAP, PTR_TO_MAP_VALUE/KEY
  u32 map_idx = 0;
  const char *btf_name = nullptr;  // PTR_TO_BTF_ID: the struct's name
  u32 mem_size = 0;                // PTR_TO_MEM
  u32 subprogno = 0;               // PTR_TO_FUNC
  u32 frameno = 0;                 // PTR_TO_STACK: whose frame
  // Scalar value, or the variable offset of a pointer.
  tnum var_off = tnum_unknown;
  s64 smin_value = 0, smax_value = 0;
  u64 umin_value = 0, umax_value = 0;
  s32 s32_min_value = 0, s32_max_value = 0;
  u32 u32_min_value = 0, u32_max_value = 0;
  u32 id = 0;          // shared by copies (NULL checks, linked scalars)
  u32 ref_obj_id = 0;  // the reference this pointer holds, 0 if none
};

enum bpf_stack_slot_type : u8 {
  STACK_INVALID = 0,  // nothing written
  STACK_SPILL,        // part of a spilled register
  STACK_MISC,         // some scalar bytes
  STACK_ZERO,         // known zero bytes
};

struct bpf_stack_state {
  bpf_reg_state spilled_ptr;            // valid when slot_type[*] == STACK_SPILL
  u8 slot_type[BPF_REG_SIZE] = {};      // per byte; [0] is the lowest address
};

struct bpf_func_state {
  bpf_reg_state regs[MAX_BPF_REG];
  int callsite = -1;      // the call instruction in the caller; -1 for the main program
  u32 frameno = 0;
  u32 subprogno = 0;
  bool in_callback_fn = false;
  // The callback iterations queued from this frame's current callback-calling instruction
  // since the path last went past it (kernel: callback_depth): bpf_loop stops queueing another
  // iteration at its nr_loops bound. A checkpoint with a deeper count does not cover one with a
  // shallower count.
  u32 callback_depth = 0;
  // Frame 0 of an async callback's path (bpf_wq, bpf_timer): it starts on a fresh stack with
  // (map, key, value) and must return 0.
  bool in_async_callback_fn = false;
  std::vector<bpf_stack_state> stack;  // stack[spi] covers [-(spi+1)*8, -spi*8) from fp
};

enum class bpf_ref_kind : u8 { ptr, ringbuf };

struct bpf_reference_state {
  u32 id = 0;
  int insn_idx = 0;  // where it was acquired
  bpf_ref_kind kind = bpf_ref_kind::ptr;
};

struct bpf_active_lock {
  bool held = false;
  const bpf_verifier_map *map = nullptr;
  u32 id = 0;  // the map value pointer's id
};

// A checkpoint's branch counter: live paths plus live child checkpoints below it.
struct bpf_branch_node {
  bpf_branch_node *parent = nullptr;
  u32 branches = 0;
};

struct bpf_verifier_state {
  std::vector<bpf_func_state> frame;  // frame.back() is the current frame
  std::vector<bpf_reference_state> refs;
  bpf_active_lock active_lock;
  // The path runs sleepable (a bpf_wq callback) whatever the program is (kernel: in_sleepable).
  bool in_sleepable = false;
  // The async callbacks this path went through (a path that reaches an explored state through
  // one more of them is not looping).
  u32 async_entry_cnt = 0;
  // The callback iterations this path was queued through (kernel: callback_unroll_depth): two
  // states of different iterations are not an infinite loop.
  u32 callback_unroll_depth = 0;
  bpf_branch_node *parent = nullptr;  // the last checkpoint on this path
  u32 insn_idx = 0;
  u32 prev_insn_idx = 0;
  // A queued path: the log's length when it was queued (kernel: bpf_verifier_stack_elem's
  // log_pos). Below level 2 the log goes back there when the path is taken up, so that a log
  // of a rejected program shows the path to the error and no path that ended safely.
  size_t log_pos = 0;

  u32 curframe() const { return (u32)frame.size() - 1; }
  bpf_func_state &cur() { return frame.back(); }
  const bpf_func_state &cur() const { return frame.back(); }
};

struct bpf_subprog_info {
  u32 start = 0;
  u32 end = 0;           // one past the last instruction
  u32 stack_depth = 0;   // bytes used
  bool is_callback = false;
  std::vector<u32> callees;  // static bpf-to-bpf call targets (subprog numbers)
  // bpf_fastcall (mark_fastcall_patterns()): the lowest stack offset of the spill/fill
  // patterns around fastcall calls start at their lowest spill, up to here; S16_MIN once
  // another access reached that region (check_fastcall_stack_contract()). keep: a pattern
  // around a call that is not inlined keeps the region in the stack depth.
  s16 fastcall_stack_off = 0;
  bool keep_fastcall_stack = false;
};

struct bpf_verifier_state_list {
  std::unique_ptr<bpf_verifier_state> state;  // nullptr once evicted
  bpf_branch_node *node = nullptr;
  u32 hit_cnt = 0;
  u32 miss_cnt = 0;
};

// Per-instruction facts computed before exploration.
struct bpf_insn_aux_data {
  const bpf_opcode_desc *desc = nullptr;  // nullptr for the second slot of ld_imm64
  bool prune_point = false;
  // A helper call that calls a callback synchronously (bpf_loop; kernel: calls_callback): the
  // callback's exit comes back here, and a checkpoint is always taken here (the iterations
  // converge when one is covered by an earlier one).
  bool calls_callback = false;
  bool seen = false;
  u16 live_in = 0;   // registers read before written on some path from here
  // Stack slots of the frame running this instruction (bit spi) that some path from here may
  // read before writing all 8 bytes (compute_live_stack()); other slots are ignored when states
  // are compared, as the kernel ignores slots without a read mark.
  u64 live_stack_in = 0;
  // Registers whose value may still decide a safety check (an address, a branch, a helper
  // argument, a stored or returned value) on some path from here: a static stand-in for the
  // kernel's precision marks. Other live scalars compare equal whatever their ranges.
  u16 precise_in = 0;
  // The same for the stack slots of the frame running this instruction (bit spi covers
  // [-(spi+1)*8, -spi*8) from its fp): slots whose value may be filled into a register of
  // precise_in. Other spilled scalars compare equal whatever their ranges, as the kernel's
  // imprecise spilled registers do.
  u64 precise_stack_in = 0;
  u32 subprogno = 0;
  // The pointer type this load or store first accessed memory through, on any path
  // (save_aux_ptr_type()): NOT_INIT until then.
  u32 ptr_type = NOT_INIT;
  // bpf_fastcall: a spill or fill of a pattern around a fastcall call; on the call, the number
  // of spill/fill pairs the kernel removes when it inlines the call.
  bool fastcall_pattern = false;
  u8 fastcall_spills_num = 0;
};

struct bpf_verifier_env {
  std::span<const bpf_insn> insns;
  const bpf_verifier_opts &opts;
  const bpf_prog_type_desc &ptype;
  bpf_verifier_result &res;
  std::vector<bpf_insn_aux_data> aux;
  std::vector<bpf_subprog_info> subprogs;
  // Per subprogram: it, or a function it calls, may load a value that must stay precise
  // through a pointer other than its own fp, which may point into a caller's stack; every
  // stack slot of its callers is then precise while it runs (compute_precise_registers()).
  std::vector<u8> reads_caller_stack;
  // The loose precision, computed when the program has callbacks: precise_in and
  // precise_stack_in without the rule that a value stored through a pointer other than fp is
  // precise (the kernel's backtracking does not follow such a store). It decides which of the
  // callers' scalars a callback's iteration widens (widen_callback_iteration()): widening is
  // safe whatever it decides; a scalar kept exact makes the iterations run to nr_loops' bound.
  std::vector<u16> loose_precise_in;
  std::vector<u64> loose_precise_stack_in;
  // Per subprogram, in the loose precision: it, or a function it calls, loads a value through
  // a pointer other than its own fp that the value's later uses need (reads_caller_stack's
  // loose counterpart).
  std::vector<u8> callback_reads_precise;

  std::unique_ptr<bpf_verifier_state> cur;      // the path being explored
  std::vector<std::unique_ptr<bpf_verifier_state>> stack;  // pending branches
  std::vector<std::vector<bpf_verifier_state_list>> explored;  // checkpoints per insn
  // Created on the first checkpoint: most rejected programs never get one, and an empty
  // std::deque still allocates.
  std::optional<std::deque<bpf_branch_node>> nodes;
  // Finished states kept for reuse: copy_state() copy-assigns over one, so its frame and stack
  // vectors keep their capacity. Saves the per-branch allocations of the exploration.
  std::vector<std::unique_ptr<bpf_verifier_state>> free_states;

  u32 id_gen = 0;
  u32 insn_processed = 0;
  u32 prev_insn_processed = 0;
  u32 jmps_processed = 0;
  u32 prev_jmps_processed = 0;
  u32 total_states = 0;
  u32 peak_states = 0;
  u32 live_states = 0;
  bool sleepable = false;
  bool liveness_done = false;  // aux[].live_in/precise_in computed (first state comparison)

  // Registers and stack slots (bit spi) the instructions since the last state line read or
  // wrote: the log's state after an instruction prints these (kernel: scratched_regs,
  // scratched_stack_slots). All are set when a path starts.
  u16 scratched_regs = 0;
  u64 scratched_stack = 0;
  // The log's bookkeeping (kernel: prev_log_pos, prev_insn_print_pos, prev_linfo): where the
  // last instruction line ended (npos: none yet), its length, the last source line printed.
  size_t prev_log_pos = std::string::npos;
  size_t prev_insn_print_pos = 0;
  const bpf_line_info *prev_linfo = nullptr;

  bpf_verifier_env(std::span<const bpf_insn> i, const bpf_verifier_opts &o,
                   bpf_verifier_result &r)
      : insns(i), opts(o), ptype(*o.prog_type), res(r) {}

  u32 new_id() { return ++id_gen; }
  // A copy of src, in a recycled state when there is one.
  std::unique_ptr<bpf_verifier_state> copy_state(const bpf_verifier_state &src) {
    if (free_states.empty()) return std::make_unique<bpf_verifier_state>(src);
    std::unique_ptr<bpf_verifier_state> st = std::move(free_states.back());
    free_states.pop_back();
    *st = src;
    return st;
  }
  // Gives a state that no path or checkpoint uses any more back for reuse.
  void free_state(std::unique_ptr<bpf_verifier_state> st) {
    if (st) free_states.push_back(std::move(st));
  }
  bool log_on(u32 level) const { return (opts.log_level & level) != 0; }
  // Appends to the log when any log level is on.
  void log(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
  // Records the rejection reason (the first one wins) and logs it.
  void verbose_err(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
};

// --- registers (verifier_regs.cc) -----------------------------------------------------------
void __mark_reg_known(bpf_reg_state &reg, u64 imm);
void __mark_reg32_known(bpf_reg_state &reg, u64 imm);
void __mark_reg_unbounded(bpf_reg_state &reg);
void __mark_reg_unknown(bpf_reg_state &reg);
void mark_reg_not_init(bpf_reg_state &reg);
void mark_reg_known_zero(bpf_reg_state &reg);
// A pointer register of type t with zero offset and known-zero variable part.
void mark_reg_ptr(bpf_reg_state &reg, u32 type);
void reg_bounds_sync(bpf_reg_state &reg);
bool reg_bounds_sane(const bpf_reg_state &reg);
void zext_32_to_64(bpf_reg_state &reg);
void coerce_reg_to_size(bpf_reg_state &reg, int size);
void coerce_reg_to_size_sx(bpf_reg_state &reg, int size);
inline bool is_pointer(const bpf_reg_state &r) {
  return r.type != NOT_INIT && r.type != SCALAR_VALUE;
}
inline bool tnum_reg_is_const(const bpf_reg_state &r) { return tnum_is_const(r.var_off); }
inline bool register_is_null(const bpf_reg_state &r) {
  return r.type == SCALAR_VALUE && tnum_equals_const(r.var_off, 0);
}
const char *reg_type_str(u32 type, char *buf, size_t len);
std::string reg_type_name(u32 type);

// --- scalar arithmetic (verifier_alu.cc) -----------------------------------------------------
// SRC_OP: the register is read (must be initialised). DST_OP: written (not r10), becomes an
// unknown scalar. DST_OP_NO_MARK: written, the caller sets the new value.
enum reg_arg_type { SRC_OP, DST_OP, DST_OP_NO_MARK };
int check_reg_arg(bpf_verifier_env &env, u32 regno, reg_arg_type t);
int check_alu_op(bpf_verifier_env &env, const bpf_insn &insn, const bpf_opcode_desc &d);

// --- conditional jumps (verifier_jmp.cc) -----------------------------------------------------
int check_cond_jmp_op(bpf_verifier_env &env, const bpf_insn &insn, const bpf_opcode_desc &d,
                      u32 *insn_idx);

// --- memory (verifier_mem.cc) ----------------------------------------------------------------
enum bpf_access_type { BPF_READ = 1, BPF_WRITE = 2 };
int check_mem_access(bpf_verifier_env &env, u32 insn_idx, u32 regno, s32 off, int size,
                     bpf_access_type t, int value_regno, bool strict_alignment_once,
                     bool sign_ext);
int check_load_store(bpf_verifier_env &env, const bpf_insn &insn, const bpf_opcode_desc &d,
                     u32 insn_idx);
int check_atomic(bpf_verifier_env &env, const bpf_insn &insn, const bpf_opcode_desc &d,
                 u32 insn_idx);
// Helper memory arguments: access_size bytes (or zero) from reg regno.
// An access of size bytes at reg + off is aligned (always on the stack; elsewhere when strict
// alignment is asked for, or strict_once).
int check_ptr_alignment(bpf_verifier_env &env, const bpf_reg_state &reg, s32 off, int size,
                        bool strict_once);
int check_helper_mem_access(bpf_verifier_env &env, u32 regno, u64 access_size,
                            bpf_access_type t, bool zero_size_allowed);
bpf_stack_state *stack_slot(bpf_func_state &f, s64 off, bool grow);
int grow_stack_state(bpf_verifier_env &env, bpf_func_state &f, s64 lowest_off);

// verbose_invalid_scalar(): what is known of a scalar outside its range (" smin=N smax=N", the
// bounds that are not the type's limits, or " unknown scalar value"). verifier_main.cc.
std::string scalar_has(const bpf_reg_state &r0);

// --- calls (verifier_calls.cc) ---------------------------------------------------------------
int check_helper_call(bpf_verifier_env &env, const bpf_insn &insn, u32 *insn_idx);
int check_kfunc_call(bpf_verifier_env &env, const bpf_insn &insn, u32 insn_idx);
int check_func_call(bpf_verifier_env &env, const bpf_insn &insn, u32 *insn_idx);
int prepare_func_exit(bpf_verifier_env &env, u32 *insn_idx);
int check_reference_leak(bpf_verifier_env &env, bool exception_exit);

// --- references (verifier_refs.cc) -----------------------------------------------------------
u32 acquire_reference_state(bpf_verifier_env &env, u32 insn_idx, bpf_ref_kind kind);
int release_reference(bpf_verifier_env &env, u32 ref_obj_id);
// Applies fn to every register and spilled register of every frame of st.
template <typename Fn>
void bpf_for_each_reg(bpf_verifier_state &st, Fn fn) {
  for (bpf_func_state &f : st.frame) {
    for (bpf_reg_state &r : f.regs) fn(r);
    for (bpf_stack_state &s : f.stack)
      if (s.slot_type[0] == STACK_SPILL || s.slot_type[BPF_REG_SIZE - 1] == STACK_SPILL)
        fn(s.spilled_ptr);
  }
}

// --- control flow (verifier_cfg.cc) ----------------------------------------------------------
int check_subprogs(bpf_verifier_env &env);
// --- line info (verifier_linfo.cc) ------------------------------------------------------------
// The line info is sorted, inside the program, names strings, and covers every subprogram's
// first instruction (needs env.subprogs).
int check_btf_func(bpf_verifier_env &env);
void mark_fastcall_patterns(bpf_verifier_env &env);
void remove_fastcall_spills_fills(bpf_verifier_env &env);
void check_fastcall_stack_contract(bpf_verifier_env &env, const bpf_func_state &f, s64 off);
int check_btf_line(bpf_verifier_env &env);
// Logs prefix and "<source line> @ <file>:<line>" when insn_off starts a record for another
// source line than the last one printed.
void verbose_linfo(bpf_verifier_env &env, u32 insn_off, const char *prefix);
int check_cfg(bpf_verifier_env &env);
void compute_live_registers(bpf_verifier_env &env);
void compute_live_stack(bpf_verifier_env &env);
void compute_precise_registers(bpf_verifier_env &env);
int check_max_stack_depth(bpf_verifier_env &env);
u32 find_subprog(const bpf_verifier_env &env, u32 insn_idx);

// What a straight-line run of instructions before k (no jump into it) leaves in register
// regno at k: fp plus a constant (`r2 = r10; r2 += -4`), a map (its ld_imm64), or unknown.
struct bpf_static_reg {
  enum kind_t : u8 { unknown, fp_plus, map_ref } kind = unknown;
  s64 off = 0;                             // fp: the offset from the frame pointer
  const bpf_verifier_map *map = nullptr;   // map: the map
};
bpf_static_reg bpf_static_reg_value(const bpf_verifier_env &env, u32 k, u32 regno);
// A lookup in this map with a constant key in range returns a non-NULL value
// (can_elide_value_nullness(): arrays, not inner-map templates).
bool can_elide_value_nullness(const bpf_verifier_map &map);

// --- pruning (verifier_pruning.cc) -----------------------------------------------------------
// 1: the current state is covered by an explored one (prune), 0: continue, <0: error.
int is_state_visited(bpf_verifier_env &env, u32 insn_idx);
enum class bpf_exact { range_within, exact };
bool states_equal(const bpf_verifier_env &env, const bpf_verifier_state &old,
                  const bpf_verifier_state &cur, bpf_exact exact);
void update_branch_counts(bpf_verifier_env &env, bpf_branch_node *node);
// Computes the static liveness and precision (aux[].live_in, precise_in, ...) once.
void ensure_liveness(bpf_verifier_env &env);
// A callback of subprogram callback_subprog returned to its call site (env.cur is back in the
// caller's frame at the call): the caller frames' scalars that are not precise and changed
// since the previous iteration's checkpoint at the call become unknown (find_prev_entry,
// widen_imprecise_scalars), so that the iterations converge.
void widen_callback_iteration(bpf_verifier_env &env, u32 callback_subprog);

// --- exploration (verifier_main.cc) ---------------------------------------------------------
// Queues a copy of the current state to be explored from insn_idx (kernel: push_stack).
bpf_verifier_state *push_stack(bpf_verifier_env &env, u32 insn_idx, u32 prev_insn_idx);
// Queues the path of an async callback (kernel: push_async_cb): a fresh state whose only frame
// runs subprogram `subprog`, sleepable for bpf_wq callbacks. nullptr (logged) when the queue is
// full.
bpf_verifier_state *push_async_cb(bpf_verifier_env &env, u32 subprog, u32 prev_insn_idx,
                                  bool sleepable);
// The current path may sleep: a sleepable program, or a bpf_wq callback's path.
inline bool in_sleepable(const bpf_verifier_env &env) {
  return env.sleepable || env.cur->in_sleepable;
}
// Discards the state push_stack() just queued (an impossible branch).
void drop_pushed_state(bpf_verifier_env &env);
// Abandons the current path (impossible) and continues with the state just queued.
void pop_into_cur(bpf_verifier_env &env);

// --- log (verifier_log.cc) -------------------------------------------------------------------
std::string bpf_insn_str(std::span<const bpf_insn> insns, u32 idx);
// The log's state of one register of frame f ("scalar(smin=0,smax=umax=0xffffffff)").
std::string print_reg_state(const bpf_func_state &f, const bpf_reg_state &reg);
// The registers and stack slots of frame f: all of them, or (print_all false) the scratched
// ones, whose marks are then cleared. One line.
void print_verifier_state(bpf_verifier_env &env, const bpf_func_state &f, bool print_all);
// The whole state line of frame f of path st (" R0=... R10=fp0 fp-8=..."), as the log prints it;
// the scalars of the registers in `precise` marked "P".
std::string verifier_state_str(const bpf_verifier_env &env, const bpf_verifier_state &st,
                               const bpf_func_state &f, u16 precise);
// The state after an instruction: on the instruction's line when nothing was logged since it,
// aligned as the kernel aligns it, else on a line of its own ("N: R0=..."); scratched only.
void print_insn_state(bpf_verifier_env &env, const bpf_func_state &f);
// The column of the state after an instruction (kernel: BPF_LOG_MIN_ALIGNMENT, _ALIGNMENT).
inline constexpr size_t BPF_LOG_MIN_ALIGNMENT = 8;
inline constexpr size_t BPF_LOG_ALIGNMENT = 40;

}  // namespace umemcg
