// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/helper_proto.cc: the helper prototype table and the implementation registry.
//
// Mirrors: kernel/bpf/helpers.c, kernel/bpf/ringbuf.c, kernel/bpf/bpf_task_storage.c,
//          kernel/trace/bpf_trace.c, kernel/bpf/bpf_iter.c (bpf_loop_proto,
//          bpf_for_each_map_elem_proto), kernel/bpf/task_iter.c (bpf_find_vma_proto), the
//          check_map_func_compatibility() table of kernel/bpf/verifier.c (Linux 6.19)
// Emulation: see helper_proto.h.
#include "bpfvm/helper_proto.h"

namespace umemcg {

namespace {

constexpr u32 kAny = 0;

// One row per helper with a prototype: name, id, gpl_only, might_sleep, required map type,
// return type, r1..r5, struct names of ARG_PTR_TO_BTF_ID arguments.
const bpf_func_proto kProtos[] = {
    {"bpf_map_lookup_elem", BPF_FUNC_map_lookup_elem, false, false, kAny,
     RET_PTR_TO_MAP_VALUE_OR_NULL, {ARG_CONST_MAP_PTR, ARG_PTR_TO_MAP_KEY}, {}},
    {"bpf_map_update_elem", BPF_FUNC_map_update_elem, false, false, kAny, RET_INTEGER,
     {ARG_CONST_MAP_PTR, ARG_PTR_TO_MAP_KEY, ARG_PTR_TO_MAP_VALUE, ARG_ANYTHING}, {}},
    {"bpf_map_delete_elem", BPF_FUNC_map_delete_elem, false, false, kAny, RET_INTEGER,
     {ARG_CONST_MAP_PTR, ARG_PTR_TO_MAP_KEY}, {}},
    {"bpf_ktime_get_ns", BPF_FUNC_ktime_get_ns, false, false, kAny, RET_INTEGER, {}, {}},
    // The format string is read; r3-r5 are only read if the format uses them (unchecked).
    {"bpf_trace_printk", BPF_FUNC_trace_printk, true, false, kAny, RET_INTEGER,
     {ARG_PTR_TO_MEM | MEM_RDONLY, ARG_CONST_SIZE}, {}},
    {"bpf_get_prandom_u32", BPF_FUNC_get_prandom_u32, false, false, kAny, RET_INTEGER, {}, {}},
    {"bpf_get_smp_processor_id", BPF_FUNC_get_smp_processor_id, false, false, kAny, RET_INTEGER,
     {}, {}},
    {"bpf_get_current_pid_tgid", BPF_FUNC_get_current_pid_tgid, false, false, kAny, RET_INTEGER,
     {}, {}},
    {"bpf_get_current_comm", BPF_FUNC_get_current_comm, false, false, kAny, RET_INTEGER,
     {ARG_PTR_TO_UNINIT_MEM, ARG_CONST_SIZE}, {}},
    {"bpf_spin_lock", BPF_FUNC_spin_lock, false, false, kAny, RET_VOID, {ARG_PTR_TO_SPIN_LOCK},
     {}},
    {"bpf_spin_unlock", BPF_FUNC_spin_unlock, false, false, kAny, RET_VOID,
     {ARG_PTR_TO_SPIN_LOCK}, {}},
    {"bpf_probe_read_kernel", BPF_FUNC_probe_read_kernel, true, false, kAny, RET_INTEGER,
     {ARG_PTR_TO_UNINIT_MEM, ARG_CONST_SIZE_OR_ZERO, ARG_ANYTHING}, {}},
    {"bpf_ktime_get_boot_ns", BPF_FUNC_ktime_get_boot_ns, false, false, kAny, RET_INTEGER, {},
     {}},
    {"bpf_ringbuf_output", BPF_FUNC_ringbuf_output, false, false, BPF_MAP_TYPE_RINGBUF,
     RET_INTEGER,
     {ARG_CONST_MAP_PTR, ARG_PTR_TO_MEM | MEM_RDONLY, ARG_CONST_SIZE_OR_ZERO, ARG_ANYTHING}, {}},
    {"bpf_ringbuf_reserve", BPF_FUNC_ringbuf_reserve, false, false, BPF_MAP_TYPE_RINGBUF,
     RET_PTR_TO_RINGBUF_MEM_OR_NULL,
     {ARG_CONST_MAP_PTR, ARG_CONST_ALLOC_SIZE_OR_ZERO, ARG_ANYTHING}, {}},
    {"bpf_ringbuf_submit", BPF_FUNC_ringbuf_submit, false, false, kAny, RET_VOID,
     {ARG_PTR_TO_RINGBUF_MEM, ARG_ANYTHING}, {}},
    {"bpf_ringbuf_discard", BPF_FUNC_ringbuf_discard, false, false, kAny, RET_VOID,
     {ARG_PTR_TO_RINGBUF_MEM, ARG_ANYTHING}, {}},
    {"bpf_ringbuf_query", BPF_FUNC_ringbuf_query, false, false, BPF_MAP_TYPE_RINGBUF, RET_INTEGER,
     {ARG_CONST_MAP_PTR, ARG_ANYTHING}, {}},
    {"bpf_task_storage_get", BPF_FUNC_task_storage_get, false, false, BPF_MAP_TYPE_TASK_STORAGE,
     RET_PTR_TO_MAP_VALUE_OR_NULL,
     {ARG_CONST_MAP_PTR, ARG_PTR_TO_BTF_ID_OR_NULL, ARG_PTR_TO_MAP_VALUE_OR_NULL, ARG_ANYTHING},
     {nullptr, "task_struct"}},
    {"bpf_task_storage_delete", BPF_FUNC_task_storage_delete, false, false,
     BPF_MAP_TYPE_TASK_STORAGE, RET_INTEGER, {ARG_CONST_MAP_PTR, ARG_PTR_TO_BTF_ID},
     {nullptr, "task_struct"}},
    // The verifier passes the program to bpf_timer_set_callback() as r3 (set here by the run
    // context).
    {"bpf_timer_init", BPF_FUNC_timer_init, true, false, kAny, RET_INTEGER,
     {ARG_PTR_TO_TIMER, ARG_CONST_MAP_PTR, ARG_ANYTHING}, {}},
    {"bpf_timer_set_callback", BPF_FUNC_timer_set_callback, true, false, kAny, RET_INTEGER,
     {ARG_PTR_TO_TIMER, ARG_PTR_TO_FUNC}, {}},
    {"bpf_timer_start", BPF_FUNC_timer_start, true, false, kAny, RET_INTEGER,
     {ARG_PTR_TO_TIMER, ARG_ANYTHING, ARG_ANYTHING}, {}},
    {"bpf_timer_cancel", BPF_FUNC_timer_cancel, true, false, kAny, RET_INTEGER,
     {ARG_PTR_TO_TIMER}, {}},
    // The tracing variant (bpf_get_socket_ptr_cookie_proto): a socket or NULL (cookie 0).
    {"bpf_get_socket_cookie", BPF_FUNC_get_socket_cookie, false, false, kAny, RET_INTEGER,
     {ARG_PTR_TO_BTF_ID_SOCK_COMMON | PTR_MAYBE_NULL}, {}},
    // The socket casts (bpf_skc_to_*_proto): a socket in, the same socket as its own type or
    // NULL out.
    {"bpf_skc_to_tcp6_sock", BPF_FUNC_skc_to_tcp6_sock, false, false, kAny,
     RET_PTR_TO_BTF_ID_OR_NULL, {ARG_PTR_TO_BTF_ID_SOCK_COMMON}, {}, "tcp6_sock"},
    {"bpf_skc_to_tcp_sock", BPF_FUNC_skc_to_tcp_sock, false, false, kAny,
     RET_PTR_TO_BTF_ID_OR_NULL, {ARG_PTR_TO_BTF_ID_SOCK_COMMON}, {}, "tcp_sock"},
    {"bpf_skc_to_tcp_timewait_sock", BPF_FUNC_skc_to_tcp_timewait_sock, false, false, kAny,
     RET_PTR_TO_BTF_ID_OR_NULL, {ARG_PTR_TO_BTF_ID_SOCK_COMMON}, {}, "tcp_timewait_sock"},
    {"bpf_skc_to_tcp_request_sock", BPF_FUNC_skc_to_tcp_request_sock, false, false, kAny,
     RET_PTR_TO_BTF_ID_OR_NULL, {ARG_PTR_TO_BTF_ID_SOCK_COMMON}, {}, "tcp_request_sock"},
    {"bpf_skc_to_udp6_sock", BPF_FUNC_skc_to_udp6_sock, false, false, kAny,
     RET_PTR_TO_BTF_ID_OR_NULL, {ARG_PTR_TO_BTF_ID_SOCK_COMMON}, {}, "udp6_sock"},
    {"bpf_skc_to_unix_sock", BPF_FUNC_skc_to_unix_sock, false, false, kAny,
     RET_PTR_TO_BTF_ID_OR_NULL, {ARG_PTR_TO_BTF_ID_SOCK_COMMON}, {}, "unix_sock"},
    {"bpf_loop", BPF_FUNC_loop, false, false, kAny, RET_INTEGER,
     {ARG_ANYTHING, ARG_PTR_TO_FUNC, ARG_PTR_TO_STACK_OR_NULL, ARG_ANYTHING}, {}},
    {"bpf_for_each_map_elem", BPF_FUNC_for_each_map_elem, false, false, kAny, RET_INTEGER,
     {ARG_CONST_MAP_PTR, ARG_PTR_TO_FUNC, ARG_PTR_TO_STACK_OR_NULL, ARG_ANYTHING}, {}},
    {"bpf_find_vma", BPF_FUNC_find_vma, false, false, kAny, RET_INTEGER,
     {ARG_PTR_TO_BTF_ID, ARG_ANYTHING, ARG_PTR_TO_FUNC, ARG_PTR_TO_STACK_OR_NULL, ARG_ANYTHING},
     {"task_struct"}},
    // The result is written through a pointer of sizeof(long), aligned to it.
    {"bpf_strtol", BPF_FUNC_strtol, false, false, kAny, RET_INTEGER,
     {ARG_PTR_TO_MEM | MEM_RDONLY, ARG_CONST_SIZE, ARG_ANYTHING,
      ARG_PTR_TO_FIXED_SIZE_MEM | MEM_UNINIT | MEM_WRITE | MEM_ALIGNED},
     {}, nullptr, {0, 0, 0, sizeof(long)}},
    {"bpf_strtoul", BPF_FUNC_strtoul, false, false, kAny, RET_INTEGER,
     {ARG_PTR_TO_MEM | MEM_RDONLY, ARG_CONST_SIZE, ARG_ANYTHING,
      ARG_PTR_TO_FIXED_SIZE_MEM | MEM_UNINIT | MEM_WRITE | MEM_ALIGNED},
     {}, nullptr, {0, 0, 0, sizeof(unsigned long)}},
    // The tracing variant (bpf_get_stack_proto; bpf_get_stack_sleepable_proto for sleepable
    // programs, the same arguments): r1 the context as the registers to unwind from.
    {"bpf_get_stack", BPF_FUNC_get_stack, true, false, kAny, RET_INTEGER,
     {ARG_PTR_TO_CTX, ARG_PTR_TO_UNINIT_MEM, ARG_CONST_SIZE_OR_ZERO, ARG_ANYTHING}, {}},
    {"bpf_get_current_task_btf", BPF_FUNC_get_current_task_btf, true, false, kAny,
     RET_PTR_TO_BTF_ID_TRUSTED, {}, {}, "task_struct"},
};

#define UMEMCG_FUNC_NAME(x) #x
const char *const kFuncNames[] = {__BPF_FUNC_MAPPER(UMEMCG_FUNC_NAME)};
#undef UMEMCG_FUNC_NAME

// Map types reserved for a set of helpers (check_map_func_compatibility's first switch).
bool map_type_reserved_for(u32 map_type, u32 func_id) {
  switch (map_type) {
    case BPF_MAP_TYPE_RINGBUF:
      return func_id == BPF_FUNC_ringbuf_output || func_id == BPF_FUNC_ringbuf_reserve ||
             func_id == BPF_FUNC_ringbuf_query;
    case BPF_MAP_TYPE_TASK_STORAGE:
      return func_id == BPF_FUNC_task_storage_get || func_id == BPF_FUNC_task_storage_delete;
    // Local storages the emulation has no helpers for: still only their own helpers take them.
    case BPF_MAP_TYPE_SK_STORAGE:
      return func_id == BPF_FUNC_sk_storage_get || func_id == BPF_FUNC_sk_storage_delete ||
             func_id == BPF_FUNC_kptr_xchg;
    case BPF_MAP_TYPE_INODE_STORAGE:
      return func_id == BPF_FUNC_inode_storage_get || func_id == BPF_FUNC_inode_storage_delete ||
             func_id == BPF_FUNC_kptr_xchg;
    default:
      return true;
  }
}

}  // namespace

const bpf_func_proto *bpf_helper_proto(u32 func_id) {
  for (const bpf_func_proto &p : kProtos)
    if (p.func_id == func_id) return &p;
  return nullptr;
}

const char *bpf_func_id_name(u32 func_id) {
  if (func_id < sizeof(kFuncNames) / sizeof(kFuncNames[0])) return kFuncNames[func_id];
  return "unknown";
}

bool bpf_is_sync_callback_calling_function(u32 func_id) {
  return func_id == BPF_FUNC_loop || func_id == BPF_FUNC_for_each_map_elem ||
         func_id == BPF_FUNC_find_vma;
}

bool bpf_map_func_compatible(u32 map_type, u32 func_id) {
  if (!map_type_reserved_for(map_type, func_id)) return false;
  const bpf_func_proto *p = bpf_helper_proto(func_id);
  return !p || !p->map_type || p->map_type == map_type;
}

}  // namespace umemcg

namespace umemcg::emu {

bool HelperRegistry::set(u32 func_id, BpfHelperFn fn) {
  if (func_id >= fns_.size() || !bpf_helper_proto(func_id)) return false;
  fns_[func_id] = fn;
  return true;
}

}  // namespace umemcg::emu
