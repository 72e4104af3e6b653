// SPDX-License-Identifier: GPL-2.0-only
// BPF-driven asynchronous proactive reclaim (seed 001, ../shared/seeds/001_*): a policy that
// protects a high-priority cgroup by reclaiming from a low-priority one when the high one
// refaults.
//
// start (SYSCALL, ctx struct start_args): records the two cgroup ids and the knobs, and starts
//   a periodic bpf_timer.
// tick (timer callback): flushes and reads the high cgroup's file refaults
//   (WORKINGSET_REFAULT_FILE); when they grew by at least min_delta since the last tick (0: every
//   tick), starts the bpf_wq; re-arms itself. Failures to re-arm are counted (timer_failures).
// reclaim (bpf_wq callback, sleepable, process context): looks the low cgroup up by id
//   (bpf_cgroup_from_id + bpf_get_mem_cgroup) and calls bpf_proactive_reclaim(low, the bytes
//   left of reclaim_size, swappiness) until reclaim_size is reached (one call reclaims at most
//   a charge batch), a call makes no progress or fails, or MAX_CALLS calls were made; every
//   outcome goes to the ring buffer `events`: RECLAIMED with the bytes, RECLAIM_FAILED with the
//   errno (nothing reclaimed), TARGET_GONE when the lookup fails (the low cgroup is being or was
//   removed).
// stop (SYSCALL): the next tick does not re-arm.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bpf_wq.h"
#include "memcg_kfuncs.h"

#define CLOCK_MONOTONIC 1
#define ENOENT 2
/* include/linux/mmzone.h (Linux 6.19), enum node_stat_item */
#define WORKINGSET_REFAULT_FILE 11
#define PAGE_SIZE 4096
#define MAX_CALLS 64

struct cgroup_subsys_state {
	struct cgroup *cgroup;
};
struct cgroup {
	struct cgroup_subsys_state self;
};

extern long bpf_proactive_reclaim(struct mem_cgroup *memcg, __u64 size, int swappiness) __ksym;
extern int bpf_wq_init(struct bpf_wq *wq, void *p__map, unsigned int flags) __ksym;
extern int bpf_wq_start(struct bpf_wq *wq, unsigned int flags) __ksym;

enum outcome {
	RECLAIMED = 1,
	RECLAIM_FAILED = 2,
	TARGET_GONE = 3,
};

struct event {
	__u32 kind;		/* enum outcome */
	__s32 err;		/* RECLAIM_FAILED: the kfunc's errno; TARGET_GONE: -ENOENT */
	__u64 bytes;		/* RECLAIMED: bytes reclaimed */
	__u64 refault_delta;	/* the growth that started this reclaim */
	__u64 time_ns;
};

struct ctl {
	struct bpf_timer timer;
	struct bpf_wq wq;
	__u64 last_refault;
	__u64 pending_delta;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctl);
} ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} events SEC(".maps");

struct start_args {
	__u64 high_cgid;
	__u64 low_cgid;
	__u64 period_ns;
	__u64 reclaim_size;	/* bytes per bpf_proactive_reclaim() call */
	__u64 min_delta;	/* refault growth that triggers a reclaim; 0: every tick */
	__s32 swappiness;	/* -1: the memcg's own */
	__s32 ret;		/* 0, or the failing call's errno */
};

/* Configuration (start) and statistics; memcg_async_reclaim_user.h copies it for user space. */
struct {
	__u64 high_cgid, low_cgid, period_ns, reclaim_size, min_delta;
	__s64 swappiness;
	__u64 ticks, wq_starts, wq_start_failures, timer_failures;
	__u64 reclaims, reclaimed_bytes, target_gone, events_lost;
	__s64 last_reclaim_err;
	__u64 stopped;
} st;

static void report(__u32 kind, __s32 err, __u64 bytes, __u64 delta)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&st.events_lost, 1);
		return;
	}
	e->kind = kind;
	e->err = err;
	e->bytes = bytes;
	e->refault_delta = delta;
	e->time_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(e, 0);
}

static int reclaim(void *map, int *key, void *value)
{
	struct ctl *c = value;
	struct mem_cgroup *low;
	struct cgroup *cgrp;
	__u64 done = 0;
	long ret = 0;
	int i;

	cgrp = bpf_cgroup_from_id(st.low_cgid);
	if (!cgrp) {
		__sync_fetch_and_add(&st.target_gone, 1);
		report(TARGET_GONE, -ENOENT, 0, c->pending_delta);
		return 0;
	}
	low = bpf_get_mem_cgroup(&cgrp->self);
	bpf_cgroup_release(cgrp);
	if (!low) {
		__sync_fetch_and_add(&st.target_gone, 1);
		report(TARGET_GONE, -ENOENT, 0, c->pending_delta);
		return 0;
	}
	/* One call reclaims at most a charge batch: call until reclaim_size is reached, a call
	 * makes no progress or fails, or MAX_CALLS were made. */
	for (i = 0; i < MAX_CALLS && st.reclaim_size - done >= PAGE_SIZE; i++) {
		ret = bpf_proactive_reclaim(low, st.reclaim_size - done, (int)st.swappiness);
		if (ret <= 0)
			break;
		done += ret;
		if (done >= st.reclaim_size)
			break;
	}
	bpf_put_mem_cgroup(low);
	__sync_fetch_and_add(&st.reclaims, 1);
	if (ret < 0 && !done) {
		st.last_reclaim_err = ret;
		report(RECLAIM_FAILED, (__s32)ret, 0, c->pending_delta);
	} else {
		__sync_fetch_and_add(&st.reclaimed_bytes, done);
		report(RECLAIMED, 0, done, c->pending_delta);
	}
	return 0;
}

static int tick(void *map, int *key, struct ctl *c)
{
	struct mem_cgroup *high = 0;
	struct cgroup *cgrp;
	__u64 refault, delta;

	__sync_fetch_and_add(&st.ticks, 1);
	if (st.stopped)
		return 0;
	cgrp = bpf_cgroup_from_id(st.high_cgid);
	if (cgrp) {
		high = bpf_get_mem_cgroup(&cgrp->self);
		bpf_cgroup_release(cgrp);
	}
	if (high) {
		bpf_mem_cgroup_flush_stats(high);
		refault = bpf_mem_cgroup_page_state(high, WORKINGSET_REFAULT_FILE);
		bpf_put_mem_cgroup(high);
		/* An idle tick (no growth) discards nothing: last_refault only moves forward. */
		delta = refault > c->last_refault ? refault - c->last_refault : 0;
		if (refault > c->last_refault)
			c->last_refault = refault;
		if (delta >= st.min_delta) {
			c->pending_delta = delta;
			if (bpf_wq_start(&c->wq, 0))
				__sync_fetch_and_add(&st.wq_start_failures, 1);
			else
				__sync_fetch_and_add(&st.wq_starts, 1);
		}
	}
	if (bpf_timer_start(&c->timer, st.period_ns, 0))
		__sync_fetch_and_add(&st.timer_failures, 1);
	return 0;
}

SEC("syscall")
int start(struct start_args *a)
{
	__u32 zero = 0;
	struct ctl *c = bpf_map_lookup_elem(&ctl, &zero);
	int err;

	if (!c)
		return 1;
	st.high_cgid = a->high_cgid;
	st.low_cgid = a->low_cgid;
	st.period_ns = a->period_ns;
	st.reclaim_size = a->reclaim_size;
	st.min_delta = a->min_delta;
	st.swappiness = a->swappiness;
	st.stopped = 0;
	err = bpf_wq_init(&c->wq, &ctl, 0);
	if (!err)
		err = bpf_wq_set_callback_impl(&c->wq, reclaim, 0, NULL);
	if (!err)
		err = bpf_timer_init(&c->timer, &ctl, CLOCK_MONOTONIC);
	if (!err)
		err = bpf_timer_set_callback(&c->timer, tick);
	if (!err)
		err = bpf_timer_start(&c->timer, a->period_ns, 0);
	a->ret = err;
	return 0;
}

SEC("syscall")
int stop(void *ctx)
{
	st.stopped = 1;
	return 0;
}

char _license[] SEC("license") = "GPL";
