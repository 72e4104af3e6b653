// SPDX-License-Identifier: GPL-2.0-only
// The contexts of memcg programs with the emulator's layouts (no CO-RE relocation): the
// bpf_memcg_ctx a struct_ops high_policy gets and the cgroup iterator's bpf_iter__cgroup.
// Programs that relocate against the kernel's layouts (preserve_access_index) declare their own.
#pragma once

struct mem_cgroup;
struct cgroup;
struct task_struct;
struct bpf_iter_meta;

struct bpf_memcg_ctx {
	struct mem_cgroup *memcg;
	struct mem_cgroup *memcg_over_limit;
	struct task_struct *task;
	__u64 cgroup_id;
	__u64 over_limit_cgroup_id;
	__u64 nr_pages_over_high;
	__u32 gfp_flags;
};

struct bpf_iter__cgroup {
	struct bpf_iter_meta *meta;
	struct cgroup *cgroup;
};
