// SPDX-License-Identifier: GPL-2.0-only
// shim/machine.cc: machine boot and shutdown, tasks, vCPU ownership, kernel entry.
#include "shim/machine.h"

#include <urcu/urcu-memb.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "shim/atomic.h"
#include "shim/bug.h"
#include "shim/cpuhotplug.h"
#include "shim/emu/machine_impl.h"
#include "shim/preempt.h"

namespace umemcg {
unsigned int nr_cpu_ids = 0;
__thread task_struct *current = nullptr;
}  // namespace umemcg

namespace umemcg::emu {

__thread Vcpu *tls_vcpu = nullptr;
__thread int tls_cpu = -1;
__thread int tls_preempt_count = 0;
Machine::Impl *g_machine = nullptr;
namespace {
Machine *g_machine_pub = nullptr;
std::vector<resume_hook_t> g_resume_hooks;  // written at boot only
signal_hook_t g_signal_hook = nullptr;       // written at boot only
}  // namespace

void no_cpu_context(const char *what) {
  std::fprintf(stderr, "umemcg: %s called outside any vCPU context\n", what);
  report_bug(__FILE__, __LINE__, "no vCPU context");
}

bool cpu_online_impl(int cpu) {
  return g_machine && cpu >= 0 && cpu < static_cast<int>(g_machine->vcpus.size()) &&
         g_machine->vcpus[cpu]->online;
}

// ---------------------------------------------------------------------------------------------
// Machine

Machine::Machine(const MachineConfig &cfg) : cfg_(cfg), impl_(std::make_unique<Impl>()) {
  BUG_ON(g_machine != nullptr);  // one machine at a time: kernel globals are process globals
  BUG_ON(cfg.nr_cpus == 0 || cfg.nr_cpus > static_cast<unsigned>(NR_CPUS));
  Impl *m = impl_.get();
  m->machine = this;
  m->cfg = cfg;
  m->boot_time = std::chrono::steady_clock::now();
  m->prng.seed(cfg.seed);
  for (unsigned i = 0; i < cfg.nr_cpus; i++) {
    m->vcpus.push_back(std::make_unique<Vcpu>());
    m->vcpus.back()->id = static_cast<int>(i);
  }
  g_machine = m;
  g_machine_pub = this;
  nr_cpu_ids = cfg.nr_cpus;
  g_resume_hooks.clear();
  g_signal_hook = nullptr;
  cpuhp_reset();
  new_boot_generation();
  if (!m->sim()) m->timer_start_native();
  rcu_boot(m);
  workqueue_boot(m);
}

Machine::~Machine() {
  Impl *m = impl_.get();
  if (!m->shutdown_hooks.empty()) {
    exec([m] {
      for (auto it = m->shutdown_hooks.rbegin(); it != m->shutdown_hooks.rend(); ++it) (*it)();
    }, -1, "shutdown");
  }
  workqueue_shutdown(m);
  rcu_shutdown(m);
  if (!m->sim()) {
    m->timer_stop_native();
    for (auto &t : m->tasks)
      if (t->thread.joinable()) t->thread.join();
  } else {
    // Tasks still blocked at shutdown (a deadlocked run) are abandoned with their stacks.
    for (auto &t : m->tasks) t->fiber.reset();
  }
  g_machine = nullptr;
  g_machine_pub = nullptr;
  nr_cpu_ids = 0;
  g_resume_hooks.clear();
  g_signal_hook = nullptr;
}

Machine *Machine::get() { return g_machine_pub; }

std::uint64_t Machine::Impl::now() const {
  if (sim()) return sim_now;
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now() - boot_time)
                                        .count());
}

std::uint64_t Machine::now_ns() const { return impl_->now(); }

void Machine::Impl::record(const char *what, const TaskImpl *t) {
  if (!sim()) return;
  TraceEvent ev{sim_now, t ? t->task.pid : 0, t && t->vcpu ? t->vcpu->id : -1, what};
  // FNV-1a over the event's fields: stable across runs and hosts.
  auto mix = [this](std::uint64_t v) {
    for (int i = 0; i < 8; i++) {
      trace_hash ^= (v >> (8 * i)) & 0xff;
      trace_hash *= 0x100000001b3ull;
    }
  };
  mix(ev.time_ns);
  mix(static_cast<std::uint64_t>(ev.pid));
  mix(static_cast<std::uint64_t>(static_cast<std::int64_t>(ev.cpu)));
  for (const char *p = what; *p; p++) {
    trace_hash ^= static_cast<unsigned char>(*p);
    trace_hash *= 0x100000001b3ull;
  }
  if (cfg.keep_trace) trace.push_back(ev);
}

std::uint64_t Machine::trace_hash() const { return impl_->trace_hash; }
const std::vector<TraceEvent> &Machine::trace() const { return impl_->trace; }
void Machine::trace_event(const char *what) {
  impl_->record(what, task_impl(current));
}

void Machine::add_shutdown_hook(std::function<void()> fn) {
  impl_->shutdown_hooks.push_back(std::move(fn));
}

// ---------------------------------------------------------------------------------------------
// Tasks

TaskImpl *Machine::Impl::create_task(const std::string &name, std::function<void()> fn,
                                     TaskOptions opts) {
  BUG_ON(opts.cpu >= static_cast<int>(vcpus.size()));
  auto owned = std::make_unique<TaskImpl>();
  TaskImpl *t = owned.get();
  t->m = this;
  t->fn = std::move(fn);
  t->opts = opts;
  t->name = name;
  t->task.emu = t;
  std::snprintf(t->task.comm, sizeof(t->task.comm), "%s", name.c_str());
  if (opts.kthread) t->task.flags |= PF_KTHREAD;
  {
    std::lock_guard<std::mutex> g(tasks_mu);
    t->task.pid = next_pid++;
    t->task.tgid = t->task.pid;
    // Spread unpinned tasks over the vCPUs deterministically by pid.
    t->last_cpu = opts.cpu >= 0 ? opts.cpu : t->task.pid % static_cast<int>(vcpus.size());
    if (!opts.daemon) live_nondaemon++;
    tasks.push_back(std::move(owned));
  }
  return t;
}

void Machine::Impl::task_body(TaskImpl *t) {
  if (t->opts.kthread) {
    t->kernel_depth = 1;
    if (!sim()) native_acquire_cpu(t);
  }
  bool failed = false;
  try {
    t->fn();
  } catch (...) {
    failed = true;
    std::lock_guard<std::mutex> g(tasks_mu);
    if (!task_error) task_error = std::current_exception();
  }
  t->fn = nullptr;  // drop captured state while the task's context still exists
  if (t->vcpu) {
    // A task that returns with preemption disabled leaked a lock (unless it died of a BUG).
    WARN_ON(!failed && tls_preempt_count != 0);
    tls_preempt_count = 0;
    if (sim())
      sim_release_cpu(t);
    else
      native_release_cpu(t);
  }
  t->kernel_depth = 0;
}

void Machine::Impl::task_exited(TaskImpl *t) {
  record("exit", t);
  std::lock_guard<std::mutex> g(tasks_mu);
  t->exited = true;
  if (!t->opts.daemon) live_nondaemon--;
  if (sim()) {
    auto it = std::find(runnable.begin(), runnable.end(), t);
    if (it != runnable.end()) runnable.erase(it);
    t->runnable = false;
    dead.push_back(t);
  }
  tasks_cv.notify_all();
}

namespace {
void sim_fiber_entry(void *arg) {
  auto *t = static_cast<TaskImpl *>(arg);
  Machine::Impl *m = t->m;
  m->task_body(t);
  m->task_exited(t);
  Fiber::exit_to(t->fiber.get(), &m->sched_fiber);
}

void native_thread_entry(TaskImpl *t) {
  current = &t->task;
  urcu_memb_register_thread();
  t->m->task_body(t);
  urcu_memb_unregister_thread();
  t->m->task_exited(t);
  current = nullptr;
}
}  // namespace

void Machine::Impl::start_task(TaskImpl *t) {
  if (sim()) {
    t->fiber = std::make_unique<Fiber>(&sim_fiber_entry, t, cfg.stack_size);
    t->wants_cpu = t->opts.kthread;
    sim_make_runnable(t);
    record("spawn", t);
  } else {
    note_os_thread_started();
    t->thread = std::thread(native_thread_entry, t);
  }
}

task_struct *Machine::spawn(const std::string &name, std::function<void()> fn, TaskOptions opts) {
  TaskImpl *t = impl_->create_task(name, std::move(fn), opts);
  impl_->start_task(t);
  return &t->task;
}

namespace {
void rethrow_task_error(Machine::Impl *m) {
  std::exception_ptr e;
  {
    std::lock_guard<std::mutex> g(m->tasks_mu);
    std::swap(e, m->task_error);
  }
  if (e) std::rethrow_exception(e);
}
}  // namespace

RunResult Machine::run() {
  Impl *m = impl_.get();
  BUG_ON(current != nullptr);  // run() is called from outside the machine
  RunResult r;
  if (m->sim()) {
    r = m->sim_run_until([m] { return m->live_nondaemon == 0; });
  } else {
    std::unique_lock<std::mutex> lk(m->tasks_mu);
    m->tasks_cv.wait(lk, [m] { return m->live_nondaemon == 0 || m->task_error; });
  }
  rethrow_task_error(m);
  return r;
}

RunResult Machine::exec(std::function<void()> fn, int cpu, const std::string &name) {
  Impl *m = impl_.get();
  BUG_ON(current != nullptr);
  TaskOptions opts;
  opts.cpu = cpu;
  opts.kthread = true;
  TaskImpl *t = m->create_task(name, std::move(fn), opts);
  m->start_task(t);
  RunResult r;
  if (m->sim()) {
    r = m->sim_run_until([t] { return t->exited; });
  } else {
    t->thread.join();
  }
  rethrow_task_error(m);
  return r;
}

// ---------------------------------------------------------------------------------------------
// vCPU ownership, native mode: the per-vCPU run lock.

int Machine::Impl::bound_cpu(const TaskImpl *t) const {
  if (t->opts.cpu >= 0 && vcpus[t->opts.cpu]->online) return t->opts.cpu;
  if (t->task.migration_disabled && vcpus[t->last_cpu]->online) return t->last_cpu;
  return -1;
}

void Machine::Impl::native_acquire_cpu(TaskImpl *t) {
  auto take = [t](Vcpu *v) {
    v->curr = &t->task;
    t->vcpu = v;
    t->last_cpu = v->id;
    set_tls_vcpu(v);
  };
  for (;;) {
    Vcpu *v = nullptr;
    if (int cpu = bound_cpu(t); cpu >= 0) {
      v = vcpus[cpu].get();
    } else {
      const int n = static_cast<int>(vcpus.size());
      for (int i = 0; i < n; i++) {
        Vcpu *c = vcpus[(t->last_cpu + i) % n].get();
        if (!c->online) continue;
        if (!v) v = c;  // where to wait if every online vCPU is taken
        if (c->run_lock.try_lock()) {
          if (!c->online) {  // went offline meanwhile
            c->run_lock.unlock();
            continue;
          }
          take(c);
          return;
        }
      }
      BUG_ON(!v);  // remove_cpu() never takes the last online vCPU
    }
    v->run_waiters.fetch_add(1, std::memory_order_relaxed);
    v->run_lock.lock();
    v->run_waiters.fetch_sub(1, std::memory_order_relaxed);
    if (!v->online) {  // taken offline while this task waited for it: choose again
      v->run_lock.unlock();
      continue;
    }
    take(v);
    return;
  }
}

void Machine::Impl::native_release_cpu(TaskImpl *t) {
  Vcpu *v = t->vcpu;
  if (!v) return;
  v->curr = nullptr;
  t->vcpu = nullptr;
  set_tls_vcpu(nullptr);
  v->run_lock.unlock();
}

// ---------------------------------------------------------------------------------------------
// Kernel entry and return to user mode.

void register_resume_user_mode_hook(resume_hook_t fn) {
  if (std::find(g_resume_hooks.begin(), g_resume_hooks.end(), fn) == g_resume_hooks.end())
    g_resume_hooks.push_back(fn);
}

void register_get_signal_hook(signal_hook_t fn) { g_signal_hook = fn; }

KernelEntry::KernelEntry() {
  TaskImpl *t = task_impl(current);
  BUG_ON(!t);
  outer_ = t->kernel_depth++ == 0;
  if (!outer_) return;
  Machine::Impl *m = t->m;
  if (m->sim()) {
    t->kernel_since = m->sim_now;
    t->wants_cpu = true;
    m->record("enter", t);
    m->sim_switch_out();  // the scheduler resumes us on a vCPU
  } else {
    m->native_acquire_cpu(t);
  }
}

KernelEntry::~KernelEntry() {
  TaskImpl *t = task_impl(current);
  if (!outer_) {
    t->kernel_depth--;
    return;
  }
  // exit_to_user_mode(): the pending work runs with the vCPU still held.
  resume_user_mode_work();
  t->kernel_depth--;
  Machine::Impl *m = t->m;
  WARN_ON(t->vcpu && tls_preempt_count != 0);
  if (m->sim()) {
    m->sim_release_cpu(t);
    m->record("exit_to_user", t);
  } else {
    m->native_release_cpu(t);
  }
}

AttachThread::AttachThread(const std::string &name, int cpu) {
  Machine::Impl *m = g_machine;
  BUG_ON(!m || m->sim() || current);
  TaskOptions opts;
  opts.cpu = cpu;
  opts.kthread = true;
  opts.daemon = true;
  TaskImpl *t = m->create_task(name, nullptr, opts);
  t->attached = true;
  current = &t->task;
  urcu_memb_register_thread();
  t->kernel_depth = 1;
  m->native_acquire_cpu(t);
  task_ = &t->task;
}

AttachThread::~AttachThread() {
  TaskImpl *t = task_impl(task_);
  t->m->native_release_cpu(t);
  t->kernel_depth = 0;
  urcu_memb_unregister_thread();
  t->m->task_exited(t);
  current = nullptr;
}

int current_pid() { return current ? current->pid : 0; }

namespace {
std::atomic<unsigned long> g_os_threads_started{0};
}  // namespace
void note_os_thread_started() { g_os_threads_started.fetch_add(1, std::memory_order_relaxed); }
unsigned long os_threads_started() { return g_os_threads_started.load(std::memory_order_relaxed); }

void set_wait_reason(const char *reason) {
  if (TaskImpl *t = task_impl(current)) t->wait_reason = reason;
}

void consume_time(std::uint64_t ns) {
  Machine::Impl *m = g_machine;
  if (!m || !m->sim() || ns == 0) return;
  TaskImpl *t = task_impl(current);
  BUG_ON(!t);
  t->busy = true;
  auto it = std::find(m->runnable.begin(), m->runnable.end(), t);
  if (it != m->runnable.end()) m->runnable.erase(it);
  t->runnable = false;
  m->sim_add_timer(SimTimer::task_busy, m->sim_now + ns, t, nullptr, 0);
  m->sim_switch_out();
}

}  // namespace umemcg::emu

namespace umemcg {

bool cpu_online(int cpu) { return emu::cpu_online_impl(cpu); }

unsigned int num_online_cpus() {
  unsigned int n = 0;
  if (emu::g_machine)
    for (auto &v : emu::g_machine->vcpus) n += v->online;
  return n;
}

void resume_user_mode_work() {
  if (!current) return;
  // arch_do_signal_or_restart(): a fatal signal stays pending (the process exits on its own
  // loop's check); anything else is delivered here and, having no handler, ends.
  if (test_bit(TIF_SIGPENDING, &current->thread_flags)) {
    if (emu::g_signal_hook) emu::g_signal_hook();
    if (!fatal_signal_pending(current)) clear_bit(TIF_SIGPENDING, &current->thread_flags);
  }
  if (test_and_clear_bit(TIF_NOTIFY_RESUME, &current->thread_flags)) {
    for (emu::resume_hook_t fn : emu::g_resume_hooks) fn();
  }
}

}  // namespace umemcg
