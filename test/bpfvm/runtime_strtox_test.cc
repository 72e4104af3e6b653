// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/runtime_strtox_test.cc: bpf_strtol() and bpf_strtoul() through the helper table
// (the kernel's __bpf_strtoull rules: white space, sign, base from flags or prefix, the bytes
// consumed, -EINVAL and -ERANGE leaving the result alone).
#include <catch2/catch.hpp>

#include <climits>
#include <cstring>
#include <string>

#include "bpfvm/helpers_impl.h"
#include "shim/errno.h"

using namespace umemcg;
using namespace umemcg::emu;

namespace {

struct Parsed {
  s64 ret;
  u64 res;
};

Parsed call(u32 id, const std::string &s, u64 flags) {
  u64 res = 0xdeadbeef;
  const u64 r = bpf_helper_table()[id]((u64)(uintptr_t)s.data(), s.size(), flags,
                                       (u64)(uintptr_t)&res, 0);
  return {(s64)r, res};
}
Parsed strtoul_(const std::string &s, u64 flags = 0) { return call(BPF_FUNC_strtoul, s, flags); }
Parsed strtol_(const std::string &s, u64 flags = 0) { return call(BPF_FUNC_strtol, s, flags); }

}  // namespace

TEST_CASE("helpers: bpf_strtoul parses as the kernel's", "[bpfvm][helpers]") {
  Parsed p = strtoul_("  42abc");
  CHECK(p.ret == 4);
  CHECK(p.res == 42);
  p = strtoul_("0x1F", 0);  // base from the prefix
  CHECK(p.ret == 4);
  CHECK(p.res == 31);
  p = strtoul_("0x1F", 16);  // base 16 skips the prefix too
  CHECK(p.ret == 4);
  CHECK(p.res == 31);
  p = strtoul_("017", 0);  // octal
  CHECK(p.ret == 3);
  CHECK(p.res == 15);
  p = strtoul_("0x", 0);  // "0x" without a hex digit: octal 0, one byte
  CHECK(p.ret == 1);
  CHECK(p.res == 0);
  p = strtoul_("12345", 10);
  CHECK(p.ret == 5);
  // The length bounds the parse: no NUL needed.
  p = call(BPF_FUNC_strtoul, "987", 10);
  CHECK(p.res == 987);
  const std::string digits = "123456";
  u64 res = 0;
  CHECK(bpf_helper_table()[BPF_FUNC_strtoul]((u64)(uintptr_t)digits.data(), 2, 10,
                                             (u64)(uintptr_t)&res, 0) == 2);
  CHECK(res == 12);
  // Errors leave *res alone.
  CHECK(strtoul_("-1").ret == -EINVAL);
  CHECK(strtoul_("-1").res == 0xdeadbeef);
  CHECK(strtoul_("abc", 10).ret == -EINVAL);
  CHECK(strtoul_("   ").ret == -EINVAL);
  CHECK(strtoul_("1", 7).ret == -EINVAL);      // not a base
  CHECK(strtoul_("1", 1u << 5).ret == -EINVAL);  // a flag beyond the base
  CHECK(strtoul_("18446744073709551615").res == ULLONG_MAX);
  p = strtoul_("18446744073709551616");
  CHECK(p.ret == -ERANGE);
  CHECK(p.res == 0xdeadbeef);
}

TEST_CASE("helpers: bpf_strtol takes a sign and its range", "[bpfvm][helpers]") {
  Parsed p = strtol_(" -42");
  CHECK(p.ret == 4);
  CHECK((s64)p.res == -42);
  p = strtol_("-0x10");
  CHECK(p.ret == 5);
  CHECK((s64)p.res == -16);
  CHECK((s64)strtol_("9223372036854775807").res == LLONG_MAX);
  CHECK(strtol_("9223372036854775808").ret == -ERANGE);
  CHECK((s64)strtol_("-9223372036854775808").res == LLONG_MIN);
  CHECK(strtol_("-9223372036854775809").ret == -ERANGE);
  CHECK(strtol_("-").ret == -EINVAL);
}
