// SPDX-License-Identifier: GPL-2.0-only
// Runtime test object: SYSCALL programs that update a hash map, a per-CPU array and a ring
// buffer (reserve/submit, output, reserve/discard, query), delete keys, and two programs a
// verifier would reject (an out-of-bounds ctx read, an unreleased ring-buffer record) that the
// checked interpreter must stop.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct args {
	__u32 key;
	__u32 flags;
	__u64 value;
	__u64 out;
};

struct event {
	__u32 key;
	__u32 kind;
	__u64 value;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} rb SEC(".maps");

SEC("syscall")
int update_and_emit(struct args *a)
{
	/* Helpers take stack or map memory, never the context: the key is copied first. */
	__u32 key = a->key;
	__u64 v = a->value;
	__u32 zero = 0;
	struct event *e;
	__u64 *p, *c;
	long err;

	err = bpf_map_update_elem(&hash, &key, &v, a->flags);
	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (!e)
		return -1;
	e->key = key;
	e->kind = err ? 2 : 1;
	e->value = v;
	bpf_ringbuf_submit(e, 0);
	p = bpf_map_lookup_elem(&hash, &key);
	a->out = p ? *p : 0;
	c = bpf_map_lookup_elem(&calls, &zero);
	if (c)
		(*c)++;
	return err;
}

SEC("syscall")
int output_discard(struct args *a)
{
	struct event ev = { .key = a->key, .kind = 3, .value = a->value };
	struct event *e;
	long r;

	r = bpf_ringbuf_output(&rb, &ev, sizeof(ev), BPF_RB_NO_WAKEUP);
	e = bpf_ringbuf_reserve(&rb, sizeof(*e), 0);
	if (e)
		bpf_ringbuf_discard(e, 0);
	a->out = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	return r;
}

SEC("syscall")
int delete_key(struct args *a)
{
	__u32 key = a->key;

	return bpf_map_delete_elem(&hash, &key);
}

SEC("syscall")
int bad_ctx_read(struct args *a)
{
	return *(volatile __u64 *)((char *)a + 64);
}

SEC("syscall")
int leak_record(void *ctx)
{
	void *e = bpf_ringbuf_reserve(&rb, 8, 0);

	return e != 0;
}

char LICENSE[] SEC("license") = "GPL";
