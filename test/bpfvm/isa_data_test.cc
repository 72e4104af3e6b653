// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/isa_data_test.cc: runs every ISA data file of test/bpfvm/data (format in
// test/bpfvm/isa_data.h), and checks that together they exercise every opcode-table row.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>

#include "bpfvm/opcodes.h"
#include "test/bpfvm/isa_data.h"

#ifndef BPFVM_TEST_DATA_DIR
#error "BPFVM_TEST_DATA_DIR must name test/bpfvm/data"
#endif

using namespace umemcg;
using namespace umemcg::emu::test;

namespace {

std::vector<std::string> data_files() {
  std::vector<std::string> files;
  for (const auto &e : std::filesystem::directory_iterator(BPFVM_TEST_DATA_DIR))
    if (e.is_regular_file() && e.path().extension() == ".data") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("ISA data files: each program gives its expected r0 or error", "[bpfvm][isa]") {
  const auto files = data_files();
  REQUIRE(files.size() >= 150);
  size_t passed = 0;
  for (const std::string &path : files) {
    CAPTURE(path);
    IsaDataFile f = load_isa_data_file(path);
    REQUIRE(f.parse_error.empty());
    if (!f.asm_error.empty()) {
      CAPTURE(f.asm_error);
      CHECK(f.asm_error.find(*f.error) != std::string::npos);
      passed += f.asm_error.find(*f.error) != std::string::npos;
      continue;
    }
    bool fast_mismatch = false;
    IsaRunOutcome o = run_isa_program(f.insns, f.mem, &fast_mismatch);
    CAPTURE(o.error);
    if (f.result) {
      CHECK(o.ok);
      CHECK(o.r0 == *f.result);
      CHECK_FALSE(fast_mismatch);
      passed += o.ok && o.r0 == *f.result && !fast_mismatch;
    } else {
      CHECK_FALSE(o.ok);
      CHECK(o.error.find(*f.error) != std::string::npos);
      passed += !o.ok && o.error.find(*f.error) != std::string::npos;
    }
  }
  CHECK(passed == files.size());
  WARN("ISA data files passed: " << passed << " of " << files.size());
}

TEST_CASE("ISA data files exercise every opcode-table row", "[bpfvm][isa]") {
  std::set<int> used;
  for (const std::string &path : data_files()) {
    IsaDataFile f = load_isa_data_file(path);
    for (size_t i = 0; i < f.insns.size(); i++) {
      const bpf_opcode_desc *d = bpf_opcode_decode(f.insns.data(), f.insns.size(), i, nullptr);
      if (!d) continue;
      used.insert(d->id);
      if (bpf_form_of(*d).slots == 2) i++;
    }
  }
  for (const bpf_opcode_desc &d : bpf_opcode_table) {
    CAPTURE(d.name);
    CHECK(used.count(d.id) == 1);
  }
}
