// SPDX-License-Identifier: GPL-2.0-only
// test/mm/page_counter_test.cc: struct page_counter layout, init, charge, try_charge, cancel,
// uncharge, watermarks and set_max (single-threaded; races are in page_counter_race_test.cc).
#include <catch2/catch.hpp>

#include "test/mm/warn_scope.h"  // first: see the WARN note there

#include <cstddef>
#include <string>

#include "mm/page_counter.h"
#include "test/mm/page_counter_fixtures.h"

namespace umemcg {
namespace {

using test::Chain3;
using test::usage_of;
using test::WarnScope;

TEST_CASE("page_counter: usage alone on its line, three cache-line groups", "[page_counter]") {
  WarnScope ws;
  CHECK(alignof(page_counter) == SMP_CACHE_BYTES);
  CHECK(offsetof(page_counter, usage) == 0);
  CHECK(offsetof(page_counter, emin) == SMP_CACHE_BYTES);
  CHECK(offsetof(page_counter, failcnt) == SMP_CACHE_BYTES + 8 * sizeof(long));
  CHECK(offsetof(page_counter, protection_support) == 3 * SMP_CACHE_BYTES);
  CHECK(offsetof(page_counter, stock) < 4 * SMP_CACHE_BYTES);
  CHECK(sizeof(page_counter) == 4 * SMP_CACHE_BYTES);
  ws.expect(0);
}

TEST_CASE("PAGE_COUNTER_MAX is LONG_MAX / PAGE_SIZE on 64-bit", "[page_counter]") {
  WarnScope ws;
  CHECK(PAGE_COUNTER_MAX == 2251799813685247UL);
  ws.expect(0);
}

TEST_CASE("page_counter_init sets usage, max, parent and flags, and nothing else",
          "[page_counter]") {
  WarnScope ws;
  page_counter parent, c;
  CHECK(c.stock == nullptr);
  c.high = 5;
  c.min = 6;
  c.watermark = 7;
  c.failcnt = 3;
  c.track_failcnt = true;
  atomic_long_set(&c.usage, 9);
  WRITE_ONCE(c.max, 1UL);

  page_counter_init(&c, &parent, true);
  CHECK(usage_of(c) == 0);
  CHECK(c.max == PAGE_COUNTER_MAX);
  CHECK(c.parent == &parent);
  CHECK(c.protection_support);
  CHECK_FALSE(c.track_failcnt);
  // Left alone, as the kernel does (it relies on the zeroed allocation).
  CHECK(c.high == 5);
  CHECK(c.min == 6);
  CHECK(c.watermark == 7);
  CHECK(c.failcnt == 3);
  CHECK(c.stock == nullptr);

  page_counter_init(&c, nullptr, false);
  CHECK(c.parent == nullptr);
  CHECK_FALSE(c.protection_support);
  ws.expect(0);
}

TEST_CASE("page_counter_charge walks to the root, ignores max, never counts failcnt",
          "[page_counter]") {
  WarnScope ws;
  Chain3 t;
  t.leaf.track_failcnt = true;
  REQUIRE(page_counter_set_max(&t.mid, 5) == 0);

  page_counter_charge(&t.leaf, 10);
  CHECK(page_counter_read(&t.leaf) == 10);
  CHECK(page_counter_read(&t.mid) == 10);  // above its max of 5: a forced charge
  CHECK(page_counter_read(&t.root) == 10);
  CHECK(t.mid.failcnt == 0);
  CHECK(t.mid.watermark == 10);
  CHECK(t.mid.local_watermark == 10);
  CHECK(t.root.watermark == 10);

  page_counter_charge(&t.mid, 2);  // charging a middle counter leaves the leaf alone
  CHECK(page_counter_read(&t.leaf) == 10);
  CHECK(page_counter_read(&t.mid) == 12);
  CHECK(page_counter_read(&t.root) == 12);
  ws.expect(0);
}

TEST_CASE("page_counter_try_charge: usage == max is allowed, max + 1 is not", "[page_counter]") {
  WarnScope ws;
  page_counter c;
  page_counter_init(&c, nullptr, false);
  REQUIRE(page_counter_set_max(&c, 10) == 0);

  page_counter *fail = nullptr;
  CHECK(page_counter_try_charge(&c, 10, &fail));
  CHECK(fail == nullptr);  // untouched on success
  CHECK(page_counter_read(&c) == 10);

  CHECK_FALSE(page_counter_try_charge(&c, 1, &fail));
  CHECK(fail == &c);
  CHECK(page_counter_read(&c) == 10);

  page_counter_uncharge(&c, 1);
  fail = nullptr;
  CHECK(page_counter_try_charge(&c, 1, &fail));
  CHECK(page_counter_read(&c) == 10);

  // max == 0: a zero-page charge is allowed (0 > 0 is false), one page is not.
  page_counter z;
  page_counter_init(&z, nullptr, false);
  REQUIRE(page_counter_set_max(&z, 0) == 0);
  CHECK(page_counter_try_charge(&z, 0, &fail));
  CHECK_FALSE(page_counter_try_charge(&z, 1, &fail));
  CHECK(fail == &z);
  ws.expect(0);
}

TEST_CASE("page_counter_try_charge rolls back only the levels below the failing one",
          "[page_counter]") {
  WarnScope ws;
  page_counter *fail = nullptr;

  SECTION("failure in the middle") {
    Chain3 t;
    REQUIRE(page_counter_set_max(&t.mid, 10) == 0);
    REQUIRE(page_counter_try_charge(&t.leaf, 8, &fail));

    CHECK_FALSE(page_counter_try_charge(&t.leaf, 5, &fail));
    CHECK(fail == &t.mid);
    CHECK(page_counter_read(&t.leaf) == 8);  // charged to 13, then cancelled
    CHECK(page_counter_read(&t.mid) == 8);   // speculative add undone once, not cancelled again
    CHECK(page_counter_read(&t.root) == 8);  // never reached
  }
  SECTION("failure at the root") {
    Chain3 t;
    REQUIRE(page_counter_set_max(&t.root, 10) == 0);
    REQUIRE(page_counter_try_charge(&t.leaf, 8, &fail));

    CHECK_FALSE(page_counter_try_charge(&t.leaf, 3, &fail));
    CHECK(fail == &t.root);
    CHECK(page_counter_read(&t.leaf) == 8);
    CHECK(page_counter_read(&t.mid) == 8);
    CHECK(page_counter_read(&t.root) == 8);
  }
  SECTION("failure at the leaf") {
    Chain3 t;
    REQUIRE(page_counter_set_max(&t.leaf, 9) == 0);
    REQUIRE(page_counter_try_charge(&t.leaf, 8, &fail));

    CHECK_FALSE(page_counter_try_charge(&t.leaf, 2, &fail));
    CHECK(fail == &t.leaf);
    CHECK(page_counter_read(&t.leaf) == 8);
    CHECK(page_counter_read(&t.mid) == 8);
    CHECK(page_counter_read(&t.root) == 8);
    CHECK(t.leaf.watermark == 8);  // the failing level's watermarks are not touched
    CHECK(t.mid.watermark == 8);
  }
  ws.expect(0);
}

TEST_CASE("a failed try_charge leaves the watermarks below the failing level raised",
          "[page_counter]") {
  WarnScope ws;
  Chain3 t;
  page_counter *fail = nullptr;
  REQUIRE(page_counter_set_max(&t.mid, 10) == 0);
  REQUIRE(page_counter_try_charge(&t.leaf, 8, &fail));

  CHECK_FALSE(page_counter_try_charge(&t.leaf, 5, &fail));
  REQUIRE(fail == &t.mid);
  CHECK(page_counter_read(&t.leaf) == 8);
  CHECK(t.leaf.watermark == 13);  // memory.peak raised by a charge that failed
  CHECK(t.leaf.local_watermark == 13);
  CHECK(t.mid.watermark == 8);  // the failing level never passed its check
  CHECK(t.mid.local_watermark == 8);
  CHECK(t.root.watermark == 8);
  ws.expect(0);
}

TEST_CASE("failcnt counts only when the charged leaf has track_failcnt (v1)", "[page_counter]") {
  WarnScope ws;
  page_counter *fail = nullptr;
  Chain3 t;
  REQUIRE(page_counter_set_max(&t.mid, 4) == 0);

  SECTION("v2: leaf does not track, even if the failing level has the flag") {
    t.mid.track_failcnt = true;
    CHECK_FALSE(page_counter_try_charge(&t.leaf, 5, &fail));
    CHECK(t.mid.failcnt == 0);
  }
  SECTION("v1: leaf tracks, the failing level counts, even without its own flag") {
    t.leaf.track_failcnt = true;
    CHECK_FALSE(page_counter_try_charge(&t.leaf, 5, &fail));
    CHECK_FALSE(page_counter_try_charge(&t.leaf, 6, &fail));
    CHECK(t.mid.failcnt == 2);
    CHECK(t.leaf.failcnt == 0);  // only the failing level counts
    CHECK(t.root.failcnt == 0);
    CHECK(page_counter_try_charge(&t.leaf, 4, &fail));
    CHECK(t.mid.failcnt == 2);  // successes never count
  }
  ws.expect(0);
}

TEST_CASE("watermark and local_watermark: the global peak and the resettable one",
          "[page_counter]") {
  WarnScope ws;
  page_counter c;
  page_counter_init(&c, nullptr, false);

  page_counter_charge(&c, 20);
  page_counter_uncharge(&c, 15);
  CHECK(c.watermark == 20);
  CHECK(c.local_watermark == 20);

  // What a cgroup-v2 memory.peak write does: restart the local peak from the current usage.
  WRITE_ONCE(c.local_watermark, page_counter_read(&c));
  page_counter_charge(&c, 3);
  CHECK(c.local_watermark == 8);
  CHECK(c.watermark == 20);
  page_counter *fail = nullptr;
  REQUIRE(page_counter_try_charge(&c, 15, &fail));
  CHECK(c.local_watermark == 23);
  CHECK(c.watermark == 23);

  // The watermark check is nested inside the local one (valid because watermark >=
  // local_watermark): break the invariant on purpose and the global peak is not looked at.
  WRITE_ONCE(c.watermark, 0UL);
  page_counter_uncharge(&c, 3);
  page_counter_charge(&c, 2);  // 22 <= local 23
  CHECK(c.watermark == 0);
  page_counter_charge(&c, 5);  // 27 > local 23
  CHECK(c.local_watermark == 27);
  CHECK(c.watermark == 27);

  // Uncharging never lowers a peak.
  page_counter_uncharge(&c, 27);
  CHECK(c.watermark == 27);
  CHECK(c.local_watermark == 27);
  ws.expect(0);
}

TEST_CASE("page_counter_reset_watermark restarts both peaks from the usage", "[page_counter]") {
  WarnScope ws;
  page_counter c;
  page_counter_init(&c, nullptr, false);
  page_counter_charge(&c, 20);
  page_counter_uncharge(&c, 15);

  page_counter_reset_watermark(&c);
  CHECK(c.watermark == 5);
  CHECK(c.local_watermark == 5);
  page_counter_charge(&c, 1);
  CHECK(c.watermark == 6);
  CHECK(c.local_watermark == 6);
  ws.expect(0);
}

TEST_CASE("page_counter_cancel: underflow warns once per boot and clamps to 0", "[page_counter]") {
  WarnScope ws(/*quiet=*/true);
  page_counter c;
  page_counter_init(&c, nullptr, false);
  page_counter_charge(&c, 3);

  page_counter_cancel(&c, 5);
  CHECK(page_counter_read(&c) == 0);
  CHECK(ws.count() == 1);
  CHECK(emu::last_warning().find("page_counter underflow: -2 nr_pages=5") != std::string::npos);

  page_counter_cancel(&c, 4);  // WARN_ONCE: clamps again, no second report
  CHECK(page_counter_read(&c) == 0);
  CHECK(ws.count() == 1);

  page_counter_charge(&c, 1);  // counting resumes from the clamp
  CHECK(page_counter_read(&c) == 1);
  ws.expect(1);
}

TEST_CASE("page_counter_uncharge clamps each level independently", "[page_counter]") {
  WarnScope ws(/*quiet=*/true);
  Chain3 t;
  page_counter other;
  page_counter_init(&other, &t.mid, false);
  page_counter_charge(&other, 7);  // mid and root: 7
  page_counter_charge(&t.leaf, 3);  // leaf 3, mid and root: 10

  page_counter_uncharge(&t.leaf, 5);
  CHECK(page_counter_read(&t.leaf) == 0);  // -2, clamped
  CHECK(page_counter_read(&t.mid) == 5);
  CHECK(page_counter_read(&t.root) == 5);
  CHECK(emu::last_warning().find("page_counter underflow: -2 nr_pages=5") != std::string::npos);

  page_counter_uncharge(&other, 7);
  CHECK(page_counter_read(&other) == 0);
  CHECK(page_counter_read(&t.mid) == 0);  // -2, clamped (same WARN_ONCE site: no new report)
  CHECK(page_counter_read(&t.root) == 0);
  ws.expect(1);
}

TEST_CASE("page_counter_set_max: -EBUSY below usage, limit unchanged", "[page_counter]") {
  WarnScope ws;
  page_counter c;
  page_counter_init(&c, nullptr, false);
  page_counter_charge(&c, 10);

  CHECK(page_counter_set_max(&c, 9) == -EBUSY);
  CHECK(c.max == PAGE_COUNTER_MAX);
  CHECK(page_counter_set_max(&c, 10) == 0);  // usage == limit is fine
  CHECK(c.max == 10);
  CHECK(page_counter_set_max(&c, 0) == -EBUSY);
  CHECK(c.max == 10);
  CHECK(page_counter_set_max(&c, 100) == 0);
  CHECK(c.max == 100);
  CHECK(page_counter_set_max(&c, PAGE_COUNTER_MAX) == 0);
  CHECK(c.max == PAGE_COUNTER_MAX);
  ws.expect(0);
}

// set_max race-window hook: a charge that "happened" between the xchg of max and the re-read of
// usage, as a charger that had read the old max would produce.
struct SetMaxRace {
  static inline int calls = 0;
  static inline unsigned long charge_on_first_call = 0;
  static inline unsigned long max_seen_first_call = 0;
  static void hook(page_counter *c) {
    if (calls++ == 0) {
      max_seen_first_call = c->max;
      if (charge_on_first_call) page_counter_charge(c, charge_on_first_call);
    }
  }
  explicit SetMaxRace(unsigned long charge) {
    calls = 0;
    charge_on_first_call = charge;
    max_seen_first_call = 0;
    emu::set_page_counter_set_max_hook(&hook);
  }
  ~SetMaxRace() { emu::set_page_counter_set_max_hook(nullptr); }
};

TEST_CASE("page_counter_set_max retries when usage grew in the race window", "[page_counter]") {
  WarnScope ws;
  page_counter c;
  page_counter_init(&c, nullptr, false);
  page_counter_charge(&c, 5);

  SECTION("growth that still fits: restore, retry, then succeed") {
    SetMaxRace race(2);
    CHECK(page_counter_set_max(&c, 10) == 0);
    CHECK(SetMaxRace::calls == 2);  // one retry
    CHECK(SetMaxRace::max_seen_first_call == 10);
    CHECK(c.max == 10);
    CHECK(page_counter_read(&c) == 7);
  }
  SECTION("growth past the new limit: the old limit is put back and -EBUSY") {
    SetMaxRace race(10);
    CHECK(page_counter_set_max(&c, 10) == -EBUSY);
    CHECK(SetMaxRace::calls == 1);  // the retry stopped at the usage check
    CHECK(c.max == PAGE_COUNTER_MAX);
    CHECK(page_counter_read(&c) == 15);
  }
  SECTION("raising the limit: growth does not matter, no retry") {
    REQUIRE(page_counter_set_max(&c, 20) == 0);
    SetMaxRace race(10);
    CHECK(page_counter_set_max(&c, 30) == 0);
    CHECK(SetMaxRace::calls == 1);
    CHECK(c.max == 30);
  }
  SECTION("no growth: no retry") {
    SetMaxRace race(0);
    CHECK(page_counter_set_max(&c, 6) == 0);
    CHECK(SetMaxRace::calls == 1);
    CHECK(c.max == 6);
  }
  ws.expect(0);
}

TEST_CASE("page_counter_set_high is a plain store with no effect on charging",
          "[page_counter]") {
  WarnScope ws;
  Chain3 t(true);
  page_counter_set_high(&t.mid, 3);
  CHECK(t.mid.high == 3);
  page_counter *fail = nullptr;
  CHECK(page_counter_try_charge(&t.leaf, 10, &fail));  // high is not a limit here
  CHECK(page_counter_read(&t.mid) == 10);
  CHECK(test::children_min_of(t.root) == 0);
  ws.expect(0);
}

}  // namespace
}  // namespace umemcg
