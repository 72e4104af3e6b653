// SPDX-License-Identifier: GPL-2.0-only
// test/mm/memparse_test.cc: memparse(), simple_strtoull() and page_counter_memparse().
#include <catch2/catch.hpp>

#include "test/mm/warn_scope.h"  // first: see the WARN note there

#include <cerrno>
#include <string>

#include "mm/cmdline.h"
#include "mm/page_counter.h"

namespace umemcg {
namespace {

using test::WarnScope;

constexpr unsigned long kUntouched = 12345;

// page_counter_memparse() with the memcg token "max"; returns the error or the page count.
struct Parsed {
  int err;
  unsigned long pages;
};
Parsed parse(const char *buf, const char *max_token = "max") {
  unsigned long pages = kUntouched;
  int err = page_counter_memparse(buf, max_token, &pages);
  return {err, pages};
}

TEST_CASE("page_counter_memparse: the max token, exactly", "[memparse]") {
  WarnScope ws;
  CHECK(parse("max").err == 0);
  CHECK(parse("max").pages == PAGE_COUNTER_MAX);
  CHECK(parse("Max").err == -EINVAL);   // case-sensitive ('M' is consumed, 'a' is left over)
  CHECK(parse("MAX").err == -EINVAL);
  CHECK(parse("max\n").err == -EINVAL);  // the caller strips whitespace, not this function
  CHECK(parse(" max").err == -EINVAL);
  CHECK(parse("maximum").err == -EINVAL);
  // hugetlb's token is "-1", which memparse alone would reject.
  CHECK(parse("-1", "-1").err == 0);
  CHECK(parse("-1", "-1").pages == PAGE_COUNTER_MAX);
  CHECK(parse("max", "-1").err == -EINVAL);
  ws.expect(0);
}

TEST_CASE("page_counter_memparse: rejects what memparse does not consume, output untouched",
          "[memparse]") {
  WarnScope ws;
  for (const char *bad : {"1.5G", "-1", "10KB", "+1", " 1", "1 ", "1\n", "abc", "0x", "0xg",
                          "08", "09K", "1KK", "0b101", "1Ki", "1B"}) {
    INFO("input: \"" << bad << "\"");
    Parsed p = parse(bad);
    CHECK(p.err == -EINVAL);
    CHECK(p.pages == kUntouched);
  }
  unsigned long pages = kUntouched;
  CHECK(page_counter_memparse(nullptr, "max", &pages) == -EINVAL);
  CHECK(page_counter_memparse("1", nullptr, &pages) == -EINVAL);
  CHECK(pages == kUntouched);
  ws.expect(0);
}

TEST_CASE("page_counter_memparse: bytes rounded down to pages", "[memparse]") {
  WarnScope ws;
  CHECK(parse("").err == 0);  // nothing to parse and nothing left over: 0
  CHECK(parse("").pages == 0);
  CHECK(parse("0").pages == 0);
  CHECK(parse("4095").pages == 0);
  CHECK(parse("4096").pages == 1);
  CHECK(parse("8191").pages == 1);
  CHECK(parse("8192").pages == 2);
  CHECK(parse("5k").pages == 1);  // 5120 bytes
  CHECK(parse("1K").pages == 0);  // 1024 bytes
  CHECK(parse("K").err == 0);     // a suffix with no digits is 0 bytes
  CHECK(parse("K").pages == 0);
  ws.expect(0);
}

TEST_CASE("page_counter_memparse: K M G T P E in both cases, x1024 each", "[memparse]") {
  WarnScope ws;
  struct Case {
    const char *lower, *upper;
    unsigned long pages;
  };
  for (const Case &c : {Case{"4k", "4K", 1UL}, Case{"1m", "1M", 256UL},
                        Case{"1g", "1G", 1UL << 18}, Case{"1t", "1T", 1UL << 28},
                        Case{"1p", "1P", 1UL << 38}, Case{"1e", "1E", 1UL << 48},
                        Case{"7e", "7E", 7UL << 48}}) {
    INFO(c.lower << " / " << c.upper);
    CHECK(parse(c.lower).err == 0);
    CHECK(parse(c.lower).pages == c.pages);
    CHECK(parse(c.upper).err == 0);
    CHECK(parse(c.upper).pages == c.pages);
  }
  ws.expect(0);
}

TEST_CASE("page_counter_memparse: base 0 (hex and octal)", "[memparse]") {
  WarnScope ws;
  CHECK(parse("0x2000").pages == 2);
  CHECK(parse("0X2000").pages == 2);
  CHECK(parse("0x10K").pages == 4);   // hex digits, then the suffix
  CHECK(parse("0x10").pages == 0);    // 16 bytes
  CHECK(parse("020K").pages == 4);    // octal 16 KiB (decimal would be 5 pages)
  CHECK(parse("010").pages == 0);     // 8 bytes
  CHECK(parse("0").err == 0);
  ws.expect(0);
}

TEST_CASE("page_counter_memparse: clamps to PAGE_COUNTER_MAX; overflow wraps", "[memparse]") {
  WarnScope ws;
  const unsigned long long limit_bytes = (unsigned long long)PAGE_COUNTER_MAX * PAGE_SIZE;
  std::string at = std::to_string(limit_bytes);
  std::string below = std::to_string(limit_bytes - 1);
  CHECK(parse(at.c_str()).pages == PAGE_COUNTER_MAX);  // reads back as "max"
  CHECK(parse(below.c_str()).pages == PAGE_COUNTER_MAX - 1);
  CHECK(parse("8E").pages == PAGE_COUNTER_MAX);  // 2^63 bytes
  CHECK(parse("18446744073709551615").pages == PAGE_COUNTER_MAX);
  // Silent wrap-around, no error: 2^64 is 0.
  CHECK(parse("16E").err == 0);
  CHECK(parse("16E").pages == 0);
  CHECK(parse("18446744073709551616").err == 0);
  CHECK(parse("18446744073709551616").pages == 0);
  ws.expect(0);
}

TEST_CASE("memparse: value and end pointer", "[memparse]") {
  WarnScope ws;
  char *end = nullptr;
  const char *s = "12Kxyz";
  CHECK(memparse(s, &end) == 12 * 1024);
  CHECK(end == s + 3);

  s = "1.5G";
  CHECK(memparse(s, &end) == 1);
  CHECK(end == s + 1);

  s = "0x1e";  // 'e' is a hex digit here, not the exabyte suffix
  CHECK(memparse(s, &end) == 30);
  CHECK(*end == '\0');

  s = "1e";
  CHECK(memparse(s, &end) == 1ULL << 60);
  CHECK(*end == '\0');

  s = "-1";
  CHECK(memparse(s, &end) == 0);
  CHECK(end == s);

  s = "0x";  // "0x" needs a hex digit to mean hex: octal 0, stop at 'x'
  CHECK(memparse(s, &end) == 0);
  CHECK(end == s + 1);

  CHECK(memparse("3m", nullptr) == 3ULL << 20);  // retptr is optional
  ws.expect(0);
}

TEST_CASE("simple_strtoull: explicit bases", "[memparse]") {
  WarnScope ws;
  char *end = nullptr;
  const char *s = "0x1f";
  CHECK(simple_strtoull(s, &end, 16) == 31);
  CHECK(*end == '\0');
  CHECK(simple_strtoull("1f", &end, 16) == 31);
  CHECK(simple_strtoull(s, &end, 10) == 0);  // no prefix handling in base 10
  CHECK(end == s + 1);
  CHECK(simple_strtoull("777", &end, 8) == 511);
  CHECK(simple_strtoull("778", &end, 8) == 63);
  CHECK(*end == '8');
  ws.expect(0);
}

}  // namespace
}  // namespace umemcg
