// SPDX-License-Identifier: GPL-2.0-only
// struct bpf_wq (uapi, Linux 6.10+) and bpf_wq_set_callback_impl (libbpf's bpf_experimental.h,
// 6.19): not in the headers this project builds against. bpf_wq_init and bpf_wq_start are
// declared by each program that calls them (rt_wq.bpf.c declares them __weak).
#pragma once

struct bpf_wq {
	__u64 __opaque[2];
} __attribute__((aligned(8)));

extern int bpf_wq_set_callback_impl(struct bpf_wq *wq,
				    int (callback_fn)(void *map, int *key, void *value),
				    unsigned int flags, void *aux__prog) __ksym;
