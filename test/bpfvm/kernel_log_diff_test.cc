// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/kernel_log_diff_test.cc: the level-1 and level-2 verifier logs against the host
// kernel's.
//
// A few SYSCALL programs of test/progs are loaded into the host kernel by libbpf with
// log_level 2 (and 1) and verified here at the same level with the same program (as a root
// loader). The
// kernel's lines that this log does not have are set aside first (see Missing in
// docs/bpfvm.md): the liveness table and the stack liveness lines, the precision backtracking
// lines ("mark_precise:") and the "P" mark of precise scalars, the checks of the .BTF.ext
// func_info argument types ("arg#0 ..."), the loop bookkeeping lines ("SCC enter (1)"), the
// summary line. What remains
// (source lines, instruction lines with the state after them, state lines, "from X to Y"
// lines, calls and returns) must be the kernel's line for line, over the whole log.
//
// Emulation: where the kernel's backtracking lines come between an instruction and its state,
//   the kernel prints the state on a line of its own ("7: R0=scalar()"); with those lines set
//   aside it is put back after the instruction, in the column the kernel would have used.
//   Where bpf() is refused (no privilege, no CONFIG_BPF_SYSCALL) the test warns and skips.
#include <catch2/catch.hpp>

#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bpfvm/loader.h"
#include "bpfvm/verifier_obj.h"
#include "test/bpfvm/loader_test_util.h"
#include "test/support/host_libbpf.h"

using namespace umemcg;
using namespace umemcg::emu;

namespace {

// Whether the host kernel verifies programs for this test (a warning says why not), with reg
// holding the memcg kfuncs the objects call.
bool log_diff_ready(KfuncRegistry &reg) {
  std::string why;
  if (!umemcg::test::host_bpf_allowed(&why)) {
    WARN("bpf(BPF_PROG_LOAD) refused (" << why << "): kernel log differential skipped");
    return false;
  }
  testing::add_memcg_kfuncs(reg);
  return true;
}

// The kernel's log at `level` of one program of an object ("" if libbpf could not open it).
std::string kernel_log(const std::string &path, const std::string &prog, u32 level) {
  static std::vector<char> logbuf(16u << 20);
  libbpf_set_print(umemcg::test::libbpf_quiet);
  if (!umemcg::test::host_load_program(path.c_str(), prog, logbuf, level)) return "";
  return logbuf.data();
}

std::vector<std::string> lines(const std::string &s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The column the kernel puts an instruction's state in (vlog_alignment()).
std::string with_state(const std::string &insn, const std::string &state) {
  const size_t pos = insn.size() + 1;
  const size_t col = (std::max<size_t>(pos + 4, 40) + 7) / 8 * 8 - pos - 1;
  return insn + std::string(std::max<size_t>(col, 1), ' ') + ";" + state;
}

// The kernel's log without the lines this log does not print (see the file comment).
std::vector<std::string> kernel_comparable(const std::string &log) {
  static const std::regex liveness_row(R"(^ *(\d+ +)*\d+: [.0-9]{10} )");
  static const std::regex stack_liveness(R"(^\([0-9,]+\) )");
  static const std::regex insn_line(R"(^(\d+): \([0-9a-f]{2}\) [^;]*$)");
  static const std::regex state_line(R"(^(\d+):( (R\d|fp-|frame).*)$)");
  static const std::regex precise(R"(=P(-?[0-9]|scalar))");
  std::vector<std::string> out;
  bool dropped_since_insn = false;
  for (std::string l : lines(log)) {
    if (l.starts_with("Live regs before insn:") || std::regex_search(l, liveness_row) ||
        l.starts_with("arg#") || l.starts_with("SCC ") ||
        std::regex_search(l, stack_liveness) || l.starts_with("mark_precise:") ||
        l.starts_with("processed ")) {
      dropped_since_insn = true;
      continue;
    }
    l = std::regex_replace(l, precise, "=$1");
    std::smatch m;
    if (dropped_since_insn && !out.empty() && std::regex_match(l, m, state_line) &&
        std::regex_match(out.back(), insn_line)) {
      out.back() = with_state(out.back(), m[2].str());
      dropped_since_insn = false;
      continue;
    }
    if (std::regex_match(l, insn_line)) dropped_since_insn = false;
    out.push_back(l);
  }
  return out;
}

// Whether a kernel line and ours say the same. Two differences are not the log's: an
// ld_imm64 of a map prints the map's kernel address there (map[idx:N] here), and libbpf names
// a global data map after the object ("globals.bss"; ".bss" here). Such lines compare by
// their instruction index, register and state.
bool same_line(std::string k, const std::string &ours) {
  static const std::regex data_map(R"(map=[A-Za-z0-9_]+(\.(bss|data|rodata|kconfig)))");
  static const std::regex ld_imm64(R"(^(\d+: \(18\) r\d+ = )\S+ *(;.*)?$)");
  k = std::regex_replace(k, data_map, "map=$1");
  if (k == ours) return true;
  std::smatch mk, mo;
  return std::regex_match(k, mk, ld_imm64) && std::regex_match(ours, mo, ld_imm64) &&
         mk[1] == mo[1] && mk[2] == mo[2];
}

std::vector<std::string> our_comparable(const std::string &log) {
  std::vector<std::string> out;
  for (const std::string &l : lines(log))
    if (!l.starts_with("processed ")) out.push_back(l);
  return out;
}

// Our verifier on @prog of @object loaded as the kernel loads it (a privileged SYSCALL program),
// logging at @log_level; with @host_cpus, nr_cpu_ids is the host's.
bpf_verifier_result our_verify(const KfuncRegistry &reg, const char *object, const char *prog,
                               u32 log_level, bool host_cpus) {
  LoadOptions lo;
  lo.kfuncs = &reg;
  absl::StatusOr<BpfObject> obj = load_object_file(testing::prog_path(object), lo);
  REQUIRE(obj.ok());
  const int pi = obj->program_index(prog);
  REQUIRE(pi >= 0);
  const BpfProgram &p = obj->progs[(size_t)pi];
  const BpfVerifierInputs in = bpf_verifier_inputs(*obj);
  bpf_verifier_opts o = bpf_verifier_opts_for(*obj, p, in, &bpf_syscall_prog_type());
  o.allow_ptr_leaks = true;
  o.allow_uninit_stack = true;
  o.log_level = log_level;
  if (host_cpus) o.nr_cpu_ids = testing::host_nr_cpu_ids();
  return bpf_check(p.insns, o);
}

// How many leading lines the kernel's log @k and ours agree on (same_line()).
size_t same_prefix(const std::vector<std::string> &k, const std::vector<std::string> &ours) {
  size_t same = 0;
  while (same < k.size() && same < ours.size() && same_line(k[same], ours[same])) same++;
  return same;
}

}  // namespace

TEST_CASE("the level-2 log is the host kernel's, line for line", "[bpfvm][kernel][verifier][log]") {
  KfuncRegistry reg;
  if (!log_diff_ready(reg)) return;
  // whole: the logs must agree to their last line; else the first min_same lines must (the
  // paths part where this verifier differs, see below).
  struct Case {
    const char *object;
    const char *prog;
    bool whole;
    size_t min_same;
  } cases[] = {
      {"cli_edges", "probe_read", true, 0},
      {"cli_edges", "dead_fp_write", true, 0},
      {"rt_maps", "output_discard", true, 0},
      {"rt_maps", "leak_record", true, 0},
      {"rt_maps", "bad_ctx_read", true, 0},
      {"rt_globals", "write_rodata", true, 0},
      {"map_slots", "tail_target", true, 0},
      // A subprogram call and return, then bpf_loop: the kernel's state after the call prints
      // the registers and slots its precision backtracking scratched.
      {"globals", "prog_a", false, 42},
      // 745 lines of a bounded loop's exploration, to the first state the kernel does not
      // prune and this verifier does (its precision is not the kernel's backtracking).
      {"verifier_loops", "update_const64", false, 745},
  };
  for (const Case &c : cases) {
    const std::string path = testing::prog_path(c.object);
    CAPTURE(c.object, c.prog);
    const bpf_verifier_result r = our_verify(reg, c.object, c.prog, BPF_LOG_LEVEL2, false);
    const std::string klog = kernel_log(path, c.prog, 2);
    REQUIRE(klog.find("processed ") != std::string::npos);
    const std::vector<std::string> k = kernel_comparable(klog), ours = our_comparable(r.log);
    const size_t same = same_prefix(k, ours);
    INFO("first difference at line " << same + 1 << "\n kernel: "
                                     << (same < k.size() ? k[same] : "<end>") << "\n ours:   "
                                     << (same < ours.size() ? ours[same] : "<end>"));
    if (c.whole) {
      CHECK(same == k.size());
      CHECK(same == ours.size());
    } else {
      CHECK(same >= c.min_same);
    }
    // The lines compared hold source lines, instructions and states.
    CHECK(std::count_if(k.begin(), k.end(), [](const std::string &l) { return l.starts_with("; "); }) > 0);
    CHECK(std::count_if(k.begin(), k.end(), [](const std::string &l) {
            return l.find(" ; R") != std::string::npos;
          }) > 0);
  }
}

TEST_CASE("the level-1 log is the host kernel's, line for line", "[bpfvm][kernel][verifier][log]") {
  KfuncRegistry reg;
  if (!log_diff_ready(reg)) return;
  // Level 1 prints the walk as level 2 does but forgets each path that ends safely (exit or
  // pruned): an accepted program's log is the summary alone, a rejected one's is the path to
  // the error with the reason last. verifier_log's programs also hold the kernel's verdicts
  // on a lookup with a constant key (loop_oob, cpu_slot: not NULL) and on a map value indexed
  // by the CPU number (cpu_slot: below the host's CPU count).
  struct Case {
    const char *object;
    const char *prog;
    bool rejected;
  } cases[] = {
      {"cli_edges", "probe_read", false},
      {"rt_maps", "output_discard", false},
      {"rt_maps", "bad_ctx_read", false},  // a SYSCALL context is any size
      {"verifier_log", "accepted", false},
      {"verifier_log", "cpu_slot", false},
      {"rt_maps", "leak_record", true},
      {"rt_globals", "write_rodata", true},
      {"verifier_log", "branch_oob", true},
      {"verifier_log", "loop_oob", true},
      {"verifier_log", "callee_oob", true},
  };
  for (const Case &c : cases) {
    const std::string path = testing::prog_path(c.object);
    CAPTURE(c.object, c.prog);
    const bpf_verifier_result r = our_verify(reg, c.object, c.prog, BPF_LOG_LEVEL1, true);
    CHECK(r.ok() == !c.rejected);
    const std::string klog = kernel_log(path, c.prog, 1);
    REQUIRE(klog.find("processed ") != std::string::npos);
    const std::vector<std::string> k = kernel_comparable(klog), ours = our_comparable(r.log);
    const size_t same = same_prefix(k, ours);
    INFO("kernel log:\n" << klog << "\nours:\n" << r.log);
    INFO("first difference at line " << same + 1 << "\n kernel: "
                                     << (same < k.size() ? k[same] : "<end>") << "\n ours:   "
                                     << (same < ours.size() ? ours[same] : "<end>"));
    CHECK(same == k.size());
    CHECK(same == ours.size());
    if (!c.rejected) {
      CHECK(k.empty());
      continue;
    }
    // A rejected program's log: source lines and instructions of the path, the reason last,
    // no line of a path that ended safely.
    REQUIRE_FALSE(ours.empty());
    CHECK(r.error.ends_with(ours.back()));
    CHECK(std::count_if(ours.begin(), ours.end(), [](const std::string &l) { return l.starts_with("; "); }) > 0);
    CHECK(std::none_of(ours.begin(), ours.end(), [](const std::string &l) {
      return l.find(": safe") != std::string::npos;
    }));
  }
}
