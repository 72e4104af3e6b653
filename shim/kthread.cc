// SPDX-License-Identifier: GPL-2.0-only
// shim/kthread.cc: kernel threads (see kthread.h).
#include "shim/kthread.h"

#include <atomic>
#include <memory>

#include "shim/bug.h"
#include "shim/emu/machine_impl.h"
#include "shim/wait.h"

namespace umemcg {

namespace {
struct KthreadState {
  std::atomic<bool> should_stop{false};
  std::atomic<bool> exited{false};
  int ret = 0;
  wait_queue_head exit_wq;
};


task_struct *start(int (*threadfn)(void *), void *data, int cpu, const char *name,
                   bool daemon = false) {
  emu::Machine::Impl *m = emu::g_machine;
  BUG_ON(!m);
  auto st = std::make_shared<KthreadState>();
  init_waitqueue_head(&st->exit_wq);
  emu::TaskOptions opts;
  opts.cpu = cpu;
  opts.kthread = true;
  opts.daemon = daemon;
  emu::TaskImpl *t = m->create_task(name, [st, threadfn, data] {
    st->ret = threadfn(data);
    st->exited = true;
    wake_up_all(&st->exit_wq);
  }, opts);
  // Before the task starts: the thread reads it (kthread_should_stop) from its first step.
  t->kthread = st;
  m->start_task(t);
  return &t->task;
}

KthreadState *state_of(task_struct *t) {
  emu::TaskImpl *ti = emu::task_impl(t);
  return ti ? static_cast<KthreadState *>(ti->kthread.get()) : nullptr;
}
}  // namespace

task_struct *kthread_run(int (*threadfn)(void *data), void *data, const char *name) {
  return start(threadfn, data, -1, name);
}

task_struct *kthread_run_on_cpu(int (*threadfn)(void *data), void *data, int cpu,
                                const char *name) {
  return start(threadfn, data, cpu, name);
}

task_struct *kthread_run_daemon(int (*threadfn)(void *data), void *data, const char *name) {
  return start(threadfn, data, -1, name, true);
}

bool kthread_should_stop() {
  KthreadState *st = state_of(current);
  return st && st->should_stop.load();
}

int kthread_stop(task_struct *k) {
  KthreadState *st = state_of(k);
  BUG_ON(!st);
  st->should_stop = true;
  wake_up_process(k);
  wait_event(st->exit_wq, st->exited.load());
  return st->ret;
}

}  // namespace umemcg
