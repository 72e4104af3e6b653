// SPDX-License-Identifier: GPL-2.0-only
// Runtime test object: a struct bpf_wq in a per-CPU array value, which map creation refuses
// (-EOPNOTSUPP: array, hash and LRU hash values only).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bpf_wq.h"

struct elem {
	struct bpf_wq wq;
	__u64 a;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct elem);
} wpcpu SEC(".maps");

SEC("syscall")
int nothing(void *ctx)
{
	return 0;
}

char _license[] SEC("license") = "GPL";
