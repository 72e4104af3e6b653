// SPDX-License-Identifier: GPL-2.0-only
// mm/bpf_memcontrol.cc: memcg kfuncs and the registration of memcg's BPF surface (see
// bpf_memcontrol.h).
//
// Mirrors: mm/bpf_memcontrol.c (upstream kfuncs; the posted series' bpf_memcg_ops and
//          bpf_proactive_reclaim), kernel/bpf/cgroup_iter.c, kernel/bpf/helpers.c
//          (bpf_cgroup_from_id, bpf_cgroup_release) (Linux 6.19)
// Emulation: see bpf_memcontrol.h.
// Emulation: the kfuncs' BPF entry points record each call of a task whose report is armed
//   (mm/bpf_memcontrol_report.h), with what the machine lacked when the call failed.
// Emulation: the kernel-object layouts given to the verifier are the emulator's own (offsets
//   computed here), not vmlinux's; programs declaring their own structs must match them.
#include "mm/bpf_memcontrol.h"

#include <linux/bpf.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "bpfvm/kernel_env.h"
#include "kernel/cgroup.h"
#include "kernel/kernfs/kernfs.h"
#include "mm/bpf_memcontrol_report.h"
#include "mm/bpf_tcp_ops.h"
#include "mm/memcontrol.h"
#include "mm/memcontrol_internal.h"
#include "mm/page_counter.h"
#include "shim/errno.h"
#include "shim/gfp.h"
#include "shim/rcupdate.h"
#include "shim/rwsem.h"
#include "shim/sched.h"

namespace umemcg {

// try_to_free_mem_cgroup_pages()'s swappiness: anon pages only (mm/vmscan.c).
inline constexpr int SWAPPINESS_ANON_ONLY = 201;

mem_cgroup *bpf_get_root_mem_cgroup() {
  // No reference is taken: the root is never freed (CSS_NO_REF), so a put is a no-op. The
  // kfunc is still KF_ACQUIRE (kernel-semantics.md 5.1), so programs must put it.
  return root_mem_cgroup;
}

mem_cgroup *bpf_get_mem_cgroup(cgroup_subsys_state *css) {
  if (!css) return nullptr;
  mem_cgroup *memcg = nullptr;
  rcu_read_lock();
  // A css of another controller (the cgroup's own css, &cgrp->self) leads to the cgroup's
  // memory css. Emulation: a cgroup has at most one controller css, memcg's.
  if (css->ss != &memory_cgrp_subsys) css = css->cgroup ? READ_ONCE(css->cgroup->subsys_css) : nullptr;
  if (css && css->ss == &memory_cgrp_subsys && css_tryget(css)) memcg = mem_cgroup_from_css(css);
  rcu_read_unlock();
  return memcg;
}

void bpf_put_mem_cgroup(mem_cgroup *memcg) { css_put(&memcg->css); }

unsigned long bpf_mem_cgroup_usage(mem_cgroup *memcg) {
  return page_counter_read(&memcg->memory) * PAGE_SIZE;
}

unsigned long bpf_mem_cgroup_memory_events(mem_cgroup *memcg, int event) {
  // An unsigned comparison: a negative enum value is out of range too.
  if ((unsigned int)event >= MEMCG_NR_MEMORY_EVENTS) return (unsigned long)-1;
  return (unsigned long)memory_events_read(memcg, (enum memcg_memory_event)event);
}

unsigned long bpf_mem_cgroup_vm_events(mem_cgroup *memcg, int event) {
  // Unsigned comparisons inside: negative ids are out of range too.
  if (!memcg_vm_event_item_valid(event)) return (unsigned long)-1;
  return memcg_events(memcg, event);
}

unsigned long bpf_mem_cgroup_page_state(mem_cgroup *memcg, int idx) {
  if (!memcg_stat_item_valid(idx)) return (unsigned long)-1;
  return memcg_page_state_output(memcg, idx);
}

void bpf_mem_cgroup_flush_stats(mem_cgroup *memcg) {
  // The threshold-gated flush, as memory.stat's: a program cannot force one.
  mem_cgroup_flush_stats(memcg);
}

long bpf_proactive_reclaim(mem_cgroup *memcg, unsigned long size, int swappiness) {
  if (swappiness != -1 && swappiness != SWAPPINESS_ANON_ONLY &&
      (swappiness < 0 || swappiness > 200))
    return -EINVAL;
  if (size < PAGE_SIZE) return -EINVAL;
  // One pass of at most a charge batch: no loop to reach size, no retries.
  const unsigned long nr_pages = std::min<unsigned long>(size / PAGE_SIZE, MEMCG_CHARGE_BATCH);
  int sw = swappiness;
  const unsigned long reclaimed =
      try_to_free_mem_cgroup_pages(memcg, nr_pages, GFP_KERNEL,
                                   MEMCG_RECLAIM_MAY_SWAP | MEMCG_RECLAIM_PROACTIVE,
                                   swappiness == -1 ? nullptr : &sw);
  return (long)(reclaimed * PAGE_SIZE);
}

cgroup *bpf_cgroup_from_id(u64 cgid) {
  if (cgid == 0 || cgid > (u64)MEM_CGROUP_ID_MAX) return nullptr;
  cgroup *cgrp = nullptr;
  rcu_read_lock();
  mem_cgroup *memcg = mem_cgroup_from_id((unsigned short)cgid);
  // A cgroup being removed is not found (kernel: its kernfs node is deactivated first).
  if (memcg && memcg->css.cgroup && memcg->css.cgroup->id == cgid &&
      css_tryget_online(&memcg->css))
    cgrp = memcg->css.cgroup;
  rcu_read_unlock();
  return cgrp;
}

void bpf_cgroup_release(cgroup *cgrp) { css_put(cgrp->subsys_css); }

namespace {

using emu::KfuncArg;
using emu::KfuncDesc;

// The BPF calling convention: five u64 arguments, one u64 result. Each entry point records
// the call when the running task's report is armed (bpf_memcontrol_report.h).
std::string rnum(unsigned long v) { return std::to_string(v); }
std::string rpath(u64 m) { return bpf_memcg_report_path((mem_cgroup *)(uintptr_t)m); }

u64 k_get_root(u64, u64, u64, u64, u64) {
  mem_cgroup *m = bpf_get_root_mem_cgroup();
  if (bpf_memcg_report_armed()) bpf_memcg_report_root(m);
  return (u64)(uintptr_t)m;
}
u64 k_get(u64 css, u64, u64, u64, u64) {
  auto *c = (cgroup_subsys_state *)(uintptr_t)css;
  mem_cgroup *m = bpf_get_mem_cgroup(c);
  if (bpf_memcg_report_armed()) bpf_memcg_report_get(c, m);
  return (u64)(uintptr_t)m;
}
u64 k_put(u64 m, u64, u64, u64, u64) {
  if (bpf_memcg_report_armed()) bpf_memcg_report_plain("bpf_put_mem_cgroup", rpath(m), "void");
  bpf_put_mem_cgroup((mem_cgroup *)(uintptr_t)m);
  return 0;
}
u64 k_usage(u64 m, u64, u64, u64, u64) {
  const unsigned long r = bpf_mem_cgroup_usage((mem_cgroup *)(uintptr_t)m);
  if (bpf_memcg_report_armed()) bpf_memcg_report_plain("bpf_mem_cgroup_usage", rpath(m), rnum(r));
  return r;
}
u64 k_events(u64 m, u64 e, u64, u64, u64) {
  const unsigned long r = bpf_mem_cgroup_memory_events((mem_cgroup *)(uintptr_t)m, (int)(s32)e);
  if (bpf_memcg_report_armed())
    bpf_memcg_report_plain("bpf_mem_cgroup_memory_events",
                           rpath(m) + ", " + std::to_string((int)(s32)e), rnum(r));
  return r;
}
u64 k_vm_events(u64 m, u64 e, u64, u64, u64) {
  const unsigned long r = bpf_mem_cgroup_vm_events((mem_cgroup *)(uintptr_t)m, (int)(s32)e);
  if (bpf_memcg_report_armed())
    bpf_memcg_report_plain("bpf_mem_cgroup_vm_events",
                           rpath(m) + ", " + std::to_string((int)(s32)e), rnum(r));
  return r;
}
u64 k_page_state(u64 m, u64 idx, u64, u64, u64) {
  const unsigned long r = bpf_mem_cgroup_page_state((mem_cgroup *)(uintptr_t)m, (int)(s32)idx);
  if (bpf_memcg_report_armed())
    bpf_memcg_report_plain("bpf_mem_cgroup_page_state",
                           rpath(m) + ", " + std::to_string((int)(s32)idx), rnum(r));
  return r;
}
u64 k_flush(u64 m, u64, u64, u64, u64) {
  bpf_mem_cgroup_flush_stats((mem_cgroup *)(uintptr_t)m);
  if (bpf_memcg_report_armed())
    bpf_memcg_report_plain("bpf_mem_cgroup_flush_stats", rpath(m), "void");
  return 0;
}
u64 k_cgroup_from_id(u64 id, u64, u64, u64, u64) {
  cgroup *c = bpf_cgroup_from_id(id);
  if (bpf_memcg_report_armed()) bpf_memcg_report_cgroup_from_id(id, c);
  return (u64)(uintptr_t)c;
}
u64 k_cgroup_release(u64 c, u64, u64, u64, u64) {
  if (bpf_memcg_report_armed())
    bpf_memcg_report_plain("bpf_cgroup_release",
                           bpf_cgroup_report_path((cgroup *)(uintptr_t)c), "void");
  bpf_cgroup_release((cgroup *)(uintptr_t)c);
  return 0;
}
u64 k_reclaim(u64 m, u64 size, u64 sw, u64, u64) {
  auto *memcg = (mem_cgroup *)(uintptr_t)m;
  const long r = bpf_proactive_reclaim(memcg, size, (int)(s32)sw);
  if (bpf_memcg_report_armed()) bpf_memcg_report_reclaim(memcg, size, (int)(s32)sw, r);
  return (u64)r;
}

void must(const absl::Status &st, const char *what) {
  if (st.ok()) return;
  std::fprintf(stderr, "bpf_memcontrol_init: %s: %s\n", what, std::string(st.message()).c_str());
  std::abort();
}

// Offsets of members of the emulator's (not always standard-layout) structs: offsetof is
// conditionally supported there, and gcc and clang support it for these non-virtual types.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
#define EMU_OFF(type, member) static_cast<u32>(offsetof(type, member))
#define EMU_SZ(type) static_cast<u32>(sizeof(type))

void register_structs(emu::BpfKernelEnv &env) {
  // cgroup_subsys_state: its cgroup (a plain pointer: not in the kernel's trusted-field
  // lists), id and flags.
  must(env.add_struct({"cgroup_subsys_state", EMU_SZ(cgroup_subsys_state),
                       {bpf_ctx_field::ptr("cgroup", EMU_OFF(cgroup_subsys_state, cgroup),
                                           "cgroup", 0),
                        bpf_ctx_field::scalar("id", EMU_OFF(cgroup_subsys_state, id), 4),
                        bpf_ctx_field::scalar("flags", EMU_OFF(cgroup_subsys_state, flags), 4)}}),
       "cgroup_subsys_state");
  static_assert(offsetof(cgroup, self) == 0, "&cgrp->self is the cgroup, as in the kernel");
  must(env.add_struct({"cgroup", EMU_SZ(cgroup),
                       {bpf_ctx_field::embed("self", EMU_OFF(cgroup, self),
                                             EMU_SZ(cgroup_subsys_state), "cgroup_subsys_state"),
                        bpf_ctx_field::scalar("level", EMU_OFF(cgroup, level), 4),
                        bpf_ctx_field::ptr("kn", EMU_OFF(cgroup, kn), "kernfs_node", 0)}}),
       "cgroup");
  // kernfs: a directory's root, and the root's two locks (seed 000's lock-holder sample
  // resolves them from the root cgroup). Emulation: the emulator's kernfs_node keeps its root
  // in every node; it is offered as the kernel's kn->dir.root (a directory's member), a
  // kernfs_elem_dir whose only field is that root.
  must(env.add_struct({"kernfs_elem_dir", EMU_SZ(kernfs_root *),
                       {bpf_ctx_field::ptr("root", 0, "kernfs_root", 0)}}),
       "kernfs_elem_dir");
  must(env.add_struct({"kernfs_node", EMU_SZ(kernfs_node),
                       {bpf_ctx_field::embed("dir", EMU_OFF(kernfs_node, root),
                                             EMU_SZ(kernfs_root *), "kernfs_elem_dir")}}),
       "kernfs_node");
  must(env.add_struct({"kernfs_root", EMU_SZ(kernfs_root),
                       {bpf_ctx_field::embed("kernfs_rwsem", EMU_OFF(kernfs_root, kernfs_rwsem),
                                             EMU_SZ(rw_semaphore), "rw_semaphore"),
                        bpf_ctx_field::embed("kernfs_supers_rwsem",
                                             EMU_OFF(kernfs_root, kernfs_supers_rwsem),
                                             EMU_SZ(rw_semaphore), "rw_semaphore")}}),
       "kernfs_root");
  must(env.add_struct({"mem_cgroup", EMU_SZ(mem_cgroup),
                       {bpf_ctx_field::embed("css", EMU_OFF(mem_cgroup, css),
                                             EMU_SZ(cgroup_subsys_state),
                                             "cgroup_subsys_state")}}),
       "mem_cgroup");
  must(env.add_struct({"task_struct", EMU_SZ(task_struct),
                       {bpf_ctx_field::scalar("pid", EMU_OFF(task_struct, pid), 4),
                        bpf_ctx_field::scalar("tgid", EMU_OFF(task_struct, tgid), 4),
                        bpf_ctx_field::scalar("comm", EMU_OFF(task_struct, comm), TASK_COMM_LEN),
                        bpf_ctx_field::scalar("flags", EMU_OFF(task_struct, flags), 4)}}),
       "task_struct");
  must(env.add_struct({"rw_semaphore", EMU_SZ(rw_semaphore),
                       {bpf_ctx_field::scalar("count", EMU_OFF(rw_semaphore, count), 8),
                        bpf_ctx_field::scalar("owner", EMU_OFF(rw_semaphore, owner), 8)}}),
       "rw_semaphore");
  must(env.add_struct({"bpf_iter_meta", EMU_SZ(bpf_iter_meta),
                       {bpf_ctx_field::scalar("session_id", EMU_OFF(bpf_iter_meta, session_id), 8),
                        bpf_ctx_field::scalar("seq_num", EMU_OFF(bpf_iter_meta, seq_num), 8)}}),
       "bpf_iter_meta");
  // The high_policy context. Emulation: its pointer members are trusted (the dispatcher fills
  // them with objects the charge path holds); the posted series does not say how it marks
  // them, and untrusted ones could not be passed to the memcg kfuncs.
  must(env.add_struct(
           {"bpf_memcg_ctx", EMU_SZ(bpf_memcg_ctx),
            {bpf_ctx_field::ptr("memcg", EMU_OFF(bpf_memcg_ctx, memcg), "mem_cgroup", PTR_TRUSTED),
             bpf_ctx_field::ptr("memcg_over_limit", EMU_OFF(bpf_memcg_ctx, memcg_over_limit),
                                "mem_cgroup", PTR_TRUSTED | PTR_MAYBE_NULL),
             bpf_ctx_field::ptr("task", EMU_OFF(bpf_memcg_ctx, task), "task_struct", PTR_TRUSTED),
             bpf_ctx_field::scalar("cgroup_id", EMU_OFF(bpf_memcg_ctx, cgroup_id), 8),
             bpf_ctx_field::scalar("over_limit_cgroup_id",
                                   EMU_OFF(bpf_memcg_ctx, over_limit_cgroup_id), 8),
             bpf_ctx_field::scalar("nr_pages_over_high",
                                   EMU_OFF(bpf_memcg_ctx, nr_pages_over_high), 8),
             bpf_ctx_field::scalar("gfp_flags", EMU_OFF(bpf_memcg_ctx, gfp_flags), 4)}}),
       "bpf_memcg_ctx");
  // The bpf_tcp_ops.skmem_charged context (mm/bpf_tcp_ops.h); pointers trusted, as above.
  must(env.add_struct(
           {"bpf_tcp_sock_ctx", EMU_SZ(bpf_tcp_sock_ctx),
            {bpf_ctx_field::ptr("memcg", EMU_OFF(bpf_tcp_sock_ctx, memcg), "mem_cgroup",
                                PTR_TRUSTED),
             bpf_ctx_field::ptr("task", EMU_OFF(bpf_tcp_sock_ctx, task), "task_struct",
                                PTR_TRUSTED),
             bpf_ctx_field::scalar("cgroup_id", EMU_OFF(bpf_tcp_sock_ctx, cgroup_id), 8),
             bpf_ctx_field::scalar("nr_pages", EMU_OFF(bpf_tcp_sock_ctx, nr_pages), 4),
             bpf_ctx_field::scalar("charged", EMU_OFF(bpf_tcp_sock_ctx, charged), 4),
             bpf_ctx_field::scalar("gfp_flags", EMU_OFF(bpf_tcp_sock_ctx, gfp_flags), 4)}}),
       "bpf_tcp_sock_ctx");
}

#undef EMU_OFF
#undef EMU_SZ
#pragma GCC diagnostic pop

void register_kfuncs(emu::BpfKernelEnv &env) {
  const KfuncArg memcg = KfuncArg::ptr_to("mem_cgroup");
  // Upstream: one set for every program type (BPF_PROG_TYPE_UNSPEC). Trusted arguments are the
  // default for kfuncs in the 7.0 window; KF_TRUSTED_ARGS says the same here.
  must(env.add_kfunc({"bpf_get_root_mem_cgroup", memcg, {}, KF_ACQUIRE | KF_RET_NULL, k_get_root}),
       "bpf_get_root_mem_cgroup");
  must(env.add_kfunc({"bpf_get_mem_cgroup", memcg, {KfuncArg::ptr_to("cgroup_subsys_state")},
                      KF_ACQUIRE | KF_RET_NULL | KF_RCU, k_get}),
       "bpf_get_mem_cgroup");
  must(env.add_kfunc({"bpf_put_mem_cgroup", KfuncArg::void_(), {memcg}, KF_RELEASE, k_put}),
       "bpf_put_mem_cgroup");
  must(env.add_kfunc({"bpf_mem_cgroup_usage", KfuncArg::scalar(8), {memcg}, KF_TRUSTED_ARGS,
                      k_usage}),
       "bpf_mem_cgroup_usage");
  must(env.add_kfunc({"bpf_mem_cgroup_memory_events", KfuncArg::scalar(8),
                      {memcg, KfuncArg::scalar(4, true)}, KF_TRUSTED_ARGS, k_events}),
       "bpf_mem_cgroup_memory_events");
  must(env.add_kfunc({"bpf_mem_cgroup_vm_events", KfuncArg::scalar(8),
                      {memcg, KfuncArg::scalar(4, true)}, KF_TRUSTED_ARGS, k_vm_events}),
       "bpf_mem_cgroup_vm_events");
  must(env.add_kfunc({"bpf_mem_cgroup_page_state", KfuncArg::scalar(8),
                      {memcg, KfuncArg::scalar(4, true)}, KF_TRUSTED_ARGS, k_page_state}),
       "bpf_mem_cgroup_page_state");
  must(env.add_kfunc({"bpf_mem_cgroup_flush_stats", KfuncArg::void_(), {memcg},
                      KF_TRUSTED_ARGS | KF_SLEEPABLE, k_flush}),
       "bpf_mem_cgroup_flush_stats");
  // kernel/bpf/helpers.c's generic set: a cgroup by id, acquired.
  must(env.add_kfunc({"bpf_cgroup_from_id", KfuncArg::ptr_to("cgroup"), {KfuncArg::scalar(8)},
                      KF_ACQUIRE | KF_RET_NULL, k_cgroup_from_id}),
       "bpf_cgroup_from_id");
  must(env.add_kfunc({"bpf_cgroup_release", KfuncArg::void_(), {KfuncArg::ptr_to("cgroup")},
                      KF_RELEASE, k_cgroup_release}),
       "bpf_cgroup_release");
  // The posted series: reclaim only from SYSCALL programs (other sleepable programs may hold
  // filesystem locks its shrinkers could deadlock on).
  KfuncDesc r{"bpf_proactive_reclaim", KfuncArg::scalar(8, true),
              {memcg, KfuncArg::scalar(8), KfuncArg::scalar(4, true)},
              KF_TRUSTED_ARGS | KF_SLEEPABLE, k_reclaim};
  r.prog_types = {BPF_PROG_TYPE_SYSCALL};
  must(env.add_kfunc(std::move(r)), "bpf_proactive_reclaim");
}

void register_attach_points(emu::BpfKernelEnv &env) {
  // bpf_memcg_ops: one member, called from the charge path (check_member refuses sleepable
  // programs); u32 result, NO_OPINION (0) or BPF_MEMCG_HIGH_* bits.
  emu::bpf_struct_ops_type ops;
  ops.name = "bpf_memcg_ops";
  ops.members.push_back({"high_policy", KfuncArg::scalar(4), {KfuncArg::ptr_to("bpf_memcg_ctx")},
                         {"ctx"}, false});
  must(env.register_struct_ops(ops), "bpf_memcg_ops");
  // bpf_tcp_ops (CGROUP_TCP_SOCK_OPS, mm/bpf_tcp_ops.h): skmem_charged, called after a
  // socket-memory charge (softirq context in the kernel: no sleepable programs).
  emu::bpf_struct_ops_type tcp;
  tcp.name = "bpf_tcp_ops";
  tcp.members.push_back({"skmem_charged", KfuncArg::scalar(4, true),
                         {KfuncArg::ptr_to("bpf_tcp_sock_ctx")}, {"ctx"}, false});
  must(env.register_struct_ops(tcp), "bpf_tcp_ops");

  // bpf_iter__cgroup { meta; cgroup } (cgroup NULL on the final call).
  must(env.register_iter_target({"cgroup",
                                 KfuncArg::void_(),
                                 {KfuncArg::ptr_to("bpf_iter_meta"),
                                  KfuncArg::ptr_to("cgroup", /*nullable=*/true)},
                                 {"meta", "cgroup"},
                                 {},
                                 /*sleepable_ok=*/true}),
       "iter/cgroup");

  // fentry/fexit targets: the rwsem primitives and the over-high handling (each has a hook
  // point: shim/rwsem.cc, mm/memcontrol_high.cc).
  const KfuncArg sem = KfuncArg::ptr_to("rw_semaphore");
  for (const char *fn : {"down_read", "up_read", "down_write", "up_write", "downgrade_write"})
    must(env.register_tracing_target({fn, KfuncArg::void_(), {sem}, {"sem"}, {}}), fn);
  for (const char *fn : {"down_read_trylock", "down_write_trylock", "down_read_killable",
                         "down_write_killable"})
    must(env.register_tracing_target({fn, KfuncArg::scalar(4, true), {sem}, {"sem"}, {}}), fn);
  must(env.register_tracing_target({"__mem_cgroup_handle_over_high", KfuncArg::void_(),
                                    {KfuncArg::scalar(4)}, {"gfp_mask"}, {}}),
       "__mem_cgroup_handle_over_high");
  // Emulation: try_charge_memcg has no hook point (a relaxed load on the stock-hit path would
  // cost S1); the kernel could attach there only where it is not inlined.
}

}  // namespace

void bpf_memcontrol_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    emu::BpfKernelEnv &env = emu::bpf_kernel_env();
    // The kernel's order: the kfunc sets, then the struct_ops registration.
    register_structs(env);
    register_kfuncs(env);
    register_attach_points(env);
  });
}

}  // namespace umemcg
