// SPDX-License-Identifier: GPL-2.0-only
// A deliberately broken bpf_memcg_ops policy for the policy fuzzer's tests: it defers every
// over-high handling (DEFER_INLINE for every task, lock holder or not), and its author asserts
// that a deferred debt never exceeds two charge batches (128 pages). The assertion fails when
// one kernel entry charges more than that over memory.high (an mlock'ed populate, for one):
// the fuzzer must find such a case and minimize it.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct bpf_memcg_ctx {
	void *memcg;
	void *memcg_over_limit;
	void *task;
	__u64 cgroup_id;
	__u64 over_limit_cgroup_id;
	__u64 nr_pages_over_high;
	__u32 gfp_flags;
} __attribute__((preserve_access_index));

struct bpf_memcg_ops {
	__u32 (*high_policy)(const struct bpf_memcg_ctx *ctx);
};

__u64 deferred;
__u64 violated;

SEC("struct_ops/high_policy")
__u32 BPF_PROG(high_policy, const struct bpf_memcg_ctx *mctx)
{
	deferred++;
	if (mctx->nr_pages_over_high > 128)
		violated = mctx->nr_pages_over_high;
	return 1; /* BPF_MEMCG_HIGH_DEFER_INLINE */
}

SEC(".struct_ops.link")
struct bpf_memcg_ops defer_all = {
	.high_policy = (void *)high_policy,
};

char LICENSE[] SEC("license") = "GPL";
