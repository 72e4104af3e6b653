// SPDX-License-Identifier: GPL-2.0-only
// Verifier and runtime test object: bpf_for_each_map_elem callbacks over array and hash maps.
// The verifier walks a callback as it walks bpf_loop's (again from the call until the
// iterations converge, with no bound: the map decides how many there are), with r1 the map,
// r2 a read-only key, r3 a value of the map and r4 the context; the callback returns 0 to go
// on, 1 to stop. The kernel's verdicts are in test/bpfvm/verifier_obj_test.cc;
// kernel_diff_test.cc compares with the host kernel, runtime_helpers_test.cc runs them.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} arr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} pcpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} rb SEC(".maps");

// What the callback adds up, in global data: a count kept in the caller's frame would be a
// precise value here, walked visit by visit without end (see docs/bpfvm.md).
__u64 g_sum;     // of the values visited
__u64 g_keys;    // of the keys visited
__u32 g_visits;  // callback calls
__u32 g_stop_at; // the visit that returns 1 (0: never)

// The test-run context: what the runtime test reads back.
struct args {
	__u32 stop_at;
	__u32 visits;
	__u64 sum;
	__u64 keys;
	__s64 ret;
};

static long sum_elem(void *map, __u32 *key, __u64 *val, void *ctx)
{
	__u32 v;

	g_sum += *val;
	g_keys += *key;
	v = ++g_visits;
	*val += 1;  // values are writable
	if (g_stop_at && v == g_stop_at)
		return 1;
	return 0;
}

static void start(__u32 stop_at)
{
	g_stop_at = stop_at;
	g_sum = 0;
	g_keys = 0;
	g_visits = 0;
}

static void report(struct args *a, long ret)
{
	a->visits = g_visits;
	a->sum = g_sum;
	a->keys = g_keys;
	a->ret = ret;
}

// Every element of the array, or the first stop_at of them.
SEC("syscall")
int sum_array(struct args *a)
{
	long ret;

	start(a->stop_at);
	ret = bpf_for_each_map_elem(&arr, sum_elem, 0, 0);
	report(a, ret);
	return 0;
}

// Every element of the hash map (the test fills it), or the first stop_at of them.
SEC("syscall")
int sum_hash(struct args *a)
{
	long ret;

	start(a->stop_at);
	ret = bpf_for_each_map_elem(&hash, sum_elem, 0, 0);
	report(a, ret);
	return 0;
}

// This CPU's values of a per-CPU array.
SEC("syscall")
int sum_percpu(struct args *a)
{
	long ret;

	start(0);
	ret = bpf_for_each_map_elem(&pcpu, sum_elem, 0, 0);
	report(a, ret);
	return 0;
}

// Non-zero flags: the helper refuses with -EINVAL before any call.
SEC("syscall")
int bad_flags(struct args *a)
{
	long ret;

	start(0);
	ret = bpf_for_each_map_elem(&arr, sum_elem, 0, a->stop_at | 1);
	report(a, ret);
	return 0;
}

static long no_ctx(void *map, __u32 *key, __u64 *val, void *ctx)
{
	return *key == 2;
}

// A NULL context: the callback gets NULL in r4.
SEC("syscall")
int null_ctx(struct args *a)
{
	a->ret = bpf_for_each_map_elem(&arr, no_ctx, 0, 0);
	return 0;
}

// The callback returns 2: outside [0, 1].
static long ret_two(void *map, __u32 *key, __u64 *val, void *ctx)
{
	return 2;
}

SEC("syscall")
int bad_return(struct args *a)
{
	bpf_for_each_map_elem(&arr, ret_two, 0, 0);
	return 0;
}

// The key is read-only.
static long write_key(void *map, __u32 *key, __u64 *val, void *ctx)
{
	*key = 0;
	return 0;
}

SEC("syscall")
int key_write(struct args *a)
{
	bpf_for_each_map_elem(&arr, write_key, 0, 0);
	return 0;
}

// The value is the map's value size (8 bytes): reading past it is refused.
static long read_past(void *map, __u32 *key, __u64 *val, void *ctx)
{
	return val[1] & 1;
}

SEC("syscall")
int value_past_end(struct args *a)
{
	bpf_for_each_map_elem(&arr, read_past, 0, 0);
	return 0;
}

// A ring buffer is not iterable: its map type is reserved for the ring-buffer helpers.
SEC("syscall")
int ringbuf_map(struct args *a)
{
	bpf_for_each_map_elem(&rb, no_ctx, 0, 0);
	return 0;
}

// A context counter that indexes a buffer: there is no bound on the visits, so the walk finds
// the visit that writes past the buffer.
struct idx_ctx {
	__u32 i;
	__u8 buf[8];
};

static long write_next(void *map, __u32 *key, __u64 *val, struct idx_ctx *ctx)
{
	if (ctx->i >= 8)
		return 1;
	ctx->buf[ctx->i] = 1;
	ctx->i++;
	return 0;
}

// Bounded inside the callback: accepted.
SEC("syscall")
int index_checked(struct args *a)
{
	struct idx_ctx c = {};

	bpf_for_each_map_elem(&hash, write_next, &c, 0);
	a->visits = c.i;
	return 0;
}

static long write_unchecked(void *map, __u32 *key, __u64 *val, struct idx_ctx *ctx)
{
	ctx->buf[ctx->i] = 1;
	ctx->i++;
	return 0;
}

SEC("syscall")
int index_unchecked(struct args *a)
{
	struct idx_ctx c = {};

	bpf_for_each_map_elem(&hash, write_unchecked, &c, 0);
	return 0;
}

// References across the callback frame: a record reserved by the caller and released by the
// callback (then again by the caller, as the callback may not have run), and one reserved by
// the callback and left to the caller. Since Linux 6.13 the kernel has no rule of its own for
// callbacks here: the walk of the visits finds the double release and the leak.
struct rec_ctx {
	void *rec;
};

static long submit_callers(void *map, __u32 *key, __u64 *val, struct rec_ctx *ctx)
{
	bpf_ringbuf_submit(ctx->rec, 0);
	return 0;
}

SEC("syscall")
int cb_releases_caller_ref(struct args *a)
{
	struct rec_ctx c = {};

	c.rec = bpf_ringbuf_reserve(&rb, 8, 0);
	if (!c.rec)
		return 0;
	bpf_for_each_map_elem(&arr, submit_callers, &c, 0);
	bpf_ringbuf_discard(c.rec, 0);
	return 0;
}

static long reserve_for_caller(void *map, __u32 *key, __u64 *val, struct rec_ctx *ctx)
{
	ctx->rec = bpf_ringbuf_reserve(&rb, 8, 0);
	return 1;
}

SEC("syscall")
int cb_leaves_ref(struct args *a)
{
	struct rec_ctx c = {};

	bpf_for_each_map_elem(&arr, reserve_for_caller, &c, 0);
	if (c.rec)
		bpf_ringbuf_discard(c.rec, 0);
	return 0;
}

// A record the callback reserves and submits itself: accepted.
static long own_record(void *map, __u32 *key, __u64 *val, void *ctx)
{
	__u64 *r = bpf_ringbuf_reserve(&rb, 8, 0);

	if (!r)
		return 1;
	*r = *val;
	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("syscall")
int cb_own_ref(struct args *a)
{
	a->ret = bpf_for_each_map_elem(&arr, own_record, 0, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
