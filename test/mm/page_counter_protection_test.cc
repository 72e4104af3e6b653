// SPDX-License-Identifier: GPL-2.0-only
// test/mm/page_counter_protection_test.cc: min/low usage propagation and effective protection.
// Every expected number is computed by hand in the comment beside it.
#include <catch2/catch.hpp>

#include "test/mm/warn_scope.h"  // first: see the WARN note there

#include "mm/page_counter.h"
#include "mm/page_counter_internal.h"
#include "test/mm/page_counter_fixtures.h"

namespace umemcg {
namespace {

using test::Chain3;
using test::children_low_of;
using test::children_min_of;
using test::low_usage_of;
using test::min_usage_of;
using test::WarnScope;

// root <- p <- {a, b, c}
struct Family {
  page_counter root, p, a, b, c;
  explicit Family(bool protection = true) {
    page_counter_init(&root, nullptr, protection);
    page_counter_init(&p, &root, protection);
    page_counter_init(&a, &p, protection);
    page_counter_init(&b, &p, protection);
    page_counter_init(&c, &p, protection);
  }
};

// The min protection usage on the way up from a: a's min_usage and p's children_min_usage are
// @leaf, p's min_usage and the root's children_min_usage are @parent.
void check_min_path(const Family &f, long leaf, long parent) {
  CHECK(min_usage_of(f.a) == leaf);
  CHECK(children_min_of(f.p) == leaf);
  CHECK(min_usage_of(f.p) == parent);
  CHECK(children_min_of(f.root) == parent);
}

TEST_CASE("children_min_usage / children_low_usage sum min(usage, setting); deltas go down too",
          "[page_counter][protection]") {
  WarnScope ws;
  Family f;
  page_counter_set_min(&f.a, 10);
  page_counter_set_min(&f.b, 20);
  page_counter_set_low(&f.a, 7);
  page_counter_set_low(&f.b, 3);
  CHECK(children_min_of(f.p) == 0);  // no usage yet

  page_counter_charge(&f.a, 5);
  CHECK(min_usage_of(f.a) == 5);   // min(5, 10)
  CHECK(low_usage_of(f.a) == 5);   // min(5, 7)
  CHECK(children_min_of(f.p) == 5);
  CHECK(children_low_of(f.p) == 5);

  page_counter_charge(&f.b, 50);
  CHECK(min_usage_of(f.b) == 20);  // min(50, 20)
  CHECK(low_usage_of(f.b) == 3);   // min(50, 3)
  CHECK(children_min_of(f.p) == 25);
  CHECK(children_low_of(f.p) == 8);

  page_counter_uncharge(&f.b, 45);   // b: 5
  CHECK(min_usage_of(f.b) == 5);     // delta -15
  CHECK(children_min_of(f.p) == 10);
  CHECK(children_low_of(f.p) == 8);  // min(5, 3) unchanged

  page_counter_uncharge(&f.a, 5);
  page_counter_uncharge(&f.b, 5);
  CHECK(children_min_of(f.p) == 0);
  CHECK(children_low_of(f.p) == 0);
  // p has neither min nor low: nothing ever reached the root.
  CHECK(children_min_of(f.root) == 0);
  CHECK(children_low_of(f.root) == 0);
  ws.expect(0);
}

TEST_CASE("the root never propagates", "[page_counter][protection]") {
  WarnScope ws;
  Family f;
  page_counter_set_min(&f.root, 100);
  page_counter_set_low(&f.root, 100);
  page_counter_charge(&f.a, 30);
  CHECK(page_counter_read(&f.root) == 30);
  CHECK(min_usage_of(f.root) == 0);  // it has no parent to feed
  CHECK(low_usage_of(f.root) == 0);
  ws.expect(0);
}

TEST_CASE("try_charge propagates on the levels that took the charge, not on the failing one",
          "[page_counter][protection]") {
  WarnScope ws;
  Family f;
  page_counter_set_min(&f.a, 100);
  page_counter_set_min(&f.p, 100);
  REQUIRE(page_counter_set_max(&f.p, 10) == 0);
  page_counter *fail = nullptr;

  REQUIRE(page_counter_try_charge(&f.a, 8, &fail));
  check_min_path(f, 8, 8);

  CHECK_FALSE(page_counter_try_charge(&f.a, 5, &fail));
  REQUIRE(fail == &f.p);
  // a: raised to 13, then cancel propagated 8 again; p saw 13 only speculatively and never
  // propagated it.
  check_min_path(f, 8, 8);
  ws.expect(0);
}

TEST_CASE("charge and try_charge test protection_support of the leaf on every level",
          "[page_counter][protection]") {
  WarnScope ws;
  // memory.min 100 on a and p; 30 pages charged to a, then 5 more try-charged.
  auto charge_35 = [](Family &f) {
    page_counter *fail = nullptr;
    page_counter_set_min(&f.a, 100);
    page_counter_set_min(&f.p, 100);
    page_counter_charge(&f.a, 30);
    REQUIRE(page_counter_try_charge(&f.a, 5, &fail));
  };

  SECTION("leaf without support: nothing propagates, even where the parent has it") {
    Family f;
    f.a.protection_support = false;
    charge_35(f);
    check_min_path(f, 0, 0);
  }
  SECTION("leaf with support: every level propagates, even where the parent lacks it") {
    Family f;
    f.p.protection_support = false;
    charge_35(f);
    check_min_path(f, 35, 35);
  }
  ws.expect(0);
}

TEST_CASE("cancel tests protection_support of each counter it visits",
          "[page_counter][protection]") {
  WarnScope ws;

  SECTION("unsupported leaf, supported parent: the parent propagates on uncharge") {
    Family f;
    f.a.protection_support = false;
    page_counter_set_min(&f.p, 100);
    page_counter_charge(&f.b, 50);  // b supports it: p.min_usage = min(50, 100)
    CHECK(min_usage_of(f.p) == 50);
    page_counter_charge(&f.a, 30);  // a does not: p is at 80 but still shows 50
    CHECK(page_counter_read(&f.p) == 80);
    CHECK(min_usage_of(f.p) == 50);

    page_counter_uncharge(&f.a, 10);  // cancel on p checks p's own flag: min(70, 100)
    CHECK(min_usage_of(f.p) == 70);
    CHECK(children_min_of(f.root) == 70);
  }
  SECTION("supported leaf, unsupported parent: only the leaf propagates on uncharge") {
    Family f;
    f.p.protection_support = false;
    page_counter_set_min(&f.a, 100);
    page_counter_set_min(&f.p, 100);
    page_counter_charge(&f.a, 30);  // leaf's flag: both levels propagate
    CHECK(min_usage_of(f.p) == 30);

    page_counter_uncharge(&f.a, 10);
    check_min_path(f, 20, 30);  // p's not updated by cancel
  }
  ws.expect(0);
}

TEST_CASE("set_min and set_low recompute the counter and every ancestor, flag or not",
          "[page_counter][protection]") {
  WarnScope ws;
  Chain3 t(/*protection=*/false);
  page_counter_charge(&t.leaf, 30);

  SECTION("min") {
    page_counter_set_min(&t.mid, 100);
    CHECK(min_usage_of(t.mid) == 30);
    CHECK(children_min_of(t.root) == 30);

    page_counter_charge(&t.leaf, 10);  // no support: mid.min_usage goes stale at 30
    CHECK(min_usage_of(t.mid) == 30);

    page_counter_set_min(&t.leaf, 20);  // refreshes leaf, and mid above it
    CHECK(min_usage_of(t.leaf) == 20);
    CHECK(children_min_of(t.mid) == 20);
    CHECK(min_usage_of(t.mid) == 40);
    CHECK(children_min_of(t.root) == 40);

    page_counter_set_min(&t.leaf, 5);  // lowering: negative delta
    CHECK(children_min_of(t.mid) == 5);
    CHECK(children_low_of(t.mid) == 0);
  }
  SECTION("low") {
    page_counter_set_low(&t.mid, 100);
    CHECK(low_usage_of(t.mid) == 30);
    CHECK(children_low_of(t.root) == 30);

    page_counter_charge(&t.leaf, 10);
    CHECK(low_usage_of(t.mid) == 30);

    page_counter_set_low(&t.leaf, 20);
    CHECK(low_usage_of(t.leaf) == 20);
    CHECK(children_low_of(t.mid) == 20);
    CHECK(low_usage_of(t.mid) == 40);
    CHECK(children_low_of(t.root) == 40);

    page_counter_set_low(&t.leaf, 5);
    CHECK(children_low_of(t.mid) == 5);
    CHECK(children_min_of(t.mid) == 0);
  }
  ws.expect(0);
}

TEST_CASE("effective_protection: each branch by hand", "[page_counter][protection]") {
  WarnScope ws;
  // Overcommit (siblings 110 > parent 100): protected * parent / siblings, multiply first.
  CHECK(effective_protection(60, 140, 80, 100, 110, false) == 54);  // 60*100/110 = 54.5
  CHECK(effective_protection(50, 140, 50, 100, 110, false) == 45);  // 50*100/110 = 45.4
  CHECK(effective_protection(60, 140, 80, 100, 110, true) == 54);   // no recursive share
  CHECK(effective_protection(30, 140, 0, 100, 110, true) == 0);

  // Within budget, not recursive: min(usage, setting).
  CHECK(effective_protection(60, 140, 30, 120, 30, false) == 30);
  CHECK(effective_protection(20, 140, 80, 1000, 20, false) == 20);  // capped by usage

  // Within budget, recursive: + (120-30) * unprotected / (140-30).
  CHECK(effective_protection(60, 140, 30, 120, 30, true) == 54);  // 30 + 90*30/110 = 30 + 24
  CHECK(effective_protection(50, 140, 0, 120, 30, true) == 40);   // 0 + 90*50/110 = 40.9
  CHECK(effective_protection(30, 140, 0, 120, 30, true) == 24);   // 0 + 2700/110

  // The sanity guards of the recursive share.
  CHECK(effective_protection(60, 30, 30, 120, 30, true) == 30);   // parent_usage <= siblings
  CHECK(effective_protection(30, 140, 50, 120, 30, true) == 30);  // usage == protected
  CHECK(effective_protection(60, 140, 30, 30, 30, true) == 30);   // nothing unclaimed
  ws.expect(0);
}

// The Family tree charged as a: 60, b: 50, c: 30 (p: 140).
// min: p 100, a 80, b 50, c 0 -> p.children_min_usage = 60 + 50 + 0 = 110 > 100 (overcommit).
// low: p 120, a 30          -> p.children_low_usage = 30 < 120 (floating 90).
struct ChargedFamily : Family {
  ChargedFamily() {
    page_counter_set_min(&p, 100);
    page_counter_set_min(&a, 80);
    page_counter_set_min(&b, 50);
    page_counter_set_low(&p, 120);
    page_counter_set_low(&a, 30);
    page_counter_charge(&a, 60);
    page_counter_charge(&b, 50);
    page_counter_charge(&c, 30);
  }
  // A pre-order walk of @target's subtree, as reclaim does.
  void walk(page_counter *target, bool recursive) {
    for (page_counter *x : {&root, &p, &a, &b, &c}) {
      if (in_subtree(target, x)) page_counter_calculate_protection(target, x, recursive);
    }
  }
  static bool in_subtree(const page_counter *top, const page_counter *x) {
    for (; x; x = x->parent) {
      if (x == top) return true;
    }
    return false;
  }
};

TEST_CASE("page_counter_calculate_protection from the root", "[page_counter][protection]") {
  WarnScope ws;
  ChargedFamily f;
  REQUIRE(children_min_of(f.p) == 110);
  REQUIRE(children_low_of(f.p) == 30);
  WRITE_ONCE(f.root.emin, 777UL);  // the target's own values are never touched

  SECTION("not recursive") {
    f.walk(&f.root, false);
    CHECK(f.root.emin == 777);
    CHECK(f.p.emin == 100);  // parent == root: raw
    CHECK(f.p.elow == 120);
    CHECK(f.a.emin == 54);  // 60*100/110
    CHECK(f.b.emin == 45);  // 50*100/110
    CHECK(f.c.emin == 0);
    CHECK(f.a.elow == 30);
    CHECK(f.b.elow == 0);
    CHECK(f.c.elow == 0);
  }
  SECTION("recursive (memory_recursiveprot)") {
    f.walk(&f.root, true);
    CHECK(f.a.emin == 54);  // overcommitted: same as above
    CHECK(f.b.emin == 45);
    CHECK(f.a.elow == 54);  // 30 + 90*30/110
    CHECK(f.b.elow == 40);  // 90*50/110
    CHECK(f.c.elow == 24);  // 90*30/110
  }
  SECTION("a direct child of the target gets its raw setting, not capped by usage") {
    page_counter_set_min(&f.p, 500);  // p uses 140
    f.walk(&f.root, false);
    CHECK(f.p.emin == 500);
    CHECK(f.a.emin == 60);  // 110 <= 500: min(60, 80)
    CHECK(f.b.emin == 50);
  }
  ws.expect(0);
}

TEST_CASE("page_counter_calculate_protection: the target's protection is ignored",
          "[page_counter][protection]") {
  WarnScope ws;
  ChargedFamily f;
  f.walk(&f.root, false);
  REQUIRE(f.p.emin == 100);
  REQUIRE(f.a.emin == 54);

  // Reclaim targeting p (memory.reclaim on p): p's values stay stale, its children get raw min.
  page_counter_set_min(&f.p, 7);
  f.walk(&f.p, false);
  CHECK(f.p.emin == 100);  // untouched, stale
  CHECK(f.a.emin == 80);   // parent == root: raw, more than a uses
  CHECK(f.b.emin == 50);
  CHECK(f.c.emin == 0);
  ws.expect(0);
}

TEST_CASE("page_counter_calculate_protection: zero usage leaves stale values",
          "[page_counter][protection]") {
  WarnScope ws;
  ChargedFamily f;
  f.walk(&f.root, true);
  REQUIRE(f.c.elow == 24);

  page_counter_uncharge(&f.c, 30);
  page_counter_set_low(&f.c, 999);
  page_counter_set_min(&f.c, 999);
  f.walk(&f.root, true);
  CHECK(page_counter_read(&f.c) == 0);
  CHECK(f.c.elow == 24);
  CHECK(f.c.emin == 0);
  ws.expect(0);
}

TEST_CASE("page_counter_calculate_protection is stateful: parents first",
          "[page_counter][protection]") {
  WarnScope ws;
  ChargedFamily f;
  // Children before their parent: p.emin is still 0, and 110 > 0 is an overcommit.
  page_counter_calculate_protection(&f.root, &f.a, false);
  CHECK(f.a.emin == 0);  // 60 * 0 / 110
  page_counter_calculate_protection(&f.root, &f.p, false);
  page_counter_calculate_protection(&f.root, &f.a, false);
  CHECK(f.a.emin == 54);
  ws.expect(0);
}

TEST_CASE("page_counter_calculate_protection: a counter outside the target's subtree warns",
          "[page_counter][protection]") {
  WarnScope ws(/*quiet=*/true);
  ChargedFamily f;
  WRITE_ONCE(f.root.emin, 5UL);
  // root is not below a; the kernel would dereference a null parent here.
  page_counter_calculate_protection(&f.a, &f.root, false);
  CHECK(f.root.emin == 5);
  ws.expect(1);
}

}  // namespace
}  // namespace umemcg
