// SPDX-License-Identifier: GPL-2.0-only
// A memcg policy object against the emulator's registered BPF surface (mm/bpf_memcontrol.cc),
// in the shape of the posted series' kernfs_lockholder example:
//  - fexit/fentry programs on the rwsem primitives keep a per-thread count of held locks;
//  - bpf_memcg_ops.high_policy defers the inline memory.high handling (DEFER_INLINE) while
//    the charging task holds one of them;
//  - an fentry on __mem_cgroup_handle_over_high counts "violations" (over-high handling
//    entered while a lock is held), which must stay 0;
//  - a sleepable cgroup iterator reads usage and memory.events through the memcg kfuncs;
//  - a SYSCALL program reclaims from the root with bpf_proactive_reclaim.
// Structs are declared with the emulator's layouts (no CO-RE relocations are applied).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "memcg_ctx.h"
#include "memcg_kfuncs.h"

struct rw_semaphore;

struct task_struct {
	int pid;
	int tgid;
};

struct cgroup_subsys_state {
	struct cgroup *cgroup;
};

struct cgroup {
	struct cgroup_subsys_state self;
};

struct bpf_memcg_ops {
	__u32 (*high_policy)(const struct bpf_memcg_ctx *ctx);
};

#define BPF_MEMCG_HIGH_DEFER_INLINE 1
#define MEMCG_HIGH 1 /* enum memcg_memory_event */

extern long bpf_proactive_reclaim(struct mem_cgroup *memcg, unsigned long size,
				  int swappiness) __ksym;

/* Locks held, per thread id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} held SEC(".maps");

/* Usage and memory.high events per cgroup level, written by the iterator. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} usage_by_level SEC(".maps");

/* The only .bss variable, so tests find it at offset 0 of the .bss map. */
struct policy_stats {
	__u64 violations;
	__u64 deferred;
	__u64 high_events;
	__s64 reclaimed;
} stats;

static void held_add(long d)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *n = bpf_map_lookup_elem(&held, &tid);

	if (n) {
		if (d < 0 && *n == 0)
			return;
		*n += d;
	} else if (d > 0) {
		__u64 one = 1;
		bpf_map_update_elem(&held, &tid, &one, BPF_ANY);
	}
}

SEC("fexit/down_read")
int BPF_PROG(after_down_read, struct rw_semaphore *sem)
{
	held_add(1);
	return 0;
}

SEC("fexit/down_write")
int BPF_PROG(after_down_write, struct rw_semaphore *sem)
{
	held_add(1);
	return 0;
}

SEC("fexit/down_read_trylock")
int BPF_PROG(after_down_read_trylock, struct rw_semaphore *sem, int ret)
{
	if (ret == 1)
		held_add(1);
	return 0;
}

SEC("fentry/up_read")
int BPF_PROG(before_up_read, struct rw_semaphore *sem)
{
	held_add(-1);
	return 0;
}

SEC("fentry/up_write")
int BPF_PROG(before_up_write, struct rw_semaphore *sem)
{
	held_add(-1);
	return 0;
}

SEC("fentry/__mem_cgroup_handle_over_high")
int BPF_PROG(on_handle_over_high, unsigned int gfp_mask)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *n = bpf_map_lookup_elem(&held, &tid);

	if (n && *n)
		__sync_fetch_and_add(&stats.violations, 1);
	return 0;
}

SEC("struct_ops/high_policy")
__u32 BPF_PROG(high_policy, const struct bpf_memcg_ctx *mctx)
{
	__u32 tid = (__u32)mctx->task->pid;
	__u64 *n = bpf_map_lookup_elem(&held, &tid);

	if (n && *n) {
		__sync_fetch_and_add(&stats.deferred, 1);
		return BPF_MEMCG_HIGH_DEFER_INLINE;
	}
	return 0;
}

SEC(".struct_ops.link")
struct bpf_memcg_ops lockholder = {
	.high_policy = (void *)high_policy,
};

SEC("iter.s/cgroup")
int cgroup_usage(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	struct mem_cgroup *memcg;
	__u32 level = 0;
	__u64 *slot;

	if (!cgrp)
		return 0;
	memcg = bpf_get_mem_cgroup(&cgrp->self);
	if (!memcg)
		return 0;
	bpf_mem_cgroup_flush_stats(memcg);
	slot = bpf_map_lookup_elem(&usage_by_level, &level);
	if (slot)
		*slot += bpf_mem_cgroup_usage(memcg);
	stats.high_events += bpf_mem_cgroup_memory_events(memcg, MEMCG_HIGH);
	bpf_put_mem_cgroup(memcg);
	return 0;
}

SEC("syscall")
int reclaim_root(void *ctx)
{
	struct mem_cgroup *root = bpf_get_root_mem_cgroup();

	if (!root)
		return -1;
	stats.reclaimed = bpf_proactive_reclaim(root, 16 * 4096, -1);
	bpf_put_mem_cgroup(root);
	return stats.reclaimed < 0 ? (int)stats.reclaimed : (int)(stats.reclaimed / 4096);
}

char LICENSE[] SEC("license") = "GPL";
