// SPDX-License-Identifier: GPL-2.0-only
// Test object for the second cgroup struct_ops type: bpf_tcp_ops link maps whose
// skmem_charged counts socket-memory charges in .bss (one counter set per map, so a link
// update shows which map runs), a bpf_memcg_ops link map beside them (two attach types on
// one cgroup), and a bpf_tcp_ops map with a sleepable member program (refused).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct mem_cgroup;
struct task_struct;

struct bpf_tcp_sock_ctx {
	struct mem_cgroup *memcg;
	struct task_struct *task;
	__u64 cgroup_id;
	__u32 nr_pages;
	__u32 charged;
	__u32 gfp_flags;
};

struct bpf_tcp_ops {
	int (*skmem_charged)(const struct bpf_tcp_sock_ctx *ctx);
};

struct bpf_memcg_ctx;
struct bpf_memcg_ops {
	__u32 (*high_policy)(const struct bpf_memcg_ctx *mctx);
};

/* Kept at offset 0 of .bss; the test reads it as a struct. */
struct tcp_stats {
	__u64 calls;
	__u64 pages;
	__u64 failed;
	__u64 last_cgroup_id;
	__u64 calls2;
} stats;

SEC("struct_ops/skmem_charged")
int BPF_PROG(count_charge, const struct bpf_tcp_sock_ctx *sctx)
{
	stats.calls++;
	if (sctx->charged)
		stats.pages += sctx->nr_pages;
	else
		stats.failed++;
	stats.last_cgroup_id = sctx->cgroup_id;
	return 0;
}

SEC("struct_ops/skmem_charged")
int BPF_PROG(count_charge2, const struct bpf_tcp_sock_ctx *sctx)
{
	stats.calls2++;
	return 0;
}

SEC("struct_ops.s/skmem_charged")
int BPF_PROG(sleepy_charge, const struct bpf_tcp_sock_ctx *sctx)
{
	stats.calls2 += 100;
	return 0;
}

SEC("struct_ops/high_policy")
__u32 BPF_PROG(no_opinion, const struct bpf_memcg_ctx *mctx)
{
	return 0;
}

SEC(".struct_ops.link")
struct bpf_tcp_ops tcp_count = {
	.skmem_charged = (void *)count_charge,
};

SEC(".struct_ops.link")
struct bpf_tcp_ops tcp_count2 = {
	.skmem_charged = (void *)count_charge2,
};

SEC(".struct_ops.link")
struct bpf_tcp_ops tcp_sleepy = {
	.skmem_charged = (void *)sleepy_charge,
};

SEC(".struct_ops.link")
struct bpf_memcg_ops memcg_quiet = {
	.high_policy = (void *)no_opinion,
};

char _license[] SEC("license") = "GPL";
