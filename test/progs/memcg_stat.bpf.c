// SPDX-License-Identifier: GPL-2.0-only
// A sleepable cgroup iterator that reads every memcg stat item and vm event through the memcg
// kfuncs (bpf_mem_cgroup_page_state, bpf_mem_cgroup_vm_events) after the gated flush, in the
// shape of the kfuncs' intended use: get, flush, read, put. The cgroup visited at seq_num s
// stores item i at key s * NR_IDS + i of `states` and event e at s * NR_EVENTS + e of `events`.
// Ids run past the emulator's MEMCG_NR_STAT and NR_VM_EVENT_ITEMS (mm/memcontrol_stat.h), so
// the invalid-id answers are recorded too.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "memcg_kfuncs.h"

struct bpf_iter_meta {
	void *seq;
	__u64 session_id;
	__u64 seq_num;
};

struct cgroup_subsys_state {
	struct cgroup *cgroup;
};

struct cgroup {
	struct cgroup_subsys_state self;
};

struct bpf_iter__cgroup {
	struct bpf_iter_meta *meta;
	struct cgroup *cgroup;
};

#define NR_SLOTS 4
#define NR_IDS 48
#define NR_EVENTS 41

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NR_SLOTS * NR_IDS);
	__type(key, __u32);
	__type(value, __u64);
} states SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NR_SLOTS * NR_EVENTS);
	__type(key, __u32);
	__type(value, __u64);
} events SEC(".maps");

SEC("iter.s/cgroup")
int read_stats(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	struct mem_cgroup *memcg;
	__u32 slot, key;
	__u64 *v;
	int i;

	if (!cgrp)
		return 0;
	slot = (__u32)ctx->meta->seq_num;
	if (slot >= NR_SLOTS)
		return 1;
	memcg = bpf_get_mem_cgroup(&cgrp->self);
	if (!memcg)
		return 0;
	bpf_mem_cgroup_flush_stats(memcg);
#pragma clang loop unroll(full)
	for (i = 0; i < NR_IDS; i++) {
		key = slot * NR_IDS + i;
		v = bpf_map_lookup_elem(&states, &key);
		if (v)
			*v = bpf_mem_cgroup_page_state(memcg, i);
	}
#pragma clang loop unroll(full)
	for (i = 0; i < NR_EVENTS; i++) {
		key = slot * NR_EVENTS + i;
		v = bpf_map_lookup_elem(&events, &key);
		if (v)
			*v = bpf_mem_cgroup_vm_events(memcg, i);
	}
	bpf_put_mem_cgroup(memcg);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
