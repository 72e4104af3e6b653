// SPDX-License-Identifier: GPL-2.0-only
// A cgroup iterator that records the walk: the id of every visited cgroup, by meta->seq_num,
// and whether the final NULL call came. Structs are declared CO-RE style (preserve_access_index)
// and resolved against the emulator's layouts at load time. A positive stop_at ends the walk
// after the cgroup with that id (-1: never).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

// As memcg_stat_iter.bpf.c's on purpose: each object declares the layouts it relocates against.
struct cgroup_subsys_state {
	int id;
} __attribute__((preserve_access_index));

struct cgroup {
	struct cgroup_subsys_state self;
	int level;
} __attribute__((preserve_access_index));

struct bpf_iter_meta {
	void *seq;
	__u64 session_id;
	__u64 seq_num;
} __attribute__((preserve_access_index));

struct bpf_iter__cgroup {
	struct bpf_iter_meta *meta;
	struct cgroup *cgroup;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 32);
	__type(key, __u32);
	__type(value, __s64);
} visits SEC(".maps");

/* walk is the only .bss variable (offset 0); stop_at the only .data one. */
struct {
	__u64 count;
	__u64 final_calls;
	__u64 level_sum;
} walk;
int stop_at = -1;

SEC("iter/cgroup")
int record(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	__u32 slot;
	__s64 id;
	__s64 *v;

	if (!cgrp) {
		walk.final_calls++;
		return 0;
	}
	slot = (__u32)ctx->meta->seq_num;
	id = cgrp->self.id;
	v = bpf_map_lookup_elem(&visits, &slot);
	if (v)
		*v = id;
	walk.count++;
	walk.level_sum += cgrp->level;
	return stop_at > 0 && id == stop_at;
}

char LICENSE[] SEC("license") = "GPL";
