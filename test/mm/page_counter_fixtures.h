// SPDX-License-Identifier: GPL-2.0-only
// test/mm/page_counter_fixtures.h: small page_counter hierarchies for the tests.
#pragma once

#include "mm/page_counter.h"

namespace umemcg::test {

// root <- mid <- leaf, all with the same protection_support, no limits.
struct Chain3 {
  page_counter root, mid, leaf;
  explicit Chain3(bool protection = false) {
    page_counter_init(&root, nullptr, protection);
    page_counter_init(&mid, &root, protection);
    page_counter_init(&leaf, &mid, protection);
  }
  Chain3(const Chain3 &) = delete;
  Chain3 &operator=(const Chain3 &) = delete;
};

inline long usage_of(const page_counter &c) { return atomic_long_read(&c.usage); }
inline long min_usage_of(const page_counter &c) { return atomic_long_read(&c.min_usage); }
inline long low_usage_of(const page_counter &c) { return atomic_long_read(&c.low_usage); }
inline long children_min_of(const page_counter &c) {
  return atomic_long_read(&c.children_min_usage);
}
inline long children_low_of(const page_counter &c) {
  return atomic_long_read(&c.children_low_usage);
}

}  // namespace umemcg::test
