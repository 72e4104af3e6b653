// SPDX-License-Identifier: GPL-2.0-only
// Runtime test object: .rodata (frozen), .data and .bss global variables, the time, CPU and
// random helpers, bpf_printk (bpf_trace_printk), and a write to .rodata that must be refused.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

const volatile __u32 factor = 3;  // .rodata
__u32 base = 100;                 // .data
__u64 ncalls;                     // .bss

struct glob_args {
	__u32 in;
	__u32 cpu;
	__u64 out;
	__u64 calls;
	__u64 now;
	__u32 rnd;
	__u32 pad;
};

SEC("syscall")
int use_globals(struct glob_args *a)
{
	char s[4] = { 'a', 'b', 'c', 0 };

	ncalls++;
	a->out = base + a->in * factor;
	a->calls = ncalls;
	a->cpu = bpf_get_smp_processor_id();
	a->rnd = bpf_get_prandom_u32();
	a->now = bpf_ktime_get_ns();
	bpf_printk("in=%u out=%llu calls=%llu", a->in, a->out, ncalls);
	bpf_printk("str %s chr %c hex %x", s, 'z', 255);
	return 0;
}

SEC("syscall")
int write_rodata(void *ctx)
{
	*(volatile __u32 *)&factor = 7;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
