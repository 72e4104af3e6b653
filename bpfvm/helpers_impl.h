// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/helpers_impl.h: the BPF helper functions of the emulated machine, keyed by the kernel's
// enum bpf_func_id, and the per-run context they work in.
//
// Helpers implemented: map_lookup_elem, map_update_elem, map_delete_elem, ktime_get_ns,
// trace_printk, get_prandom_u32, get_smp_processor_id, get_current_pid_tgid, get_current_comm,
// get_current_task, spin_lock, spin_unlock, ktime_get_boot_ns, ringbuf_output / reserve / submit
// / discard / query, task_storage_get, task_storage_delete, get_current_task_btf, loop,
// for_each_map_elem, find_vma (never finds a VMA: -ENOENT),
// cgrp_storage_get, cgrp_storage_delete, get_socket_cookie (NULL only), the skc_to_*_sock casts (NULL), and timer_init / set_callback / start / cancel
// (bpfvm/bpf_async.h). Their prototypes (what the verifier checks) live
// beside the verifier (helper_proto.h); this file is what runs.
//
// Run context: a program run installs a bpf_run_ctx (bpfvm/run_ctx.h) on the current task (the
// kernel's current->bpf_ctx, bpf_set_run_ctx()). It tells the helpers whether the run is
// checked (no verifier proof: every pointer a helper receives is validated, and faults are
// recorded instead of crashing; a bpf_run_checked holds that state), which memory the program
// may reach, and how to call a BPF callback (bpf_loop,
// bpf_for_each_map_elem, bpf_find_vma).
//
// Mirrors: kernel/bpf/helpers.c (bpf_map_lookup_elem, bpf_map_update_elem, bpf_map_delete_elem,
//          bpf_get_smp_processor_id, bpf_ktime_get_ns, bpf_get_current_pid_tgid,
//          bpf_get_current_comm, bpf_spin_lock, bpf_probe_read_kernel in
//          kernel/trace/bpf_trace.c, bpf_spin_unlock, bpf_loop in bpf_iter.c,
//          bpf_bprintf_prepare), kernel/trace/bpf_trace.c (bpf_trace_printk),
//          kernel/bpf/core.c (bpf_user_rnd_u32) (Linux 6.19)
// Emulation:
//  - get_prandom_u32 is a per-vCPU splitmix64 stream (the kernel: per-CPU prandom state),
//    seeded from the machine's seed in simulated mode (deterministic) and at random in native
//    mode, reseeded at each machine boot.
//  - trace_printk's %p prints the raw value in hex (the kernel hashes it); a %s pointer that
//    cannot be read prints as an empty string, as the kernel's.
//  - checked runs: a pointer a helper receives is accepted inside the run's known regions (ctx,
//    map values, ring-buffer records it holds) or inside the host stack window of the calling
//    interpreter runs (where their BPF stacks live); the verifier proves exact bounds.
//  - bpf_probe_read_kernel: the emulated kernel's address space is the process's. The source is
//    read without faulting (process_vm_readv on the process itself, as the kernel's
//    copy_from_kernel_nofault()): an unmapped address gives -EFAULT and a zeroed buffer.
#pragma once

// shim/thread_annotations.h before abseil: abseil redefines the same macros in a system
// header (silently), the reverse order warns.
#include "shim/thread_annotations.h"

#include <map>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "bpfvm/interp.h"
#include "bpfvm/map.h"
#include "bpfvm/run_ctx.h"
#include "shim/sched.h"

namespace umemcg {

// Not in the uapi headers this project builds against (added in 6.2).
inline constexpr int BPF_FUNC_cgrp_storage_get_ = 210;
inline constexpr int BPF_FUNC_cgrp_storage_delete_ = 211;
// One past the last helper id of Linux 6.19.
inline constexpr int BPF_FUNC_MAX_ID_ = 212;
// kernel/bpf/bpf_iter.c: bpf_loop()'s bound on iterations.
inline constexpr u64 BPF_MAX_LOOPS = 8 * 1024 * 1024;
// kernel/bpf/helpers.c: the bprintf output buffer.
inline constexpr u32 MAX_BPRINTF_BUF = 1024;

// What a checked run tracks (a program the verifier did not prove safe); fast runs have none,
// which keeps a fast run's set-up to a few stores.
struct bpf_run_checked {
  // Regions known up front (ctx, array map values).
  std::vector<emu::BpfMemRegion> regions;
  // Memory helpers handed out during the run (map values, storage values, ring-buffer
  // records), by start address.
  std::map<u64, emu::BpfMemRegion> dyn;
  // Outstanding ring-buffer reservations and held bpf_spin_locks.
  absl::flat_hash_set<u64> records;
  std::vector<struct bpf_spin_lock *> locks;
  // The BPF stacks [lo, hi) of the interpreter runs active in this run: the program's, then
  // each nested callback's. Each run stores its own through BpfCheckedRunOpts::stack_out.
  // Explicit rather than a window of the host stack: the interpreter's stack array is not on
  // the host stack under ASan's use-after-return detection (a fake stack frame).
  u64 stacks[MAX_CALL_FRAMES][2];
  int nr_stacks = 0;
  // The maps the program references, and the kernel objects it was handed.
  absl::flat_hash_set<const bpf_map *> maps;
  absl::flat_hash_set<u64> trusted_ptrs;
  u64 insn_budget = 100'000'000;
  u64 executed = 0;  // instructions executed by nested callback runs
  // The first fault found by a helper or a nested run ("" if none): what run() reports.
  std::string fault;
};

namespace emu {

// The helper table: index = enum bpf_func_id, nullptr where the emulator has no helper.
std::span<const bpf_func_t> bpf_helper_table();

// Checked runs: may [addr, addr + len) be accessed? Regions, handed-out memory, and (when
// bpf_stacks) the BPF stacks of the run's active interpreter runs (bpf_run_checked::stacks).
bool bpf_run_mem_ok(const bpf_run_ctx *ctx, u64 addr, u64 len, bool write, bool bpf_stacks);
// Records that the run faulted, and (a checked run) the first fault's text.
void bpf_run_fault(bpf_run_ctx *ctx, const std::string &why);
// Records memory handed to the program.
void bpf_run_add_region(bpf_run_ctx *ctx, const void *p, u64 len, bool writable);

// bpf_trace_printk's formatting (bpf_bprintf_prepare + bstr_printf): the message or -EINVAL.
// read_str(ptr, out) reads a %s argument; it returns false if the memory cannot be read.
using bpf_read_str_t = bool (*)(void *opaque, u64 ptr, std::string *out);
int bpf_bprintf(const char *fmt, u32 fmt_size, const u64 *args, int nargs, std::string *out,
                bpf_read_str_t read_str, void *opaque);

}  // namespace emu
}  // namespace umemcg
