// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/runtime.h: loaded BPF objects: the link step from a loader BpfObject to runnable
// programs with live maps, running a program on the current task, and BPF_PROG_TEST_RUN.
//
// Link (BpfLoadedObject::link):
//   1. every MapSpec becomes a live map (map.h): BTF-defined maps with their attributes (and the
//      struct bpf_spin_lock found in the value's BTF), global data sections as one-element
//      arrays holding their initial contents, .rodata with BPF_F_RDONLY_PROG and frozen;
//   2. each program is verified (runtime_verify.h) on the loader's instructions;
//   3. relocations are applied to a copy of the instructions: map ld_imm64 load the bpf_map
//      pointer, global-data ld_imm64 the value address, ksym ld_imm64 the kfunc address (0 when
//      an unresolved weak extern), callback ld_imm64 (BPF_PSEUDO_FUNC) a callback descriptor,
//      kfunc calls resolve to the registry's functions;
//   4. the interpreter program is prepared with the helper table (helpers_impl.h), plus one per
//      callback subprogram (a two-instruction trampoline that calls it).
// Map types the emulator does not implement (struct_ops, map-in-map) become maps whose every
// operation fails with -ENOTSUPP, and are listed in warnings().
//
// Running (BpfLoadedProg::run): on the current task, with the run context installed
// (helpers_impl.h); sleepable programs under the RCU-tasks-trace emulation with migration
// disabled, others inside rcu_read_lock(). Whether a program runs in the interpreter's fast or
// checked mode is decided in one place: BpfLoadedProg::fast() (verified programs only).
//
// Mirrors: tools/lib/bpf/libbpf.c (bpf_object__load: bpf_object__create_maps,
//          bpf_object__relocate, bpf_object__load_progs), kernel/bpf/syscall.c (bpf_prog_load,
//          bpf_prog_test_run), net/bpf/test_run.c (bpf_prog_test_run_syscall),
//          include/linux/filter.h (bpf_prog_run, bpf_prog_run_pin_on_cpu) (Linux 6.19)
// Emulation:
//  - a callback value (BPF_PSEUDO_FUNC) is the address of a runtime descriptor, not of code.
//  - a checked run that faults (or that leaves a ring-buffer record or a bpf_spin_lock behind)
//    ends with an error instead of the kernel's oops; held locks are released and outstanding
//    records discarded.
//  - the kernel refuses to load a program its verifier rejects. Here every program of an object
//    links (so that tools can show verdicts, logs and disassembly), but one the verifier did not
//    accept is refused at run time (run(), bpf_prog_test_run()) with the verifier's reason,
//    unless the link options opt in with run_unverified: then it runs in the checked
//    interpreter (tests of the checked path, and tools that say so).
#pragma once

#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bpfvm/interp.h"
#include "bpfvm/kfunc.h"
#include "bpfvm/loader.h"
#include "bpfvm/map.h"
#include "bpfvm/object.h"
#include "bpfvm/run_ctx.h"
#include "bpfvm/runtime_verify.h"

namespace umemcg::emu {

class BpfLoadedObject;

struct BpfLinkOptions {
  bool verify = true;  // run the verifier (when available) on every program
  u32 log_level = 1;   // verifier log level
  // Opt-in: run programs the verifier did not accept (or did not examine: verify = false) in
  // the checked interpreter instead of refusing them.
  bool run_unverified = false;
  // The loader is privileged (CAP_PERFMON, bpf_allow_ptr_leaks()): pointers may be compared,
  // stored into maps and memory and returned, as the kernel allows such loaders. Off by
  // default (verifier.h's Emulation note).
  bool allow_ptr_leaks = false;
};

// The result of one program run.
struct BpfProgRunResult {
  bool ok = false;      // false: the checked run faulted
  u64 r0 = 0;
  u64 executed = 0;     // instructions executed (checked runs, callbacks included)
  std::string fault;    // why the run faulted (checked runs)
};

// A callback subprogram (bpf_loop's callback_fn) ready to run: the value a BPF_PSEUDO_FUNC
// ld_imm64 loads.
struct BpfCallback {
  u32 target = 0;  // first instruction of the subprogram in the program
  std::string name;
  std::unique_ptr<BpfExecProg> exec;  // trampoline: call target; exit; then the program
};

class BpfLoadedProg {
 public:
  const std::string &name() const { return spec_->name; }
  const BpfProgram &spec() const { return *spec_; }
  bpf_prog_type prog_type() const { return spec_->prog_type; }
  bool sleepable() const;
  // The linked instructions (relocations applied).
  const std::vector<bpf_insn> &insns() const { return insns_; }
  const BpfVerdict &verdict() const { return verdict_; }
  BpfLoadedObject &object() const { return *obj_; }

  // THE execution-mode switch: fast mode only for programs the verifier accepted.
  bool fast() const { return verdict_.available && verdict_.accepted && exec_; }
  // Whether run() runs the program: linked, and accepted by the verifier or linked with
  // run_unverified (then in the checked interpreter).
  bool runnable() const { return exec_ && (fast() || run_unverified_); }
  // Why the program was not linked (autoload off, a helper the emulator lacks); empty if it was.
  const std::string &link_error() const { return link_error_; }
  // Why run() refuses the program (empty when runnable()).
  std::string refusal() const;

  // Runs the program on the current task with r1 = ctx (ctx_size bytes the program may access,
  // writable unless ctx_rdonly). Must run on a machine task (or attached thread).
  BpfProgRunResult run(void *ctx, u64 ctx_size, bool ctx_rdonly = false);
  // The trampoline's fast path: for a fast() program that is not sleepable, called by a hook
  // that already holds rcu_read_lock() with migration disabled (hook points, struct_ops
  // dispatchers walking an RCU-protected array). Returns r0. Inline (below): the run context
  // is set up in the caller's frame and the interpreter entered with r1 = ctx alone.
  // Emulation: the kernel's trampoline enters RCU per program; here one read-side section
  // covers the caller's walk (nesting would change nothing for a non-sleepable program).
  u64 run_in_rcu(void *ctx);

  const BpfCallback *find_callback(u64 value) const;
  // Runs callback cb of this program (a fast() one) from an async context, a bpf_wq work item:
  // on the current task with r1..r3 = args and the run context installed (bpf_loop and the
  // kfuncs that name the program work inside). The caller holds the read side the callback
  // needs (RCU-tasks-trace with migration disabled for a sleepable one). Returns r0.
  u64 run_async_callback(const BpfCallback &cb, const u64 args[3]) const;

 private:
  friend class BpfLoadedObject;
  BpfLoadedObject *obj_ = nullptr;
  const BpfProgram *spec_ = nullptr;
  std::vector<bpf_insn> insns_;
  std::vector<BpfKfunc> kfuncs_;
  std::unique_ptr<BpfExecProg> exec_;
  std::deque<BpfCallback> callbacks_;  // stable addresses: programs load them
  BpfVerdict verdict_;
  bool run_unverified_ = false;
  std::string link_error_;
};

// bpf_run_ctx::run_callback of every run: runs BPF_PSEUDO_FUNC callback cb of the running
// program (rc->prog), checked or fast as the run is.
u64 bpf_run_callback(bpf_run_ctx *rc, u64 cb, const u64 args[5]);

inline u64 BpfLoadedProg::run_in_rcu(void *ctx) {
  // Only what a fast run's helpers read: the program and the callback runner (bpf_loop,
  // bpf_for_each_map_elem).
  bpf_run_ctx rc;
  rc.prog = this;
  rc.run_callback = bpf_run_callback;
  // bpf_set_run_ctx() and bpf_reset_run_ctx() on one slot, found once: the run ends on the
  // task it started on.
  bpf_run_ctx **slot = emu::bpf_run_ctx_slot();
  bpf_run_ctx *old = *slot;
  *slot = &rc;
  const u64 r0 = exec_->run_fast(static_cast<const void *>(ctx));
  *slot = old;
  return r0;
}

class BpfLoadedObject {
 public:
  // Links obj (see the banner). Errors name the map or program at fault.
  static absl::StatusOr<std::unique_ptr<BpfLoadedObject>> link(BpfObject obj,
                                                               const BpfLinkOptions &opts = {});
  // load_object_file() against kfuncs (may be nullptr), then link().
  static absl::StatusOr<std::unique_ptr<BpfLoadedObject>> open(const std::string &path,
                                                               const KfuncRegistry *kfuncs,
                                                               const BpfLinkOptions &opts = {});
  // load_object_file() with lo (kfuncs, CO-RE target layouts), then link().
  static absl::StatusOr<std::unique_ptr<BpfLoadedObject>> open(const std::string &path,
                                                               const LoadOptions &lo,
                                                               const BpfLinkOptions &opts = {});

  BpfLoadedObject(const BpfLoadedObject &) = delete;
  BpfLoadedObject &operator=(const BpfLoadedObject &) = delete;
  ~BpfLoadedObject();

  const BpfObject &object() const { return obj_; }
  BpfLoadedProg *find_program(const std::string &name);
  bpf_map *find_map(const std::string &name);
  std::deque<BpfLoadedProg> &programs() { return progs_; }
  // Index = BpfObject::maps index.
  const std::vector<std::unique_ptr<bpf_map>> &maps() const { return maps_; }
  const std::vector<std::string> &warnings() const { return warnings_; }

  // For checked runs: the array maps' value areas, and the set of map pointers.
  const std::vector<BpfMemRegion> &static_regions() const { return regions_; }

 private:
  BpfLoadedObject() = default;
  absl::Status create_maps();
  absl::Status link_program(BpfLoadedProg &p, const BpfLinkOptions &opts);

  BpfObject obj_;
  std::vector<std::unique_ptr<bpf_map>> maps_;
  std::deque<BpfLoadedProg> progs_;
  std::vector<BpfMemRegion> regions_;
  std::vector<std::string> warnings_;
};

// BPF_PROG_TEST_RUN attributes (union bpf_attr::test) as the runtime takes them.
struct BpfTestRunOpts {
  std::vector<u8> ctx_in;     // copied in; after the run holds the ctx copied back out
  std::vector<u8> data_in;    // packet data (not accepted by SYSCALL programs)
  bool data_out = false;      // a data_out buffer was given
  bool ctx_out = false;       // a ctx_out buffer was given
  u32 repeat = 0;
  u32 duration = 0;
  u32 flags = 0;
  u32 cpu = 0;
  u32 batch_size = 0;
};

struct BpfTestRunResult {
  int err = 0;          // 0, or the negative errno of the command
  u32 retval = 0;       // the program's return value (u32, as test.retval)
  std::string error;    // what went wrong when err != 0
  u64 executed = 0;
};

// BPF_PROG_TEST_RUN for SYSCALL programs: rejects data_in/data_out/ctx_out/duration/repeat/
// flags/batch_size (-EINVAL), a ctx larger than 65535 or smaller than the largest ctx offset the
// program reads (-EINVAL), program types without a test-run (-ENOTSUPP); runs the program
// synchronously on the calling task, pinned to its vCPU; copies the ctx back into ctx_in.
// A checked run that faults gives -EFAULT with the fault in `error`. A program the verifier did
// not accept (and not linked with run_unverified) gives the verifier's error (-EACCES when it
// was not verified) with the reason in `error`, as its BPF_PROG_LOAD would have.
BpfTestRunResult bpf_prog_test_run(BpfLoadedProg &prog, BpfTestRunOpts &opts);

}  // namespace umemcg::emu
