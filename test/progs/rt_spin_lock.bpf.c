// SPDX-License-Identifier: GPL-2.0-only
// Runtime test object: struct bpf_spin_lock in a map value (array and hash), and a program that
// returns with the lock held (which a verifier rejects and the checked interpreter reports).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct locked {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 a;
	__u64 b;
};

struct lock_args {
	__u64 n;
	__u64 a;
	__u64 b;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct locked);
} larr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, struct locked);
} lhash SEC(".maps");

SEC("syscall")
int locked_add(struct lock_args *x)
{
	__u32 zero = 0;
	struct locked *v = bpf_map_lookup_elem(&larr, &zero);

	if (!v)
		return 1;
	bpf_spin_lock(&v->lock);
	v->a += x->n;
	v->b += 2 * x->n;
	bpf_spin_unlock(&v->lock);
	x->a = v->a;
	x->b = v->b;
	return 0;
}

SEC("syscall")
int lock_leak(void *ctx)
{
	__u32 zero = 0;
	struct locked *v = bpf_map_lookup_elem(&larr, &zero);

	if (!v)
		return 1;
	bpf_spin_lock(&v->lock);
	v->a++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
