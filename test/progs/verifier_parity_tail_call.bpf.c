// SPDX-License-Identifier: GPL-2.0-only
// Verifier test object: bpf_tail_call in a subprogram that returns void, refused from .BTF.ext
// func_info before the program's maps are resolved (a prog array is no map a sleepable
// SYSCALL program may use). The kernel's verdict is in test/bpfvm/verifier_obj_test.cc;
// kernel_diff_test.cc compares with the host kernel.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, int);
} jmp_table SEC(".maps");

__attribute__((noinline)) static void tail_call_void(void *ctx)
{
	bpf_tail_call(ctx, &jmp_table, 0);
}

/* bpf_tail_call in a subprogram that returns void. */
SEC("syscall")
int tail_call_in_void_subprog(void *ctx)
{
	tail_call_void(ctx);
	return 0;
}

char _license[] SEC("license") = "GPL";
