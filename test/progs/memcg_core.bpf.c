// SPDX-License-Identifier: GPL-2.0-only
// A bpf_memcg_ops policy built the way programs built against a real vmlinux.h are: every
// kernel struct is declared with preserve_access_index and a layout unlike the emulator's
// (fields reordered, padding, a field the emulator does not have), so its loads carry CO-RE
// relocations (.BTF.ext) that the loader resolves against the registered layouts.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

struct task_struct {
	unsigned long state;
	char unrelated[60];
	int tgid;
	int pid;
	char comm[16];
} __attribute__((preserve_access_index));

struct mem_cgroup {
	long pad[3];
	unsigned long not_in_the_emulator;
} __attribute__((preserve_access_index));

struct bpf_memcg_ctx {
	__u32 gfp_flags;
	__u64 nr_pages_over_high;
	struct mem_cgroup *memcg_over_limit;
	struct task_struct *task;
	struct mem_cgroup *memcg;
	__u64 cgroup_id;
} __attribute__((preserve_access_index));

struct bpf_memcg_ops {
	__u32 (*high_policy)(const struct bpf_memcg_ctx *ctx);
};

/* The only .bss variable: tests read it at offset 0. */
struct {
	__u64 pid;
	__u64 tgid;
	__u64 debt;
	__u64 cgroup_id;
	__u64 has_unknown_field;
	__u64 unknown_field;
	__u64 comm0;
} seen;

SEC("struct_ops/high_policy")
__u32 BPF_PROG(core_high_policy, const struct bpf_memcg_ctx *mctx)
{
	struct task_struct *t = mctx->task;

	seen.pid = t->pid;
	seen.tgid = t->tgid;
	seen.comm0 = t->comm[0];
	seen.debt = mctx->nr_pages_over_high;
	seen.cgroup_id = mctx->cgroup_id;
	seen.has_unknown_field = bpf_core_field_exists(mctx->memcg->not_in_the_emulator);
	if (bpf_core_field_exists(mctx->memcg->not_in_the_emulator))
		seen.unknown_field = mctx->memcg->not_in_the_emulator;
	return seen.debt > 64;
}

SEC(".struct_ops.link")
struct bpf_memcg_ops core_ops = {
	.high_policy = (void *)core_high_policy,
};

char LICENSE[] SEC("license") = "GPL";
