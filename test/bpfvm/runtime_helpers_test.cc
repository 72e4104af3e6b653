// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/runtime_helpers_test.cc: helper behaviour below the program level: the
// trace_printk formatter, the helper table, checked-run argument validation on hand-built
// programs, time and CPU helpers, and the run context.
#include "shim/bug.h"
#undef WARN
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "bpfvm/helpers_impl.h"
#include "bpfvm/log.h"
#include "bpfvm/runtime.h"
#include "shim/errno.h"
#include "shim/machine.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using namespace umemcg::emu;
using umemcg::test::config;

namespace {

bool read_plain(void *, u64 ptr, std::string *out) {
  if (!ptr) return false;
  *out = reinterpret_cast<const char *>((uintptr_t)ptr);
  return true;
}

std::string fmt(const char *f, u64 a = 0, u64 b = 0, u64 c = 0, int *ret = nullptr) {
  const u64 args[3] = {a, b, c};
  std::string out;
  int r = bpf_bprintf(f, (u32)std::strlen(f) + 1, args, 3, &out, read_plain, nullptr);
  if (ret) *ret = r;
  return r < 0 ? "ERR" + std::to_string(r) : out;
}

bpf_insn insn(u8 code, u8 dst, u8 src, s16 off, s32 imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst;
  i.src_reg = src;
  i.off = off;
  i.imm = imm;
  return i;
}

// A SYSCALL program "r1 = &map; r2 = <key>; call lookup; r0 = 0; exit" with key_setup choosing
// where r2 points, linked against a one-map object.
std::unique_ptr<BpfLoadedObject> lookup_prog(std::vector<bpf_insn> key_setup) {
  BpfObject obj;
  obj.name = "handmade";
  MapSpec ms;
  ms.name = "h";
  ms.type = BPF_MAP_TYPE_HASH;
  ms.key_size = 4;
  ms.value_size = 8;
  ms.max_entries = 4;
  obj.maps.push_back(ms);
  BpfProgram p;
  p.name = "lookup";
  p.section = "syscall";
  p.kind = ProgKind::kSyscall;
  p.prog_type = BPF_PROG_TYPE_SYSCALL;
  p.insns.push_back(insn(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, 0));
  p.insns.push_back(insn(0, 0, 0, 0, 0));
  for (const bpf_insn &i : key_setup) p.insns.push_back(i);
  p.insns.push_back(insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem));
  p.insns.push_back(insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0));
  p.insns.push_back(insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  p.main_len = (u32)p.insns.size();
  Reloc r;
  r.kind = RelocKind::kMapFd;
  r.insn_idx = 0;
  r.map_idx = 0;
  p.relocs.push_back(r);
  obj.progs.push_back(p);
  // The wild-key variants are unsafe on purpose: they run only because the test opts in to
  // running unverified programs, in the checked interpreter that validates helper arguments.
  BpfLinkOptions lopts;
  lopts.run_unverified = true;
  auto lo = BpfLoadedObject::link(std::move(obj), lopts);
  INFO(lo.status().message());
  REQUIRE(lo.ok());
  return std::move(*lo);
}

}  // namespace

TEST_CASE("trace_printk: the format subset", "[bpfvm][helpers][printk]") {
  CHECK(fmt("%d %i %u", (u64)-5, 7, (u64)-1) == "-5 7 4294967295");
  CHECK(fmt("%x %X %o", 255, 255, 8) == "ff FF 10");
  CHECK(fmt("%llu %lld %llx", ~0ull, (u64)-2, 0xabcdef012345ull) ==
        "18446744073709551615 -2 abcdef012345");
  CHECK(fmt("%ld %lu", (u64)-3, 3) == "-3 3");
  CHECK(fmt("[%5d] [%-3d] [%03u]", 42, 7, 5) == "[   42] [7  ] [005]");
  CHECK(fmt("%c%c", 'o', 'k') == "ok");
  CHECK(fmt("%s!", (u64)(uintptr_t) "hi") == "hi!");
  CHECK(fmt("<%s>", 0) == "<>");  // unreadable string
  CHECK(fmt("%p", 0x1234) == "0000000000001234");
  CHECK(fmt("%px %pK", 1, 2) == "0000000000000001 0000000000000002");
  CHECK(fmt("100%%") == "100%");
  int ret = 0;
  fmt("abc %d", 12345, 0, 0, &ret);
  CHECK(ret == 9);
  CHECK(fmt("%d %d %d %d", 1, 2, 3) == "ERR-22");  // more than three arguments
  CHECK(fmt("%q", 1) == "ERR-22");
  CHECK(fmt("%.2d", 1) == "ERR-22");                // no precision
  CHECK(fmt("%hd", 1) == "ERR-22");
  CHECK(fmt("%pB", 1) == "ERR-22");
  CHECK(fmt("%lc", 1) == "ERR-22");
  CHECK(fmt("bell\a") == "ERR-22");                 // not printable
  const u64 args[3] = {};
  std::string out;
  const char nonul[3] = {'a', 'b', 'c'};
  CHECK(bpf_bprintf(nonul, 3, args, 3, &out, read_plain, nullptr) == -EINVAL);
  CHECK(bpf_bprintf("x", 0, args, 3, &out, read_plain, nullptr) == -EINVAL);
}

TEST_CASE("helpers: the table is keyed by enum bpf_func_id", "[bpfvm][helpers]") {
  auto t = bpf_helper_table();
  REQUIRE(t.size() == (size_t)BPF_FUNC_MAX_ID_);
  for (int id : std::initializer_list<int>{BPF_FUNC_map_lookup_elem, BPF_FUNC_map_update_elem, BPF_FUNC_map_delete_elem,
                 BPF_FUNC_ktime_get_ns, BPF_FUNC_ktime_get_boot_ns, BPF_FUNC_get_current_pid_tgid,
                 BPF_FUNC_get_current_comm, BPF_FUNC_get_prandom_u32,
                 BPF_FUNC_get_smp_processor_id, BPF_FUNC_ringbuf_output, BPF_FUNC_ringbuf_reserve,
                 BPF_FUNC_ringbuf_submit, BPF_FUNC_ringbuf_discard, BPF_FUNC_ringbuf_query,
                 BPF_FUNC_task_storage_get, BPF_FUNC_task_storage_delete, BPF_FUNC_loop,
                 BPF_FUNC_spin_lock, BPF_FUNC_spin_unlock, BPF_FUNC_trace_printk,
                 BPF_FUNC_cgrp_storage_get_, BPF_FUNC_cgrp_storage_delete_})
    CHECK(t[id] != nullptr);
  CHECK(t[BPF_FUNC_probe_read] == nullptr);
  CHECK(t[0] == nullptr);
}

TEST_CASE("helpers: time, CPU and task helpers on the machine", "[bpfvm][helpers]") {
  emu::Machine mach(config(emu::Mode::simulated, 3));
  auto t = bpf_helper_table();
  mach.exec([&] {
    CHECK(t[BPF_FUNC_get_smp_processor_id](0, 0, 0, 0, 0) == 2);
    const u64 a = t[BPF_FUNC_ktime_get_ns](0, 0, 0, 0, 0);
    consume_time(1000);
    const u64 b = t[BPF_FUNC_ktime_get_boot_ns](0, 0, 0, 0, 0);
    CHECK(b >= a + 1000);
    CHECK(t[BPF_FUNC_get_current_pid_tgid](0, 0, 0, 0, 0) ==
          ((u64)(u32)current->tgid << 32 | (u32)current->pid));
    char buf[4];
    std::memset(buf, 'x', sizeof(buf));
    CHECK(t[BPF_FUNC_get_current_comm]((u64)(uintptr_t)buf, sizeof(buf), 0, 0, 0) == 0);
    CHECK(std::string(buf) == "hel");  // truncated and NUL-terminated
    CHECK(t[BPF_FUNC_get_current_task_btf](0, 0, 0, 0, 0) == (u64)(uintptr_t)current);
    // bpf_loop outside a program run has no callback runner.
    CHECK((s64)t[BPF_FUNC_loop](1, 0, 0, 0, 0) == -EINVAL);
    CHECK((s64)t[BPF_FUNC_loop](1, 0, 0, 1, 0) == -EINVAL);
  }, 2, "helpers");
}

TEST_CASE("helpers: the run context is per task", "[bpfvm][helpers]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  bpf_run_ctx a, b;
  mach.exec([&] {
    CHECK(bpf_current_run_ctx() == nullptr);
    bpf_run_ctx *old = bpf_set_run_ctx(&a);
    CHECK(old == nullptr);
    CHECK(bpf_current_run_ctx() == &a);
  });
  mach.exec([&] {
    CHECK(bpf_current_run_ctx() == nullptr);  // another task
    bpf_run_ctx *old = bpf_set_run_ctx(&b);
    bpf_reset_run_ctx(old);
    CHECK(bpf_current_run_ctx() == nullptr);
  });
  CHECK(bpf_current_run_ctx() == nullptr);  // the test thread (no task) has its own slot
}

namespace {
// A callback runner that faults at its second call (bpf_loop's view of a callback run that
// went wrong).
int g_cb_calls = 0;
u64 fault_at_second_call(bpf_run_ctx *rc, u64, const u64 *) {
  if (++g_cb_calls == 2) bpf_run_fault(rc, "the callback faulted");
  return 0;
}
}  // namespace

TEST_CASE("helpers: a fault stops bpf_loop; a checked run keeps its first text",
          "[bpfvm][helpers][loop]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    const bpf_func_t loop = bpf_helper_table()[BPF_FUNC_loop];
    // A fast run (no checked state): the fault is a flag, and it ends the loop.
    bpf_run_ctx fast;
    fast.run_callback = fault_at_second_call;
    g_cb_calls = 0;
    bpf_run_ctx *old = bpf_set_run_ctx(&fast);
    CHECK((s64)loop(10, 1, 0, 0, 0) == -EFAULT);
    bpf_reset_run_ctx(old);
    CHECK(g_cb_calls == 2);
    CHECK(fast.faulted);
    CHECK(fast.callback_depth == 0);
    // A checked run: the same, and the first fault's text is what the run reports.
    bpf_run_checked chk;
    bpf_run_ctx checked;
    checked.chk = &chk;
    checked.run_callback = fault_at_second_call;
    g_cb_calls = 0;
    old = bpf_set_run_ctx(&checked);
    CHECK((s64)loop(10, 1, 0, 0, 0) == -EFAULT);
    bpf_run_fault(&checked, "a later fault");
    bpf_reset_run_ctx(old);
    CHECK(g_cb_calls == 2);
    CHECK(checked.faulted);
    CHECK(chk.fault == "the callback faulted");
  });
}

TEST_CASE("helpers: checked runs validate helper arguments", "[bpfvm][helpers][checked]") {
  emu::Machine mach(config(emu::Mode::simulated, 1));
  mach.exec([] {
    // Key on the stack: fine.
    auto good = lookup_prog({insn(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 1),
                             insn(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
                             insn(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4)});
    BpfTestRunOpts o;
    CHECK(bpf_prog_test_run(*good->find_program("lookup"), o).err == 0);
    // Key at a wild address: the helper refuses before touching it.
    auto bad = lookup_prog({insn(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 0x1000)});
    BpfTestRunResult r = bpf_prog_test_run(*bad->find_program("lookup"), o);
    CHECK(r.err == -EFAULT);
    CHECK(r.error.find("bpf_map_lookup_elem: invalid read of 4 bytes of key") != std::string::npos);
    // A "map" that is not one of the program's.
    auto notmap = lookup_prog({insn(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0),
                               insn(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0)});
    r = bpf_prog_test_run(*notmap->find_program("lookup"), o);
    CHECK(r.err == -EFAULT);
    CHECK(r.error.find("not a map of the program") != std::string::npos);
  });
}
