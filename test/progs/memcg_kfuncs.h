// SPDX-License-Identifier: GPL-2.0-only
// The cgroup and memcg kfuncs the test programs call, declared once for them all (an extern a
// program does not call leaves no trace in its object). A program defines the kernel structs
// it reads, with the fields it uses, itself. bpf_proactive_reclaim is declared by each program
// that calls it: its size parameter is __u64 in some and unsigned long in others, and
// memcg_ops.bpf.c declares it __weak.
#pragma once

struct mem_cgroup;
struct cgroup;
struct cgroup_subsys_state;

extern struct cgroup *bpf_cgroup_from_id(__u64 cgid) __ksym;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym;
extern struct mem_cgroup *bpf_get_mem_cgroup(struct cgroup_subsys_state *css) __ksym;
extern struct mem_cgroup *bpf_get_root_mem_cgroup(void) __ksym;
extern void bpf_put_mem_cgroup(struct mem_cgroup *memcg) __ksym;
extern unsigned long bpf_mem_cgroup_usage(struct mem_cgroup *memcg) __ksym;
extern unsigned long bpf_mem_cgroup_page_state(struct mem_cgroup *memcg, int idx) __ksym;
extern unsigned long bpf_mem_cgroup_vm_events(struct mem_cgroup *memcg, int event) __ksym;
extern unsigned long bpf_mem_cgroup_memory_events(struct mem_cgroup *memcg, int event) __ksym;
extern void bpf_mem_cgroup_flush_stats(struct mem_cgroup *memcg) __ksym;
