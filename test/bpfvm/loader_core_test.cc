// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/loader_core_test.cc: CO-RE relocations (loader_core.cc) on the clang-compiled
// test/progs/memcg_core.bpf.c, whose structs are declared preserve_access_index with layouts
// unlike any target: offsets are rewritten to the target layout given at load time (two
// different ones here), load sizes follow a target field's size, a field the target lacks
// makes bpf_core_field_exists() 0 and poisons the guarded load, a missing target struct
// poisons every access, and without a target the instructions stay as compiled. Bitfield
// relocations on test/progs/verifier_core_bitfield.bpf.c.
#include <catch2/catch.hpp>

#include <linux/bpf.h>

#include "bpfvm/loader.h"
#include "bpfvm/prog_type.h"
#include "loader_test_util.h"

using namespace umemcg;
using namespace umemcg::emu;

namespace {

// The program's loads, found by what they load from: the instruction after the ctx load of
// the task pointer etc. The program (see the .bpf.c) starts with
//   r1 = *(u64 *)(r1 + 0)        ; mctx
//   r3 = *(u64 *)(r1 + <task>)   ; mctx->task
//   r4 = *(s32 *)(r3 + <pid>)    ; t->pid
struct Layout {
  u32 task, pid, tgid, comm, debt, cgid;
};

void make_target(ProgTypeRegistry &t, const Layout &l, bool with_task = true) {
  if (with_task)
    REQUIRE(t.add_struct({"task_struct", 128, {bpf_ctx_field::scalar("pid", l.pid, 4),
                                               bpf_ctx_field::scalar("tgid", l.tgid, 4),
                                               bpf_ctx_field::scalar("comm", l.comm, 16)}})
                .ok());
  REQUIRE(t.add_struct({"mem_cgroup", 8, {}}).ok());
  REQUIRE(t.add_struct({"bpf_memcg_ctx", 96,
                        {bpf_ctx_field::ptr("task", l.task, "task_struct", PTR_TRUSTED),
                         bpf_ctx_field::ptr("memcg", 88, "mem_cgroup", PTR_TRUSTED),
                         bpf_ctx_field::scalar("cgroup_id", l.cgid, 8),
                         bpf_ctx_field::scalar("nr_pages_over_high", l.debt, 8)}})
              .ok());
}

const BpfProgram &prog_of(const BpfObject &o) {
  REQUIRE(o.progs.size() == 1);
  return o.progs[0];
}

bool is_poison(const bpf_insn &in) {
  return in.code == (BPF_JMP | BPF_CALL) && (u32)in.imm == kCorePoisonHelper;
}

// Offsets of the ldx instructions whose base register is src (in program order).
std::vector<s16> ldx_offsets(const BpfProgram &p, u8 src) {
  std::vector<s16> v;
  for (const bpf_insn &in : p.insns)
    if (BPF_CLASS(in.code) == BPF_LDX && in.src_reg == src) v.push_back(in.off);
  return v;
}

absl::StatusOr<BpfObject> load(const ProgTypeRegistry *t, const char *object = "memcg_core") {
  LoadOptions o;
  o.core_types = t;
  return load_object_file(testing::prog_path(object), o);
}

}  // namespace

TEST_CASE("CO-RE: field offsets follow the target layout", "[bpfvm][loader][core]") {
  for (const Layout &l : {Layout{16, 0, 4, 8, 40, 24}, Layout{8, 100, 96, 64, 72, 48}}) {
    ProgTypeRegistry t;
    make_target(t, l);
    absl::StatusOr<BpfObject> o = load(&t);
    REQUIRE(o.ok());
    const BpfProgram &p = prog_of(*o);
    INFO("task at " << l.task);
    // r1 = mctx; r1-based loads: task, nr_pages_over_high, cgroup_id (and the poisoned
    // memcg load is gone).
    const std::vector<s16> from_ctx = ldx_offsets(p, BPF_REG_1);
    REQUIRE(from_ctx.size() >= 3);
    CHECK(from_ctx[0] == 0);  // the BPF_PROG ctx[0] access is not a CO-RE access
    CHECK(std::find(from_ctx.begin(), from_ctx.end(), (s16)l.task) != from_ctx.end());
    CHECK(std::find(from_ctx.begin(), from_ctx.end(), (s16)l.debt) != from_ctx.end());
    CHECK(std::find(from_ctx.begin(), from_ctx.end(), (s16)l.cgid) != from_ctx.end());
    // task-based loads: pid, tgid, comm[0].
    const std::vector<s16> from_task = ldx_offsets(p, BPF_REG_3);
    CHECK(std::find(from_task.begin(), from_task.end(), (s16)l.pid) != from_task.end());
    CHECK(std::find(from_task.begin(), from_task.end(), (s16)l.tgid) != from_task.end());
    CHECK(std::find(from_task.begin(), from_task.end(), (s16)l.comm) != from_task.end());
    // mem_cgroup has no not_in_the_emulator: exists() is 0 and the guarded load poisoned.
    int poisoned = 0;
    for (const bpf_insn &in : p.insns) poisoned += is_poison(in);
    CHECK(poisoned == 1);
  }
}

TEST_CASE("CO-RE: a missing target struct poisons its accesses; no target keeps the code",
          "[bpfvm][loader][core]") {
  ProgTypeRegistry t;
  make_target(t, Layout{16, 0, 4, 8, 40, 24}, /*with_task=*/false);
  absl::StatusOr<BpfObject> o = load(&t);
  REQUIRE(o.ok());
  int poisoned = 0;
  for (const bpf_insn &in : prog_of(*o).insns) poisoned += is_poison(in);
  CHECK(poisoned == 4);  // pid, tgid, comm[0], and the unknown memcg field

  absl::StatusOr<BpfObject> raw = load(nullptr);
  REQUIRE(raw.ok());
  for (const bpf_insn &in : prog_of(*raw).insns) CHECK_FALSE(is_poison(in));
  // As compiled: task_struct.pid at 76 in the local layout (8 + 60 + 4 + padding... per the
  // .bpf.c), mctx->task at 24.
  const std::vector<s16> from_ctx = ldx_offsets(prog_of(*raw), BPF_REG_1);
  CHECK(std::find(from_ctx.begin(), from_ctx.end(), (s16)24) != from_ctx.end());
}

TEST_CASE("CO-RE: a load follows a target field of another size", "[bpfvm][loader][core]") {
  // nr_pages_over_high as a 4-byte field in the target: the 8-byte load becomes 4 bytes.
  ProgTypeRegistry t;
  REQUIRE(t.add_struct({"task_struct", 64, {bpf_ctx_field::scalar("pid", 0, 4),
                                            bpf_ctx_field::scalar("tgid", 4, 4),
                                            bpf_ctx_field::scalar("comm", 8, 16)}})
              .ok());
  REQUIRE(t.add_struct({"mem_cgroup", 8, {}}).ok());
  REQUIRE(t.add_struct({"bpf_memcg_ctx", 64,
                        {bpf_ctx_field::ptr("task", 16, "task_struct", PTR_TRUSTED),
                         bpf_ctx_field::ptr("memcg", 0, "mem_cgroup", PTR_TRUSTED),
                         bpf_ctx_field::scalar("cgroup_id", 24, 8),
                         bpf_ctx_field::scalar("nr_pages_over_high", 52, 4)}})
              .ok());
  absl::StatusOr<BpfObject> o = load(&t);
  REQUIRE(o.ok());
  bool found = false;
  for (const bpf_insn &in : prog_of(*o).insns)
    if (BPF_CLASS(in.code) == BPF_LDX && in.src_reg == BPF_REG_1 && in.off == 52) {
      found = true;
      CHECK(BPF_SIZE(in.code) == BPF_W);
    }
  CHECK(found);
}

namespace {

const BpfProgram &prog_named(const BpfObject &o, const char *name) {
  const int i = o.program_index(name);
  REQUIRE(i >= 0);
  return o.progs[(size_t)i];
}

}  // namespace

// test/progs/verifier_core_bitfield.bpf.c: BPF_CORE_READ_BITFIELD(&b, ub2) in read_unsigned
// compiles (clang 19) to r2 = <byte_off> (insn 10), r4 = <byte_sz> (14), r2 <<= <lshift> (29),
// r3 = <signed> (30), r2 s>>= / >>= <rshift> (32, 34). ub2 is bits 1-2 of a __u8: libbpf's
// local values are offset 0, size 1, left shift 61, unsigned, right shift 62; clang wrote size
// 4, which is not checked (a bitfield's container is the loader's choice), while the right
// shift and the signedness are.
TEST_CASE("CO-RE: bitfield relocations follow a target's whole-byte field",
          "[bpfvm][loader][core]") {
  absl::StatusOr<BpfObject> raw = load_object_file(testing::prog_path("verifier_core_bitfield"), {});
  REQUIRE(raw.ok());
  const BpfProgram &r = prog_named(*raw, "read_unsigned");
  REQUIRE(r.insns.size() > 34);
  CHECK(r.insns[10].imm == 0);
  CHECK(r.insns[14].imm == 4);
  CHECK(r.insns[29].imm == 61);
  CHECK(r.insns[30].imm == 0);
  CHECK(r.insns[32].imm == 62);
  CHECK(r.insns[34].imm == 62);

  ProgTypeRegistry t;
  REQUIRE(t.add_struct({"core_bits", 32, {bpf_ctx_field::scalar("ub2", 8, 2),
                                          bpf_ctx_field::scalar("sb20", 12, 4),
                                          bpf_ctx_field::scalar("sb4", 16, 1)}})
              .ok());
  absl::StatusOr<BpfObject> o = load(&t, "verifier_core_bitfield");
  INFO(o.status().message());
  REQUIRE(o.ok());
  const BpfProgram &p = prog_named(*o, "read_unsigned");
  CHECK(p.core_poison.empty());
  CHECK(p.insns[10].imm == 8);   // byte offset
  CHECK(p.insns[14].imm == 2);   // byte size
  CHECK(p.insns[29].imm == 48);  // 64 - 16: the whole field to the top
  CHECK(p.insns[30].imm == 0);   // unsigned (the local type's)
  CHECK(p.insns[32].imm == 48);
  CHECK(p.insns[34].imm == 48);
}

TEST_CASE("CO-RE: an unresolved bitfield relocation is poisoned and named as libbpf names it",
          "[bpfvm][loader][core]") {
  ProgTypeRegistry t;  // no core_bits
  absl::StatusOr<BpfObject> o = load(&t, "verifier_core_bitfield");
  INFO(o.status().message());
  REQUIRE(o.ok());
  const BpfProgram &p = prog_named(*o, "read_unsigned");
  REQUIRE(p.core_poison.size() == 6);
  CHECK(p.core_poison[0].insn_idx == 10);
  CHECK(p.core_poison[0].spec == "<byte_off> [3] struct core_bits.ub2 (0:1 @ offset 0.1)");
  CHECK(p.core_poison[5].spec == "<rshift_u64> [3] struct core_bits.ub2 (0:1 @ offset 0.1)");
  for (const CorePoison &c : p.core_poison) CHECK(is_poison(p.insns[c.insn_idx]));
  // The guarded read: bpf_core_field_exists() is 0, the reads behind it poisoned.
  const BpfProgram &g = prog_named(*o, "read_guarded");
  CHECK_FALSE(g.core_poison.empty());
}
