// SPDX-License-Identifier: GPL-2.0-only
// mm/page_counter_internal.h: page_counter helpers that are static in the kernel.
//
// Mirrors: mm/page_counter.c (Linux 6.19)
// Emulation: propagate_protected_usage() and effective_protection() have external linkage here
//   (static in the kernel) so that tests can drive each of their branches directly. Nothing
//   outside mm/page_counter*.cc and tests may call them.
#pragma once

#include "mm/page_counter.h"

namespace umemcg {

void propagate_protected_usage(page_counter *c, unsigned long usage);

unsigned long effective_protection(unsigned long usage, unsigned long parent_usage,
                                   unsigned long setting, unsigned long parent_effective,
                                   unsigned long siblings_protected, bool recursive_protection);

}  // namespace umemcg
