// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/kernel_diff_test.cc: differential runs against the host kernel's BPF.
//  - ISA data programs (target R2): every program that both the kernel (BPF_PROG_LOAD as a
//    socket filter, BPF_PROG_TEST_RUN) and the interpreter accept must give the same r0.
//  - The verifier: every SYSCALL program of the test/progs objects that the kernel verifies
//    (libbpf loads it alone, with its maps) gets the kernel's verdict here, and when both
//    accept, a processed-instruction count within 1.5x of the kernel's. The agreement and the
//    worst ratio are printed. Both verifiers run as a privileged (root) loader.
//  - The same for a generated corpus of SYSCALL programs: bounded loops that look a key up in
//    a hash map and insert on a miss (the counter in a register or spilled, 32- or 64-bit,
//    values built from the counter or constants, field by field or whole), and loops in a
//    subprogram.
//
// Emulation: a socket filter's test-run return value is 32 bits, so the low halves of r0 are
//   compared. Programs that need this runtime's helpers, kfuncs, callx, input memory, or that
//   expect an error are not sent to the kernel; the others get r1 = r2 = 0 prepended in both runs. Where bpf() is refused (no
//   privilege, no CONFIG_BPF_SYSCALL) the test warns and counts everything as skipped.
#include <catch2/catch.hpp>

#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>

#include "bpfvm/bpf_async.h"
#include "bpfvm/loader.h"
#include "bpfvm/opcodes.h"
#include "bpfvm/verifier_obj.h"
#include "test/bpfvm/isa_data.h"
#include "test/bpfvm/loader_test_util.h"
#include "test/bpfvm/verifier_test_util.h"
#include "test/support/host_libbpf.h"

using namespace umemcg;
using namespace umemcg::emu;
using namespace umemcg::emu::test;

namespace {

long sys_bpf(int cmd, union bpf_attr *attr) {
  return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

// Returns the fd, or -errno.
int kernel_load(const std::vector<bpf_insn> &insns) {
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  static const char license[] = "GPL";
  attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  attr.insn_cnt = (u32)insns.size();
  attr.insns = (u64)(uintptr_t)insns.data();
  attr.license = (u64)(uintptr_t)license;
  int fd = (int)sys_bpf(BPF_PROG_LOAD, &attr);
  return fd < 0 ? -errno : fd;
}

bool kernel_run(int fd, u32 *retval) {
  u8 pkt[64] = {};
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.test.prog_fd = (u32)fd;
  attr.test.data_in = (u64)(uintptr_t)pkt;
  attr.test.data_size_in = sizeof(pkt);
  attr.test.repeat = 1;
  if (sys_bpf(BPF_PROG_TEST_RUN, &attr) < 0) return false;
  *retval = attr.test.retval;
  return true;
}

// Programs that only this runtime can run the same way.
bool portable(const IsaDataFile &f) {
  if (!f.result || !f.mem.empty()) return false;
  for (size_t i = 0; i < f.insns.size(); i++) {
    const bpf_opcode_desc *d = bpf_opcode_decode(f.insns.data(), f.insns.size(), i, nullptr);
    if (!d) return false;
    const bpf_form_desc &fm = bpf_form_of(*d);
    if (fm.kind == bpf_opc::K_CALL && d->id != BPF_OPC_JMP_CALL_LOCAL) return false;
    if (fm.kind == bpf_opc::K_PACKET) return false;
    if (fm.slots == 2) i++;
  }
  return true;
}

// The kernel verifier's outcome for one program of an object file.
struct KernelVerdict {
  bool verified = false;  // the kernel's verifier ran (its log has a "processed" line)
  bool ok = false;
  u32 processed = 0;
  std::string first_error;  // the line before "processed ..." of a rejection
};

// Our verifier against the kernel's over a corpus: how many programs both verified, how many
// got the same verdict, and the worst ratio of processed-instruction counts where both accept.
struct VerdictTally {
  size_t compared = 0, agree = 0, not_verified = 0;
  double worst = 1.0;
  std::string worst_prog;

  // One program both verifiers ran on: the verdicts must agree and, where both accept, the
  // processed counts be within 1.5x of each other. Returns whether the verdicts agree.
  bool add(const std::string &name, const KernelVerdict &k, const bpf_verifier_result &r) {
    compared++;
    CHECK(r.ok() == k.ok);
    if (r.ok() != k.ok) return false;
    agree++;
    if (!k.ok || !k.processed) return true;
    const double ratio = r.insn_processed > k.processed
                             ? (double)r.insn_processed / k.processed
                             : (double)k.processed / std::max<u32>(r.insn_processed, 1);
    CHECK(ratio <= 1.5);
    if (ratio > worst) {
      worst = ratio;
      worst_prog = name;
    }
    return true;
  }

  std::string summary() const {
    std::ostringstream o;
    o << agree << "/" << compared << " same verdict, worst processed ratio " << worst << " ("
      << worst_prog << "), " << not_verified << " not verifiable by the host kernel";
    return o.str();
  }
};

// The error line of a kernel verifier log whose "processed" line starts at @at: the line before
// it, or, when the kernel dumped the two states of an infinite loop after its error ("cur
// state:" and "old state:" lines), the error line before the dump.
std::string kernel_error_line(const std::string &log, size_t at) {
  size_t end = at > 0 ? at - 1 : 0;  // the newline ending the error line
  for (;;) {
    const size_t b = end > 0 ? log.rfind('\n', end - 1) : std::string::npos;
    const size_t from = b == std::string::npos ? 0 : b + 1;
    const std::string line = log.substr(from, end - from);
    if (from == 0 || (line.rfind("cur state:", 0) != 0 && line.rfind("old state:", 0) != 0))
      return line;
    end = from - 1;
  }
}

// Loads raw instructions as a sleepable SYSCALL program; map ld_imm64 (BPF_PSEUDO_MAP_FD) imm
// is an index into map_fds.
KernelVerdict kernel_verify_raw(std::vector<bpf_insn> insns, const std::vector<int> &map_fds) {
  static std::vector<char> logbuf(16u << 20);
  for (bpf_insn &in : insns)
    if (in.code == (BPF_LD | BPF_IMM | BPF_DW) && in.src_reg == BPF_PSEUDO_MAP_FD)
      in.imm = map_fds.at((size_t)in.imm);
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  static const char license[] = "GPL";
  attr.prog_type = BPF_PROG_TYPE_SYSCALL;
  attr.prog_flags = BPF_F_SLEEPABLE;
  attr.insn_cnt = (u32)insns.size();
  attr.insns = (u64)(uintptr_t)insns.data();
  attr.license = (u64)(uintptr_t)license;
  logbuf[0] = 0;
  attr.log_buf = (u64)(uintptr_t)logbuf.data();
  attr.log_size = (u32)logbuf.size();
  attr.log_level = 1;
  const int fd = (int)sys_bpf(BPF_PROG_LOAD, &attr);
  KernelVerdict v;
  if (fd >= 0) close(fd);
  const std::string log(logbuf.data());
  const size_t at = log.rfind("processed ");
  if (at == std::string::npos) return v;
  v.verified = true;
  v.ok = fd >= 0;
  v.processed = (u32)std::strtoul(log.c_str() + at + 10, nullptr, 10);
  if (!v.ok && at > 0) v.first_error = kernel_error_line(log, at);
  return v;
}

// One generated program: a bounded loop over a hash map (see the file comment). The choice
// bits select the variant; n is the trip count.
std::vector<bpf_insn> gen_loop_prog(u32 bits, s32 n) {
  using namespace umemcg::emu::testing;
  const bool alu32 = bits & 1;           // 32-bit counter arithmetic
  const bool spilled = bits & 2;         // the counter lives on the stack between iterations
  const bool var_value = bits & 4;       // the inserted value holds the counter
  const bool halves = bits & 8;          // the value is written as two 32-bit fields
  const bool read_hit = bits & 16;       // a hit reads the value
  const bool in_subprog = bits & 32;     // the loop runs in a subprogram called with n
  Prog body;
  // Loop head: the counter into r6.
  const size_t head = body.size();
  if (spilled) body.push_back(BPF_LDX_MEM(BPF_DW, BPF_REG_6, BPF_REG_10, -24));
  body.push_back(BPF_STX_MEM(BPF_W, BPF_REG_10, BPF_REG_6, -4));
  body.push_back(BPF_MOV64_REG(BPF_REG_2, BPF_REG_10));
  body.push_back(BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4));
  for (bpf_insn in : Prog{BPF_LD_MAP_FD(BPF_REG_1, 0)}) body.push_back(in);
  body.push_back(BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem));
  Prog miss;
  if (halves) {
    miss.push_back(BPF_ST_MEM(BPF_W, BPF_REG_10, -16, 1));
    if (var_value) miss.push_back(BPF_STX_MEM(BPF_W, BPF_REG_10, BPF_REG_6, -12));
    else miss.push_back(BPF_ST_MEM(BPF_W, BPF_REG_10, -12, 2));
  } else {
    miss.push_back(BPF_ST_MEM(BPF_DW, BPF_REG_10, -16, 1));
  }
  if (var_value && !halves) miss.push_back(BPF_STX_MEM(BPF_DW, BPF_REG_10, BPF_REG_6, -16));
  miss.push_back(BPF_MOV64_REG(BPF_REG_2, BPF_REG_10));
  miss.push_back(BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4));
  miss.push_back(BPF_MOV64_REG(BPF_REG_3, BPF_REG_10));
  miss.push_back(BPF_ALU64_IMM(BPF_ADD, BPF_REG_3, -16));
  for (bpf_insn in : Prog{BPF_LD_MAP_FD(BPF_REG_1, 0)}) miss.push_back(in);
  miss.push_back(BPF_MOV64_IMM(BPF_REG_4, 0));
  miss.push_back(BPF_EMIT_CALL(BPF_FUNC_map_update_elem));
  Prog hit;
  if (read_hit) {
    hit.push_back(BPF_LDX_MEM(BPF_W, BPF_REG_1, BPF_REG_0, 4));
    hit.push_back(BPF_ALU64_REG(BPF_ADD, BPF_REG_7, BPF_REG_1));
  }
  // if r0 == 0 goto miss; hit...; goto next; miss...; next:
  body.push_back(BPF_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, (s16)(hit.size() + 1)));
  body.insert(body.end(), hit.begin(), hit.end());
  body.push_back(BPF_JMP_A((s16)miss.size()));
  body.insert(body.end(), miss.begin(), miss.end());
  if (spilled) body.push_back(BPF_LDX_MEM(BPF_DW, BPF_REG_6, BPF_REG_10, -24));
  body.push_back(alu32 ? BPF_ALU32_IMM(BPF_ADD, BPF_REG_6, 1) : BPF_ALU64_IMM(BPF_ADD, BPF_REG_6, 1));
  if (spilled) body.push_back(BPF_STX_MEM(BPF_DW, BPF_REG_10, BPF_REG_6, -24));
  const s16 back = (s16)((s64)head - (s64)body.size() - 1);
  body.push_back(in_subprog ? BPF_JMP_REG(BPF_JLT, BPF_REG_6, BPF_REG_8, back)
                            : (alu32 ? BPF_JMP32_IMM(BPF_JLT, BPF_REG_6, n, back)
                                     : BPF_JMP_IMM(BPF_JLT, BPF_REG_6, n, back)));
  Prog init = {BPF_MOV64_IMM(BPF_REG_6, 0), BPF_MOV64_IMM(BPF_REG_7, 0)};
  if (spilled) init.push_back(BPF_STX_MEM(BPF_DW, BPF_REG_10, BPF_REG_6, -24));
  Prog fin = {BPF_MOV64_REG(BPF_REG_0, BPF_REG_7), BPF_ALU64_IMM(BPF_AND, BPF_REG_0, 1),
              BPF_EXIT_INSN()};
  Prog prog;
  if (in_subprog) {
    // main: call loop(n); exit. The subprogram's bound comes in r1 (a constant: the loop is
    // bounded by exploring it).
    prog = {BPF_MOV64_IMM(BPF_REG_1, n), BPF_CALL_REL(2), BPF_MOV64_IMM(BPF_REG_0, 0),
            BPF_EXIT_INSN()};
    prog.push_back(BPF_MOV64_REG(BPF_REG_8, BPF_REG_1));
  }
  prog.insert(prog.end(), init.begin(), init.end());
  prog.insert(prog.end(), body.begin(), body.end());
  prog.insert(prog.end(), fin.begin(), fin.end());
  return prog;
}

KernelVerdict kernel_verify_prog(const std::string &path, const std::string &prog) {
  static std::vector<char> logbuf(16u << 20);
  KernelVerdict v;
  libbpf_set_print(umemcg::test::libbpf_quiet);
  const std::optional<int> err = umemcg::test::host_load_program(path.c_str(), prog, logbuf, 1);
  if (!err) return v;
  const std::string log(logbuf.data());
  const size_t at = log.rfind("processed ");
  if (at == std::string::npos) return v;
  v.verified = true;
  v.processed = (u32)std::strtoul(log.c_str() + at + 10, nullptr, 10);
  if (at > 0) v.first_error = kernel_error_line(log, at);
  // A load that fails after the verifier accepted the program (libbpf filling a prog-array
  // slot with a program it did not load, map_slots.bpf.o) leaves no error line.
  v.ok = *err == 0 || v.first_error.empty();
  if (v.ok) v.first_error.clear();
  return v;
}

}  // namespace

TEST_CASE("test/progs SYSCALL programs get the host kernel's verdict", "[bpfvm][kernel][verifier]") {
  std::string why;
  if (!umemcg::test::host_bpf_allowed(&why)) {
    WARN("bpf(BPF_PROG_LOAD) refused (" << why << "): kernel verifier differential skipped");
    return;
  }
  KfuncRegistry reg;
  testing::add_memcg_kfuncs(reg);
  // The generic bpf_wq kfuncs (rt_wq.bpf.o): the host kernel has them since 6.10.
  for (KfuncDesc &d : bpf_async_kfuncs()) REQUIRE(reg.add(std::move(d)).ok());
  std::vector<std::string> files;
  for (const auto &e : std::filesystem::directory_iterator(UMEMCG_BPF_PROGS_DIR))
    if (e.path().string().ends_with(".bpf.o")) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  VerdictTally tally;
  size_t unloadable = 0, rejected = 0, same_error = 0;
  // CO-RE against no kernel struct: the test objects' preserve_access_index structs are their
  // own (verifier_core_bitfield.bpf.c), which vmlinux BTF does not have either.
  ProgTypeRegistry no_structs;
  for (const std::string &path : files) {
    LoadOptions lo;
    lo.kfuncs = &reg;
    lo.core_types = &no_structs;
    absl::StatusOr<BpfObject> obj = load_object_file(path, lo);
    if (!obj.ok()) {
      // Objects that need the subsystems' CO-RE layouts or kfuncs (tools' boot): the loader
      // tests cover them.
      unloadable++;
      continue;
    }
    const BpfVerifierInputs in = bpf_verifier_inputs(*obj);
    for (const BpfProgram &p : obj->progs) {
      if (p.prog_type != BPF_PROG_TYPE_SYSCALL) continue;
      const KernelVerdict k = kernel_verify_prog(path, p.name);
      if (!k.verified) {
        tally.not_verified++;
        continue;
      }
      bpf_verifier_opts o = bpf_verifier_opts_for(*obj, p, in, &bpf_syscall_prog_type());
      o.allow_ptr_leaks = true;
      o.allow_uninit_stack = true;
      o.nr_cpu_ids = testing::host_nr_cpu_ids();
      bpf_verifier_result r = bpf_check(p.insns, o);
      bpf_fixup_verifier_log(p, r);
      const std::string name = std::filesystem::path(path).filename().string() + ":" + p.name;
      CAPTURE(name, k.first_error, r.error, k.processed, r.insn_processed);
      if (!tally.add(name, k, r) || k.ok) continue;
      // The kernel's error line (the last before "processed") against ours.
      rejected++;
      const size_t nl = r.error.rfind('\n');
      same_error += (nl == std::string::npos ? r.error : r.error.substr(nl + 1)) == k.first_error;
    }
  }
  WARN("kernel verifier differential (test/progs): " << same_error << "/" << rejected
                                                     << " shared rejections with the kernel's "
                                                        "error line");
  WARN("kernel verifier differential (test/progs): "
       << tally.summary() << ", " << unloadable << " objects not loadable without the subsystems");
  CHECK(tally.compared > 0);
}

TEST_CASE("generated SYSCALL programs get the host kernel's verdict", "[bpfvm][kernel][verifier]") {
  std::string why;
  if (!umemcg::test::host_bpf_allowed(&why)) {
    WARN("bpf(BPF_PROG_LOAD) refused (" << why << "): kernel verifier differential skipped");
    return;
  }
  union bpf_attr ma;
  std::memset(&ma, 0, sizeof(ma));
  ma.map_type = BPF_MAP_TYPE_HASH;
  ma.key_size = 4;
  ma.value_size = 8;
  ma.max_entries = 64;
  const int map_fd = (int)sys_bpf(BPF_MAP_CREATE, &ma);
  REQUIRE(map_fd >= 0);
  std::vector<bpf_verifier_map> maps(1);
  maps[0].name = "vals";
  maps[0].map_type = BPF_MAP_TYPE_HASH;
  maps[0].key_size = 4;
  maps[0].value_size = 8;
  maps[0].max_entries = 64;
  VerdictTally tally;
  for (u32 bits = 0; bits < 64; bits++) {
    for (s32 n : {1, 7, 32}) {
      const std::vector<bpf_insn> prog = gen_loop_prog(bits, n);
      const KernelVerdict k = kernel_verify_raw(prog, {map_fd});
      if (!k.verified) {
        tally.not_verified++;
        continue;
      }
      bpf_verifier_opts o;
      o.prog_type = &bpf_syscall_prog_type();
      o.sleepable = true;
      o.maps = maps;
      o.allow_ptr_leaks = true;
      o.allow_uninit_stack = true;
      const bpf_verifier_result r = bpf_check(prog, o);
      const std::string name = "loop bits " + std::to_string(bits) + " n " + std::to_string(n);
      CAPTURE(name, k.first_error, r.error, k.processed, r.insn_processed);
      tally.add(name, k, r);
    }
  }
  close(map_fd);
  WARN("kernel verifier differential (generated): " << tally.summary());
  CHECK(tally.compared > 0);
}

TEST_CASE("ISA data programs give the host kernel's r0", "[bpfvm][kernel]") {
  std::vector<bpf_insn> probe = {bpf_raw_insn(0xb7, 0, 0, 0, 0), bpf_raw_insn(0x95, 0, 0, 0, 0)};
  int pfd = kernel_load(probe);
  if (pfd < 0) {
    WARN("bpf(BPF_PROG_LOAD) refused (" << std::strerror(-pfd) << "): kernel differential skipped");
    return;
  }
  close(pfd);

  std::vector<std::string> files;
  for (const auto &e : std::filesystem::directory_iterator(BPFVM_TEST_DATA_DIR))
    if (e.path().extension() == ".data") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  size_t compared = 0, kernel_rejected = 0, not_portable = 0;
  for (const std::string &path : files) {
    IsaDataFile f = load_isa_data_file(path);
    if (!f.parse_error.empty() || !f.asm_error.empty() || !portable(f)) {
      not_portable++;
      continue;
    }
    // r1/r2 are the input memory here but the skb in the kernel: both runs get a program that
    // starts with r1 = r2 = 0 (files with input memory are not portable).
    std::vector<bpf_insn> prog = {bpf_raw_insn(0xb7, 1, 0, 0, 0), bpf_raw_insn(0xb7, 2, 0, 0, 0)};
    prog.insert(prog.end(), f.insns.begin(), f.insns.end());
    bool mismatch = false;
    IsaRunOutcome ours = run_isa_program(prog, f.mem, &mismatch);
    if (!ours.ok) continue;  // the ISA test itself reports this
    int fd = kernel_load(prog);
    if (fd < 0) {
      kernel_rejected++;
      continue;
    }
    u32 retval = 0;
    bool ran = kernel_run(fd, &retval);
    close(fd);
    CAPTURE(path);
    REQUIRE(ran);
    CHECK(retval == (u32)ours.r0);
    compared++;
  }
  WARN("kernel differential: " << compared << " programs compared, " << kernel_rejected
                               << " rejected by the kernel verifier, " << not_portable
                               << " not portable (skipped)");
  CHECK(compared > 0);
}
