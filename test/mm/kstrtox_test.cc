// SPDX-License-Identifier: GPL-2.0-only
// test/mm/kstrtox_test.cc: kstrtoull(), kstrtoll(), kstrtoint() and simple_strtol().
#include <catch2/catch.hpp>

#include <climits>

#include "mm/cmdline.h"
#include "shim/errno.h"

namespace umemcg {
namespace {

TEST_CASE("kstrtoull: whole string, one trailing newline, base prefixes, overflow",
          "[kstrtox]") {
  unsigned long long v = 7;
  CHECK(kstrtoull("0", 0, &v) == 0);
  CHECK(v == 0);
  CHECK(kstrtoull("42\n", 0, &v) == 0);
  CHECK(v == 42);
  CHECK(kstrtoull("+42", 0, &v) == 0);
  CHECK(v == 42);
  CHECK(kstrtoull("0x1f", 0, &v) == 0);
  CHECK(v == 31);
  CHECK(kstrtoull("017", 0, &v) == 0);
  CHECK(v == 15);
  CHECK(kstrtoull("0x1f", 16, &v) == 0);
  CHECK(v == 31);
  CHECK(kstrtoull("1f", 16, &v) == 0);
  CHECK(v == 31);
  CHECK(kstrtoull("18446744073709551615", 10, &v) == 0);
  CHECK(v == ULLONG_MAX);
  v = 7;
  CHECK(kstrtoull("18446744073709551616", 10, &v) == -ERANGE);
  CHECK(kstrtoull("0x10000000000000000", 0, &v) == -ERANGE);
  CHECK(kstrtoull("", 0, &v) == -EINVAL);
  CHECK(kstrtoull("\n", 0, &v) == -EINVAL);
  CHECK(kstrtoull(" 1", 0, &v) == -EINVAL);  // no leading blanks
  CHECK(kstrtoull("1 ", 0, &v) == -EINVAL);
  CHECK(kstrtoull("1\n\n", 0, &v) == -EINVAL);  // one newline only
  CHECK(kstrtoull("-1", 0, &v) == -EINVAL);
  CHECK(kstrtoull("0x", 0, &v) == -EINVAL);  // octal 0, then 'x'
  CHECK(kstrtoull("08", 0, &v) == -EINVAL);
  CHECK(kstrtoull("++1", 0, &v) == -EINVAL);
  CHECK(v == 7);  // untouched on every error
}

TEST_CASE("kstrtoll and kstrtoint: signs and ranges", "[kstrtox]") {
  long long ll = 7;
  CHECK(kstrtoll("-9223372036854775808", 10, &ll) == 0);
  CHECK(ll == LLONG_MIN);
  CHECK(kstrtoll("9223372036854775807", 10, &ll) == 0);
  CHECK(ll == LLONG_MAX);
  CHECK(kstrtoll("9223372036854775808", 10, &ll) == -ERANGE);
  CHECK(kstrtoll("-9223372036854775809", 10, &ll) == -ERANGE);
  CHECK(kstrtoll("-0x10", 0, &ll) == 0);
  CHECK(ll == -16);
  CHECK(kstrtoll("-", 0, &ll) == -EINVAL);
  CHECK(kstrtoll("-+1", 0, &ll) == -EINVAL);
  CHECK(kstrtoll("+-1", 0, &ll) == -EINVAL);

  int i = 7;
  CHECK(kstrtoint("2147483647", 0, &i) == 0);
  CHECK(i == INT_MAX);
  CHECK(kstrtoint("-2147483648", 0, &i) == 0);
  CHECK(i == INT_MIN);
  CHECK(kstrtoint("2147483648", 0, &i) == -ERANGE);
  CHECK(kstrtoint("-2147483649", 0, &i) == -ERANGE);
  CHECK(kstrtoint("0x1\n", 0, &i) == 0);
  CHECK(i == 1);
  CHECK(kstrtoint("1.0", 0, &i) == -EINVAL);
  CHECK(i == 1);
}

TEST_CASE("simple_strtol: a '-' negates what follows, even nothing", "[kstrtox]") {
  char *end;
  const char *s = "-12x";
  CHECK(simple_strtol(s, &end, 0) == -12);
  CHECK(end == s + 3);
  const char *dash = "-";
  CHECK(simple_strtol(dash, &end, 0) == 0);
  CHECK(end == dash + 1);  // the '-' is consumed
  const char *none = "x";
  CHECK(simple_strtol(none, &end, 0) == 0);
  CHECK(end == none);
  const char *hex = "0x10";
  CHECK(simple_strtol(hex, &end, 0) == 16);
}

}  // namespace
}  // namespace umemcg
