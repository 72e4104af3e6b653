// SPDX-License-Identifier: GPL-2.0-only
// Verifier test object: rules where bpfvm's verifier follows the kernel's on the kernel's own
// verifier selftests (tools/verifier_corpus.py), as SYSCALL programs: struct bpf_map fields read
// through a map pointer (a privileged loader's check_ptr_to_map_access(), the host kernel's
// layout), LD_ABS in a subprogram that returns void (.BTF.ext func_info; bpf_tail_call in
// verifier_parity_tail_call.bpf.c, whose prog array the runtime does not create),
// bpf_fastcall spills and fills left out of the stack depth, bpf_get_stack and its refined
// return range. The kernel's verdicts are in test/bpfvm/verifier_obj_test.cc;
// kernel_diff_test.cc compares with the host kernel.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define __clobber_all "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "memory"
#define __imm(name) [name]"i"(name)
#define __imm_addr(name) [name]"i"(&name)
#define __imm_insn(name, expr) [name]"i"(*(long *)&(expr))

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, __u64);
} arr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u64);
	__type(value, __u64[6]);
} hash SEC(".maps");

/* map->max_entries (struct bpf_map at the start of struct bpf_array). */
SEC("syscall")
__attribute__((naked)) int map_max_entries(void)
{
	asm volatile ("					\
	r1 = %[arr] ll;					\
	r0 = *(u32 *)(r1 + 76);				\
	exit;						\
"	:
	: __imm_addr(arr)
	: __clobber_all);
}

/* array->elem_size, a field of struct bpf_array itself, and map->ops (a pointer). */
SEC("syscall")
__attribute__((naked)) int map_elem_size_and_ops(void)
{
	asm volatile ("					\
	r1 = %[arr] ll;					\
	r0 = *(u32 *)(r1 + 296);			\
	r2 = *(u64 *)(r1 + 40);				\
	exit;						\
"	:
	: __imm_addr(arr)
	: __clobber_all);
}

/* Part of a pointer field. */
SEC("syscall")
__attribute__((naked)) int map_ptr_field_part(void)
{
	asm volatile ("					\
	r1 = %[arr] ll;					\
	r0 = *(u32 *)(r1 + 44);				\
	exit;						\
"	:
	: __imm_addr(arr)
	: __clobber_all);
}

/* Past the end of struct bpf_htab. */
SEC("syscall")
__attribute__((naked)) int map_past_struct(void)
{
	asm volatile ("					\
	r1 = %[hash] ll;				\
	r0 = *(u32 *)(r1 + 900);			\
	exit;						\
"	:
	: __imm_addr(hash)
	: __clobber_all);
}

/* Across the end of a scalar field (map_type into key_size). */
SEC("syscall")
__attribute__((naked)) int map_across_field(void)
{
	asm volatile ("					\
	r1 = %[hash] ll;				\
	r0 = *(u64 *)(r1 + 64);				\
	exit;						\
"	:
	: __imm_addr(hash)
	: __clobber_all);
}

__attribute__((naked, noinline, used)) static void ld_abs_void_subprog(void)
{
	asm volatile (
	"r6 = r1;"
	".8byte %[ld_abs];"
	"r0 = 1;"
	"exit;"
	:
	: __imm_insn(ld_abs, ((struct bpf_insn){.code = BPF_LD | BPF_ABS | BPF_W}))
	: __clobber_all);
}

/* LD_ABS in a subprogram that returns void: refused from func_info, before the walk. */
SEC("syscall")
__attribute__((naked)) int ld_abs_in_void_subprog(void)
{
	asm volatile (
	"call ld_abs_void_subprog;"
	"r0 = 0;"
	"exit;"
	::: __clobber_all);
}

__attribute__((naked, noinline, used)) static int ld_abs_int_subprog(void)
{
	asm volatile (
	"r6 = r1;"
	".8byte %[ld_abs];"
	"r0 = 1;"
	"exit;"
	:
	: __imm_insn(ld_abs, ((struct bpf_insn){.code = BPF_LD | BPF_ABS | BPF_W}))
	: __clobber_all);
}

/* LD_ABS in a subprogram that returns int: refused by the walk (not for SYSCALL programs). */
SEC("syscall")
__attribute__((naked)) int ld_abs_in_int_subprog(void)
{
	asm volatile (
	"call ld_abs_int_subprog;"
	"r0 = 0;"
	"exit;"
	::: __clobber_all);
}

__attribute__((naked, noinline, used)) static void fastcall_subprog(void)
{
	asm volatile (
	"*(u64 *)(r10 - 8) = r1;"
	"call %[bpf_get_smp_processor_id];"
	"r1 = *(u64 *)(r10 - 8);"
	"exit;"
	:: __imm(bpf_get_smp_processor_id) : __clobber_all);
}

/* 512 bytes of stack and a call to a subprogram whose only stack use is a bpf_fastcall
 * spill/fill pair: the kernel removes the pair, so the chain fits in 512 bytes. */
SEC("syscall")
__attribute__((naked)) int fastcall_stack_fits(void)
{
	asm volatile(
	"r1 = 42;"
	"*(u64 *)(r10 - 512) = r1;"
	"call fastcall_subprog;"
	"r0 = 0;"
	"exit;"
	::: __clobber_all);
}

__attribute__((naked, noinline, used)) static void fastcall_subprog_broken(void)
{
	asm volatile (
	"*(u64 *)(r10 - 8) = r1;"
	"call %[bpf_get_smp_processor_id];"
	"r1 = *(u64 *)(r10 - 8);"
	"r2 = *(u64 *)(r10 - 8);"
	"exit;"
	:: __imm(bpf_get_smp_processor_id) : __clobber_all);
}

/* The same with another read of the spilled slot: the pattern stays, and so do its 8 bytes. */
SEC("syscall")
__attribute__((naked)) int fastcall_stack_kept(void)
{
	asm volatile(
	"r1 = 42;"
	"*(u64 *)(r10 - 512) = r1;"
	"call fastcall_subprog_broken;"
	"r0 = 0;"
	"exit;"
	::: __clobber_all);
}

/* bpf_get_stack into a map value; its result is at most the size asked, so the second call's
 * size, what is left of the value, stays in bounds (the kernel's selftest "bpf_get_stack
 * return R0 within range"). */
SEC("syscall")
__attribute__((naked)) int get_stack_in_range(void)
{
	asm volatile ("					\
	r6 = r1;					\
	r1 = 0;						\
	*(u64*)(r10 - 8) = r1;				\
	r2 = r10;					\
	r2 += -8;					\
	r1 = %[hash] ll;				\
	call %[bpf_map_lookup_elem];			\
	if r0 == 0 goto l0_%=;				\
	r7 = r0;					\
	r9 = 24;					\
	r1 = r6;					\
	r2 = r7;					\
	r3 = 24;					\
	r4 = 256;					\
	call %[bpf_get_stack];				\
	r1 = 0;						\
	r8 = r0;					\
	r8 <<= 32;					\
	r8 s>>= 32;					\
	if r1 s> r8 goto l0_%=;				\
	r9 -= r8;					\
	r2 = r7;					\
	r2 += r8;					\
	r1 = r9;					\
	r1 <<= 32;					\
	r1 s>>= 32;					\
	r3 = r2;					\
	r3 += r1;					\
	r1 = r7;					\
	r5 = 24;					\
	r1 += r5;					\
	if r3 >= r1 goto l0_%=;				\
	r1 = r6;					\
	r3 = r9;					\
	r4 = 0;						\
	call %[bpf_get_stack];				\
l0_%=:	r0 = 0;						\
	exit;						\
"	:
	: __imm(bpf_get_stack),
	  __imm(bpf_map_lookup_elem),
	  __imm_addr(hash)
	: __clobber_all);
}

struct stack_args {
	__s64 ret;
	__s64 bad_size;
	__u64 first;
};

/* bpf_get_stack on the stack: its result, the buffer after it, and a size that is not a
 * multiple of an entry's. */
SEC("syscall")
int get_stack_call(struct stack_args *a)
{
	__u64 buf[4] = {1, 2, 3, 4};

	a->ret = bpf_get_stack(a, buf, sizeof(buf), 0);
	a->first = buf[0];
	a->bad_size = bpf_get_stack(a, buf, 12, 0);
	return 0;
}

char _license[] SEC("license") = "GPL";
