// SPDX-License-Identifier: GPL-2.0-only
// test/progs/raw_map_fd.bpf.c: an ld_imm64 of a map written as raw bytes (BPF_PSEUDO_MAP_FD,
// fd 0) with no relocation, beside a relocated reference to a real map: the verifier must refuse
// the raw fd ("fd 0 is not pointing to valid bpf_map", as the kernel does after fdget) even
// though the object's map 0 exists.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u64);
} real_map SEC(".maps");

SEC("syscall")
int relocated(void *ctx)
{
	__u64 key = 0;

	bpf_map_delete_elem(&real_map, &key);
	return 0;
}

SEC("syscall")
__attribute__((naked)) int raw_fd(void *ctx)
{
	asm volatile("r2 = 0;"
		     "*(u64 *)(r10 - 8) = r2;"
		     "r2 = r10;"
		     "r2 += -8;"
		     ".8byte 0x0000000000001118;"  /* ld_imm64 r1, src_reg BPF_PSEUDO_MAP_FD, imm 0 */
		     ".8byte 0;"
		     "call 3;"                      /* bpf_map_delete_elem */
		     "r0 = 0;"
		     "exit;");
}

char LICENSE[] SEC("license") = "GPL";
