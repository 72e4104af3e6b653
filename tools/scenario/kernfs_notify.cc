// SPDX-License-Identifier: GPL-2.0-only
// tools/scenario/kernfs_notify.cc: scenario `kernfs-notify` (seed 000): the kernfs notify worker
// throttled inside memory.high while it holds the cgroupfs locks, and what bpf_memcg_ops'
// high_policy does about it.
//
// The machine (simulated mode, 4 vCPUs, cgroup v2):
//   /watcher    memory.high 32M, usage 1.5x that in anonymous memory a hog holds (written before
//               the limit), a tailer re-reading a 8M file, and the watcher: 8 inotify instances,
//               each watching cgroup.events of every source, drained every 2 s;
//   /srcN       16 sources whose cgroup.events ("populated") a mover toggles every 10 ms by
//               moving a sleeping process between /srcN and /park: 1600 notifications a second,
//               each delivered by the kernfs notify worker to 8 watches, each delivery an event
//               allocation charged to /watcher (kernel/notify/inotify.h);
//   bystanders  a walker reading every directory of /sys/fs/cgroup in turn (passes counted), a
//               churner doing mkdir+rmdir of /churn/x (operations and worst latency).
// Variants: baseline; policy (test/progs/kernfs_lockholder.bpf.c loaded by a privileged
// loader, its lock tracking attached and its bpf_memcg_ops attached to the root cgroup);
// upstream-fix (the kernfs_notify_no_rwsem boot option: delivery without kernfs_rwsem, seed
// 000's "[2]"); policy+reclaimer (the policy, and a reclaimer process in /watcher that reads the
// policy's ring buffer and pays each deferred debt through memory.reclaim, from the seed's
// discussion).
// Measured with hooks on the rwsem primitives (as the sample's fentry/fexit programs are): the
// worker's longest hold of each lock, the longest kernfs_rwsem write wait (the lock's own
// statistics), and the trace's lock holds and waits, over-high handling and bystander
// operations.
// Emulation: the bystanders' system calls cost modelled machine time (kWalkDirNs per directory
//   read, kChurnOpNs per mkdir or rmdir) besides what the kernel code itself models; the seed's
//   reproducer ran for longer, so its counts are larger and only their ratios compare.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#undef WARN
#include "bpfvm/attach_tracing.h"
#include "bpfvm/kernel_env.h"
#include "bpfvm/map.h"
#include "bpfvm/ringbuf.h"
#include "bpfvm/runtime.h"
#include "kernel/cgroup.h"
#include "kernel/cgroupfs.h"
#include "kernel/kernfs/kernfs.h"
#include "kernel/notify/inotify.h"
#include "mm/bpf_memcg_ops.h"
#include "mm/bpf_memcontrol.h"
#include "mm/filemap.h"
#include "mm/memcontrol.h"
#include "mm/process.h"
#include "shim/hooks.h"
#include "shim/jiffies.h"
#include "shim/machine.h"
#include "shim/rwsem.h"
#include "shim/sched.h"
#include "test/progs/kernfs_lockholder_user.h"
#include "tools/scenario/scenario.h"
#include "tools/scenario/trace.h"

namespace umemcg::scenario {
namespace {

constexpr std::uint64_t kMs = 1000 * 1000;
constexpr std::uint64_t kSec = 1000 * kMs;
constexpr unsigned long kMiB = 1024 * 1024;

// Modelled cost of the bystanders' system calls (see the banner).
constexpr std::uint64_t kWalkDirNs = 100 * 1000;  // open + getdents + close of one directory
constexpr std::uint64_t kChurnOpNs = 250 * 1000;  // one mkdir(2) or rmdir(2) of a cgroup

struct Params {
  std::uint64_t duration_ns = 10 * kSec;
  int nr_sources = 16;
  int nr_groups = 64;  // the watcher's inotify instances
  unsigned long hog_bytes = 48 * kMiB;
  unsigned long high_bytes = 32 * kMiB;
  unsigned long tail_bytes = 8 * kMiB;
  std::uint64_t tail_period_ns = 500 * kMs;
  std::uint64_t mover_period_ns = 10 * kMs;
  std::uint64_t drain_period_ns = 2 * kSec;
};

enum class Variant { kBaseline, kPolicy, kUpstreamFix, kPolicyReclaimer };

struct VariantDesc {
  Variant v;
  const char *name;
};
constexpr VariantDesc kVariants[] = {{Variant::kBaseline, "baseline"},
                                     {Variant::kPolicy, "policy"},
                                     {Variant::kUpstreamFix, "upstream-fix"},
                                     {Variant::kPolicyReclaimer, "policy+reclaimer"}};

bool has_policy(Variant v) { return v == Variant::kPolicy || v == Variant::kPolicyReclaimer; }

std::string cg(const std::string &rel) { return std::string(CGROUP_MOUNT_POINT) + "/" + rel; }

// kernfs_lockholder.bpf.c's .bss and ring buffer record.
using progs::kernfs_lockholder::defer_event;
using progs::kernfs_lockholder::lockholder_state;

// --- measurement: hooks on the rwsem primitives and on the over-high handling -----------------

struct LockWatch {
  rw_semaphore *rwsem = nullptr;
  rw_semaphore *supers = nullptr;
  TraceWriter *trace = nullptr;
  std::mutex mu;  // simulated mode runs one task at a time; the lock keeps native runs sound
  // (task, lock) -> when it asked for the lock, when it got it, and whether for write.
  struct Held {
    std::uint64_t asked = 0, got = 0;
    bool write = false;
  };
  std::map<std::pair<const task_struct *, const void *>, Held> held;
  std::map<const task_struct *, std::uint64_t> over_high_start;
  std::uint64_t worker_rwsem_max = 0, worker_supers_max = 0;
  std::uint64_t worker_throttles = 0, worker_throttled_ns = 0;
  std::vector<int> named;  // pids already named in the trace

  const char *lock_name(const void *sem) const {
    return sem == rwsem ? "kernfs_rwsem" : sem == supers ? "kernfs_supers_rwsem" : nullptr;
  }
  void name_thread(const task_struct *t) {
    if (!trace || std::find(named.begin(), named.end(), t->pid) != named.end()) return;
    named.push_back(t->pid);
    trace->thread_name(t->pid, t->comm);
  }
};

LockWatch *g_watch = nullptr;  // the running variant's (one machine at a time)

bool is_worker(const task_struct *t) { return t && (t->flags & PF_KTHREAD); }

void on_lock_entry(void *data, const std::uint64_t *args, unsigned int, std::uint64_t) {
  auto *w = static_cast<LockWatch *>(data);
  const void *sem = reinterpret_cast<const void *>(args[0]);
  if (!w->lock_name(sem) || !current) return;
  std::lock_guard<std::mutex> g(w->mu);
  w->held[{current, sem}].asked = emu::Machine::get()->now_ns();
}

// fexit of an acquisition: ok tells whether it succeeded (trylock 1, killable 0, others always).
void lock_acquired(LockWatch *w, const void *sem, bool write) {
  if (!w->lock_name(sem) || !current) return;
  std::lock_guard<std::mutex> g(w->mu);
  LockWatch::Held &h = w->held[{current, sem}];
  h.got = emu::Machine::get()->now_ns();
  if (!h.asked) h.asked = h.got;
  h.write = write;
  if (w->trace && h.got - h.asked >= kMs) {
    w->name_thread(current);
    w->trace->complete(current->pid, std::string("wait ") + w->lock_name(sem) +
                                         (write ? " (write)" : " (read)"),
                       "lock", h.asked, h.got - h.asked);
  }
}
void on_down_read(void *d, const std::uint64_t *a, unsigned int, std::uint64_t) {
  lock_acquired(static_cast<LockWatch *>(d), reinterpret_cast<const void *>(a[0]), false);
}
void on_down_write(void *d, const std::uint64_t *a, unsigned int, std::uint64_t) {
  lock_acquired(static_cast<LockWatch *>(d), reinterpret_cast<const void *>(a[0]), true);
}
void on_read_trylock(void *d, const std::uint64_t *a, unsigned int, std::uint64_t ret) {
  if (ret == 1) lock_acquired(static_cast<LockWatch *>(d), reinterpret_cast<const void *>(a[0]), false);
}
void on_write_trylock(void *d, const std::uint64_t *a, unsigned int, std::uint64_t ret) {
  if (ret == 1) lock_acquired(static_cast<LockWatch *>(d), reinterpret_cast<const void *>(a[0]), true);
}
void on_read_killable(void *d, const std::uint64_t *a, unsigned int, std::uint64_t ret) {
  if (ret == 0) lock_acquired(static_cast<LockWatch *>(d), reinterpret_cast<const void *>(a[0]), false);
}
void on_write_killable(void *d, const std::uint64_t *a, unsigned int, std::uint64_t ret) {
  if (ret == 0) lock_acquired(static_cast<LockWatch *>(d), reinterpret_cast<const void *>(a[0]), true);
}

void on_unlock(void *data, const std::uint64_t *args, unsigned int, std::uint64_t) {
  auto *w = static_cast<LockWatch *>(data);
  const void *sem = reinterpret_cast<const void *>(args[0]);
  if (!w->lock_name(sem) || !current) return;
  std::lock_guard<std::mutex> g(w->mu);
  auto it = w->held.find({current, sem});
  if (it == w->held.end() || !it->second.got) return;
  const std::uint64_t now = emu::Machine::get()->now_ns();
  const std::uint64_t hold = now - it->second.got;
  if (is_worker(current)) {
    std::uint64_t &mx = sem == w->rwsem ? w->worker_rwsem_max : w->worker_supers_max;
    mx = std::max(mx, hold);
  }
  // Traced: holds of a millisecond or more (the worker's, the churner's write holds behind
  // it), so that a 10 s run stays a trace Perfetto opens at once.
  if (w->trace && hold >= kMs) {
    w->name_thread(current);
    w->trace->complete(current->pid, std::string("hold ") + w->lock_name(sem) +
                                         (it->second.write ? " (write)" : " (read)"),
                       "lock", it->second.got, hold);
  }
  w->held.erase(it);
}

void on_over_high_entry(void *data, const std::uint64_t *, unsigned int, std::uint64_t) {
  auto *w = static_cast<LockWatch *>(data);
  if (!current) return;
  std::lock_guard<std::mutex> g(w->mu);
  w->over_high_start[current] = emu::Machine::get()->now_ns();
}

void on_over_high_exit(void *data, const std::uint64_t *, unsigned int, std::uint64_t) {
  auto *w = static_cast<LockWatch *>(data);
  if (!current) return;
  std::lock_guard<std::mutex> g(w->mu);
  auto it = w->over_high_start.find(current);
  if (it == w->over_high_start.end()) return;
  const std::uint64_t dur = emu::Machine::get()->now_ns() - it->second;
  if (is_worker(current)) {
    w->worker_throttles++;
    w->worker_throttled_ns += dur;
  }
  if (w->trace && dur > 0) {
    w->name_thread(current);
    w->trace->complete(current->pid, "memory.high: reclaim and throttle", "memcg", it->second,
                       dur);
  }
  w->over_high_start.erase(it);
}

// The policy's answer (the dispatcher's exit point): a deferral is a trace instant.
void on_high_policy_exit(void *data, const std::uint64_t *, unsigned int, std::uint64_t req) {
  auto *w = static_cast<LockWatch *>(data);
  if (!w->trace || !current || !(req & BPF_MEMCG_HIGH_DEFER_INLINE)) return;
  std::lock_guard<std::mutex> g(w->mu);
  w->name_thread(current);
  w->trace->instant(current->pid, "high_policy: DEFER_INLINE", "policy",
                    emu::Machine::get()->now_ns(),
                    {{"nr_pages_over_high", current->memcg_nr_pages_over_high}});
}

// Attaches the measurement hooks for the machine's lifetime.
class Hooks {
 public:
  explicit Hooks(LockWatch *w) {
    add("down_read", false, on_lock_entry, w);
    add("down_write", false, on_lock_entry, w);
    add("down_read_killable", false, on_lock_entry, w);
    add("down_write_killable", false, on_lock_entry, w);
    add("down_read", true, on_down_read, w);
    add("down_write", true, on_down_write, w);
    add("down_read_trylock", true, on_read_trylock, w);
    add("down_write_trylock", true, on_write_trylock, w);
    add("down_read_killable", true, on_read_killable, w);
    add("down_write_killable", true, on_write_killable, w);
    add("up_read", false, on_unlock, w);
    add("up_write", false, on_unlock, w);
    add("__mem_cgroup_handle_over_high", false, on_over_high_entry, w);
    add("__mem_cgroup_handle_over_high", true, on_over_high_exit, w);
    add("memcg_high_policy", true, on_high_policy_exit, w);
  }
  // Task context (detaching waits for a grace period).
  void detach() {
    for (auto &[p, id] : ids_) p->detach(id);
    ids_.clear();
  }

 private:
  void add(const char *name, bool exit, emu::hook_fn_t fn, LockWatch *w) {
    emu::HookPoint *p = emu::HookPoint::find(name);
    if (!p) {
      std::fprintf(stderr, "kernfs-notify: no hook point %s\n", name);
      std::abort();
    }
    ids_.emplace_back(p, p->attach(exit, fn, w));
  }
  std::vector<std::pair<emu::HookPoint *, int>> ids_;
};

// --- the processes ---------------------------------------------------------------------------

// Starts a process in the cgroup at rel (a cgroup.procs write before it runs).
emu::Process *start_in(const std::string &rel, const char *comm, emu::ProcessBody body) {
  emu::ProcessOptions po;
  po.comm = comm;
  const std::string procs = cg(rel) + "/cgroup.procs";
  po.place = [procs](int pid) {
    ssize_t n = cgroupfs_write_file(procs, std::to_string(pid));
    return n < 0 ? static_cast<int>(n) : 0;
  };
  int err = 0;
  emu::Process *p = emu::process_start(po, std::move(body), &err);
  if (!p) {
    std::fprintf(stderr, "kernfs-notify: cannot start %s in %s: %s\n", comm, rel.c_str(),
                 std::strerror(-err));
    std::abort();
  }
  return p;
}

// A system call of the current process (kernel entry, then exit_to_user_mode's work).
template <typename F>
auto sys(F &&f) {
  emu::KernelEntry k;
  return f();
}

void must(long ret, const char *what) {
  if (ret >= 0) return;
  std::fprintf(stderr, "kernfs-notify: %s: %s\n", what, std::strerror(static_cast<int>(-ret)));
  std::abort();
}

struct Counts {
  std::uint64_t walker_passes = 0;
  std::uint64_t churn_ops = 0, churn_max_ns = 0;
  std::uint64_t events_read = 0, overflows = 0;
  std::uint64_t reclaim_requests = 0, reclaim_ok = 0, defer_notices = 0;
};

// Reads every directory under /sys/fs/cgroup, one after another: one pass.
void walk_pass(std::uint64_t end_ns, Counts *c) {
  std::vector<std::string> todo{std::string(CGROUP_MOUNT_POINT)};
  while (!todo.empty()) {
    std::string dir = todo.back();
    todo.pop_back();
    std::vector<std::string> names;
    emu::consume_time(kWalkDirNs);
    if (sys([&] { return cgroupfs_readdir(dir, &names); }) != 0) continue;  // removed
    for (const std::string &n : names) {
      bool is_dir = false;
      if (n.find('.') == std::string::npos &&
          sys([&] { return cgroupfs_stat(dir + "/" + n, &is_dir); }) == 0 && is_dir)
        todo.push_back(dir + "/" + n);
    }
    if (emu::Machine::get()->now_ns() >= end_ns) return;
  }
  c->walker_passes++;
}

// --- one variant -----------------------------------------------------------------------------

struct VariantResult {
  std::map<std::string, double> m;
};

class VariantRun {
 public:
  VariantRun(const Params &p, Variant v, const RunOptions &o) : p_(p), v_(v), o_(o) {}

  std::map<std::string, double> run() {
    emu::MachineConfig cfg;
    cfg.nr_cpus = 4;
    cfg.mode = emu::Mode::simulated;
    cfg.seed = o_.seed;
    std::map<std::string, double> m;
    {
      emu::Machine machine(cfg);
      int boot = -1;
      machine.exec([&] {
        memcg_boot_params bp;
        bp.kernfs_notify_no_rwsem = v_ == Variant::kUpstreamFix;
        boot = mem_cgroup_boot(bp);
      });
      if (boot) {
        std::fprintf(stderr, "kernfs-notify: boot failed: %s\n", std::strerror(-boot));
        std::abort();
      }
      machine.exec([&] {
        emu::Process *driver = start_in("", "driver", [&] {
          drive(&m);
          return 0;
        });
        emu::process_wait(driver);
      });
      g_watch = nullptr;
    }
    return m;
  }

 private:
  void drive(std::map<std::string, double> *m) {
    LockWatch watch;
    kernfs_root *kr = root_mem_cgroup->css.cgroup->root->kf_root;
    watch.rwsem = &kr->kernfs_rwsem;
    watch.supers = &kr->kernfs_supers_rwsem;
    watch.trace = o_.trace;
    g_watch = &watch;

    setup_cgroups();
    std::vector<emu::Process *> procs;
    Counts c;

    // The pressured cgroup: the hog, then memory.high below its usage.
    procs.push_back(start_in("watcher", "hog", [this] {
      return emu::workload_anon(p_.hog_bytes, true);
    }));
    // The watcher: its inotify instances and watches are charged to /watcher, set up before
    // memory.high is; it then drains its queues every drain_period_ns. The driver closes the
    // instances after the run (what exit's close of the fds does).
    bool watcher_ready = false;
    procs.push_back(start_in("watcher", "watcher", [this, &c, &watcher_ready] {
      for (int g = 0; g < p_.nr_groups; g++) {
        fsnotify_group *grp = sys([] { return cgroupfs_inotify_init(); });
        if (IS_ERR(grp)) return 1;
        groups_.push_back(grp);
        for (int i = 0; i < p_.nr_sources; i++)
          if (sys([&] {
                return cgroupfs_inotify_add_watch(
                    grp, cg("src" + std::to_string(i) + "/cgroup.events"), IN_MODIFY);
              }) < 0)
            return 1;
      }
      watcher_ready = true;
      while (emu::sys_nanosleep(p_.drain_period_ns)) {
        for (fsnotify_group *grp : groups_) {
          inotify_event ev;
          while (sys([&] { return inotify_read_event(grp, 0, &ev); }) == 1) {
            c.events_read++;
            if (ev.mask & IN_Q_OVERFLOW) c.overflows++;
          }
        }
      }
      return 0;
    }));
    wait_usage("watcher", p_.hog_bytes);
    while (!watcher_ready) emu::sys_nanosleep(10 * kMs);
    must(sys([&] {
           return cgroupfs_write_file(cg("watcher/memory.high"), std::to_string(p_.high_bytes));
         }),
         "memory.high");

    // Policy variants: load, resolve, attach, as a privileged user would (bpftool prog
    // loadall, prog run, link create, struct_ops register with the cgroup).
    std::unique_ptr<emu::BpfLoadedObject> obj;
    std::vector<std::unique_ptr<emu::BpfTracingLink>> tracing;
    std::unique_ptr<BpfMemcgOpsLink> ops;
    double track_off_ns = 0, track_on_ns = 0;
    if (has_policy(v_)) {
      track_off_ns = churn_host_ns();
      sys([&] { load_policy(&obj, &tracing, &ops); });
      track_on_ns = churn_host_ns();
    }
    Hooks hooks(&watch);
    rwsem_reset_stats(watch.rwsem);
    rwsem_reset_stats(watch.supers);

    const std::uint64_t t0 = emu::Machine::get()->now_ns();
    const std::uint64_t end = t0 + p_.duration_ns;

    // The tailer: re-reads a file in the pressured cgroup.
    procs.push_back(start_in("watcher", "tailer", [this, end] {
      constexpr unsigned long kChunk = 32;  // pages per read(2)
      const unsigned long nr = p_.tail_bytes / PAGE_SIZE;
      inode *ino = sys([] { return emu::file_create(); });
      atomic_long_set(&ino->i_size, static_cast<long>(p_.tail_bytes));
      bool alive = true;
      while (alive && emu::Machine::get()->now_ns() < end) {
        for (unsigned long i = 0; i < nr && alive; i += kChunk)
          alive = sys([&] { return filemap_read(ino, i, std::min(kChunk, nr - i)); }) != -EINTR;
        alive = alive && emu::sys_nanosleep(p_.tail_period_ns);
      }
      sys([&] {
        emu::iput(ino);
        return 0;
      });
      return 0;
    }));
    // The sleepers and their mover.
    std::vector<int> sleepers;
    for (int i = 0; i < p_.nr_sources; i++) {
      emu::Process *s = start_in("park", "sleeper", [] {
        while (emu::sys_pause()) {
        }
        return 0;
      });
      procs.push_back(s);
      sleepers.push_back(emu::process_pid(s));
    }
    procs.push_back(start_in("", "mover", [this, end, sleepers] {
      for (unsigned long round = 0; emu::Machine::get()->now_ns() < end; round++) {
        for (int i = 0; i < p_.nr_sources; i++) {
          const std::string to = (round & 1) ? cg("park") : cg("src" + std::to_string(i));
          sys([&] {
            return cgroupfs_write_file(to + "/cgroup.procs", std::to_string(sleepers[i]));
          });
        }
        if (!emu::sys_nanosleep(p_.mover_period_ns)) return 0;
      }
      return 0;
    }));
    // The bystanders.
    procs.push_back(start_in("", "walker", [end, &c, this] {
      while (emu::Machine::get()->now_ns() < end) {
        const std::uint64_t s = emu::Machine::get()->now_ns();
        walk_pass(end, &c);
        if (o_.trace && emu::Machine::get()->now_ns() - s >= 10 * kMs) {
          g_watch->name_thread(current);
          o_.trace->complete(current->pid, "walk pass", "bystander", s,
                             emu::Machine::get()->now_ns() - s);
        }
      }
      return 0;
    }));
    procs.push_back(start_in("", "churner", [end, &c, this] {
      const std::string dir = cg("churn/x");
      while (emu::Machine::get()->now_ns() < end) {
        const std::uint64_t s = emu::Machine::get()->now_ns();
        emu::consume_time(kChurnOpNs);
        must(sys([&] { return cgroupfs_mkdir(dir); }), "mkdir");
        emu::consume_time(kChurnOpNs);
        must(sys([&] { return cgroupfs_rmdir(dir); }), "rmdir");
        const std::uint64_t lat = emu::Machine::get()->now_ns() - s;
        c.churn_ops++;
        c.churn_max_ns = std::max(c.churn_max_ns, lat);
        if (o_.trace && lat >= 10 * kMs) {
          g_watch->name_thread(current);
          o_.trace->complete(current->pid, "mkdir+rmdir", "bystander", s, lat);
        }
      }
      return 0;
    }));
    if (v_ == Variant::kPolicyReclaimer)
      procs.push_back(start_in("watcher", "reclaimer", [&obj, end, &c, this] {
        return reclaimer(obj.get(), end, &c);
      }));

    // The run: the driver sleeps to the end, then everything stops.
    emu::sys_nanosleep(end - emu::Machine::get()->now_ns());
    for (emu::Process *pr : procs) emu::process_kill(pr);
    for (emu::Process *pr : procs) emu::process_wait(pr);
    for (fsnotify_group *grp : groups_) sys([&] {
      inotify_release(grp);
      return 0;
    });

    const rwsem_stats rs = rwsem_get_stats(watch.rwsem);
    lockholder_state st{};
    if (obj) {
      bpf_map *bss = obj->find_map(".bss");
      u32 key = 0;
      std::vector<u8> v(bss->value_size);
      if (sys_map_lookup_elem(bss, &key, v.data()) == 0 && v.size() >= sizeof(st))
        std::memcpy(&st, v.data(), sizeof(st));
      ops.reset();
      tracing.clear();
    }
    hooks.detach();
    auto &r = *m;
    r["worker_kernfs_rwsem_max_hold_ns"] = static_cast<double>(watch.worker_rwsem_max);
    r["worker_kernfs_supers_rwsem_max_hold_ns"] = static_cast<double>(watch.worker_supers_max);
    r["kernfs_rwsem_max_write_wait_ns"] = static_cast<double>(rs.max_write_wait_ns);
    r["walker_passes"] = static_cast<double>(c.walker_passes);
    r["churn_ops"] = static_cast<double>(c.churn_ops);
    r["churn_max_latency_ns"] = static_cast<double>(c.churn_max_ns);
    r["worker_throttles"] = static_cast<double>(watch.worker_throttles);
    r["worker_throttled_ns"] = static_cast<double>(watch.worker_throttled_ns);
    r["events_read"] = static_cast<double>(c.events_read);
    r["duration_ns"] = static_cast<double>(p_.duration_ns);
    if (has_policy(v_)) {
      r["policy_deferrals"] = static_cast<double>(st.deferred);
      r["policy_rwsem_ops"] = static_cast<double>(st.rwsem_ops);
      r["policy_depth_errors"] = static_cast<double>(st.depth_errors);
      r["churn_op_untracked_host_ns"] = track_off_ns;
      r["churn_op_tracked_host_ns"] = track_on_ns;
    }
    if (v_ == Variant::kPolicyReclaimer) {
      r["reclaimer_notices"] = static_cast<double>(c.defer_notices);
      r["reclaimer_requests"] = static_cast<double>(c.reclaim_requests);
      r["reclaimer_requests_met"] = static_cast<double>(c.reclaim_ok);
    }
  }

  void setup_cgroups() {
    auto mk = [](const std::string &rel) { must(cgroupfs_mkdir(cg(rel)), rel.c_str()); };
    sys([&] {
      must(cgroupfs_write_file(cg("cgroup.subtree_control"), "+memory"), "subtree_control");
      mk("watcher");
      mk("park");
      mk("churn");
      for (int i = 0; i < p_.nr_sources; i++) mk("src" + std::to_string(i));
      return 0;
    });
  }

  // Sleeps until the cgroup's memory.current reaches bytes.
  void wait_usage(const std::string &rel, unsigned long bytes) {
    for (;;) {
      std::string text;
      must(sys([&] { return cgroupfs_read_file(cg(rel + "/memory.current"), &text); }),
           "memory.current");
      if (std::stoul(text) >= bytes) return;
      emu::sys_nanosleep(10 * kMs);
    }
  }

  // Host time of one mkdir+rmdir (the tracking overhead: every rwsem operation runs the
  // sample's programs once they are attached). Runs in the driver before the run starts.
  double churn_host_ns() {
    constexpr int kWarmup = 100, kOps = 400;
    const std::string dir = cg("churn/probe");
    auto op = [&] {
      sys([&] {
        must(cgroupfs_mkdir(dir), "mkdir");
        must(cgroupfs_rmdir(dir), "rmdir");
        return 0;
      });
    };
    for (int i = 0; i < kWarmup; i++) op();
    const auto s = std::chrono::steady_clock::now();
    for (int i = 0; i < kOps; i++) op();
    const auto e = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(e - s).count() / kOps;
  }

  void load_policy(std::unique_ptr<emu::BpfLoadedObject> *obj,
                   std::vector<std::unique_ptr<emu::BpfTracingLink>> *tracing,
                   std::unique_ptr<BpfMemcgOpsLink> *ops) {
    bpf_memcontrol_init();
    emu::BpfLinkOptions lk;
    lk.allow_ptr_leaks = true;  // root with CAP_PERFMON, as the kernel's sample is loaded
    auto lo = emu::BpfLoadedObject::open(std::string(UMEMCG_SCENARIO_PROGS_DIR) +
                                             "/kernfs_lockholder.bpf.o",
                                         emu::bpf_kernel_load_options(), lk);
    if (!lo.ok()) {
      std::fprintf(stderr, "kernfs-notify: kernfs_lockholder.bpf.o: %s\n",
                   std::string(lo.status().message()).c_str());
      std::abort();
    }
    *obj = std::move(*lo);
    emu::BpfLoadedProg *resolve = (*obj)->find_program("resolve_locks");
    emu::BpfTestRunOpts tro;
    emu::BpfTestRunResult rr = emu::bpf_prog_test_run(*resolve, tro);
    if (rr.err || rr.retval != 0) {
      std::fprintf(stderr, "kernfs-notify: resolve_locks: %d %u %s\n", rr.err, rr.retval,
                   rr.error.c_str());
      std::abort();
    }
    for (emu::BpfLoadedProg &pr : (*obj)->programs()) {
      const emu::ProgKind k = pr.spec().kind;
      if (k != emu::ProgKind::kFentry && k != emu::ProgKind::kFexit) continue;
      auto l = emu::BpfTracingLink::attach(pr);
      if (!l.ok()) {
        std::fprintf(stderr, "kernfs-notify: attach %s: %s\n", pr.name().c_str(),
                     std::string(l.status().message()).c_str());
        std::abort();
      }
      tracing->push_back(std::move(*l));
    }
    auto l = BpfMemcgOpsLink::attach(**obj, "kernfs_lockholder", root_mem_cgroup, 0);
    if (!l.ok()) {
      std::fprintf(stderr, "kernfs-notify: attach kernfs_lockholder: %s\n",
                   std::string(l.status().message()).c_str());
      std::abort();
    }
    *ops = std::move(*l);
  }

  // The reclaimer in the leaf: every deferral notice is a debt of nr_pages_over_high pages of
  // /watcher, paid through memory.reclaim (clone3(CLONE_INTO_CGROUP)'d there, so its own CPU
  // and memory are the leaf's).
  int reclaimer(emu::BpfLoadedObject *obj, std::uint64_t end, Counts *c) {
    emu::RingBuffer rb;
    std::uint64_t debt_pages = 0;
    if (rb.add(obj->find_map("events"), [&](const void *data, u32 size) {
          if (size < sizeof(defer_event)) return 0;
          defer_event e;
          std::memcpy(&e, data, sizeof(e));
          debt_pages = std::max<std::uint64_t>(debt_pages, e.nr_pages_over_high);
          c->defer_notices++;
          return 0;
        }) != 0)
      return 1;
    while (emu::Machine::get()->now_ns() < end) {
      int n = sys([&] { return rb.poll(100); });
      if (n < 0) return 0;  // killed
      if (!debt_pages) continue;
      const std::string req = std::to_string(debt_pages * PAGE_SIZE);
      debt_pages = 0;
      const std::string rec = cg("watcher/memory.reclaim");
      ssize_t ret = sys([&] { return cgroupfs_write_file(rec, req); });
      c->reclaim_requests++;
      if (ret >= 0) c->reclaim_ok++;  // the whole request reclaimed (else -EAGAIN)
    }
    return 0;
  }

  const Params p_;
  const Variant v_;
  const RunOptions &o_;
  std::vector<fsnotify_group *> groups_;  // the watcher's inotify instances
};

// --- the report ------------------------------------------------------------------------------

std::string fmt_ns(double ns) {
  char b[32];
  if (ns >= 1e9) std::snprintf(b, sizeof b, "%.3f s", ns / 1e9);
  else if (ns >= 1e6) std::snprintf(b, sizeof b, "%.1f ms", ns / 1e6);
  else if (ns >= 1e3) std::snprintf(b, sizeof b, "%.0f us", ns / 1e3);
  else std::snprintf(b, sizeof b, "%.0f ns", ns);
  return b;
}

std::string fmt_count(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f", v);
  return b;
}

// "median (min-max)" when several seeds ran.
std::string cell(const Stat &s, std::string (*f)(double)) {
  if (s.n <= 1 || s.min == s.max) return f(s.median);
  return f(s.median) + " (" + f(s.min) + "-" + f(s.max) + ")";
}

const Stat &get(const Summary &s, const char *variant, const char *metric) {
  static const Stat kNone;
  auto v = s.find(variant);
  if (v == s.end()) return kNone;
  auto m = v->second.find(metric);
  return m == v->second.end() ? kNone : m->second;
}

Report report(const Summary &s) {
  Report r;
  Table t;
  t.title = "kernfs-notify (seed 000): the notify worker under memory.high, three variants";
  t.header = {"", "baseline", "policy", "upstream fix", "seed: baseline", "seed: policy",
              "seed: upstream fix"};
  struct RowDef {
    const char *label, *metric;
    std::string (*f)(double);
    const char *seed[3];
  };
  const RowDef rows[] = {
      {"max kernfs_rwsem hold, worker", "worker_kernfs_rwsem_max_hold_ns", fmt_ns,
       {"2.049 s", "199 us", "not taken"}},
      {"max kernfs_supers_rwsem hold", "worker_kernfs_supers_rwsem_max_hold_ns", fmt_ns,
       {"2.049 s", "4.8 ms", "2.056 s"}},
      {"max kernfs_rwsem write wait", "kernfs_rwsem_max_write_wait_ns", fmt_ns,
       {"4.096 s", "6.2 ms", "8.7 ms"}},
      {"walker passes over /sys/fs/cgroup", "walker_passes", fmt_count, {"352", "5711", "6700"}},
      {"churn mkdir+rmdir ops", "churn_ops", fmt_count, {"13 059", "364 832", "415 488"}},
      {"churn max latency", "churn_max_latency_ns", fmt_ns, {"30.7 s", "15.1 ms", "12.7 ms"}},
      {"worker throttled (over-high handling)", "worker_throttled_ns", fmt_ns, {"", "", ""}},
  };
  for (const RowDef &d : rows) {
    std::vector<std::string> row{d.label};
    for (const char *v : {"baseline", "policy", "upstream-fix"}) {
      const Stat &st = get(s, v, d.metric);
      if (std::string(v) == "upstream-fix" && std::string(d.metric) ==
                                                  "worker_kernfs_rwsem_max_hold_ns" &&
          st.max == 0)
        row.push_back("not taken");
      else
        row.push_back(cell(st, d.f));
    }
    for (const char *seedv : d.seed) row.push_back(seedv);
    t.rows.push_back(row);
  }
  const double dur = get(s, "baseline", "duration_ns").median;
  t.notes.push_back("Each variant: " + fmt_ns(dur) +
                    " of machine time, simulated mode; counts are per run (the seed's run was "
                    "longer: compare ratios between variants).");
  r.tables.push_back(t);

  // The policy's own numbers and the fourth variant.
  Table p;
  p.title = "kernfs-notify: the lock-holder policy's work, and the policy with a reclaimer in "
            "the leaf (seed 000's discussion)";
  p.header = {"", "policy", "policy+reclaimer"};
  auto prow = [&](const char *label, const char *metric, std::string (*f)(double)) {
    p.rows.push_back({label, cell(get(s, "policy", metric), f),
                      cell(get(s, "policy+reclaimer", metric), f)});
  };
  prow("high_policy deferrals (DEFER_INLINE)", "policy_deferrals", fmt_count);
  prow("rwsem operations run through the tracking programs", "policy_rwsem_ops", fmt_count);
  prow("max kernfs_rwsem hold, worker", "worker_kernfs_rwsem_max_hold_ns", fmt_ns);
  prow("max kernfs_rwsem write wait", "kernfs_rwsem_max_write_wait_ns", fmt_ns);
  prow("churn max latency", "churn_max_latency_ns", fmt_ns);
  p.rows.push_back({"deferral notices read by the reclaimer", "",
                    cell(get(s, "policy+reclaimer", "reclaimer_notices"), fmt_count)});
  p.rows.push_back({"memory.reclaim writes for the debt", "",
                    cell(get(s, "policy+reclaimer", "reclaimer_requests"), fmt_count)});
  p.rows.push_back({"... of which reclaimed in full (the rest: EAGAIN)", "",
                    cell(get(s, "policy+reclaimer", "reclaimer_requests_met"), fmt_count)});
  const double off = get(s, "policy", "churn_op_untracked_host_ns").median;
  const double on = get(s, "policy", "churn_op_tracked_host_ns").median;
  char ovh[160];
  std::snprintf(ovh, sizeof ovh,
                "Tracking overhead (host time of one mkdir+rmdir, measured in this run, not "
                "deterministic): %.1f us untracked, %.1f us tracked: %+.0f%% (seed: about 8%% "
                "throughput).",
                off / 1e3, on / 1e3, off > 0 ? (on / off - 1) * 100 : 0.0);
  p.notes.push_back(ovh);
  r.tables.push_back(p);

  // M1: the policy cuts the worker's max kernfs_rwsem hold by >= 1000x and beats the fix on
  // kernfs_supers_rwsem; the bystanders do far better than the baseline.
  const double base_hold = get(s, "baseline", "worker_kernfs_rwsem_max_hold_ns").median;
  const double pol_hold = get(s, "policy", "worker_kernfs_rwsem_max_hold_ns").median;
  const double pol_sup = get(s, "policy", "worker_kernfs_supers_rwsem_max_hold_ns").median;
  const double fix_sup = get(s, "upstream-fix", "worker_kernfs_supers_rwsem_max_hold_ns").median;
  r.verdicts.push_back({"policy cuts the worker's max kernfs_rwsem hold by >= 1000x (" +
                            fmt_ns(base_hold) + " -> " + fmt_ns(pol_hold) + ")",
                        base_hold > 0 && pol_hold * 1000 <= base_hold});
  r.verdicts.push_back({"policy beats the upstream fix on kernfs_supers_rwsem (" +
                            fmt_ns(pol_sup) + " vs " + fmt_ns(fix_sup) + ")",
                        pol_sup < fix_sup});
  const double wb = get(s, "baseline", "walker_passes").median;
  const double wp = get(s, "policy", "walker_passes").median;
  const double wf = get(s, "upstream-fix", "walker_passes").median;
  r.verdicts.push_back({"bystanders: the policy and the fix each give the walker >= 5x the "
                            "baseline's passes (seed: 16x, 19x)",
                        wp >= 5 * wb && wf >= 5 * wb});
  const double cb = get(s, "baseline", "churn_max_latency_ns").median;
  const double cp = get(s, "policy", "churn_max_latency_ns").median;
  r.verdicts.push_back({"churn max latency: policy >= 100x lower than baseline (seed: 2000x)",
                        cp * 100 <= cb});
  return r;
}

Metrics run(const RunOptions &o) {
  // The policy object must be there before any machine starts (a failure inside a run would
  // leave its processes behind): the run fails with the path.
  const std::string obj = std::string(UMEMCG_SCENARIO_PROGS_DIR) + "/kernfs_lockholder.bpf.o";
  if (::access(obj.c_str(), R_OK) != 0)
    throw std::runtime_error("kernfs-notify: " + obj + ": " + std::strerror(errno));
  Params p;
  if (o.quick) p.duration_ns = 3 * kSec;
  Metrics m;
  for (const VariantDesc &d : kVariants) {
    if (o.progress) o.progress(std::string("variant ") + d.name);
    if (o.trace) o.trace->begin_process(std::string("kernfs-notify ") + d.name);
    VariantRun var(p, d.v, o);
    m[d.name] = var.run();
  }
  return m;
}

}  // namespace

Scenario kernfs_notify_scenario() {
  Scenario s;
  s.name = "kernfs-notify";
  s.seed = "000";
  s.summary = "the kernfs notify worker throttled under memory.high while holding the cgroupfs "
              "locks: baseline, bpf_memcg_ops lock-holder policy, upstream fix";
  s.default_seeds = 1;
  s.run = run;
  s.report = report;
  return s;
}

}  // namespace umemcg::scenario
