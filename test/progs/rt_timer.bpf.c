// SPDX-License-Identifier: GPL-2.0-only
// Runtime test object: bpf_timer_init / set_callback / start / cancel on array and hash values:
// a callback that counts its runs, records its key and the time it ran, and re-arms itself a
// given number of times; a program the verifier refuses (the callback's return value).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define CLOCK_MONOTONIC 1

struct elem {
	__u64 runs;
	struct bpf_timer t;
	__u64 key_seen;
	__u64 rearm;	/* runs left that re-arm the timer */
	__u64 period;	/* ns */
	__u64 ran_at;	/* bpf_ktime_get_ns() of the last run */
	__s64 cancel_self; /* bpf_timer_cancel() of its own timer, from the callback */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct elem);
} tarr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct elem);
} thash SEC(".maps");

__u64 total_runs;

struct args {
	__u32 key;
	__u32 init_flags;
	__u32 start_flags;
	__u32 skip;	/* 1: no init, 2: no set_callback, 4: no start, 8: cancel */
	__u64 nsecs;
	__u64 rearm;
	__s32 init_ret;
	__s32 cb_ret;
	__s32 start_ret;
	__s32 cancel_ret;
};

static int tick(void *map, int *key, struct elem *e)
{
	e->runs++;
	e->key_seen = *key;
	e->ran_at = bpf_ktime_get_ns();
	__sync_fetch_and_add(&total_runs, 1);
	if (e->rearm) {
		e->rearm--;
		bpf_timer_start(&e->t, e->period, 0);
	} else {
		e->cancel_self = bpf_timer_cancel(&e->t);
	}
	return 0;
}

static __always_inline int setup(struct args *a, struct elem *e, void *map)
{
	if (!e)
		return 1;
	e->rearm = a->rearm;
	e->period = a->nsecs;
	if (!(a->skip & 1))
		a->init_ret = bpf_timer_init(&e->t, map, a->init_flags);
	if (!(a->skip & 2))
		a->cb_ret = bpf_timer_set_callback(&e->t, tick);
	if (!(a->skip & 4))
		a->start_ret = bpf_timer_start(&e->t, a->nsecs, a->start_flags);
	if (a->skip & 8)
		a->cancel_ret = bpf_timer_cancel(&e->t);
	return 0;
}

SEC("syscall")
int timer_setup_array(struct args *a)
{
	__u32 key = a->key;

	return setup(a, bpf_map_lookup_elem(&tarr, &key), &tarr);
}

SEC("syscall")
int timer_setup_hash(struct args *a)
{
	__u32 key = a->key;
	struct elem zero = {};

	bpf_map_update_elem(&thash, &key, &zero, BPF_NOEXIST);
	return setup(a, bpf_map_lookup_elem(&thash, &key), &thash);
}

static int bad_ret(void *map, int *key, struct elem *e)
{
	return 2;
}

SEC("syscall")
int bad_timer_callback_ret(void *ctx)
{
	__u32 key = 0;
	struct elem *e = bpf_map_lookup_elem(&tarr, &key);

	if (!e)
		return 0;
	bpf_timer_init(&e->t, &tarr, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&e->t, bad_ret);
	return 0;
}

SEC("syscall")
int timer_map_mismatch(void *ctx)
{
	__u32 key = 0;
	struct elem *e = bpf_map_lookup_elem(&tarr, &key);

	if (!e)
		return 0;
	bpf_timer_init(&e->t, &thash, CLOCK_MONOTONIC);
	return 0;
}

char _license[] SEC("license") = "GPL";
