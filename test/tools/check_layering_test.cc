// SPDX-License-Identifier: GPL-2.0-only
// test/tools/check_layering_test.cc: tools/check_layering.py, the include-layering check CI
// runs: the source tree passes; a wrong-way include, direct or through a test helper, fails it
// with a line naming the chain.
#include <catch2/catch.hpp>

#include "test/tools/run_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#ifndef UMEMCG_SOURCE_DIR
#error "UMEMCG_SOURCE_DIR must name the source tree"
#endif

namespace {

namespace fs = std::filesystem;

using Result = umemcg::test::CommandResult;

Result check(const std::string &root) {
  return umemcg::test::run_command(std::string("python3 ") + UMEMCG_SOURCE_DIR +
                                   "/tools/check_layering.py --root " + root);
}

// A scratch tree removed at scope exit.
struct Tree {
  fs::path root;
  Tree() {
    char tmpl[] = "/tmp/umemcg-layering-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    root = tmpl;
  }
  ~Tree() { fs::remove_all(root); }
  void file(const std::string &rel, const std::string &text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  }
};

}  // namespace

TEST_CASE("check_layering: the source tree keeps to its layers") {
  Result r = check(UMEMCG_SOURCE_DIR);
  INFO(r.out);
  CHECK(r.status == 0);
}

TEST_CASE("check_layering: a wrong-way include fails the check") {
  Tree t;
  t.file("shim/a.h", "#pragma once\n#include <vector>\n");
  t.file("kernel/k.h", "#pragma once\n#include \"shim/a.h\"\n");
  t.file("mm/m.h", "#pragma once\n#include \"kernel/k.h\"\n");
  t.file("test/support/env.h", "#pragma once\n#include \"mm/m.h\"\n");
  t.file("test/mm/m_test.cc", "#include \"test/support/env.h\"\n");
  SECTION("the arrows as they should be pass") {
    Result r = check(t.root.string());
    INFO(r.out);
    CHECK(r.status == 0);
  }
  SECTION("kernel/ including mm/") {
    t.file("kernel/bad.cc", "#include \"mm/m.h\"\n");
    Result r = check(t.root.string());
    CHECK(r.status == 1);
    CHECK(r.out.find("kernel/bad.cc: reaches mm/ through mm/m.h") != std::string::npos);
  }
  SECTION("a test of kernel/ reaching mm/ through a test helper") {
    t.file("test/kernel/k_test.cc", "#include \"test/support/env.h\"\n");
    Result r = check(t.root.string());
    CHECK(r.status == 1);
    CHECK(r.out.find("test/kernel/k_test.cc: reaches mm/ through test/support/env.h -> mm/m.h") !=
          std::string::npos);
  }
  SECTION("shim/ including anything of the project") {
    t.file("shim/b.cc", "#include \"bpfvm/x.h\"\n");
    t.file("bpfvm/x.h", "#pragma once\n");
    Result r = check(t.root.string());
    CHECK(r.status == 1);
    CHECK(r.out.find("shim/b.cc: reaches bpfvm/") != std::string::npos);
  }
}
