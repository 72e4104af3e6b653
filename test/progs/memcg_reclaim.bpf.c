// SPDX-License-Identifier: GPL-2.0-only
// One proactive reclaim from a SYSCALL program, as a developer test-runs it with `umemcg bpf
// run`: the cgroup named by its id (bpf_cgroup_from_id + bpf_get_mem_cgroup), then
// bpf_proactive_reclaim(memcg, size, swappiness).
//
// reclaim (SYSCALL, ctx struct reclaim_args, filled as u64 words): the bytes reclaimed go to
//   a->reclaimed; returns the pages reclaimed, or -1 when no cgroup has the id, -2 when it has
//   no memcg, the kfunc's negative errno when it refuses its arguments.
// root_usage (SYSCALL, no ctx): the root memcg's usage in pages (bpf_get_root_mem_cgroup).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "memcg_kfuncs.h"

#define PAGE_SIZE 4096

struct cgroup_subsys_state {
	struct cgroup *cgroup;
};
struct cgroup {
	struct cgroup_subsys_state self;
};

extern long bpf_proactive_reclaim(struct mem_cgroup *memcg, __u64 size, int swappiness) __ksym;

struct reclaim_args {
	__u64 cgid;		/* the cgroup to reclaim from */
	__u64 size;		/* bytes asked for */
	__s64 swappiness;	/* -1: the memcg's own; 0..200; 201: anon only */
	__s64 reclaimed;	/* out: the kfunc's result */
};

SEC("syscall")
int reclaim(struct reclaim_args *a)
{
	struct cgroup *cgrp = bpf_cgroup_from_id(a->cgid);
	struct mem_cgroup *m;
	long r;

	if (!cgrp)
		return -1;
	m = bpf_get_mem_cgroup(&cgrp->self);
	bpf_cgroup_release(cgrp);
	if (!m)
		return -2;
	r = bpf_proactive_reclaim(m, a->size, (int)a->swappiness);
	bpf_put_mem_cgroup(m);
	a->reclaimed = r;
	return r < 0 ? (int)r : (int)(r / PAGE_SIZE);
}

SEC("syscall")
int root_usage(void *ctx)
{
	struct mem_cgroup *root = bpf_get_root_mem_cgroup();
	unsigned long usage;

	if (!root)
		return -1;
	usage = bpf_mem_cgroup_usage(root);
	bpf_put_mem_cgroup(root);
	return (int)(usage / PAGE_SIZE);
}

char LICENSE[] SEC("license") = "GPL";
