// SPDX-License-Identifier: GPL-2.0-only
// test/fuzz/fuzz_verifier.cc: libFuzzer target for the verifier's soundness. The input is a
// program under the `raw_mem` program type; a program bpf_check() accepts then runs in the
// interpreter's CHECKED mode over its memory with an instruction budget. An accepted program
// that the checked mode stops with a memory, uninitialised-register or call-depth fault (or
// that trips ASan/UBSan) is a verifier bug: the target aborts so libFuzzer reports it. A run
// that completes is repeated in the fast mode, which must give the same r0.
//
// Input: byte 0 and 1 (little-endian) % (kMaxMem + 1) = the memory's length; the rest is the
// bpf_insn array (a trailing partial instruction is ignored). The memory is a heap block of
// exactly that length (so ASan sees an overflow of it), filled with a fixed pattern.
//
// Seed corpus: with FUZZ_VERIFIER_WRITE_SEEDS=<dir> in the environment, the target writes the
// ISA test programs (test/bpfvm/data/*.data, with their memory length) into <dir> as inputs
// and exits:
//   FUZZ_VERIFIER_WRITE_SEEDS=corpus <build>/test/fuzz/fuzz-verifier
//   <build>/test/fuzz/fuzz-verifier -max_total_time=60 -max_len=4096 corpus
//
// Emulation: the helpers the verifier lets raw_mem programs call without maps are stand-ins
//   (constants; memory arguments are written or read in full so ASan checks their bounds).
//   bpf_loop has no stand-in: a program calling it fails prepare and is skipped.
#include <linux/bpf.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bpfvm/interp.h"
#include "bpfvm/prog_type.h"
#include "bpfvm/verifier.h"
#include "test/bpfvm/isa_data.h"

namespace {

using namespace umemcg;
using namespace umemcg::emu;

constexpr size_t kMaxMem = 1024;
// Processed-instruction limit of the verifier and executed-instruction budget of the run: a
// program the verifier proves terminating within kVerifierLimit processed instructions runs
// at most that many along any one path... but loops verified by state pruning can run longer,
// so the budget is larger, and a budget stop is not a bug.
// Emulation: the kernel's limit is 1M (BPF_COMPLEXITY_LIMIT_INSNS; the unit tests check it).
//   Here inputs are at most 511 instructions, and the few that exhaust the limit (loops the
//   verifier unrolls to the end) are refused anyway: at 50,000 they took a tenth of the time
//   at 9 ms each; 20,000 runs 10-13% more inputs a second.
constexpr u32 kVerifierLimit = 20'000;
constexpr u64 kRunBudget = 1'000'000;

u64 h_const(u64, u64, u64, u64, u64) { return 0x1234; }
u64 h_trace_printk(u64 fmt, u64 size, u64, u64, u64) {
  // Reads every byte of [fmt, fmt + size).
  const volatile u8 *p = (const volatile u8 *)(uintptr_t)fmt;
  u64 sum = 0;
  for (u64 i = 0; i < size; i++) sum += p[i];
  return sum & 0xff;
}
u64 h_fill(u64 dst, u64 size, u64, u64, u64) {
  // get_current_comm / probe_read_kernel: writes every byte of [dst, dst + size).
  if (size) std::memset((void *)(uintptr_t)dst, 0x5a, size);
  return 0;
}

std::vector<bpf_func_t> make_helpers() {
  std::vector<bpf_func_t> h(__BPF_FUNC_MAX_ID, nullptr);
  h[BPF_FUNC_ktime_get_ns] = h_const;
  h[BPF_FUNC_ktime_get_boot_ns] = h_const;
  h[BPF_FUNC_get_prandom_u32] = h_const;
  h[BPF_FUNC_get_smp_processor_id] = h_const;
  h[BPF_FUNC_get_current_pid_tgid] = h_const;
  h[BPF_FUNC_trace_printk] = h_trace_printk;
  h[BPF_FUNC_get_current_comm] = h_fill;
  h[BPF_FUNC_probe_read_kernel] = h_fill;
  return h;
}

const std::vector<bpf_func_t> &helpers() {
  static const std::vector<bpf_func_t> h = make_helpers();
  return h;
}

void write_seeds(const char *dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  size_t n = 0;
  for (const auto &e : fs::directory_iterator(BPFVM_TEST_DATA_DIR)) {
    if (e.path().extension() != ".data") continue;
    const test::IsaDataFile f = test::load_isa_data_file(e.path().string());
    if (f.insns.empty()) continue;
    const u16 len = (u16)std::min(f.mem.size(), kMaxMem);
    std::string bytes;
    bytes.push_back((char)(len & 0xff));
    bytes.push_back((char)(len >> 8));
    bytes.append((const char *)f.insns.data(), f.insns.size() * sizeof(bpf_insn));
    std::ofstream out(fs::path(dir) / (e.path().stem().string() + ".in"), std::ios::binary);
    out.write(bytes.data(), (std::streamsize)bytes.size());
    n++;
  }
  std::fprintf(stderr, "fuzz-verifier: wrote %zu seeds to %s\n", n, dir);
}

[[noreturn]] void report(const char *what, const BpfRunResult &r, const bpf_verifier_result &v) {
  std::fprintf(stderr, "VERIFIER BUG: %s: %s at insn %zu (verifier processed %u insns)\n", what,
               r.reason.c_str(), r.insn, v.insn_processed);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  if (const char *dir = std::getenv("FUZZ_VERIFIER_WRITE_SEEDS")) {
    write_seeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2 + sizeof(bpf_insn)) return 0;
  const size_t mem_len = ((size_t)data[0] | ((size_t)data[1] << 8)) % (kMaxMem + 1);
  const size_t cnt = (size - 2) / sizeof(bpf_insn);
  // Copied (the input is not aligned for bpf_insn), not zero-filled first.
  std::unique_ptr<bpf_insn[]> buf(new bpf_insn[cnt]);
  std::memcpy(buf.get(), data + 2, cnt * sizeof(bpf_insn));
  const std::span<const bpf_insn> insns(buf.get(), cnt);

  bpf_verifier_opts o;
  o.prog_type = &bpf_raw_mem_prog_type();
  o.ctx_mem_size = (u32)mem_len;
  o.insn_limit = kVerifierLimit;
  // The verifier's decode, handed to prepare (the buffer keeps its capacity across inputs).
  static std::vector<const bpf_opcode_desc *> rows;
  o.decoded = &rows;
  const bpf_verifier_result v = bpf_check(insns, o);
  if (!v.ok()) return 0;

  // The verifier accepted it: prepare must too, except for what only a loader links (callback
  // addresses, ld_imm64 src_reg BPF_PSEUDO_FUNC), helpers without a stand-in (bpf_loop), and
  // calls of unknown or unimplemented helpers, writes to r10 and legacy packet loads in dead
  // code (the kernel accepts those and its sanitize_dead_code() removes them; prepare names an
  // unimplemented helper "helper bpf_<name>#<id> is not implemented by the emulator").
  auto prog = BpfExecProg::prepare({insns, helpers(), {}, rows}, {.safe_mode = false});
  if (!prog.ok()) {
    const std::string m(prog.status().message());
    if (m.find("invalid func") != std::string::npos ||
        m.find("is not implemented by the emulator") != std::string::npos ||
        m.find("frame pointer is read only") != std::string::npos ||
        m.find("ld_imm64 with src_reg 4 ") != std::string::npos ||
        m.find("legacy packet access") != std::string::npos)
      return 0;
    std::fprintf(stderr, "VERIFIER BUG: accepted, prepare refused: %s\n",
                 std::string(prog.status().message()).c_str());
    std::abort();
  }

  // Exactly mem_len bytes on the heap (new of 0 bytes is still a distinct pointer).
  std::unique_ptr<u8[]> mem(new u8[mem_len]);
  for (size_t i = 0; i < mem_len; i++) mem[i] = (u8)(i * 37 + 11);
  const u64 base = (u64)(uintptr_t)mem.get();
  const BpfMemRegion region{base, mem_len, true};
  BpfCheckedRunOpts ro;
  ro.args = {base, mem_len, 0, 0, 0};
  ro.nargs = 2;
  ro.regions = {&region, 1};
  ro.insn_budget = kRunBudget;
  const BpfRunResult r = prog->run_checked(ro);
  if (!r.ok) {
    if (r.reason.find("budget") != std::string::npos) return 0;
    report("accepted program faults", r, v);
  }

  for (size_t i = 0; i < mem_len; i++) mem[i] = (u8)(i * 37 + 11);
  const u64 args[5] = {base, mem_len, 0, 0, 0};
  const u64 fast = prog->run_fast(args);
  if (fast != r.r0) {
    std::fprintf(stderr, "BUG: fast r0 %llx != checked r0 %llx (uninitialised stack read?)\n",
                 (unsigned long long)fast, (unsigned long long)r.r0);
    std::abort();
  }
  return 0;
}
