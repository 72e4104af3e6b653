// SPDX-License-Identifier: GPL-2.0-only
// Verifier test object: SYSCALL programs the verifier rejects after walking several paths
// (an early return, a NULL check, a bounded loop, a subprogram call), for the level-1 log,
// which shows the path to the error and no path that ended safely, and two it accepts: one
// indexes a map value by bpf_get_smp_processor_id() (bounded by the CPU count), after a
// lookup with a constant key (not NULL).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct args {
	__u32 n;
	__u32 k;
	__u64 out;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} arr SEC(".maps");

struct slots {
	__u64 slot[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct slots);
} per_cpu_slots SEC(".maps");

SEC("syscall")
int cpu_slot(struct args *a)
{
	__u32 k = 0;
	struct slots *s = bpf_map_lookup_elem(&per_cpu_slots, &k);

	s->slot[bpf_get_smp_processor_id()] += a->n;
	return 0;
}

SEC("syscall")
int branch_oob(struct args *a)
{
	__u32 k = a->k;
	__u64 *v;

	if (a->n > 10)
		return 1;
	v = bpf_map_lookup_elem(&arr, &k);
	if (!v)
		return 0;
	return *(v + a->n);
}

SEC("syscall")
int loop_oob(struct args *a)
{
	__u32 k = 0;
	__u64 *v, sum = 0;
	int i;

	v = bpf_map_lookup_elem(&arr, &k);
	if (!v)
		return 0;
	for (i = 0; i < 4; i++)
		sum += a->k > (__u32)i ? 1 : 2;
	a->out = sum;
	return *(v + sum);
}

static __attribute__((noinline)) int read_at(__u64 *v, __u32 n)
{
	if (n > 3)
		return 0;
	return *(v + n + 1);
}

SEC("syscall")
int callee_oob(struct args *a)
{
	__u32 k = 1;
	__u64 *v;

	v = bpf_map_lookup_elem(&arr, &k);
	if (!v)
		return 0;
	return read_at(v, a->n) + 1;
}

SEC("syscall")
int accepted(struct args *a)
{
	__u32 k = a->k;
	__u64 *v;

	v = bpf_map_lookup_elem(&arr, &k);
	if (!v)
		return 0;
	return a->n < 4 ? *v : 1;
}

char LICENSE[] SEC("license") = "GPL";
