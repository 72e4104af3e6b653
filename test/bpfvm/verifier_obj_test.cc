// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/verifier_obj_test.cc: clang-compiled test programs go from the ELF loader to the
// verifier (their verification time, target S10, is measured in bench/bpfvm_verify_bench.cc).
#include <catch2/catch.hpp>

#include <chrono>
#include <span>
#include <string>

#include "bpfvm/loader.h"
#include "bpfvm/verifier_obj.h"
#include "test/bpfvm/loader_test_util.h"

using namespace umemcg;
using namespace umemcg::emu;

namespace {

// The kernel's verdict on one program of a test object: accepted with its processed count, or
// rejected with its error.
struct KernelExpect {
  const char *prog;
  bool ok;
  u32 kernel_processed;
  const char *error;
};

// Verifies each expected program of test/progs/OBJECT.bpf.o as a SYSCALL program loaded by a
// root loader and checks it against the kernel's verdict: an accepted one within 1.5x of the
// kernel's processed count either way, a rejected one with the kernel's error.
// core_types: the CO-RE target (as libbpf's vmlinux BTF); the log is fixed up as libbpf's.
void check_like_kernel(const char *object, std::span<const KernelExpect> expect,
                       const ProgTypeRegistry *core_types = nullptr) {
  KfuncRegistry reg;
  LoadOptions lo;
  lo.kfuncs = &reg;
  lo.core_types = core_types;
  absl::StatusOr<BpfObject> obj = load_object_file(testing::prog_path(object), lo);
  REQUIRE(obj.ok());
  const BpfVerifierInputs in = bpf_verifier_inputs(*obj);
  for (const KernelExpect &e : expect) {
    const BpfProgram *p = nullptr;
    for (const BpfProgram &q : obj->progs)
      if (q.name == e.prog) p = &q;
    REQUIRE(p);
    bpf_verifier_opts o = bpf_verifier_opts_for(*obj, *p, in, &bpf_syscall_prog_type());
    o.allow_ptr_leaks = true;
    o.allow_uninit_stack = true;
    bpf_verifier_result r = bpf_check(p->insns, o);
    bpf_fixup_verifier_log(*p, r);
    CAPTURE(e.prog, r.error, r.insn_processed, e.kernel_processed);
    CHECK(r.ok() == e.ok);
    if (e.ok) {
      CHECK(r.insn_processed <= e.kernel_processed * 3 / 2);
      CHECK(r.insn_processed * 3 / 2 >= e.kernel_processed);
    } else {
      CHECK_THAT(r.error, Catch::Contains(e.error));
    }
  }
}

}  // namespace

TEST_CASE("verifier: syscall programs of the compiled test objects verify", "[bpfvm][verifier][obj]") {
  KfuncRegistry reg;
  testing::add_memcg_kfuncs(reg);
  for (const char *name : {"globals", "maps", "memcg_ops"}) {
    LoadOptions lo;
    lo.kfuncs = &reg;
    absl::StatusOr<BpfObject> obj = load_object_file(testing::prog_path(name), lo);
    REQUIRE(obj.ok());
    const BpfVerifierInputs in = bpf_verifier_inputs(*obj);
    for (const BpfProgram &p : obj->progs) {
      if (p.prog_type != BPF_PROG_TYPE_SYSCALL) continue;
      CAPTURE(name, p.name);
      bpf_verifier_opts o = bpf_verifier_opts_for(*obj, p, in, &bpf_syscall_prog_type());
      o.log_level = BPF_LOG_LEVEL1;
      const auto t0 = std::chrono::steady_clock::now();
      const bpf_verifier_result r = bpf_check(p.insns, o);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      CAPTURE(r.log);
      if (std::string(name) == "memcg_ops" && p.name == "reclaim") {
        // This loader test program passes a css pointer read from the SYSCALL context (a plain
        // scalar to the verifier) to a kfunc taking a trusted pointer: the kernel rejects it too.
        CHECK_FALSE(r.ok());
        CHECK_THAT(r.log, Catch::Contains("expected pointer to STRUCT cgroup_subsys_state"));
      } else {
        CHECK(r.ok());
      }
      WARN(name << ":" << p.name << " verified in " << ms << " ms, " << r.insn_processed
                << " insns processed");
    }
  }
}

// test/progs/verifier_loops.bpf.c: the kernel's verdicts and processed-instruction counts
// (Linux 6.18, loaded by libbpf as SYSCALL programs by a root loader; kernel_diff_test.cc
// compares with the host kernel where bpf() is allowed). Each accepted loop must verify within
// 1.5x of the kernel's count: the spilled loop values are not precise, so the hit and miss
// paths of an iteration prune into one.
TEST_CASE("verifier: map-update loops prune as the kernel's", "[bpfvm][verifier][obj]") {
  const KernelExpect expect[] = {
      {"update_var32", true, 1874, ""},
      {"update_const32", true, 1370, ""},
      {"update_var64", true, 1439, ""},
      {"update_const64", true, 1439, ""},
      {"update_key_addr", false, 61, "infinite loop detected at insn"},
  };
  check_like_kernel("verifier_loops", expect);
}

// test/progs/verifier_callbacks.bpf.c: bpf_loop callbacks walked again from the call until
// their iterations converge, with the kernel's verdicts (Linux 6.18, loaded by libbpf as
// SYSCALL programs by a root loader; kernel_diff_test.cc compares with the host kernel where
// bpf() is allowed). A counter that decides an access is walked exactly, one iteration after
// another, up to nr_loops' bound; one that decides nothing converges after a few walks
// whatever the bound (the verifier's work stays bounded).
TEST_CASE("verifier: bpf_loop callbacks iterate until their states converge",
          "[bpfvm][verifier][obj][callback]") {
  const KernelExpect expect[] = {
      {"index_within_bound", true, 170, ""},
      {"index_past_bound", false, 0, "R0 min value is outside of the allowed memory range"},
      {"index_unbounded", false, 0, "R0 min value is outside of the allowed memory range"},
      {"counter_converges", true, 35, ""},
      {"count_used_after_loop_ok", true, 77, ""},
      {"count_used_after_loop_bad", false, 0, "R0 min value is outside of the allowed memory range"},
  };
  check_like_kernel("verifier_callbacks", expect);
}

// test/progs/verifier_map_elem_cb.bpf.c: bpf_for_each_map_elem callbacks walked as bpf_loop's
// (no bound: the iterations run until they converge), with the kernel's verdicts and
// processed counts (Linux 6.18, as above). A callback that releases its caller's ring-buffer
// record and one that leaves its own to the caller are refused by the walk itself (the kernel
// has had no per-callback reference rule since 6.13).
TEST_CASE("verifier: bpf_for_each_map_elem callbacks as the kernel's",
          "[bpfvm][verifier][obj][callback][for_each]") {
  const KernelExpect expect[] = {
      {"sum_array", true, 63, ""},
      {"sum_hash", true, 63, ""},
      {"sum_percpu", true, 62, ""},
      {"bad_flags", true, 63, ""},
      {"null_ctx", true, 17, ""},
      {"bad_return", false, 0,
       "At callback return the register R0 has smin=2 smax=2 should have been in [0, 1]"},
      {"key_write", false, 0, "write to change key R2 not allowed"},
      {"value_past_end", false, 0, "R3 min value is outside of the allowed memory range"},
      {"ringbuf_map", false, 0, "callback function not allowed for map"},
      {"index_checked", true, 138, ""},
      {"index_unchecked", false, 0, "invalid write to stack R2 off=0 size=1"},
      {"cb_releases_caller_ref", false, 0, "R1 type=scalar expected=ringbuf_mem"},
      {"cb_leaves_ref", false, 0, "BPF_EXIT instruction in main prog would lead to reference leak"},
      {"cb_own_ref", true, 28, ""},
  };
  check_like_kernel("verifier_map_elem_cb", expect);
}

// test/progs/verifier_find_vma.bpf.c: bpf_find_vma from a SYSCALL program, its callback walked
// as the others (Linux 6.18, as above).
TEST_CASE("verifier: bpf_find_vma callbacks as the kernel's", "[bpfvm][verifier][obj][callback]") {
  const KernelExpect expect[] = {
      {"find_current", true, 32, ""},
      {"bad_return", false, 0,
       "At callback return the register R0 has smin=2 smax=2 should have been in [0, 1]"},
      {"scalar_task", false, 0, "R1 type=scalar expected=ptr_, trusted_ptr_, rcu_ptr_"},
  };
  check_like_kernel("verifier_find_vma", expect);
}

// test/progs/verifier_parity.bpf.c: rules from the kernel's own verifier selftests, with the
// kernel's verdicts, error lines and processed counts (Linux 6.18, loaded by libbpf as SYSCALL
// programs by a root loader; kernel_diff_test.cc compares with the host kernel where bpf() is
// allowed): struct bpf_map fields through a map pointer (the kernel's layout), LD_ABS and
// (verifier_parity_tail_call.bpf.c) bpf_tail_call in a void subprogram (func_info, checked
// before the maps are resolved),
// bpf_fastcall spills and fills out of the stack depth, bpf_get_stack's return range.
TEST_CASE("verifier: map fields, func_info, bpf_fastcall and bpf_get_stack as the kernel's",
          "[bpfvm][verifier][obj]") {
  const KernelExpect expect[] = {
      {"map_max_entries", true, 3, ""},
      {"map_elem_size_and_ops", true, 4, ""},
      {"map_ptr_field_part", false, 0,
       "cannot access ptr member ops with moff 40 in struct bpf_map with off 44 size 4"},
      {"map_past_struct", false, 0, "access beyond struct bpf_htab at off 900 size 4"},
      {"map_across_field", false, 0,
       "access beyond the end of member map_type (mend:68) in struct bpf_map with off 64 size 8"},
      {"ld_abs_in_void_subprog", false, 0, "LD_ABS is only allowed in functions that return 'int'."},
      {"ld_abs_in_int_subprog", false, 0,
       "BPF_LD_[ABS|IND] instructions not allowed for this program type"},
      {"fastcall_stack_fits", true, 9, ""},
      {"fastcall_stack_kept", false, 0, "combined stack size of 2 calls is 528. Too large"},
      {"get_stack_in_range", true, 41, ""},
      {"get_stack_call", true, 22, ""},
  };
  check_like_kernel("verifier_parity", expect);
  const KernelExpect tail_call[] = {
      {"tail_call_in_void_subprog", false, 0,
       "tail_call is only allowed in functions that return 'int'."},
  };
  check_like_kernel("verifier_parity_tail_call", tail_call);
}

// test/progs/verifier_core_bitfield.bpf.c: CO-RE bitfield relocations against a kernel without
// the struct (Linux 6.18 and libbpf, as above): each relocated instruction is poisoned, the
// first one reached is refused and named as libbpf's log names it; a guarded read is dead code.
TEST_CASE("verifier: unresolved CO-RE bitfield relocations as libbpf and the kernel report them",
          "[bpfvm][verifier][obj][core]") {
  const KernelExpect expect[] = {
      {"read_unsigned", false, 0,
       "failed to resolve CO-RE relocation <byte_off> [3] struct core_bits.ub2 (0:1 @ offset 0.1)"},
      {"read_signed", false, 0,
       "failed to resolve CO-RE relocation <byte_off> [3] struct core_bits.sb20 (0:4 @ offset 4)"},
      {"read_guarded", true, 15, ""},
  };
  ProgTypeRegistry no_structs;
  check_like_kernel("verifier_core_bitfield", expect, &no_structs);
}
