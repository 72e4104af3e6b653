// SPDX-License-Identifier: GPL-2.0-only
// test/progs/map_slots.bpf.c: a prog array and a map-in-map with initial slots
// (`.values = { [i] = &x }`), which libbpf fills after loading from the relocations of '.maps'.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

int tail_target(void *ctx);

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 4);
	__uint(key_size, sizeof(__u32));
	__array(values, int (void *));
} jmp_table SEC(".maps") = {
	.values = { [1] = (void *)&tail_target },
};

struct inner_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} inner_a SEC(".maps"), inner_b SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 3);
	__type(key, __u32);
	__array(values, struct inner_map);
} outer SEC(".maps") = {
	.values = { [0] = &inner_b, [2] = &inner_a },
};

SEC("syscall")
int tail_target(void *ctx)
{
	return 1;
}

SEC("syscall")
int caller(void *ctx)
{
	return bpf_map_lookup_elem(&outer, &(__u32){0}) != 0;
}

char LICENSE[] SEC("license") = "GPL";
