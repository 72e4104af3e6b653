// SPDX-License-Identifier: GPL-2.0-only
// Test object for the loader: one BTF-defined map of each type the emulator
// models, a map-in-map, and programs that reference them (ld_imm64 map
// relocations), including ring buffer use.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

// Not in the 6.1 uapi headers of this distribution (added in 6.2).
#define MAP_TYPE_CGRP_STORAGE 32

struct task_struct;
struct cgroup;

struct val {
	__u64 count;
	__u32 flags;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, struct val);
} arr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} pcpu_arr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct val);
} hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 128);
	__type(key, __u32);
	__type(value, __u32);
} pcpu_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lru SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096 * 4);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} task_depth SEC(".maps");

struct {
	__uint(type, MAP_TYPE_CGRP_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} cgrp_val SEC(".maps");

struct inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 3);
	__type(key, __u32);
	__array(values, struct inner);
} outer SEC(".maps");

struct event {
	__u32 pid;
	__u32 kind;
	__u64 value;
};

SEC("syscall")
int use_maps(void *ctx)
{
	__u32 k = 1;
	__u64 hk = 7;
	struct val *v, nv = { .count = 1 };
	__u64 *pc;
	struct event *e;

	v = bpf_map_lookup_elem(&arr, &k);
	if (v)
		v->count++;
	pc = bpf_map_lookup_elem(&pcpu_arr, &k);
	if (pc)
		(*pc)++;
	bpf_map_update_elem(&hash, &hk, &nv, BPF_ANY);
	bpf_map_update_elem(&pcpu_hash, &k, &k, BPF_ANY);
	bpf_map_update_elem(&lru, &k, &hk, BPF_ANY);

	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e)
		return 1;
	e->pid = k;
	e->kind = 2;
	e->value = hk;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sched_switch")
int use_storage(__u64 *ctx)
{
	struct task_struct *t = (void *)ctx[1];
	struct cgroup *c = (void *)ctx[2];
	__u64 *d;
	__u32 *cv;

	d = bpf_task_storage_get(&task_depth, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (d)
		(*d)++;
	cv = bpf_cgrp_storage_get(&cgrp_val, c, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (cv)
		(*cv)++;
	return bpf_map_lookup_elem(&outer, &(__u32){0}) != 0;
}

char LICENSE[] SEC("license") = "GPL";
