// SPDX-License-Identifier: GPL-2.0-only
// tools/bpf_plugin.cc: umemcg-bpf-plugin, the runtime-under-test plugin of the bpf_conformance
// suite (github.com/Alan-Jowett/bpf_conformance).
//
// Contract (the suite's plugin protocol): the program arrives on stdin as hex bytes separated by
// whitespace; argv[1], when present and non-empty, is the input memory as hex bytes; further
// arguments are plugin options (ignored). The program runs with r1 = pointer to a copy of the
// memory (0 when there is none) and r2 = its length. On success r0 is printed as lowercase hex
// without a 0x prefix, followed by a newline, and the exit status is 0. A program that is
// rejected or faults prints the reason (stdout and stderr) and exits with status 1; malformed
// input exits with status 2.
//
// The program is verified first under the `raw_mem` program type (r1 = memory of its length,
// r2 = the length). A program the verifier accepts runs in the interpreter's FAST mode. Any
// other (rejected, or too complex for the verifier to finish: the long loops of speed tests
// pass the 1M processed-instruction limit) runs in the SAFE mode when a static analysis proves
// that it reads no register before writing it (BpfExecProg::regs_initialised_before_use()):
// the fast handlers with every memory access bounds-checked against the stack and the input
// memory, the call depth limit and a back-edge budget, so it keeps the fast mode's speed and
// still cannot crash the host. The rest runs in the CHECKED mode (plus per-instruction
// initialised-register checks and an exact budget). Both turn an unsafe access into a clear
// error exit.
// Emulation: conformance programs need not be verifier-clean (the suite's helper ids are not
//   the kernel's, and it tests behaviour a verifier would refuse), so a rejection is not an
//   error here, only a choice of mode (the kernel would refuse to load such programs).
// Emulation: unverified programs stop after an instruction budget (kBudget): exactly counted in
//   the checked mode, estimated from taken backward jumps in the safe mode.
// Emulation: helper ids 1 (r1 + r2), 2 (r1 * 2) and 5 (returns r1; the suite's callx test calls
//   id 5), and the kfunc with BTF id 0x2a (fd index 0, returns r1) are what this runtime offers.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "bpfvm/interp.h"
#include "bpfvm/prog_type.h"
#include "bpfvm/verifier.h"

namespace {

using namespace umemcg;
using namespace umemcg::emu;

u64 helper_add(u64 a, u64 b, u64, u64, u64) { return a + b; }
u64 helper_double(u64 a, u64, u64, u64, u64) { return a * 2; }
u64 helper_identity(u64 a, u64, u64, u64, u64) { return a; }
const bpf_func_t kHelpers[] = {nullptr, helper_add, helper_double, nullptr, nullptr,
                               helper_identity};
const BpfKfunc kKfuncs[] = {{0x2a, 0, helper_identity}};
// Instructions an unverified program may execute (the checked mode's default).
constexpr u64 kBudget = 100'000'000;

bool parse_hex_bytes(const std::string &text, std::vector<u8> *out, std::string *why) {
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) {
    if (tok.size() > 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) tok = tok.substr(2);
    if (tok.empty() || tok.size() > 2) {
      *why = "bad hex byte '" + tok + "'";
      return false;
    }
    char *end = nullptr;
    unsigned long v = std::strtoul(tok.c_str(), &end, 16);
    if (!end || *end) {
      *why = "bad hex byte '" + tok + "'";
      return false;
    }
    out->push_back((u8)v);
  }
  return true;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int fail(int status, const std::string &msg) {
  std::printf("%s\n", msg.c_str());
  std::fprintf(stderr, "%s\n", msg.c_str());
  return status;
}

}  // namespace

int main(int argc, char **argv) {
  std::string why;
  std::vector<u8> mem;
  if (argc > 1 && !parse_hex_bytes(argv[1], &mem, &why)) return fail(2, "memory: " + why);
  std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  std::vector<u8> code;
  if (!parse_hex_bytes(text, &code, &why)) return fail(2, "program: " + why);
  if (code.size() % sizeof(bpf_insn)) return fail(2, "program: not a multiple of 8 bytes");
  std::vector<bpf_insn> insns(code.size() / sizeof(bpf_insn));
  if (!code.empty()) std::memcpy(insns.data(), code.data(), code.size());

  auto prog = BpfExecProg::prepare({insns, kHelpers, kKfuncs});
  if (!prog.ok()) return fail(1, std::string(prog.status().message()));

  const auto t_verify = std::chrono::steady_clock::now();
  bpf_verifier_opts vopts;
  vopts.prog_type = &bpf_raw_mem_prog_type();
  vopts.ctx_mem_size = (u32)mem.size();
  const bpf_verifier_result v = bpf_check(insns, vopts);
  // UMEMCG_BPF_PLUGIN_VERBOSE=1: say on stderr which mode runs, and why, then the time the
  // verifier and the run took (tools/plugin_speed.py reads them); stdout unchanged.
  const bool fast = mem.size() <= UINT32_MAX && v.ok();
  const bool safe = !fast && prog->regs_initialised_before_use(2);
  const bool verbose = std::getenv("UMEMCG_BPF_PLUGIN_VERBOSE") != nullptr;
  const double verify_ms = ms_since(t_verify);
  if (verbose)
    std::fprintf(stderr, "verifier: %s\n",
                 fast ? "accepted, fast mode"
                      : (v.error + (safe ? ", safe mode" : ", checked mode")).c_str());
  const auto t_run = std::chrono::steady_clock::now();
  auto report_time = [&] {
    if (verbose)
      std::fprintf(stderr, "time: verify %.3f ms, run %.3f ms\n", verify_ms, ms_since(t_run));
  };
  if (fast) {
    const u64 args[5] = {mem.empty() ? 0 : (u64)(uintptr_t)mem.data(), mem.size(), 0, 0, 0};
    const u64 r0 = prog->run_fast(args);
    report_time();
    std::printf("%llx\n", (unsigned long long)r0);
    return 0;
  }

  BpfMemRegion region{(u64)(uintptr_t)mem.data(), mem.size(), true};
  BpfCheckedRunOpts opts;
  opts.args = {mem.empty() ? 0 : (u64)(uintptr_t)mem.data(), mem.size(), 0, 0, 0};
  opts.nargs = 2;
  opts.insn_budget = kBudget;
  if (!mem.empty()) opts.regions = {&region, 1};
  BpfRunResult r = safe ? prog->run_safe(opts) : prog->run_checked(opts);
  report_time();
  if (!r.ok) return fail(1, r.reason + " at insn " + std::to_string(r.insn));
  std::printf("%llx\n", (unsigned long long)r.r0);
  return 0;
}
