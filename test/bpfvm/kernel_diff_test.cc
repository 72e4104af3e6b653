// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/kernel_diff_test.cc: differential run of the ISA data programs against the host
// kernel's BPF (target R2): every program that both the kernel (BPF_PROG_LOAD as a socket
// filter, BPF_PROG_TEST_RUN) and the interpreter accept must give the same r0.
//
// Emulation: a socket filter's test-run return value is 32 bits, so the low halves of r0 are
//   compared. Programs that need this runtime's helpers, kfuncs, callx, input memory, or that
//   expect an error are not sent to the kernel; the others get r1 = r2 = 0 prepended in both runs. Where bpf() is refused (no
//   privilege, no CONFIG_BPF_SYSCALL) the test warns and counts everything as skipped.
#include <catch2/catch.hpp>

#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "bpfvm/opcodes.h"
#include "test/bpfvm/isa_data.h"

using namespace umemcg;
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

}  // namespace

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
