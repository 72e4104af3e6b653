// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/isa_data.h: the ISA test data files (test/bpfvm/data/*.data) and how they run.
//
// File format (the bpf_conformance suite's, plus `-- raw` as bytes):
//   -- asm      assembler source (bpfvm/asm.h)
//   -- raw      the program as hex: 16-hex-digit words (0x0000008000000072, one instruction,
//               little-endian, as the conformance suite writes them) or single bytes
//   -- mem      input memory, hex bytes
//   -- result   expected r0 (0x hex or decimal)
//   -- error    expected error: a substring of "<reason> at insn <n>"
//   # comments, blank lines ignored.
// A program runs with r1 = pointer to the memory and r2 = its length, in the checked mode, and,
// when that succeeds, in the fast mode too (both must agree). Helper ids 1, 2, 5, 6 and kfuncs
// (btf_id 42, fd 0) and (btf_id 7, fd 1) are available (see isa_data_test.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bpfvm/insn.h"
#include "bpfvm/interp.h"

namespace umemcg::emu::test {

struct IsaDataFile {
  std::string path;
  std::vector<bpf_insn> insns;
  std::vector<u8> mem;
  std::optional<u64> result;
  std::optional<std::string> error;  // expected error substring
  std::string parse_error;           // non-empty: the file itself is malformed
  std::string asm_error;             // the assembler refused the -- asm text
};

IsaDataFile load_isa_data_file(const std::string &path);

struct IsaRunOutcome {
  bool ok = false;
  u64 r0 = 0;
  std::string error;  // "<reason> at insn <n>"
};

// Prepare + checked run (+ fast run compared against it). *fast_mismatch set if they differ.
IsaRunOutcome run_isa_program(const std::vector<bpf_insn> &insns, std::vector<u8> mem,
                              bool *fast_mismatch);

}  // namespace umemcg::emu::test
