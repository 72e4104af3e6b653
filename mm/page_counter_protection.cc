// SPDX-License-Identifier: GPL-2.0-only
// mm/page_counter_protection.cc: effective memory.min/memory.low (emin/elow), computed top-down
// by reclaim for each counter it visits.
//
// Mirrors: mm/page_counter.c, page_counter_calculate_protection() and effective_protection()
//          (Linux 6.19)
// Emulation: effective_protection() is not static (see page_counter_internal.h).
// Emulation: a counter that is not below @root warns and is left alone instead of oopsing.
#include <algorithm>

#include "mm/page_counter.h"
#include "mm/page_counter_internal.h"
#include "shim/bug.h"

namespace umemcg {

/**
 * effective_protection - a counter's share of its parent's effective protection
 * @usage: the counter's usage
 * @parent_usage: the parent's usage
 * @setting: the counter's memory.min (or memory.low)
 * @parent_effective: the parent's emin (or elow), already computed for this reclaim walk
 * @siblings_protected: the parent's children_min_usage (or children_low_usage): sum over the
 *                      counter and its siblings of min(usage, setting)
 * @recursive_protection: the memory_recursiveprot mount option
 *
 * The rules, in the order they are applied:
 *  - a counter never gets more than it both claims and uses: min(usage, setting);
 *  - if the children together claim-and-use more than the parent has, the parent's protection
 *    is shared out in proportion to each child's claimed-and-used amount (claimed but unused
 *    protection is thereby left to the siblings);
 *  - otherwise each child keeps its claimed-and-used amount, and, with recursive protection,
 *    the parent's protection that no child claims ("floating") is shared out in proportion to
 *    each child's unprotected usage, which protects the subtree as a whole against its
 *    neighbours without making siblings fixed shares of it.
 * All page arithmetic is unsigned and multiplies before it divides.
 */
unsigned long effective_protection(unsigned long usage, unsigned long parent_usage,
                                   unsigned long setting, unsigned long parent_effective,
                                   unsigned long siblings_protected, bool recursive_protection) {
  unsigned long protected_pages = std::min(usage, setting);

  // Overcommitted level: proportional share. Multiply first: the quotient alone is < 1.
  if (siblings_protected > parent_effective)
    return protected_pages * parent_effective / siblings_protected;

  unsigned long ep = protected_pages;
  if (!recursive_protection) return ep;

  // usage and parent_usage are read at different times; check both against the protected sums
  // so that the divisor is positive and the factors non-negative whatever the race did.
  if (parent_effective > siblings_protected && parent_usage > siblings_protected &&
      usage > protected_pages) {
    unsigned long unclaimed = parent_effective - siblings_protected;
    unclaimed *= usage - protected_pages;
    unclaimed /= parent_usage - siblings_protected;
    ep += unclaimed;
  }
  return ep;
}

/**
 * page_counter_calculate_protection - compute emin/elow of one counter for a reclaim walk
 * @root: the reclaim target (the top of the subtree being reclaimed)
 * @counter: the counter to update
 * @recursive_protection: the memory_recursiveprot mount option
 *
 * Not stateless: it reads the parent's emin/elow, so it must be called in a top-down (pre-order)
 * walk from @root. Three cases leave emin/elow as they were: @counter == @root (the target's
 * own protection is ignored by mem_cgroup_protection(), so stale values are harmless), and
 * usage == 0 (nothing to protect). A direct child of @root gets its raw min/low, not capped by
 * usage.
 */
void page_counter_calculate_protection(page_counter *root, page_counter *counter,
                                       bool recursive_protection) {
  page_counter *parent = counter->parent;

  if (root == counter) return;

  unsigned long usage = page_counter_read(counter);
  if (!usage) return;

  if (parent == root) {
    WRITE_ONCE(counter->emin, READ_ONCE(counter->min));
    WRITE_ONCE(counter->elow, READ_ONCE(counter->low));
    return;
  }

  // Emulation: a counter outside @root's subtree reaching its top would oops in the kernel.
  if (WARN_ON_ONCE(!parent)) return;

  unsigned long parent_usage = page_counter_read(parent);

  WRITE_ONCE(counter->emin,
             effective_protection(usage, parent_usage, READ_ONCE(counter->min),
                                  READ_ONCE(parent->emin),
                                  static_cast<unsigned long>(
                                      atomic_long_read(&parent->children_min_usage)),
                                  recursive_protection));
  WRITE_ONCE(counter->elow,
             effective_protection(usage, parent_usage, READ_ONCE(counter->low),
                                  READ_ONCE(parent->elow),
                                  static_cast<unsigned long>(
                                      atomic_long_read(&parent->children_low_usage)),
                                  recursive_protection));
}

}  // namespace umemcg
