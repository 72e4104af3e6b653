// SPDX-License-Identifier: GPL-2.0-only
// The trivial bpf_memcg_ops policy of targets S6/S7: high_policy has no opinion. Used by
// bench/bpf_dispatch_bench.cc to measure the dispatch cost around the program itself.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct bpf_memcg_ctx;

struct bpf_memcg_ops {
	__u32 (*high_policy)(const struct bpf_memcg_ctx *ctx);
};

SEC("struct_ops/high_policy")
__u32 BPF_PROG(trivial_high_policy, const struct bpf_memcg_ctx *mctx)
{
	return 0;
}

SEC(".struct_ops.link")
struct bpf_memcg_ops trivial = {
	.high_policy = (void *)trivial_high_policy,
};

char LICENSE[] SEC("license") = "GPL";
