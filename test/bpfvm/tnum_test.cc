// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/tnum_test.cc: tristate numbers and register bound deduction, checked against
// brute force over small value sets.
#include <catch2/catch.hpp>

#include <climits>
#include <random>

#include "bpfvm/tnum.h"
#include "bpfvm/verifier_state.h"

using namespace umemcg;

namespace {

// Every member of t within [0, 256) when t's upper bits are zero.
bool member(tnum t, u64 x) { return (x & ~t.mask) == t.value; }

tnum random_tnum(std::mt19937_64 &rng) {
  const u64 mask = rng() & 0xff;
  return {rng() & 0xff & ~mask, mask};
}

}  // namespace

TEST_CASE("tnum: constants, ranges and printing", "[bpfvm][tnum]") {
  CHECK(tnum_is_const(tnum_const(5)));
  CHECK(tnum_range(0, 255) == tnum{0, 0xff});
  CHECK(tnum_range(16, 31) == tnum{16, 0xf});
  CHECK(tnum_range(7, 7) == tnum_const(7));
  CHECK(tnum_is_unknown(tnum_range(0, ~0ull)));
  CHECK(tnum_str(tnum{0, 0xff}) == "(0x0; 0xff)");
  CHECK(tnum_str(tnum{0, 0}) == "0");
  CHECK(tnum_str(tnum{0x10, 0}) == "0x10");
  CHECK(tnum_in(tnum{0, 0xff}, tnum_const(0x7f)));
  CHECK_FALSE(tnum_in(tnum_const(0x7f), tnum{0, 0xff}));
  CHECK(tnum_is_aligned(tnum{0, 0xf0}, 16));
  CHECK_FALSE(tnum_is_aligned(tnum{0, 0xf8}, 16));
  CHECK(tnum_subreg(tnum_const(0x1234567800000001ull)) == tnum_const(1));
  CHECK(tnum_with_subreg(tnum_const(0xff00000000ull), tnum_const(3)) == tnum_const(0xff00000003ull));
}

TEST_CASE("tnum: operations contain every concrete result (brute force)", "[bpfvm][tnum]") {
  std::mt19937_64 rng(42);
  for (int iter = 0; iter < 300; iter++) {
    const tnum a = random_tnum(rng), b = random_tnum(rng);
    const tnum add = tnum_add(a, b), sub = tnum_sub(a, b), mul = tnum_mul(a, b);
    const tnum band = tnum_and(a, b), bor = tnum_or(a, b), bxor = tnum_xor(a, b);
    for (u64 x = 0; x < 256; x++) {
      if (!member(a, x)) continue;
      for (u64 y = 0; y < 256; y++) {
        if (!member(b, y)) continue;
        REQUIRE(member(add, x + y));
        REQUIRE(member(sub, x - y));
        REQUIRE(member(mul, x * y));
        REQUIRE(member(band, x & y));
        REQUIRE(member(bor, x | y));
        REQUIRE(member(bxor, x ^ y));
      }
      REQUIRE(member(tnum_lshift(a, 3), x << 3));
      REQUIRE(member(tnum_rshift(a, 2), x >> 2));
    }
  }
}

TEST_CASE("bounds: reg_bounds_sync deduces between tnum and 32/64-bit ranges", "[bpfvm][tnum]") {
  bpf_reg_state r;
  __mark_reg_unknown(r);
  r.var_off = tnum{0, 0xff};  // a byte
  reg_bounds_sync(r);
  CHECK(r.umin_value == 0);
  CHECK(r.umax_value == 255);
  CHECK(r.smin_value == 0);
  CHECK(r.smax_value == 255);
  CHECK(r.u32_max_value == 255);
  CHECK(r.s32_max_value == 255);

  __mark_reg_unknown(r);
  r.umin_value = 10;
  r.umax_value = 20;
  reg_bounds_sync(r);
  CHECK(r.smin_value == 10);
  CHECK(r.smax_value == 20);
  CHECK(r.u32_min_value == 10);
  CHECK(r.u32_max_value == 20);
  CHECK(tnum_in(r.var_off, tnum_const(17)));
  CHECK(r.var_off.mask == 0x1f);

  // Signed [-4, 3] covers both ends of the unsigned range: umin/umax stay wide.
  __mark_reg_unknown(r);
  r.smin_value = -4;
  r.smax_value = 3;
  reg_bounds_sync(r);
  CHECK(r.umin_value == 0);
  CHECK(r.umax_value == ~0ull);
  CHECK(r.s32_min_value == -4);
  CHECK(r.s32_max_value == 3);
  CHECK(reg_bounds_sane(r));

  // 32-bit bounds tighten the 64-bit ones when the upper half is known.
  __mark_reg_unknown(r);
  r.umax_value = 0xffffffffull;
  r.u32_max_value = 100;
  reg_bounds_sync(r);
  CHECK(r.umax_value == 100);
}

TEST_CASE("bounds: coerce_reg_to_size and sign extension", "[bpfvm][tnum]") {
  bpf_reg_state r;
  __mark_reg_unknown(r);
  coerce_reg_to_size(r, 2);
  CHECK(r.umax_value == 0xffff);
  CHECK(r.smin_value == 0);
  __mark_reg_unknown(r);
  coerce_reg_to_size_sx(r, 1);
  CHECK(r.smin_value == -128);
  CHECK(r.smax_value == 127);
  __mark_reg_unknown(r);
  __mark_reg_known(r, 0xff);
  coerce_reg_to_size_sx(r, 1);
  CHECK(tnum_equals_const(r.var_off, ~0ull));
}
