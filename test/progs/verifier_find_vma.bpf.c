// SPDX-License-Identifier: GPL-2.0-only
// Verifier and runtime test object: bpf_find_vma from a SYSCALL program (the 6.18 kernel allows
// it, through the tracing helpers). The verifier walks the callback as bpf_loop's, with r1 the
// task, r2 the VMA and r3 the context; the callback returns 0 or 1. The kernel's verdicts are
// in test/bpfvm/verifier_obj_test.cc; kernel_diff_test.cc compares with the host kernel. Here
// no VMA is ever found (docs/bpfvm.md): the helper returns -ENOENT and the callback never runs.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct task_struct;

struct args {
	__u64 addr;
	__u64 flags;
	__s64 ret;
	__u32 found;
	__u32 pad;
};

struct vma_ctx {
	__u32 found;
	__u32 pad;
};

static long note_vma(struct task_struct *task, void *vma, struct vma_ctx *c)
{
	c->found++;
	return 0;
}

// The current task's VMA holding addr.
SEC("syscall")
int find_current(struct args *a)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct vma_ctx c = {};

	a->ret = bpf_find_vma(t, a->addr, note_vma, &c, a->flags);
	a->found = c.found;
	return 0;
}

static long ret_two(struct task_struct *task, void *vma, void *c)
{
	return 2;
}

// The callback returns 2: outside [0, 1].
SEC("syscall")
int bad_return(struct args *a)
{
	bpf_find_vma(bpf_get_current_task_btf(), 0, ret_two, 0, 0);
	return 0;
}

// The task is not a task_struct the program was given: a scalar from the context.
SEC("syscall")
int scalar_task(struct args *a)
{
	bpf_find_vma((struct task_struct *)a->addr, 0, note_vma, 0, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
