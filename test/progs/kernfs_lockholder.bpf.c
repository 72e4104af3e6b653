// SPDX-License-Identifier: GPL-2.0-only
// Seed 000's sample policy: a cgroupfs kernfs lock holder is never throttled inline.
//
// - resolve_locks (SYSCALL): finds the two locks of the cgroup2 kernfs root from the root memcg
//   (root memcg -> its cgroup -> the cgroup's kernfs directory -> the kernfs root) and records
//   their addresses;
// - fexit on the rwsem acquisitions and fentry on the releases keep, in task storage, how many
//   of the two locks the current task holds (every rwsem operation of the machine runs them,
//   which is the sample's tracking cost);
// - bpf_memcg_ops.high_policy returns BPF_MEMCG_HIGH_DEFER_INLINE while the charging task holds
//   one, and tells user space through the ring buffer `events` (a reclaimer may pay the debt);
// - every struct is CO-RE-relocated (preserve_access_index) against the kernel's layouts.
// Loaded by a privileged loader (CAP_PERFMON): the lock addresses are compared and stored.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "memcg_kfuncs.h"

#define __kernel_struct __attribute__((preserve_access_index))

struct rw_semaphore {
	long count;
} __kernel_struct;

struct kernfs_root {
	struct rw_semaphore kernfs_rwsem;
	struct rw_semaphore kernfs_supers_rwsem;
} __kernel_struct;

struct kernfs_elem_dir {
	struct kernfs_root *root;
} __kernel_struct;

struct kernfs_node {
	struct kernfs_elem_dir dir;
} __kernel_struct;

struct cgroup_subsys_state {
	struct cgroup *cgroup;
} __kernel_struct;

struct cgroup {
	struct cgroup_subsys_state self;
	struct kernfs_node *kn;
} __kernel_struct;

struct mem_cgroup {
	struct cgroup_subsys_state css;
} __kernel_struct;

struct task_struct {
	int pid;
	char comm[16];
} __kernel_struct;

struct bpf_memcg_ctx {
	struct mem_cgroup *memcg;
	struct task_struct *task;
	__u64 cgroup_id;
	__u64 nr_pages_over_high;
} __kernel_struct;

struct bpf_memcg_ops {
	__u32 (*high_policy)(const struct bpf_memcg_ctx *ctx);
};

#define BPF_MEMCG_HIGH_DEFER_INLINE 1

/* The two locks, written once by resolve_locks. */
struct lock_addrs {
	__u64 kernfs_rwsem;
	__u64 kernfs_supers_rwsem;
};

/* What the policy did. */
struct lockholder_stats {
	__u64 tracked_ops;   /* acquisitions and releases of the two locks seen */
	__u64 rwsem_ops;     /* every rwsem operation the hooks ran for */
	__u64 deferred;      /* high_policy answers DEFER_INLINE */
	__u64 not_deferred;  /* high_policy answers 0 */
	__u64 events_lost;   /* ring buffer full */
	__u64 depth_errors;  /* a release with no recorded acquisition */
};

/* The only .bss variable, so loaders find it at offset 0; kernfs_lockholder_user.h copies it. */
struct lockholder_state {
	struct lock_addrs locks;
	struct lockholder_stats stats;
} state;

#define locks state.locks
#define stats state.stats

/* One record per deferral. */
struct defer_event {
	__u64 cgroup_id;
	__u64 nr_pages_over_high;
	__u32 pid;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} depth SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} events SEC(".maps");

SEC("syscall")
int resolve_locks(void *ctx)
{
	struct mem_cgroup *root = bpf_get_root_mem_cgroup();
	struct kernfs_root *kr;
	struct cgroup *cgrp;
	struct kernfs_node *kn;

	if (!root)
		return -1;
	cgrp = root->css.cgroup;
	kn = cgrp ? cgrp->kn : 0;
	kr = kn ? kn->dir.root : 0;
	if (kr) {
		locks.kernfs_rwsem = (__u64)&kr->kernfs_rwsem;
		locks.kernfs_supers_rwsem = (__u64)&kr->kernfs_supers_rwsem;
	}
	bpf_put_mem_cgroup(root);
	return kr ? 0 : -2;
}

static __always_inline int tracked(void *sem)
{
	__u64 a = (__u64)sem;

	__sync_fetch_and_add(&stats.rwsem_ops, 1);
	return a && (a == locks.kernfs_rwsem || a == locks.kernfs_supers_rwsem);
}

static __always_inline void depth_add(void *sem, int d)
{
	struct task_struct *t;
	__u32 *n;

	if (!tracked(sem))
		return;
	__sync_fetch_and_add(&stats.tracked_ops, 1);
	t = bpf_get_current_task_btf();
	n = bpf_task_storage_get(&depth, t, 0, d > 0 ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (!n)
		return;
	if (d < 0 && *n == 0) {
		__sync_fetch_and_add(&stats.depth_errors, 1);
		return;
	}
	*n += d;
}

SEC("fexit/down_read")
int BPF_PROG(after_down_read, struct rw_semaphore *sem)
{
	depth_add(sem, 1);
	return 0;
}

SEC("fexit/down_write")
int BPF_PROG(after_down_write, struct rw_semaphore *sem)
{
	depth_add(sem, 1);
	return 0;
}

SEC("fexit/down_read_trylock")
int BPF_PROG(after_down_read_trylock, struct rw_semaphore *sem, int ret)
{
	if (ret == 1)
		depth_add(sem, 1);
	return 0;
}

SEC("fexit/down_write_trylock")
int BPF_PROG(after_down_write_trylock, struct rw_semaphore *sem, int ret)
{
	if (ret == 1)
		depth_add(sem, 1);
	return 0;
}

SEC("fexit/down_read_killable")
int BPF_PROG(after_down_read_killable, struct rw_semaphore *sem, int ret)
{
	if (ret == 0)
		depth_add(sem, 1);
	return 0;
}

SEC("fexit/down_write_killable")
int BPF_PROG(after_down_write_killable, struct rw_semaphore *sem, int ret)
{
	if (ret == 0)
		depth_add(sem, 1);
	return 0;
}

SEC("fentry/up_read")
int BPF_PROG(before_up_read, struct rw_semaphore *sem)
{
	depth_add(sem, -1);
	return 0;
}

SEC("fentry/up_write")
int BPF_PROG(before_up_write, struct rw_semaphore *sem)
{
	depth_add(sem, -1);
	return 0;
}

SEC("struct_ops/high_policy")
__u32 BPF_PROG(high_policy, const struct bpf_memcg_ctx *mctx)
{
	struct task_struct *t = mctx->task;
	struct defer_event *e;
	__u32 *n;

	n = bpf_task_storage_get(&depth, t, 0, 0);
	if (!n || !*n) {
		__sync_fetch_and_add(&stats.not_deferred, 1);
		return 0;
	}
	__sync_fetch_and_add(&stats.deferred, 1);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&stats.events_lost, 1);
		return BPF_MEMCG_HIGH_DEFER_INLINE;
	}
	e->cgroup_id = mctx->cgroup_id;
	e->nr_pages_over_high = mctx->nr_pages_over_high;
	e->pid = t->pid;
	__builtin_memcpy(e->comm, t->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return BPF_MEMCG_HIGH_DEFER_INLINE;
}

SEC(".struct_ops.link")
struct bpf_memcg_ops kernfs_lockholder = {
	.high_policy = (void *)high_policy,
};

char LICENSE[] SEC("license") = "GPL";
