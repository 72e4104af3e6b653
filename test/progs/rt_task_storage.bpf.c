// SPDX-License-Identifier: GPL-2.0-only
// Runtime test object: task-local storage of the current task (create, count, delete) and the
// current-task helpers.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct task_struct;

struct task_args {
	__u64 count;
	__u64 pid_tgid;
	char comm[16];
	__u32 del;
	__s32 del_ret;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} task_cnt SEC(".maps");

SEC("syscall")
int count_task(struct task_args *a)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 *c;

	c = bpf_task_storage_get(&task_cnt, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!c)
		return 1;
	(*c)++;
	a->count = *c;
	a->pid_tgid = bpf_get_current_pid_tgid();
	bpf_get_current_comm(a->comm, sizeof(a->comm));
	if (a->del)
		a->del_ret = bpf_task_storage_delete(&task_cnt, t);
	return 0;
}

SEC("syscall")
int peek_task(struct task_args *a)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 *c = bpf_task_storage_get(&task_cnt, t, 0, 0);

	a->count = c ? *c : 0xffff;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
