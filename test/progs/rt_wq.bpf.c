// SPDX-License-Identifier: GPL-2.0-only
// Runtime test object: bpf_wq_init / bpf_wq_set_callback_impl / bpf_wq_start on array and hash
// values, callbacks that count their runs and record the (key, value) they are called with, a
// callback that re-arms itself, and programs the verifier refuses (callback return value, map
// mismatch).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bpf_wq.h"

extern int bpf_wq_init(struct bpf_wq *wq, void *p__map, unsigned int flags) __weak __ksym;
extern int bpf_wq_start(struct bpf_wq *wq, unsigned int flags) __weak __ksym;
#define bpf_wq_set_callback(wq, cb, flags) bpf_wq_set_callback_impl(wq, cb, flags, NULL)

struct elem {
	__u64 runs;
	struct bpf_wq wq;
	__u64 key_seen;
	__u64 rearm;	/* runs left that re-arm the work */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct elem);
} warr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct elem);
} whash SEC(".maps");

__u64 total_runs;

/* The test's context: which map and key, and the kfuncs' results. */
struct args {
	__u32 key;
	__u32 flags;	/* passed to bpf_wq_init and bpf_wq_start */
	__u32 skip;	/* 1: no init, 2: no set_callback, 4: no start */
	__s32 init_ret;
	__s32 cb_ret;
	__s32 start_ret;
	__u32 rearm;
};

static int count_cb(void *map, int *key, void *value)
{
	struct elem *e = value;

	e->runs++;
	e->key_seen = *key;
	__sync_fetch_and_add(&total_runs, 1);
	if (e->rearm) {
		e->rearm--;
		bpf_wq_start(&e->wq, 0);
	}
	return 0;
}

static __always_inline int setup(struct args *a, struct elem *e, void *map)
{
	if (!e)
		return 1;
	e->rearm = a->rearm;
	if (!(a->skip & 1))
		a->init_ret = bpf_wq_init(&e->wq, map, a->flags);
	if (!(a->skip & 2))
		a->cb_ret = bpf_wq_set_callback(&e->wq, count_cb, 0);
	if (!(a->skip & 4))
		a->start_ret = bpf_wq_start(&e->wq, a->flags);
	return 0;
}

SEC("syscall")
int wq_setup_array(struct args *a)
{
	__u32 key = a->key;

	return setup(a, bpf_map_lookup_elem(&warr, &key), &warr);
}

SEC("syscall")
int wq_setup_hash(struct args *a)
{
	__u32 key = a->key;
	struct elem zero = {};

	bpf_map_update_elem(&whash, &key, &zero, BPF_NOEXIST);
	return setup(a, bpf_map_lookup_elem(&whash, &key), &whash);
}

static int bad_ret_cb(void *map, int *key, void *value)
{
	return 1;
}

SEC("syscall")
int bad_callback_ret(void *ctx)
{
	__u32 key = 0;
	struct elem *e = bpf_map_lookup_elem(&warr, &key);

	if (!e)
		return 0;
	bpf_wq_init(&e->wq, &warr, 0);
	bpf_wq_set_callback(&e->wq, bad_ret_cb, 0);
	return 0;
}

SEC("syscall")
int map_mismatch(void *ctx)
{
	__u32 key = 0;
	struct elem *e = bpf_map_lookup_elem(&warr, &key);

	if (!e)
		return 0;
	bpf_wq_init(&e->wq, &whash, 0);
	return 0;
}

/* flags need not be a known constant (6.19: no __k); non-zero ones fail at run time. */
SEC("syscall")
int set_callback_flags(struct args *a)
{
	__u32 key = a->key;
	struct elem *e = bpf_map_lookup_elem(&warr, &key);

	if (!e)
		return 0;
	a->cb_ret = bpf_wq_set_callback_impl(&e->wq, count_cb, a->flags, NULL);
	return 0;
}

char _license[] SEC("license") = "GPL";
