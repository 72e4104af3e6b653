// SPDX-License-Identifier: GPL-2.0-only
// mm/process.cc: emulated processes, their exit, and the shell's workloads (see process.h).
//
// Mirrors: kernel/exit.c, kernel/signal.c, mm/mmap.c, mm/filemap.c (read) (Linux 6.19)
// Emulation: see process.h. A write to a page that is already mapped enters the kernel too (to
//   set the emulated accessed bit); it costs nothing.
#include "mm/process.h"

#include <algorithm>
#include <vector>

#include "kernel/cgroup.h"
#include "mm/filemap.h"
#include "mm/memory.h"
#include "shim/completion.h"
#include "shim/errno.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/rcupdate.h"
#include "shim/sched.h"
#include "shim/spinlock.h"
#include "shim/wait.h"

namespace umemcg::emu {

struct Process {
  ProcessOptions opts;
  ProcessBody body;
  mm_struct mm;
  task_struct *task = nullptr;  // until exit (under g_proc_lock)
  int pid = 0;
  bool exited = false;  // under g_proc_lock
  int status = 0;
  bool oom_victim = false;  // tsk_is_oom_victim(), under g_proc_lock
  bool dying = false;       // SIGKILL sent or exiting, under g_proc_lock
  int kill_sig = 0;         // the fatal signal that ended it (first one sent), under g_proc_lock
  int exit_sig = 0;         // kill_sig if it died of it, else 0 (set at exit)
  bool in_cgroup = false;   // joined the cgroup core's task lists (cgroup_post_fork)
  bool placement_refused = false;  // ProcessOptions::place failed: exit before the body
  completion started;       // the parent finished fork (cgroup membership, placement)
  completion done;
  atomic_t refs;  // the task's and the waiter's
};

namespace {

DEFINE_SPINLOCK(g_proc_lock);
// Live processes in start order.
std::vector<Process *> g_live GUARDED_BY(g_proc_lock);

constexpr int SIGKILL = 9;
constexpr unsigned long kReadChunkPages = 32;  // one read(2) of 128 KiB

void process_put(Process *p) {
  if (atomic_dec_and_test(&p->refs)) delete p;
}

// do_exit(): unmap everything, leave the memcg, report the status.
void do_exit(Process *p, int code) {
  current->flags |= PF_EXITING;
  spin_lock(&g_proc_lock);
  p->dying = true;
  spin_unlock(&g_proc_lock);
  {
    KernelEntry k;
    exit_mmap(&p->mm);
    mm_attach(&p->mm, nullptr);
    spin_lock(&g_proc_lock);
    std::erase(g_live, p);
    p->exited = true;
    p->task = nullptr;
    if (fatal_signal_pending(current)) {
      p->exit_sig = p->kill_sig ? p->kill_sig : SIGKILL;
      p->status = 128 + p->exit_sig;
    } else {
      p->status = code;
    }
    spin_unlock(&g_proc_lock);
    current->mm = nullptr;
    // The task leaves its cgroup: populated counts drop, cgroup.events is notified.
    if (p->in_cgroup) cgroup_exit(current);
    // Reverse-map walkers that found this mm through a folio are done after a grace period.
    synchronize_rcu();
  }
  complete(&p->done);
  process_put(p);
}

void process_main(Process *p) {
  // The parent sets up the task (mm, cgroup, placement) before the child runs anything.
  wait_for_completion(&p->started);
  // ret_from_fork's return to user mode: a process forked into a freezing cgroup takes the
  // freezer's trap before its first user instruction. Emulation: that return is modelled
  // (as an empty kernel entry) only when a signal is pending, so other starts keep their
  // schedule.
  if (signal_pending(current)) {
    KernelEntry k;
  }
  int code = fatal_signal_pending(current) || p->placement_refused ? 0 : p->body();
  do_exit(p, code);
}

bool alive() { return !fatal_signal_pending(current); }

unsigned long bytes_to_pages(unsigned long bytes) { return (bytes + PAGE_SIZE - 1) / PAGE_SIZE; }

}  // namespace

Process *process_start(const ProcessOptions &opts, ProcessBody body, int *place_err) {
  auto *p = new Process;
  p->opts = opts;
  p->body = std::move(body);
  init_completion(&p->started);
  init_completion(&p->done);
  atomic_set(&p->refs, 2);
  mm_attach(&p->mm, opts.memcg);
  spin_lock(&g_proc_lock);
  g_live.push_back(p);
  spin_unlock(&g_proc_lock);
  TaskOptions to;
  to.cpu = opts.cpu;
  task_struct *t = Machine::get()->spawn(opts.comm, [p] { process_main(p); }, to);
  // fork(), the parent's side: the child waits on `started` until this is done.
  spin_lock(&g_proc_lock);
  p->task = t;
  p->pid = t->pid;
  spin_unlock(&g_proc_lock);
  t->mm = &p->mm;
  t->oom_score_adj = opts.oom_score_adj;
  p->mm.owner = t;
  int err = 0;
  if (!opts.memcg) {
    // The child joins the parent's cgroup (memcg's fork callback moves the mm to its memory
    // css), then the placement moves it, as a cgroup.procs write before it runs.
    cgroup_post_fork(t, current);
    p->in_cgroup = true;
    if (opts.place) err = opts.place(t->pid);
  }
  p->placement_refused = err != 0;
  complete(&p->started);
  if (err) {
    process_wait(p);  // it exits without running its body
    if (place_err) *place_err = err;
    return nullptr;
  }
  return p;
}

int process_wait(Process *p) {
  wait_for_completion(&p->done);
  int status = p->status;
  process_put(p);
  return status;
}

bool process_exited(Process *p, int *status) {
  spin_lock(&g_proc_lock);
  bool exited = p->exited;
  if (exited && status) *status = p->status;
  spin_unlock(&g_proc_lock);
  return exited;
}

void process_kill(Process *p) { process_signal(p, SIGKILL); }

void process_signal(Process *p, int sig) {
  spin_lock(&g_proc_lock);
  if (!p->exited && p->task) {
    p->dying = true;
    if (!p->kill_sig) p->kill_sig = sig;
    send_sig_kill(p->task);
  }
  spin_unlock(&g_proc_lock);
}

int process_wait_unless_idle(Process *p, int *code, int *sig) {
  wait_queue_entry we;
  bool idle = false;
  for (;;) {
    prepare_to_wait(&p->done.wait, &we, TASK_UNINTERRUPTIBLE);
    if (completion_done(&p->done)) break;
    set_wait_reason("process_wait");
    if (schedule_unless_idle()) {
      idle = true;
      break;
    }
  }
  finish_wait(&p->done.wait, &we);
  if (idle) return -EDEADLK;
  wait_for_completion(&p->done);
  *code = p->status;
  *sig = p->exit_sig;
  process_put(p);
  return 0;
}

int process_pid(const Process *p) { return p->pid; }
mm_struct *process_mm(Process *p) { return &p->mm; }

Process *current_process() {
  if (!current || !current->mm) return nullptr;
  spin_lock(&g_proc_lock);
  Process *found = nullptr;
  for (Process *p : g_live)
    if (&p->mm == current->mm) found = p;
  spin_unlock(&g_proc_lock);
  return found;
}

int scan_processes(mem_cgroup *memcg, const std::function<int(Process *)> &fn) {
  std::vector<Process *> procs;
  spin_lock(&g_proc_lock);
  for (Process *p : g_live) {
    mem_cgroup *m = p->mm.memcg ? p->mm.memcg : root_mem_cgroup;
    if (!mem_cgroup_is_descendant(m, memcg)) continue;
    atomic_inc(&p->refs);
    procs.push_back(p);
  }
  spin_unlock(&g_proc_lock);
  // mem_cgroup_scan_tasks() order: memcg by memcg in pre-order (children in creation order),
  // then start order within a memcg.
  auto key = [](const Process *p) {
    std::vector<u64> path;
    for (mem_cgroup *m = p->mm.memcg ? p->mm.memcg : root_mem_cgroup; m; m = parent_mem_cgroup(m))
      path.insert(path.begin(), m->css.serial_nr);
    return path;
  };
  // Start order breaks ties: procs is in start order, so sort (key, position) pairs.
  std::vector<std::pair<std::vector<u64>, size_t>> keys;
  for (size_t i = 0; i < procs.size(); i++) keys.emplace_back(key(procs[i]), i);
  std::sort(keys.begin(), keys.end());
  std::vector<Process *> sorted;
  for (const auto &k : keys) sorted.push_back(procs[k.second]);
  procs.swap(sorted);
  int ret = 0;
  for (Process *p : procs) {
    if (!ret) ret = fn(p);
    process_put(p);
  }
  return ret;
}

int for_each_process(const std::function<int(Process *)> &fn) {
  std::vector<Process *> procs;
  spin_lock(&g_proc_lock);
  for (Process *p : g_live) {
    atomic_inc(&p->refs);
    procs.push_back(p);
  }
  spin_unlock(&g_proc_lock);
  int ret = 0;
  for (Process *p : procs) {
    if (!ret) ret = fn(p);
    process_put(p);
  }
  return ret;
}

void process_pin(Process *p) { atomic_inc(&p->refs); }
void process_unpin(Process *p) { process_put(p); }

short process_oom_score_adj(const Process *p) { return p->opts.oom_score_adj; }

bool process_dying(Process *p) {
  spin_lock(&g_proc_lock);
  bool d = p->dying || p->exited;
  spin_unlock(&g_proc_lock);
  return d;
}

long process_css_refs(mem_cgroup *memcg) {
  long n = 0;
  spin_lock(&g_proc_lock);
  for (Process *p : g_live)
    if (p->mm.memcg == memcg) n++;
  spin_unlock(&g_proc_lock);
  return n;
}

bool process_is_oom_victim(Process *p) {
  spin_lock(&g_proc_lock);
  bool v = p->oom_victim;
  spin_unlock(&g_proc_lock);
  return v;
}

void process_mark_oom_victim(Process *p) {
  spin_lock(&g_proc_lock);
  p->oom_victim = true;
  spin_unlock(&g_proc_lock);
}

// --- system calls --------------------------------------------------------------------------------

bool sys_mmap_anon(unsigned long nr_pages, unsigned long flags, unsigned long *addr) {
  {
    KernelEntry k;
    if (do_mmap_anon(current->mm, nr_pages, flags, addr)) *addr = 0;
  }
  return alive();
}

bool sys_munmap(unsigned long addr, unsigned long nr_pages) {
  {
    KernelEntry k;
    do_munmap(current->mm, addr, nr_pages);
  }
  return alive();
}

bool sys_madvise_dontneed(unsigned long addr, unsigned long nr_pages) {
  {
    KernelEntry k;
    madvise_dontneed(current->mm, addr, nr_pages);
  }
  return alive();
}

bool user_write(unsigned long addr) {
  // A page already mapped takes the write without a fault (the MMU sets its accessed bit).
  if (pte_write_present(current->mm, addr)) return alive();
  {
    KernelEntry k;
    do_user_addr_fault(current->mm, addr);
  }
  return alive();
}

// A sleep cut short by a signal that is not fatal (the freezer's trap: the task froze on its
// way back to user mode and was thawed) is restarted, as the kernel restarts nanosleep through
// its restart block: to the same deadline, so time spent frozen counts.
bool sys_nanosleep(std::uint64_t ns) {
  unsigned long deadline = jiffies + (ns + NSEC_PER_JIFFY - 1) / NSEC_PER_JIFFY;
  do {
    KernelEntry k;
    while (time_before(jiffies, deadline) && !signal_pending(current))
      schedule_timeout_interruptible(static_cast<long>(deadline - jiffies));
  } while (alive() && time_before(jiffies, deadline));
  return alive();
}

// pause() returns only when a signal handler ran; emulated processes have none, so only a
// fatal signal ends it (a freeze and thaw restart it, as -ERESTARTNOHAND does).
bool sys_pause() {
  do {
    KernelEntry k;
    set_wait_reason("pause");
    while (!signal_pending(current)) {
      set_current_state(TASK_INTERRUPTIBLE);
      if (!signal_pending(current)) schedule();
      __set_current_state(TASK_RUNNING);
    }
  } while (alive());
  return alive();
}

// --- workloads -------------------------------------------------------------------------------------

int workload_anon(unsigned long bytes, bool hold) {
  unsigned long nr = bytes_to_pages(bytes), addr;
  if (!nr) return 0;
  if (!sys_mmap_anon(nr, 0, &addr)) return 0;
  if (!addr) return 1;
  for (unsigned long i = 0; i < nr; i++)
    if (!user_write(addr + i)) return 0;
  if (hold) {
    while (sys_pause()) {
    }
    return 0;
  }
  sys_munmap(addr, nr);
  return 0;
}

int workload_mlock(unsigned long bytes) {
  unsigned long nr = bytes_to_pages(bytes), addr;
  if (!nr) return 0;
  if (!sys_mmap_anon(nr, MAP_POPULATE | MAP_LOCKED, &addr)) return 0;
  return addr ? 0 : 1;
}

int workload_pagecache(unsigned long bytes, const std::string &name, bool hold) {
  inode *ino;
  {
    KernelEntry k;  // open(2)
    ino = name.empty() ? file_create() : file_lookup(name);
  }
  // ftruncate to grow the file, then read the new range.
  long old = atomic_long_add_return(static_cast<long>(bytes), &ino->i_size) -
             static_cast<long>(bytes);
  unsigned long first = static_cast<unsigned long>(old) / PAGE_SIZE;
  unsigned long end = bytes_to_pages(static_cast<unsigned long>(old) + bytes);
  int status = 0;
  for (unsigned long i = first; i < end && status == 0;) {
    unsigned long n = std::min(kReadChunkPages, end - i);
    int ret;
    {
      KernelEntry k;
      ret = filemap_read(ino, i, n);
    }
    if (!alive()) break;
    if (ret) status = 1;  // read(2) failed (-ENOMEM)
    i += n;
  }
  if (hold && status == 0)
    while (sys_pause()) {
    }
  {
    KernelEntry k;  // close(2); a private file is deleted with its last reference
    iput(ino);
  }
  return status;
}

int workload_sleep(std::uint64_t ns) {
  sys_nanosleep(ns);
  return 0;
}

}  // namespace umemcg::emu
