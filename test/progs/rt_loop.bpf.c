// SPDX-License-Identifier: GPL-2.0-only
// Runtime test object: bpf_loop with a callback that itself calls bpf_loop (nested callbacks
// reaching the caller's stack), early stop, and the flags check.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct loop_args {
	__u32 outer;
	__u32 inner;
	__u64 sum;
	__u64 iters;
	__s64 bad_flags;
};

struct loop_ctx {
	__u64 sum;
	__u32 inner;
};

static long inner_cb(__u64 i, void *c)
{
	struct loop_ctx *l = c;

	l->sum += i;
	return 0;
}

static long outer_cb(__u64 i, void *c)
{
	struct loop_ctx *l = c;

	bpf_loop(l->inner, inner_cb, l, 0);
	return i == 9 ? 1 : 0;
}

SEC("syscall")
int loops(struct loop_args *a)
{
	struct loop_ctx l = { 0, a->inner };

	a->iters = bpf_loop(a->outer, outer_cb, &l, 0);
	a->sum = l.sum;
	a->bad_flags = bpf_loop(1, inner_cb, &l, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
