// SPDX-License-Identifier: GPL-2.0-only
// Runtime test object: a struct bpf_wq in BTF map values (array and hash), found by the map and
// the verifier as a struct bpf_spin_lock is: programs may use the other fields, never load or
// store the bpf_wq itself.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bpf_wq.h"

struct elem {
	__u64 a;
	struct bpf_wq wq;
	__u64 b;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct elem);
} warr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct elem);
} whash SEC(".maps");

SEC("syscall")
int touch_fields(__u64 *x)
{
	__u32 zero = 0;
	struct elem *v = bpf_map_lookup_elem(&warr, &zero);

	if (!v)
		return 1;
	v->a += *x;
	v->b += 2 * *x;
	*x = v->a + v->b;
	return 0;
}

SEC("syscall")
int store_wq(__u64 *x)
{
	__u32 zero = 0;
	struct elem *v = bpf_map_lookup_elem(&warr, &zero);

	if (!v)
		return 1;
	v->wq.__opaque[1] = *x;
	return 0;
}

SEC("syscall")
int load_wq(__u64 *x)
{
	__u32 zero = 0;
	struct elem *v = bpf_map_lookup_elem(&whash, &zero);

	if (!v)
		return 1;
	*x = v->wq.__opaque[0];
	return 0;
}

char _license[] SEC("license") = "GPL";
