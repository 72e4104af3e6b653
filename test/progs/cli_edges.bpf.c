// SPDX-License-Identifier: GPL-2.0-only
// Test object for the loader's and the command line's edge cases: a write to the frame
// pointer in code the verifier proves dead (the kernel accepts it), bpf_probe_read_kernel, and
// a program in a "?syscall" section (libbpf: not loaded unless asked for).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct probe_args {
	__u64 src;
	__u64 out;
	__s64 err;
};

SEC("syscall")
int dead_fp_write(void *ctx)
{
	asm volatile("r1 = 0;"
		     "if r1 == 0 goto +1;"
		     "r10 = 0;"
		     ::: "r1");
	return 3;
}

SEC("syscall")
int probe_read(struct probe_args *a)
{
	__u64 v = 0;

	a->err = bpf_probe_read_kernel(&v, sizeof(v), (void *)a->src);
	a->out = v;
	return 0;
}

SEC("?syscall")
int not_autoloaded(void *ctx)
{
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
