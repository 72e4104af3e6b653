// SPDX-License-Identifier: GPL-2.0-only
// kernel/cgroup_internal.h: emulator-only access to the cgroup registry (invariant checks).
//
// Mirrors: nothing (the kernel walks css trees with css_for_each_descendant_pre under RCU).
// Emulation: a registry of every allocated css, including dying ones not yet freed, so that the
//   checkers can account for charges still held by removed cgroups.
#pragma once

#include "kernel/cgroup.h"

namespace umemcg::emu {

// Calls fn for every allocated css (online or dying). The registry is copied first, so fn may
// take locks; the caller must ensure no css is freed meanwhile (e.g. run it from a test with no
// concurrent rmdir, or under rcu_read_lock()).
void for_each_css(void (*fn)(cgroup_subsys_state *, void *), void *arg);

}  // namespace umemcg::emu
