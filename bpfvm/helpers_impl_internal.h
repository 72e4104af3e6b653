// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/helpers_impl_internal.h: the helper functions, shared between the files that define them
// and the table in helpers_impl.cc. Not for users of bpfvm/.
// Mirrors: the BPF_CALL_x definitions of kernel/bpf/helpers.c, kernel/bpf/ringbuf.c,
//          kernel/bpf/bpf_task_storage.c, kernel/bpf/bpf_cgrp_storage.c, kernel/bpf/bpf_iter.c,
//          kernel/trace/bpf_trace.c (Linux 6.19)
#pragma once

#include "bpfvm/helpers_impl.h"

namespace umemcg::emu::helpers {

#define BPF_HELPER(name)                                                               \
  u64 name([[maybe_unused]] u64 r1, [[maybe_unused]] u64 r2, [[maybe_unused]] u64 r3, \
           [[maybe_unused]] u64 r4, [[maybe_unused]] u64 r5)
BPF_HELPER(map_lookup_elem);
BPF_HELPER(map_update_elem);
BPF_HELPER(map_delete_elem);
BPF_HELPER(spin_lock);
BPF_HELPER(spin_unlock);
BPF_HELPER(ringbuf_output);
BPF_HELPER(ringbuf_reserve);
BPF_HELPER(ringbuf_submit);
BPF_HELPER(ringbuf_discard);
BPF_HELPER(ringbuf_query);
BPF_HELPER(task_storage_get);
BPF_HELPER(task_storage_delete);
BPF_HELPER(cgrp_storage_get);
BPF_HELPER(cgrp_storage_delete);
BPF_HELPER(trace_printk);
BPF_HELPER(loop);
BPF_HELPER(for_each_map_elem);
BPF_HELPER(find_vma);
BPF_HELPER(strtol_h);
BPF_HELPER(strtoul_h);

// Checked runs: is map one the program references? Records a fault naming helper if not.
bool check_map(bpf_run_ctx *ctx, u64 map, const char *helper);
// Checked runs: may the helper access the argument memory (the BPF stacks of the run
// included)? Records a fault if not.
bool check_mem(bpf_run_ctx *ctx, u64 addr, u64 len, bool write, const char *helper,
               const char *what);

}  // namespace umemcg::emu::helpers
