// SPDX-License-Identifier: GPL-2.0-only
// Test object for the loader: global data in .data, .rodata, .bss and a
// custom .data.* section, bounded loops, .text subprograms called from two
// programs (bpf-to-bpf calls), and a callback passed to bpf_loop
// (ld_imm64 with BPF_PSEUDO_FUNC).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

int counter = 5;                           // .data
__u64 big_table[4] = { 1, 2, 3, 4 };       // .data
const volatile __u32 limit = 100;          // .rodata
const char greeting[] = "hello";           // .rodata (string)
__u64 hits;                                // .bss
__u32 scratch[8];                          // .bss
__u32 custom_val SEC(".data.custom") = 0xabcd;  // .data.custom

static __attribute__((noinline)) __u64 sum_table(__u32 n)
{
	__u64 s = 0;

	for (__u32 i = 0; i < 4 && i < n; i++)
		s += big_table[i];
	return s;
}

static __attribute__((noinline)) int bump(int by)
{
	counter += by;
	hits++;
	return counter;
}

static long loop_cb(__u64 idx, void *ctx)
{
	__u64 *acc = ctx;

	*acc += idx;
	scratch[idx & 7] = (__u32)idx;
	return 0;
}

SEC("syscall")
int prog_a(void *ctx)
{
	__u64 acc = 0;
	int r;

	r = bump(1);
	bpf_loop(limit, loop_cb, &acc, 0);
	return r + (int)sum_table(3) + (int)acc + greeting[1] + custom_val;
}

SEC("syscall")
int prog_b(void *ctx)
{
	int total = 0;

#pragma clang loop unroll(disable)
	for (int i = 0; i < 10; i++)
		total += bump(i);
	return total;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
