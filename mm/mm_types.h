// SPDX-License-Identifier: GPL-2.0-only
// mm/mm_types.h: the address space model (struct mm_struct) as far as memcg needs it.
//
// Mirrors: include/linux/mm_types.h (Linux 6.19): mm_struct::owner (CONFIG_MEMCG)
// Emulation: instead of mm->owner (a task whose css_set names the memcg), the mm records its
//   memcg directly, with a css reference; emu::mm_attach() is the cgroup migration of the
//   owning process. Attaching counts the cgroup as populated (rmdir then fails with -EBUSY).
#pragma once

namespace umemcg {

struct mem_cgroup;

struct mm_struct {
  // The owner's memcg (holds a css reference), nullptr = the root. Published with
  // rcu_assign_pointer, read under rcu_read_lock().
  mem_cgroup *memcg = nullptr;
};

}  // namespace umemcg

namespace umemcg::emu {
// Moves @mm (its owning process) into @memcg (nullptr: the root). Task context.
void mm_attach(mm_struct *mm, mem_cgroup *memcg);
}  // namespace umemcg::emu
