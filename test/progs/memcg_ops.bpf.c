// SPDX-License-Identifier: GPL-2.0-only
// Test object for the loader: a struct_ops policy in the shape of the posted
// bpf_memcg_ops (in .struct_ops and in .struct_ops.link), memcg kfunc externs
// in .ksyms (one weak and unresolvable), a SYSCALL program, cgroup iterators
// (plain and sleepable), and fentry/fexit/fentry.s programs.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "memcg_ctx.h"
#include "memcg_kfuncs.h"

struct rw_semaphore;

struct cgroup {
	struct cgroup_subsys_state *self_placeholder;
};

struct bpf_memcg_ops {
	__u32 (*high_policy)(const struct bpf_memcg_ctx *mctx);
	int (*charged)(struct mem_cgroup *memcg, unsigned long nr_pages);
	__u32 flags;
	char name[16];
};

extern long bpf_proactive_reclaim(struct mem_cgroup *memcg, unsigned long size,
				  int swappiness) __ksym __weak;
extern unsigned long bpf_not_in_any_kernel(int x) __ksym __weak;

__u64 violations;
__u64 last_usage;
int depth;

SEC("struct_ops/high_policy")
__u32 BPF_PROG(high_policy, const struct bpf_memcg_ctx *mctx)
{
	if (depth > 0)
		return 1;
	return mctx->nr_pages_over_high > 64 ? 1 : 0;
}

SEC("struct_ops/charged")
int BPF_PROG(charged, struct mem_cgroup *memcg, unsigned long nr_pages)
{
	last_usage = bpf_mem_cgroup_usage(memcg) + nr_pages;
	return 0;
}

SEC("struct_ops/high_policy")
__u32 BPF_PROG(high_policy_linked, const struct bpf_memcg_ctx *mctx)
{
	return 0;
}

SEC(".struct_ops")
struct bpf_memcg_ops memcg_policy = {
	.high_policy = (void *)high_policy,
	.charged = (void *)charged,
	.flags = 3,
	.name = "lockholder",
};

SEC(".struct_ops.link")
struct bpf_memcg_ops memcg_policy_link = {
	.high_policy = (void *)high_policy_linked,
};

SEC("syscall")
int reclaim(void *ctx)
{
	struct cgroup_subsys_state *css = *(struct cgroup_subsys_state **)ctx;
	struct mem_cgroup *m = bpf_get_mem_cgroup(css);
	long r = 0;

	if (!m)
		return -1;
	if (bpf_proactive_reclaim)
		r = bpf_proactive_reclaim(m, 4096, -1);
	if (bpf_not_in_any_kernel)
		r += bpf_not_in_any_kernel(1);
	bpf_put_mem_cgroup(m);
	return r;
}

SEC("iter/cgroup")
int dump_cgroup(struct bpf_iter__cgroup *ctx)
{
	return ctx->cgroup == 0;
}

SEC("iter.s/cgroup")
int flush_cgroup(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	struct mem_cgroup *m;

	if (!cgrp)
		return 0;
	m = bpf_get_mem_cgroup(cgrp->self_placeholder);
	if (!m)
		return 0;
	bpf_mem_cgroup_flush_stats(m);
	last_usage = bpf_mem_cgroup_usage(m);
	bpf_put_mem_cgroup(m);
	return 0;
}

SEC("fentry/down_read")
int BPF_PROG(enter_down_read, struct rw_semaphore *sem)
{
	depth++;
	return 0;
}

SEC("fexit/up_read")
int BPF_PROG(exit_up_read, struct rw_semaphore *sem, long ret)
{
	depth--;
	return 0;
}

SEC("fentry.s/__mem_cgroup_handle_over_high")
int BPF_PROG(over_high, unsigned int gfp)
{
	if (depth > 0)
		violations++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
