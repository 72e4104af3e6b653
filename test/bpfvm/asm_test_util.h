// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/asm_test_util.h: a program written in bpfvm's assembler (bpfvm/asm.h) for a test;
// the test fails where the text does not assemble. Include after Catch2.
#pragma once

#include <vector>

#include "bpfvm/asm.h"

namespace umemcg::emu::testing {

inline std::vector<bpf_insn> assemble(const char *src) {
  auto p = bpf_assemble(src);
  INFO(p.status().message());
  REQUIRE(p.ok());
  return *p;
}

}  // namespace umemcg::emu::testing
