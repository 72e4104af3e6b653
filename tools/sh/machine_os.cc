// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/machine_os.cc: the emulated machine behind `umemcg sh` (see machine_os.h).
#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include "tools/sh/machine_os.h"

#include <fcntl.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "kernel/cgroup.h"
#include "kernel/cgroupfs.h"
#include "kernel/eventfd.h"
#include "kernel/fdtable.h"
#include "kernel/kernfs/kernfs.h"
#include "kernel/notify/inotify.h"
#include "kernel/sysctl.h"
#include "mm/lru_check.h"
#include "mm/memcontrol.h"
#include "mm/memcontrol_iter.h"
#include "mm/page_alloc.h"
#include "mm/process.h"
#include "mm/swap.h"
#include "mm/swapfile.h"
#include "mm/vmstat.h"
#include "shim/hung_task.h"
#include "shim/completion.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/sched.h"
#include "tools/sh/sh_bpf_machine.h"
#include "tools/sh/sh_main.h"
#include "tools/sh/sh_os.h"

namespace umemcg::sh {

namespace {

// /proc/swaps (swap_show's format): the header line, then the device if there is one, sizes in
// KiB. Emulation: the device is the file "/swapfile", priority -2 (the first swapon's).
std::string proc_swaps_text() {
  std::string text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
  long total = total_swap_pages();
  if (total <= 0) return text;
  unsigned long bytes = static_cast<unsigned long>(total) * (PAGE_SIZE / 1024);
  unsigned long inuse =
      static_cast<unsigned long>(total - get_nr_swap_pages()) * (PAGE_SIZE / 1024);
  const std::string file = "/swapfile";
  char line[160];
  int pad = file.size() < 40 ? static_cast<int>(40 - file.size()) : 1;
  std::snprintf(line, sizeof(line), "%s%*s%s\t%lu\t%s%lu\t%s%d\n", file.c_str(), pad, " ",
                "file\t", bytes, bytes < 10000000 ? "\t" : "", inuse,
                inuse < 10000000 ? "\t" : "", -2);
  return text + line;
}

// /proc/meminfo (meminfo_proc_show's format) for the lines the memory model has numbers for:
// the RAM from the page allocator (mm/page_alloc.h), the LRU and page-cache counts from the
// machine's node statistics (global_node_page_state, mm/vmstat.h: exact where memory.stat's
// rstat-flushed numbers may lag, so that MemFree and the lines below add up at any time), swap
// from the device.
std::string proc_meminfo_text() {
  auto st = [](int idx) { return global_node_page_state(idx); };
  unsigned long free = nr_free_pages();
  unsigned long active_anon = st(NR_ACTIVE_ANON), inactive_anon = st(NR_INACTIVE_ANON);
  unsigned long active_file = st(NR_ACTIVE_FILE), inactive_file = st(NR_INACTIVE_FILE);
  unsigned long cached = st(NR_FILE_PAGES);
  long swap_total = total_swap_pages();
  // si_mem_available(): the free pages less totalreserve_pages (the high watermark of the one
  // zone, which has no lowmem_reserve), plus the page cache less what must stay of it (half of
  // it, or the low watermark if that is less); no reclaimable slab here.
  long available = static_cast<long>(free) - static_cast<long>(high_wmark_pages());
  unsigned long pagecache = active_file + inactive_file;
  pagecache -= std::min(pagecache / 2, low_wmark_pages());
  available += static_cast<long>(pagecache);
  if (available < 0) available = 0;
  const std::pair<const char *, unsigned long> lines[] = {
      {"MemTotal:", totalram_pages()},
      {"MemFree:", free},
      {"MemAvailable:", static_cast<unsigned long>(available)},
      {"Buffers:", 0},
      {"Cached:", cached},
      {"SwapCached:", 0},
      {"Active:", active_anon + active_file},
      {"Inactive:", inactive_anon + inactive_file},
      {"Active(anon):", active_anon},
      {"Inactive(anon):", inactive_anon},
      {"Active(file):", active_file},
      {"Inactive(file):", inactive_file},
      {"Unevictable:", st(NR_UNEVICTABLE)},
      {"SwapTotal:", static_cast<unsigned long>(swap_total)},
      {"SwapFree:", static_cast<unsigned long>(swap_total > 0 ? get_nr_swap_pages() : 0)},
      {"AnonPages:", st(NR_ANON_MAPPED)},
      {"Mapped:", st(NR_FILE_MAPPED)},
      {"Shmem:", st(NR_SHMEM)},
  };
  std::string text;
  char line[64];
  for (const auto &[name, pages] : lines) {
    std::snprintf(line, sizeof(line), "%-16s%8lu kB\n", name, pages << (PAGE_SHIFT - 10));
    text += line;
  }
  return text;
}

// /proc/zoneinfo (zoneinfo_show_print's format) for the one zone: its header and page lines.
std::string proc_zoneinfo_text() {
  char buf[512];
  unsigned long managed = zone_managed_pages();
  std::snprintf(buf, sizeof(buf),
                "Node 0, zone %8s\n  pages free     %lu\n        boost    0\n"
                "        min      %lu\n        low      %lu\n        high     %lu\n"
                "        promo    %lu\n        spanned  %lu\n        present  %lu\n"
                "        managed  %lu\n        cma      0\n",
                "Normal", nr_free_pages(), min_wmark_pages(), low_wmark_pages(),
                high_wmark_pages(), high_wmark_pages() + (high_wmark_pages() - low_wmark_pages()),
                managed, managed, managed);
  return buf;
}

// The /proc files the machine has: their text, or false for any other path.
bool proc_text(const std::string &path, std::string *text) {
  if (path == "/proc/swaps") {
    if (text) *text = proc_swaps_text();
    return true;
  }
  if (path == "/proc/meminfo") {
    if (text) *text = proc_meminfo_text();
    return true;
  }
  if (path == "/proc/zoneinfo") {
    if (text) *text = proc_zoneinfo_text();
    return true;
  }
  if (path == "/proc/vmstat") {
    if (text) *text = vmstat_text();
    return true;
  }
  return false;
}
// A read-only file of /proc (a sysctl file of /proc/sys is not one: see sysctl_lookup).
bool is_proc_file(const std::string &path) { return proc_text(path, nullptr); }

// The directories of /proc: /proc itself and those of /proc/sys with registered sysctls.
bool is_proc_dir(const std::string &path) {
  return path == "/proc" || emu::sysctl_is_dir(path);
}
// Anything of /proc the machine has: a file, a sysctl file or a directory.
bool is_proc_path(const std::string &path) {
  return is_proc_file(path) || is_proc_dir(path) || emu::sysctl_lookup(path);
}

bool under_mount(const std::string &path) {
  const std::string mnt = CGROUP_MOUNT_POINT;
  return path.compare(0, mnt.size(), mnt) == 0 &&
         (path.size() == mnt.size() || path[mnt.size()] == '/');
}

// "/", "/sys", "/sys/fs": directories above the mount point (they exist; nothing else of them
// is modelled).
bool mount_ancestor(const std::string &path) {
  const std::string mnt = CGROUP_MOUNT_POINT;
  if (path == "/") return true;
  return path.size() < mnt.size() && mnt.compare(0, path.size(), path) == 0 &&
         mnt[path.size()] == '/';
}

unsigned int kf_flags(int flags) {
  unsigned int f = 0;
  if ((flags & O_ACCMODE) == O_WRONLY) f |= KF_O_WRONLY;
  if ((flags & O_ACCMODE) == O_RDWR) f |= KF_O_RDWR;
  if (flags & O_APPEND) f |= KF_O_APPEND;
  if (flags & O_NONBLOCK) f |= KF_O_NONBLOCK;
  return f;
}

int run_workload(const WorkloadSpec &w) {
  switch (w.kind) {
    case WorkloadSpec::Kind::kAnon:
      return emu::workload_anon(w.size, w.hold);
    case WorkloadSpec::Kind::kPagecache:
      return emu::workload_pagecache(w.size, w.file, w.hold);
    case WorkloadSpec::Kind::kMlock:
      return emu::workload_mlock(w.size);
    case WorkloadSpec::Kind::kSleep:
      return emu::workload_sleep(w.sleep_ns);
  }
  return 0;
}

// The memcg of a cgroup directory (for bpf attach), as the kernel resolves a cgroup fd.
int resolve_memcg(const std::string &path, mem_cgroup **out) {
  cgroup *cg = nullptr;
  if (int err = cgroupfs_lookup_cgroup(path, &cg)) return err;
  mem_cgroup *memcg = mem_cgroup_from_cgroup(cg);
  if (!memcg) return -ENOENT;
  *out = memcg;
  return 0;
}

class MachineOs final : public ShellOs {
 public:
  MachineOs() : bpf_(resolve_memcg) {}
  ~MachineOs() override { teardown(); }

  int open(const std::string &path, int flags) override {
    emu::KernelEntry k;
    Fd fd;
    if (is_proc_file(path)) {
      if ((flags & O_ACCMODE) != O_RDONLY) return -EACCES;
      fd.proc = path;
    } else if (const ctl_table *t = emu::sysctl_lookup(path)) {
      // proc_sys_permission(): the mode's owner bits (the shell runs as root).
      if ((flags & O_ACCMODE) != O_WRONLY && !(t->mode & 0400)) return -EACCES;
      if ((flags & O_ACCMODE) != O_RDONLY && !(t->mode & 0200)) return -EACCES;
      fd.sysctl = t;
    } else if (is_proc_dir(path)) {
      return -EISDIR;  // the shell opens files to read or write them
    } else if (!under_mount(path)) {
      return -ENOENT;
    } else if (int err = cgroupfs_open(path, kf_flags(flags), &fd.file)) {
      return err;
    }
    fd.flags = flags;
    // The kernel's descriptor table holds the number (cgroup.event_control resolves it there).
    int n = fd_install(fd_entry{fd.file, nullptr});
    fds_.emplace(n, fd);
    return n;
  }

  int eventfd() override {
    emu::KernelEntry k;
    Fd fd;
    fd.efd = eventfd_ctx_create();
    if (!fd.efd) return -ENOMEM;
    int n = fd_install(fd_entry{nullptr, fd.efd});
    fds_.emplace(n, fd);
    return n;
  }

  int eventfd_read(int fd, uint64_t timeout_ns, uint64_t *count) override {
    emu::KernelEntry k;
    auto it = fds_.find(fd);
    if (it == fds_.end()) return -EBADF;
    if (!it->second.efd) return -EINVAL;
    u64 c = 0;
    int r = eventfd_read_timeout(it->second.efd, static_cast<long>(nsecs_to_jiffies(timeout_ns)),
                                 &c);
    if (r == 1) *count = c;
    return r;
  }

  int read(int fd, uint64_t offset, std::string *out) override {
    emu::KernelEntry k;
    auto it = fds_.find(fd);
    if (it == fds_.end()) return -EBADF;
    out->clear();
    if (it->second.efd) return -EINVAL;  // an eventfd reads 8 binary bytes: eventfd_read()
    if (!it->second.proc.empty()) {
      std::string text;
      proc_text(it->second.proc, &text);
      if (offset < text.size()) *out = text.substr(offset);
      return 0;
    }
    if (it->second.sysctl) {
      if ((it->second.flags & O_ACCMODE) == O_WRONLY) return -EBADF;
      return emu::sysctl_read(it->second.sysctl, static_cast<loff_t>(offset), out);
    }
    for (uint64_t pos = offset;;) {
      ssize_t n = cgroupfs_read(it->second.file, out, static_cast<loff_t>(pos), 1 << 16);
      if (n < 0) return static_cast<int>(n);
      if (n == 0) return 0;
      pos += static_cast<uint64_t>(n);
    }
  }

  long write(int fd, const std::string &bytes) override {
    emu::KernelEntry k;
    auto it = fds_.find(fd);
    if (it == fds_.end()) return -EBADF;
    if (!it->second.proc.empty()) return -EBADF;  // opened read-only
    if (it->second.efd) return -EINVAL;            // eventfd writes are not provided
    if (it->second.sysctl) {
      if ((it->second.flags & O_ACCMODE) == O_RDONLY) return -EBADF;
      return emu::sysctl_write(it->second.sysctl, bytes, &it->second.pos);
    }
    return cgroupfs_write(it->second.file, bytes.data(), bytes.size());
  }

  int close(int fd) override {
    emu::KernelEntry k;
    auto it = fds_.find(fd);
    if (it == fds_.end()) return -EBADF;
    release(fd, it->second);
    fds_.erase(it);
    return 0;
  }

  int mkdir(const std::string &path) override {
    emu::KernelEntry k;
    if (mount_ancestor(path) || is_proc_path(path)) return -EEXIST;
    if (!under_mount(path)) return -EACCES;
    return cgroupfs_mkdir(path);
  }
  int rmdir(const std::string &path) override {
    emu::KernelEntry k;
    if (is_proc_file(path) || emu::sysctl_lookup(path)) return -ENOTDIR;
    if (mount_ancestor(path) || is_proc_dir(path)) return -EBUSY;
    if (!under_mount(path)) return -ENOENT;
    return cgroupfs_rmdir(path);
  }
  int readdir(const std::string &path, std::vector<std::string> *names) override {
    emu::KernelEntry k;
    if (is_proc_file(path) || emu::sysctl_lookup(path)) return -ENOTDIR;
    if (path == "/proc") {
      *names = {"meminfo", "swaps", "sys", "vmstat", "zoneinfo"};
      return 0;
    }
    if (is_proc_dir(path)) {
      *names = emu::sysctl_readdir(path);
      return 0;
    }
    if (!under_mount(path)) return -ENOENT;
    return cgroupfs_readdir(path, names);
  }
  int stat(const std::string &path, bool *is_dir) override {
    emu::KernelEntry k;
    if (is_proc_path(path) || mount_ancestor(path)) {
      *is_dir = !is_proc_file(path) && !emu::sysctl_lookup(path);
      return 0;
    }
    if (!under_mount(path)) return -ENOENT;
    return cgroupfs_stat(path, is_dir);
  }

  int watch(const std::string &path) override {
    emu::KernelEntry k;
    if (!under_mount(path)) return is_proc_path(path) ? -EINVAL : -ENOENT;
    if (!group_) {
      fsnotify_group *g = cgroupfs_inotify_init();
      if (IS_ERR(g)) return static_cast<int>(PTR_ERR(g));
      group_ = g;
    }
    return cgroupfs_inotify_add_watch(group_, path, IN_MODIFY | IN_DELETE_SELF);
  }

  int next_event(uint64_t timeout_ns, ShEvent *ev) override {
    emu::KernelEntry k;
    if (!group_) {
      // No watch: nothing can arrive; the wait is only the timeout.
      schedule_timeout_interruptible(static_cast<long>(nsecs_to_jiffies(timeout_ns)));
      return 0;
    }
    inotify_event e;
    int r = inotify_read_event(group_, static_cast<long>(nsecs_to_jiffies(timeout_ns)), &e);
    if (r <= 0) return r;
    ev->wd = e.wd;
    ev->mask = e.mask;
    return 1;
  }

  int spawn(const std::string &cgroup_path, const WorkloadSpec &w) override {
    if (!under_mount(cgroup_path)) return -ENOENT;
    emu::ProcessOptions po;
    po.comm = w.kind == WorkloadSpec::Kind::kAnon        ? "anon"
              : w.kind == WorkloadSpec::Kind::kPagecache ? "pagecache"
              : w.kind == WorkloadSpec::Kind::kMlock     ? "mlock"
                                                         : "sleep";
    po.oom_score_adj = static_cast<short>(w.oom_score_adj);
    // The cgroup.procs write, made for the child before it runs: a refusal (EBUSY under the
    // no-internal-process rule, ENOENT, ...) leaves no process.
    std::string procs = cgroup_path + "/cgroup.procs";
    po.place = [procs](int pid) {
      ssize_t n = cgroupfs_write_file(procs, std::to_string(pid));
      return n < 0 ? static_cast<int>(n) : 0;
    };
    int err = 0;
    emu::Process *p = emu::process_start(po, [w] { return run_workload(w); }, &err);
    if (!p) return err;
    int pid = emu::process_pid(p);
    children_.emplace(pid, p);
    return pid;
  }

  int wait(int pid, int *status) override {
    auto it = pid == -1 ? children_.begin() : children_.find(pid);
    if (it == children_.end()) return -ECHILD;
    emu::Process *p = it->second;
    int code = 0, sig = 0;
    if (int err = emu::process_wait_unless_idle(p, &code, &sig)) return err;
    int reaped = it->first;
    children_.erase(it);
    *status = sig ? sig : (code & 0xff) << 8;  // waitpid's encoding
    return reaped;
  }

  int kill(int pid, int sig) override {
    auto it = children_.find(pid);
    if (it == children_.end()) return -ESRCH;
    if (sig == 0) return 0;
    if (sig < 0 || sig >= 65) return -EINVAL;
    emu::process_signal(it->second, sig);
    return 0;
  }

  int getpid() override { return current->tgid; }

  int sleep(uint64_t ns) override {
    // nanosleep(): an interruptible sleep in machine time.
    return emu::sys_nanosleep(ns) ? 0 : -EINTR;
  }

  int bpf_load(const std::string &file, const std::string &name, std::string *log) override {
    emu::KernelEntry k;
    return bpf_.load(file, name, log);
  }
  int bpf_attach(const std::string &obj, const std::string &item,
                 const std::string &cgroup_path) override {
    emu::KernelEntry k;
    return bpf_.attach(obj, item, cgroup_path);
  }
  int bpf_detach(const std::string &obj, const std::string &item,
                 const std::string &cgroup_path) override {
    emu::KernelEntry k;
    return bpf_.detach(obj, item, cgroup_path);
  }
  int bpf_run(const std::string &obj, const std::string &prog, const std::vector<uint64_t> &args,
              uint64_t *retval) override {
    emu::KernelEntry k;
    return bpf_.run(obj, prog, args, retval);
  }
  int bpf_map_dump(const std::string &obj, const std::string &map, BpfMapDump *out) override {
    emu::KernelEntry k;
    return bpf_.map_dump(obj, map, out);
  }
  int bpf_ringbuf(const std::string &obj, const std::string &map,
                  std::vector<std::string> *records) override {
    emu::KernelEntry k;
    return bpf_.ringbuf(obj, map, records);
  }
  int bpf_unload(const std::string &name) override {
    emu::KernelEntry k;
    return bpf_.unload(name);
  }

  // The shell's exit: every child killed and reaped, files closed, objects unloaded.
  void teardown() {
    for (auto &[pid, p] : children_) emu::process_signal(p, SIGKILL);
    for (auto &[pid, p] : children_) emu::process_wait(p);
    children_.clear();
    emu::KernelEntry k;
    for (auto &[n, fd] : fds_) release(n, fd);
    fds_.clear();
    if (group_) inotify_release(group_);
    group_ = nullptr;
    bpf_.unload_all();
  }

 private:
  struct Fd {
    kernfs_file *file = nullptr;
    eventfd_ctx *efd = nullptr;
    std::string proc;  // the /proc file it reads, or empty
    const ctl_table *sysctl = nullptr;  // the /proc/sys file, or nullptr
    int flags = 0;                      // open(2)'s flags
    loff_t pos = 0;                     // the file position of writes (sysctl files)
  };
  // close(2): the number leaves the kernel's table, then the file goes.
  static void release(int n, const Fd &fd) {
    fd_entry e;
    close_fd(n, &e);
    if (fd.file) cgroupfs_close(fd.file);
    if (fd.efd) eventfd_release(fd.efd);
  }
  std::map<int, Fd> fds_;
  fsnotify_group *group_ = nullptr;
  std::map<int, emu::Process *> children_;  // unreaped children, by pid (start order = pid order)
  ShBpf bpf_;
};

}  // namespace

int machine_run(const ShOptions &opts, const std::function<int(ShellOs &os)> &body,
                std::ostream &err, const char *who) {
  if (opts.swap != 0 && opts.swap < PAGE_SIZE) {
    err << who << ": --swap: a swap device needs at least one page\n";
    return 2;
  }
  emu::MachineConfig cfg;
  cfg.nr_cpus = static_cast<unsigned int>(opts.cpus);
  cfg.mode = opts.mode == ShOptions::Mode::kSim ? emu::Mode::simulated : emu::Mode::native;
  cfg.seed = opts.seed;
  emu::set_hung_task_timeout_ns(opts.hung_task_timeout_ns);  // (0: off)
  int status = 0;
  {
    emu::Machine m(cfg);
    int boot = -1;
    m.exec([&] {
      memcg_boot_params p;
      p.v1 = opts.cgroup_version == 1;
      p.stock = opts.stock == ShOptions::Stock::kPcstock ? memcg_stock_design::page_counter_stock
                                                        : memcg_stock_design::memcg_stock;
      p.memory_localevents = opts.memory_localevents;
      p.memory_recursiveprot = opts.memory_recursiveprot;
      p.high_debt_limit = static_cast<unsigned long>(opts.high_debt_limit);
      p.swap_pages = opts.swap / PAGE_SIZE;
      p.totalram_pages = opts.memory / PAGE_SIZE;
      p.costs = opts.costs;
      boot = mem_cgroup_boot(p);
    });
    if (boot) {
      err << who << ": the machine failed to boot: " << std::strerror(-boot) << "\n";
      return 1;
    }
    m.exec([&] {
      // The shell: a process of the root cgroup; its ShellOs calls are its system calls.
      emu::ProcessOptions po;
      po.comm = "sh";
      int perr = 0;
      emu::Process *shell = emu::process_start(po, [&] {
        MachineOs os;
        int st = body(os);
        os.teardown();
        return st;
      }, &perr);
      status = shell ? emu::process_wait(shell) : 1;
      // The memory model's own consistency check at the end of every run (mm/lru_check.h):
      // a mismatch is a kernel warning, which the policy fuzzer reports as a finding.
      lru_add_drain_all();
      const std::string lru = emu::lru_check_memcgs();
      WARN(!lru.empty(), "LRU check: %s", lru.c_str());
    });
  }
  return status;
}

int machine_sh_main(const ShOptions &opts, std::istream &in, std::ostream &out,
                    std::ostream &err) {
  return machine_run(opts, [&](ShellOs &os) { return sh_main(opts, os, in, out, err); }, err,
                     "umemcg sh");
}

}  // namespace umemcg::sh
