// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/helpers_impl.cc: the run context, the helper table, and the helpers about time, the
// current task, the CPU, random numbers, and the callback-calling bpf_loop,
// bpf_for_each_map_elem and bpf_find_vma.
// Mirrors: kernel/bpf/helpers.c, kernel/bpf/core.c (bpf_user_rnd_u32), kernel/bpf/bpf_iter.c
//          (bpf_loop, bpf_for_each_map_elem), kernel/bpf/task_iter.c (bpf_find_vma),
//          include/linux/bpf.h (bpf_set_run_ctx)
//          (Linux 6.19)
// Emulation: see bpfvm/helpers_impl.h.
#include "bpfvm/helpers_impl.h"

#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <mutex>
#include <random>

#include "absl/strings/str_cat.h"
#include "bpfvm/bpf_async.h"
#include "bpfvm/helpers_impl_internal.h"
#include "bpfvm/map_local_storage.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/preempt.h"
#include "shim/sched.h"
#include "shim/smp.h"

namespace umemcg {

namespace emu {
__thread bpf_run_ctx *tls_run_ctx __attribute__((tls_model("initial-exec"))) = nullptr;
}  // namespace emu

namespace emu {

namespace {
bool in_region(const BpfMemRegion &r, u64 addr, u64 len) {
  return addr >= r.start && addr - r.start <= r.len && len <= r.len - (addr - r.start);
}
}  // namespace

bool bpf_run_mem_ok(const bpf_run_ctx *ctx, u64 addr, u64 len, bool write, bool bpf_stacks) {
  for (const BpfMemRegion &r : ctx->chk->regions)
    if (in_region(r, addr, len)) return !write || r.writable;
  auto it = ctx->chk->dyn.upper_bound(addr);
  if (it != ctx->chk->dyn.begin()) {
    --it;
    if (in_region(it->second, addr, len)) return !write || it->second.writable;
  }
  if (bpf_stacks) {
    for (int i = 0; i < ctx->chk->nr_stacks; i++) {
      const u64 lo = ctx->chk->stacks[i][0], hi = ctx->chk->stacks[i][1];
      if (in_region(BpfMemRegion{lo, hi - lo, true}, addr, len)) return true;
    }
  }
  return false;
}

void bpf_run_fault(bpf_run_ctx *ctx, const std::string &why) {
  ctx->faulted = true;
  if (ctx->chk && ctx->chk->fault.empty()) ctx->chk->fault = why;
}

void bpf_run_add_region(bpf_run_ctx *ctx, const void *p, u64 len, bool writable) {
  const u64 a = (u64)(uintptr_t)p;
  auto [it, fresh] = ctx->chk->dyn.try_emplace(a, BpfMemRegion{a, len, writable});
  if (!fresh && it->second.len < len) it->second = BpfMemRegion{a, len, writable};
}

namespace helpers {

namespace {
std::string absl_hex(u64 v) { return absl::StrCat(absl::Hex(v)); }
}  // namespace

bool check_map(bpf_run_ctx *ctx, u64 map, const char *helper) {
  if (!ctx || !ctx->chk) return true;
  if (ctx->chk->maps.contains(reinterpret_cast<const bpf_map *>(map))) return true;
  bpf_run_fault(ctx, std::string(helper) + ": R1 is not a map of the program (0x" +
                         absl_hex(map) + ")");
  return false;
}

bool check_mem(bpf_run_ctx *ctx, u64 addr, u64 len, bool write, const char *helper,
               const char *what) {
  if (!ctx || !ctx->chk || len == 0) return true;
  if (bpf_run_mem_ok(ctx, addr, len, write, true)) return true;
  bpf_run_fault(ctx, std::string(helper) + ": invalid " + (write ? "write" : "read") + " of " +
                         std::to_string(len) + " bytes of " + what + " at 0x" + absl_hex(addr));
  return false;
}

// --- time, task, CPU ------------------------------------------------------------------------

BPF_HELPER(ktime_get_ns_h) { return ktime_get_ns(); }
BPF_HELPER(ktime_get_boot_ns_h) { return ktime_get_boot_ns(); }
BPF_HELPER(get_smp_processor_id) { return (u64)smp_processor_id(); }

BPF_HELPER(get_current_pid_tgid) {
  if (!current) return (u64)-EINVAL;
  return (u64)(u32)current->tgid << 32 | (u32)current->pid;
}

// bpf_get_current_comm(buf, size): NUL-terminated, zero-padded (strscpy_pad).
BPF_HELPER(get_current_comm) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (!check_mem(ctx, r1, r2, true, "bpf_get_current_comm", "buf"))
    return (u64)-EFAULT;
  char *buf = reinterpret_cast<char *>(r1);
  const u32 size = (u32)r2;
  if (!size) return (u64)-EINVAL;
  std::memset(buf, 0, size);
  if (!current) return (u64)-EINVAL;
  const size_t n = strnlen(current->comm, TASK_COMM_LEN);
  std::memcpy(buf, current->comm, n < size - 1 ? n : size - 1);
  return 0;
}

// bpf_probe_read_kernel(dst, size, unsafe_ptr): copy_from_kernel_nofault(), the buffer zeroed
// on a fault.
BPF_HELPER(probe_read_kernel) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (!check_mem(ctx, r1, r2, true, "bpf_probe_read_kernel", "dst")) return (u64)-EFAULT;
  const u32 size = (u32)r2;
  if (!size) return 0;
  void *dst = reinterpret_cast<void *>(r1);
  iovec local{dst, size};
  iovec remote{reinterpret_cast<void *>(r3), size};
  if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)size) return 0;
  std::memset(dst, 0, size);
  return (u64)-EFAULT;
}

BPF_HELPER(get_current_task) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (ctx && ctx->chk) ctx->chk->trusted_ptrs.insert((u64)(uintptr_t)current);
  return (u64)(uintptr_t)current;
}

// --- prandom --------------------------------------------------------------------------------

namespace {
std::mutex g_rnd_mu;
std::array<u64, NR_CPUS> g_rnd_state{};
std::uint64_t g_rnd_gen = ~0ull;  // boot generation the state was seeded for

u64 splitmix64(u64 *s) {
  u64 z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Seeds every vCPU's stream once per machine boot: from the machine's seed in simulated mode.
void rnd_seed_once() {
  const std::uint64_t gen = boot_generation();
  if (__atomic_load_n(&g_rnd_gen, __ATOMIC_ACQUIRE) == gen) return;
  std::lock_guard<std::mutex> g(g_rnd_mu);
  if (g_rnd_gen == gen) return;
  Machine *m = Machine::get();
  u64 seed = (m && m->simulated()) ? m->config().seed : ((u64)std::random_device{}() << 32 | std::random_device{}());
  for (int cpu = 0; cpu < NR_CPUS; cpu++) {
    u64 s = seed ^ (0xa0761d6478bd642full * (u64)(cpu + 1));
    g_rnd_state[cpu] = splitmix64(&s);
  }
  __atomic_store_n(&g_rnd_gen, gen, __ATOMIC_RELEASE);
}
}  // namespace

BPF_HELPER(get_prandom_u32) {
  rnd_seed_once();
  preempt_disable();
  const u32 v = (u32)(splitmix64(&g_rnd_state[smp_processor_id()]) >> 32);
  preempt_enable();
  return v;
}

// bpf_get_socket_cookie(sk), the tracing variant: the verifier lets only NULL through (no
// sockets exist here), whose cookie is 0.
BPF_HELPER(get_socket_cookie) { return 0; }

// bpf_get_stack(regs, buf, size, flags): the kernel's flag and size checks; then no stack to
// walk (the emulated kernel has no call chain), which the kernel reports as -EFAULT. The buffer
// is zeroed either way, as the kernel clears what it did not write.
// Emulation: never a stack trace.
BPF_HELPER(get_stack) {
  void *buf = (void *)(uintptr_t)r2;
  const u32 size = (u32)r3;
  const u64 flags = r4;
  long err = -EFAULT;
  const bool user = flags & BPF_F_USER_STACK, build_id = flags & BPF_F_USER_BUILD_ID;
  const u32 elem = build_id ? (u32)sizeof(struct bpf_stack_build_id) : (u32)sizeof(u64);
  if ((flags & ~(u64)(BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK | BPF_F_USER_BUILD_ID)) ||
      (!user && build_id) || size % elem)
    err = -EINVAL;
  if (buf && size) std::memset(buf, 0, size);
  return (u64)err;
}

// bpf_skc_to_*_sock(sk): the verifier lets no socket through; NULL (not that socket type).
BPF_HELPER(skc_to_sock_null) { return 0; }

// --- bpf_loop -------------------------------------------------------------------------------

namespace {

// What a helper checks before it calls BPF callbacks: a callback runner in this run, and room
// for one more nested level. Returns 0, or the helper's error with a fault recorded.
long callback_call_check(bpf_run_ctx *ctx, const char *helper) {
  if (!ctx || !ctx->run_callback) {
    if (ctx) bpf_run_fault(ctx, std::string(helper) + ": no callback runner in this run");
    return -EINVAL;
  }
  if (ctx->callback_depth + 1 >= MAX_CALL_FRAMES) {
    bpf_run_fault(ctx, std::string(helper) + ": callbacks nested too deep");
    return -E2BIG;
  }
  return 0;
}

}  // namespace

// bpf_loop(nr_loops, callback_fn, callback_ctx, flags): calls callback_fn(i, callback_ctx) for
// i = 0.. until it returns non-zero; returns the number of calls made.
BPF_HELPER(loop) {
  const u64 nr_loops = r1, cb = r2, cb_ctx = r3, flags = r4;
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (flags) return (u64)-EINVAL;
  if (nr_loops > BPF_MAX_LOOPS) return (u64)-E2BIG;
  if (const long err = callback_call_check(ctx, "bpf_loop")) return (u64)err;
  // The callback may reach the stacks of the runs below us (callback_ctx usually points there):
  // they stay in bpf_run_checked::stacks while it runs.
  ctx->callback_depth++;
  u64 i = 0;
  u64 ret = nr_loops;
  for (; i < nr_loops; i++) {
    const u64 args[5] = {i, cb_ctx, 0, 0, 0};
    const u64 r = ctx->run_callback(ctx, cb, args);
    if (ctx->faulted) {
      ret = (u64)-EFAULT;
      break;
    }
    // 0: continue, 1: stop (the verifier holds callbacks to [0, 1]).
    if (r) {
      ret = i + 1;
      break;
    }
  }
  ctx->callback_depth--;
  return ret;
}

// --- bpf_for_each_map_elem -----------------------------------------------------------------

namespace {

struct for_each_arg {
  bpf_run_ctx *ctx;
  bpf_map *map;
  u64 cb, cb_ctx;
  const void *key_region;  // the last key handed out that is not the map's memory (an index)
};

// One element: the callback with (map, key, value, callback_ctx). A fault stops the walk.
u64 for_each_one(void *a, void *key, void *value) {
  auto *fa = static_cast<for_each_arg *>(a);
  bpf_run_ctx *ctx = fa->ctx;
  if (ctx->chk) {
    // The callback reads the key and reads and writes the value (the verifier's
    // PTR_TO_MAP_KEY and PTR_TO_MAP_VALUE).
    bpf_run_add_region(ctx, key, fa->map->key_size, false);
    bpf_run_add_region(ctx, value, fa->map->value_size, !fa->map->rdonly_prog());
    fa->key_region = key;
  }
  const u64 args[5] = {(u64)(uintptr_t)fa->map, (u64)(uintptr_t)key, (u64)(uintptr_t)value,
                       fa->cb_ctx, 0};
  const u64 r = ctx->run_callback(ctx, fa->cb, args);
  return ctx->faulted ? 1 : r;
}

}  // namespace

// bpf_for_each_map_elem(map, callback_fn, callback_ctx, flags): callback_fn(map, key, value,
// callback_ctx) on each element until it returns 1; returns the number of calls, or -EINVAL
// for non-zero flags.
BPF_HELPER(for_each_map_elem) {
  bpf_run_ctx *ctx = bpf_current_run_ctx();
  if (!check_map(ctx, r1, "bpf_for_each_map_elem")) return (u64)-EFAULT;
  if (const long err = callback_call_check(ctx, "bpf_for_each_map_elem")) return (u64)err;
  for_each_arg fa{ctx, reinterpret_cast<bpf_map *>((uintptr_t)r1), r2, r3, nullptr};
  ctx->callback_depth++;
  const long ret = fa.map->map_for_each_callback(for_each_one, &fa, r4);
  ctx->callback_depth--;
  // An array's key was a variable of the walk: gone now.
  if (ctx->chk && fa.key_region && (fa.map->map_type == BPF_MAP_TYPE_ARRAY ||
                                    fa.map->map_type == BPF_MAP_TYPE_PERCPU_ARRAY))
    ctx->chk->dyn.erase((u64)(uintptr_t)fa.key_region);
  if (ctx->faulted) return (u64)-EFAULT;
  return (u64)ret;
}

// --- bpf_find_vma --------------------------------------------------------------------------

// bpf_find_vma(task, addr, callback_fn, callback_ctx, flags): would call callback_fn(task, vma,
// callback_ctx) once for the VMA of task's mm that holds addr, and return 0.
// Emulation: bpfvm does not reach the address-space model (mm/ depends on bpfvm, not the
//   reverse) and no VMA layout is registered for programs to read, so no VMA is ever found:
//   the kernel's -ENOENT, as for a task without an mm or an address outside its mappings; the
//   callback never runs. -EINVAL for non-zero flags, as the kernel's.
BPF_HELPER(find_vma) {
  if (r5) return (u64)-EINVAL;
  return (u64)-ENOENT;
}

}  // namespace helpers

std::span<const bpf_func_t> bpf_helper_table() {
  static const std::array<bpf_func_t, BPF_FUNC_MAX_ID_> table = [] {
    std::array<bpf_func_t, BPF_FUNC_MAX_ID_> t{};
    using namespace helpers;
    t[BPF_FUNC_map_lookup_elem] = map_lookup_elem;
    t[BPF_FUNC_map_update_elem] = map_update_elem;
    t[BPF_FUNC_map_delete_elem] = map_delete_elem;
    t[BPF_FUNC_ktime_get_ns] = ktime_get_ns_h;
    t[BPF_FUNC_trace_printk] = trace_printk;
    t[BPF_FUNC_get_prandom_u32] = get_prandom_u32;
    t[BPF_FUNC_get_smp_processor_id] = get_smp_processor_id;
    t[BPF_FUNC_get_current_pid_tgid] = get_current_pid_tgid;
    t[BPF_FUNC_get_current_comm] = get_current_comm;
    t[BPF_FUNC_get_current_task] = get_current_task;
    t[BPF_FUNC_probe_read_kernel] = probe_read_kernel;
    t[BPF_FUNC_spin_lock] = spin_lock;
    t[BPF_FUNC_spin_unlock] = spin_unlock;
    t[BPF_FUNC_ktime_get_boot_ns] = ktime_get_boot_ns_h;
    t[BPF_FUNC_ringbuf_output] = ringbuf_output;
    t[BPF_FUNC_ringbuf_reserve] = ringbuf_reserve;
    t[BPF_FUNC_ringbuf_submit] = ringbuf_submit;
    t[BPF_FUNC_ringbuf_discard] = ringbuf_discard;
    t[BPF_FUNC_ringbuf_query] = ringbuf_query;
    t[BPF_FUNC_task_storage_get] = task_storage_get;
    t[BPF_FUNC_task_storage_delete] = task_storage_delete;
    t[BPF_FUNC_get_current_task_btf] = get_current_task;
    t[BPF_FUNC_loop] = loop;
    t[BPF_FUNC_for_each_map_elem] = for_each_map_elem;
    t[BPF_FUNC_find_vma] = find_vma;
    t[BPF_FUNC_get_socket_cookie] = get_socket_cookie;
    t[BPF_FUNC_get_stack] = get_stack;
    for (u32 f : {BPF_FUNC_skc_to_tcp6_sock, BPF_FUNC_skc_to_tcp_sock,
                  BPF_FUNC_skc_to_tcp_timewait_sock, BPF_FUNC_skc_to_tcp_request_sock,
                  BPF_FUNC_skc_to_udp6_sock, BPF_FUNC_skc_to_unix_sock})
      t[f] = skc_to_sock_null;
    t[BPF_FUNC_strtol] = strtol_h;
    t[BPF_FUNC_strtoul] = strtoul_h;
    t[BPF_FUNC_timer_init] = bpf_timer_init_helper;
    t[BPF_FUNC_timer_set_callback] = bpf_timer_set_callback_helper;
    t[BPF_FUNC_timer_start] = bpf_timer_start_helper;
    t[BPF_FUNC_timer_cancel] = bpf_timer_cancel_helper;
    t[BPF_FUNC_cgrp_storage_get_] = cgrp_storage_get;
    t[BPF_FUNC_cgrp_storage_delete_] = cgrp_storage_delete;
    return t;
  }();
  return table;
}

}  // namespace emu
}  // namespace umemcg
