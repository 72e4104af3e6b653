// SPDX-License-Identifier: GPL-2.0-only
// Verifier test object: CO-RE bitfield relocations (BPF_CORE_READ_BITFIELD: the field's byte
// offset and size, the shifts that extract it from a 64-bit load, its signedness) on a struct
// the kernel does not have. libbpf finds no target for it in vmlinux BTF and poisons each
// relocated instruction; the verifier refuses the first one reached and libbpf's log names the
// relocation. A read guarded by bpf_core_field_exists() is dead code for both. The kernel's
// verdicts are in test/bpfvm/verifier_obj_test.cc; kernel_diff_test.cc compares with the host
// kernel. test/bpfvm/loader_core_test.cc resolves the same relocations against a target that
// has the struct.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct core_bits {
	__u8 ub1: 1;
	__u8 ub2: 2;
	__u32 ub7: 7;
	__s8 sb4: 4;
	__s32 sb20: 20;
	__u32 u32;
	__s32 s32;
} __attribute__((preserve_access_index));

struct args {
	struct core_bits bits;
	__s64 out;
};

SEC("syscall")
int read_unsigned(struct args *a)
{
	struct core_bits b = a->bits;

	a->out = BPF_CORE_READ_BITFIELD(&b, ub2);
	return 0;
}

SEC("syscall")
int read_signed(struct args *a)
{
	struct core_bits b = a->bits;

	a->out = BPF_CORE_READ_BITFIELD(&b, sb20);
	return 0;
}

SEC("syscall")
int read_guarded(struct args *a)
{
	struct core_bits b = a->bits;

	a->out = -1;
	if (bpf_core_field_exists(b.sb4))
		a->out = BPF_CORE_READ_BITFIELD(&b, sb4);
	return 0;
}

char _license[] SEC("license") = "GPL";
