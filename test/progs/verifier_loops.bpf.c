// SPDX-License-Identifier: GPL-2.0-only
// Verifier test object: bounded loops that look a key up in a hash map and insert a value on a
// miss, the value built from the loop variable or constant, as 32-bit and 64-bit fields. The
// kernel prunes the hit and miss paths of each iteration into one (the spilled fields are not
// precise), so each verifies in about 60 processed instructions per iteration. key_addr takes
// the loop variable's address: its unaligned 32-bit spill is plain stack bytes, the counter is
// lost and the kernel reports an infinite loop.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct val32 {
	__u32 a;
	__u32 b;
};

struct val64 {
	__u64 a;
	__u64 b;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct val32);
} vals32 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct val64);
} vals64 SEC(".maps");

SEC("syscall")
int update_var32(void *ctx)
{
	for (int i = 0; i < 32; i++) {
		__u32 key = i;

		if (!bpf_map_lookup_elem(&vals32, &key)) {
			struct val32 nv = {1, i};

			bpf_map_update_elem(&vals32, &key, &nv, BPF_ANY);
		}
	}
	return 0;
}

SEC("syscall")
int update_const32(void *ctx)
{
	for (int i = 0; i < 32; i++) {
		__u32 key = i;

		if (!bpf_map_lookup_elem(&vals32, &key)) {
			struct val32 nv = {1, 2};

			bpf_map_update_elem(&vals32, &key, &nv, BPF_ANY);
		}
	}
	return 0;
}

SEC("syscall")
int update_var64(void *ctx)
{
	for (int i = 0; i < 32; i++) {
		__u32 key = i;

		if (!bpf_map_lookup_elem(&vals64, &key)) {
			struct val64 nv = {1, i};

			bpf_map_update_elem(&vals64, &key, &nv, BPF_ANY);
		}
	}
	return 0;
}

SEC("syscall")
int update_const64(void *ctx)
{
	for (int i = 0; i < 32; i++) {
		__u32 key = i;

		if (!bpf_map_lookup_elem(&vals64, &key)) {
			struct val64 nv = {1, 2};

			bpf_map_update_elem(&vals64, &key, &nv, BPF_ANY);
		}
	}
	return 0;
}

SEC("syscall")
int update_key_addr(void *ctx)
{
	for (__u32 i = 0; i < 32; i++) {
		if (!bpf_map_lookup_elem(&vals32, &i)) {
			struct val32 nv = {1, i};

			bpf_map_update_elem(&vals32, &i, &nv, BPF_ANY);
		}
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
