// SPDX-License-Identifier: GPL-2.0-only
// A cgroup iterator that fetches every visited memcg's statistics through the memcg kfuncs, in
// the shape of seed 002's example program: get the memcg, flush (threshold-gated), read each
// wanted item, put. User space names the items before the run (config: the ids of the
// memory.stat items, of the vm events and of the memory events it wants), runs the iterator
// and reads one struct memcg_stats per visited cgroup, by meta->seq_num, from the `stats` array.
// Structs are declared CO-RE style and resolved against the emulator's layouts at load time.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "memcg_kfuncs.h"

#define MAX_CGROUPS 1024
#define MAX_ITEMS 40
#define MAX_EVENTS 32
#define MAX_MEMORY_EVENTS 12

// As cgroup_iter.bpf.c's on purpose: each object declares the layouts it relocates against.
struct cgroup_subsys_state {
	int id;
} __attribute__((preserve_access_index));

struct cgroup {
	struct cgroup_subsys_state self;
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

struct memcg_stats {
	__u64 cgroup_id;
	__u64 items[MAX_ITEMS];
	__u64 events[MAX_EVENTS];
	__u64 memory_events[MAX_MEMORY_EVENTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_CGROUPS);
	__type(key, __u32);
	__type(value, struct memcg_stats);
} stats SEC(".maps");

/* The only .bss variable: the request (written by user space before the run) and the walk's
 * counters (read after it). */
struct {
	__u32 nr_items;
	__u32 nr_events;
	__u32 nr_memory_events;
	__u32 pad;
	__s32 item_ids[MAX_ITEMS];
	__s32 event_ids[MAX_EVENTS];
	__s32 memory_event_ids[MAX_MEMORY_EVENTS];
	__u64 visited;
	__u64 overflow;
} fetch;

SEC("iter.s/cgroup")
int fetch_stats(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	struct memcg_stats *out;
	struct mem_cgroup *memcg;
	__u32 slot;
	int i;

	if (!cgrp)
		return 0;
	slot = (__u32)ctx->meta->seq_num;
	out = bpf_map_lookup_elem(&stats, &slot);
	if (!out) {
		fetch.overflow++;
		return 1;
	}
	memcg = bpf_get_mem_cgroup(&cgrp->self);
	if (!memcg)
		return 0;
	bpf_mem_cgroup_flush_stats(memcg);
	out->cgroup_id = cgrp->self.id;
#pragma clang loop unroll(full)
	for (i = 0; i < MAX_ITEMS; i++)
		if (i < fetch.nr_items)
			out->items[i] = bpf_mem_cgroup_page_state(memcg, fetch.item_ids[i]);
#pragma clang loop unroll(full)
	for (i = 0; i < MAX_EVENTS; i++)
		if (i < fetch.nr_events)
			out->events[i] = bpf_mem_cgroup_vm_events(memcg, fetch.event_ids[i]);
#pragma clang loop unroll(full)
	for (i = 0; i < MAX_MEMORY_EVENTS; i++)
		if (i < fetch.nr_memory_events)
			out->memory_events[i] =
				bpf_mem_cgroup_memory_events(memcg, fetch.memory_event_ids[i]);
	bpf_put_mem_cgroup(memcg);
	fetch.visited++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
