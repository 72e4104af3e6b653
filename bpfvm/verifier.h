// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier.h: the eBPF verifier's entry point.
//
// bpf_check() proves, before a program runs, that every path through it (explored one by one
// with a worklist of branch states, pruned when a state is covered by one already proven safe)
// reads only initialised registers, accesses only memory it may access (stack, context fields,
// map values, sized memory, kernel-object fields) within bounds, passes helpers and kfuncs the
// argument types their prototypes ask for, releases every reference it acquires, terminates
// (bounded loops, at most 1,000,000 processed instructions), and returns a value its program
// type allows. It writes a kernel-style log.
//
// Input: the instructions as the loader left them (bpfvm/object.h) - ld_imm64 of a map holds
// an index into `maps` (BPF_PSEUDO_MAP_FD / _IDX, BPF_PSEUDO_MAP_VALUE / _IDX_VALUE with the
// value offset in the second slot), a kfunc call holds an index into `kfuncs` in imm,
// bpf-to-bpf calls and BPF_PSEUDO_FUNC are pc-relative. bpf_verifier_opts_for() (verifier_obj.h)
// builds the options for a loaded object's program.
//
// Mirrors: kernel/bpf/verifier.c (bpf_check) (Linux 6.19)
// Emulation: privileged-loader semantics (bounded loops, variable stack offsets, pointer
//   arithmetic checked at access time) but no pointer leaks: a pointer may not be returned,
//   stored into a map or memory, or passed as a scalar (the kernel allows these to CAP_PERFMON
//   loaders; here they would leak host addresses). Reading uninitialised stack is rejected
//   (the kernel allows it to CAP_PERFMON). Both are options.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "bpfvm/insn.h"
#include "bpfvm/opcodes.h"
#include "bpfvm/prog_type.h"
#include "shim/types.h"

struct btf;

namespace umemcg::emu {
struct KfuncDesc;
class ProgTypeRegistry;
}  // namespace umemcg::emu

namespace umemcg {

// What the verifier must know about a map a program references.
struct bpf_verifier_map {
  std::string name;
  u32 map_type = BPF_MAP_TYPE_ARRAY;
  u32 key_size = 0;
  u32 value_size = 0;
  u32 max_entries = 0;
  u32 map_flags = 0;
  // The program may not write the value (BPF_F_RDONLY_PROG, frozen .rodata).
  bool rdonly_prog = false;
  // Frozen contents (value_size bytes, e.g. .rodata): loads at constant offsets are constants,
  // as the kernel's bpf_map_direct_read(). nullptr when not frozen.
  const u8 *frozen_value = nullptr;
  // Offset of the struct bpf_spin_lock in the value, -1 if none.
  s32 spin_lock_off = -1;
  // Offset of the struct bpf_wq in the value, -1 if none.
  s32 wq_off = -1;
  // Offset of the struct bpf_timer in the value, -1 if none.
  s32 timer_off = -1;
  // A map of maps: the template of its inner maps (kernel: inner_map_meta), which a lookup's
  // non-NULL result points to. nullptr for other maps.
  const bpf_verifier_map *inner_map = nullptr;
};

// Log verbosity (BPF_LOG_LEVEL1 / BPF_LOG_LEVEL2 / BPF_LOG_STATS).
inline constexpr u32 BPF_LOG_LEVEL1 = 1;
inline constexpr u32 BPF_LOG_LEVEL2 = 2;
inline constexpr u32 BPF_LOG_STATS = 4;

struct bpf_verifier_opts {
  const bpf_prog_type_desc *prog_type = nullptr;  // required
  bool sleepable = false;          // the program is sleepable (SEC("...s/...")), if allowed
  bool gpl_compatible = true;      // license_is_gpl_compatible()
  std::span<const bpf_verifier_map> maps;           // ld_imm64 map index -> map
  std::span<const emu::KfuncDesc *const> kfuncs;   // kfunc call imm -> kfunc (nullptr: unresolved)
  const emu::ProgTypeRegistry *types = nullptr;     // kernel-object structs (field reads)
  u32 ctx_mem_size = 0;            // raw_mem programs: the memory's length
  u32 log_level = 0;               // BPF_LOG_LEVEL1 | BPF_LOG_LEVEL2 | BPF_LOG_STATS
  u32 insn_limit = BPF_COMPLEXITY_LIMIT_INSNS;
  u8 max_cpu = BPF_CPU_V4;
  bool strict_alignment = false;   // BPF_F_STRICT_ALIGNMENT
  bool allow_ptr_leaks = false;    // see the Emulation note above
  bool allow_uninit_stack = false;
  // The CPU count bpf_get_smp_processor_id() is below (the kernel's nr_cpu_ids). 0: NR_CPUS.
  // Emulation: the default is the compile-time bound, not the running machine's count: a
  //   verified program may run on any machine this process boots.
  u32 nr_cpu_ids = 0;
  // When set, receives the opcode-table row of every instruction (nullptr for the second slot
  // of an ld_imm64) once the layout check passes, whatever the verdict after it, and is left
  // empty when the layout check fails. BpfLinkedProg::rows takes it, so that preparing the
  // program for the interpreter does not decode it again.
  std::vector<const bpf_opcode_desc *> *decoded = nullptr;
  // Programs from an object file: the ld_imm64 slots whose map reference the loader relocated,
  // sorted. With maps_by_reloc set, a BPF_PSEUDO_MAP_FD or BPF_PSEUDO_MAP_VALUE ld_imm64
  // anywhere else holds a raw file descriptor of the loading process (bytes the author wrote),
  // which the kernel resolves with fdget and refuses when it is not a map.
  // Emulation: no file descriptor of this process is a map, so every such fd is refused.
  bool maps_by_reloc = false;
  std::vector<u32> map_reloc_insns;
  // The program's line info (bpf_attr line_info: insn_off in instructions) and the BTF its
  // string offsets point into (kernel: prog->aux->btf). check_btf_line() refuses a record out
  // of order, out of the program, on the second slot of an ld_imm64 or naming no string, and a
  // subprogram without a record at its first instruction. The log prints "; <source line> @
  // <file>:<line>" before the first instruction each record covers. Empty: no source lines.
  std::span<const bpf_line_info> line_info;
  const struct btf *btf = nullptr;
  // The program's func info (bpf_attr func_info: insn_off in instructions, the FUNC's id in
  // btf), one record per subprogram. check_btf_func() refuses records out of order, of another
  // count or at other instructions than the subprograms', or naming no FUNC, and LD_ABS,
  // LD_IND or bpf_tail_call in a subprogram that does not return an integer. Empty: no BTF, and
  // a subprogram may not use them at all.
  std::span<const bpf_func_info> func_info;
};

struct bpf_verifier_result {
  int err = 0;            // 0: accepted; else -EINVAL, -EACCES, -E2BIG, -EFAULT ...
  std::string error;      // the reason of a rejection, as the log prints it
  int error_insn = -1;    // the instruction the reason is about (-1: none)
  std::string log;        // the whole log at opts.log_level
  u32 insn_processed = 0;
  u32 max_states_per_insn = 0;
  u32 total_states = 0;
  u32 peak_states = 0;
  std::vector<u32> subprog_starts;       // first insn of each subprogram (0 first)
  std::vector<u32> subprog_stack_depth;  // bytes of stack each subprogram uses
  u32 max_ctx_offset = 0;  // ctx_kind::bytes: end of the highest context byte accessed
  // The program reads struct bpf_map fields through a map pointer (a privileged loader's
  // check_ptr_to_map_access(), with the kernel's layout).
  bool map_field_reads = false;
  bool ok() const { return err == 0; }
};

// Verifies insns under opts. Never throws for bad input; a malformed program is a rejection.
bpf_verifier_result bpf_check(std::span<const bpf_insn> insns, const bpf_verifier_opts &opts);

}  // namespace umemcg
