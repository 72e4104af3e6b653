// SPDX-License-Identifier: GPL-2.0-only
// Verifier test object: bpf_loop callbacks that the verifier must walk again from the call until
// their iterations converge. A callback's context counter that decides an access stays exact
// (each iteration is walked with its own value, up to nr_loops' bound); one that decides
// nothing is widened and the iterations converge after two walks. The kernel's verdicts are in
// test/bpfvm/verifier_obj_test.cc; kernel_diff_test.cc compares with the host kernel.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct val {
	__u8 buf[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct val);
} vals SEC(".maps");

struct cb_ctx {
	__u32 i;
	__u32 pad;
	__u64 sum;
};

struct args {
	__u32 n;
	__u32 out;
};

// Writes buf[ctx->i] without a bound check, then moves to the next byte: safe for the first
// eight iterations only.
static long write_next(__u64 idx, void *c)
{
	struct cb_ctx *ctx = c;
	__u32 key = 0;
	struct val *v = bpf_map_lookup_elem(&vals, &key);

	if (!v)
		return 1;
	v->buf[ctx->i] = 1;
	ctx->i++;
	return 0;
}

// Eight iterations at most (nr_loops' bound): accepted.
SEC("syscall")
int index_within_bound(struct args *a)
{
	struct cb_ctx ctx = {};

	bpf_loop(8, write_next, &ctx, 0);
	return 0;
}

// A ninth iteration writes past the value: rejected on the ninth walk of the callback.
SEC("syscall")
int index_past_bound(struct args *a)
{
	struct cb_ctx ctx = {};

	bpf_loop(9, write_next, &ctx, 0);
	return 0;
}

// Any number of iterations: rejected.
SEC("syscall")
int index_unbounded(struct args *a)
{
	struct cb_ctx ctx = {};

	bpf_loop(a->n, write_next, &ctx, 0);
	return 0;
}

// Counts and sums: nothing decides an access, the values are widened and the iterations
// converge however many there may be.
static long count(__u64 idx, void *c)
{
	struct cb_ctx *ctx = c;

	ctx->i++;
	ctx->sum += idx;
	return 0;
}

SEC("syscall")
int counter_converges(struct args *a)
{
	struct cb_ctx ctx = {};

	bpf_loop(1 << 20, count, &ctx, 0);
	a->out = ctx.i;
	return 0;
}

// The count indexes the value after the loop: it stays exact, and three iterations leave it in
// [0, 3], inside buf[4] of the value (accepted); five leave it up to 5 (rejected).
SEC("syscall")
int count_used_after_loop_ok(struct args *a)
{
	struct cb_ctx ctx = {};
	__u32 key = 0;
	struct val *v;

	bpf_loop(3, count, &ctx, 0);
	v = bpf_map_lookup_elem(&vals, &key);
	if (!v)
		return 0;
	v->buf[ctx.i + 4] = 1;
	return 0;
}

SEC("syscall")
int count_used_after_loop_bad(struct args *a)
{
	struct cb_ctx ctx = {};
	__u32 key = 0;
	struct val *v;

	bpf_loop(5, count, &ctx, 0);
	v = bpf_map_lookup_elem(&vals, &key);
	if (!v)
		return 0;
	v->buf[ctx.i + 4] = 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
