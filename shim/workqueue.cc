// SPDX-License-Identifier: GPL-2.0-only
// shim/workqueue.cc: worker pools, queueing, flushing and cancelling (see workqueue.h).
//
// Flushing follows the kernel's barrier scheme: flush_work() puts a barrier item, whose function
// completes a completion on the flusher's stack, right behind the target: in the pool's list
// (linked, so the worker that takes the target takes the barrier with it) or on the list of the
// worker running the target. A worker never touches an item after running it, because the item's
// function may free it.
#include "shim/workqueue.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <string>

#include "shim/atomic.h"
#include "shim/bug.h"
#include "shim/completion.h"
#include "shim/emu/machine_impl.h"
#include "shim/jiffies.h"

namespace umemcg {

struct workqueue_struct {
  std::string name;
  unsigned int flags = 0;
  std::atomic<long> in_flight{0};
  wait_queue_head drain_wq;
};

workqueue_struct *system_wq = nullptr;
workqueue_struct *system_percpu_wq = nullptr;
workqueue_struct *system_unbound_wq = nullptr;
workqueue_struct *system_dfl_wq = nullptr;

namespace emu {

struct Worker {
  task_struct *task = nullptr;
  work_struct *running = nullptr;
  std::deque<work_struct *> scheduled;  // taken from the pool, run in order
};

struct WorkPool {
  int cpu = -1;  // -1: unbound
  std::mutex lock;
  std::deque<work_struct *> worklist;
  std::deque<bool> linked;  // parallel to worklist: barrier linked to the item before it
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<Worker *> idle;
  bool stop = false;
  int nr_exited = 0;
};

namespace {
constexpr int kMaxWorkersPerPool = 32;

struct WqState {
  std::vector<std::unique_ptr<WorkPool>> cpu_pools;
  std::unique_ptr<WorkPool> unbound;
  std::vector<std::unique_ptr<workqueue_struct>> queues;
};

WqState *state() { return static_cast<WqState *>(g_machine->wq_state); }

struct Barrier {
  work_struct work;
  completion done;
};
void barrier_func(work_struct *w) {
  auto *b = reinterpret_cast<Barrier *>(reinterpret_cast<char *>(w) - offsetof(Barrier, work));
  complete(&b->done);
}

void worker_fn(WorkPool *pool, Worker *self);

// Caller holds pool->lock.
void spawn_worker(WorkPool *pool) {
  auto w = std::make_unique<Worker>();
  Worker *wp = w.get();
  pool->workers.push_back(std::move(w));
  TaskOptions opts;
  opts.cpu = pool->cpu;
  opts.kthread = true;
  opts.daemon = true;
  std::string name = pool->cpu >= 0 ? "kworker/" + std::to_string(pool->cpu) + ":" +
                                          std::to_string(pool->workers.size() - 1)
                                    : "kworker/u:" + std::to_string(pool->workers.size() - 1);
  TaskImpl *t = g_machine->create_task(name, [pool, wp] { worker_fn(pool, wp); }, opts);
  t->task.flags |= PF_WQ_WORKER;
  t->pool = pool;
  wp->task = &t->task;
  g_machine->start_task(t);
}

// Caller holds pool->lock: makes sure some worker will look at the list.
void kick_pool(WorkPool *pool) {
  if (!pool->idle.empty()) {
    Worker *w = pool->idle.back();
    pool->idle.pop_back();
    wake_up_process(w->task);
  } else if (static_cast<int>(pool->workers.size()) < kMaxWorkersPerPool) {
    spawn_worker(pool);
  }
}

// Runs work, which worker_fn took off wq's list (under the pool lock, which it no longer holds).
void run_one(Worker *self, work_struct *work, workqueue_struct *wq) {
  TaskImpl *me = task_impl(current);
  me->current_work = work;
  work->func(work);  // may free work
  me->current_work = nullptr;
  WARN_ON(preempt_count() != 0);
  if (wq && wq->in_flight.fetch_sub(1) == 1) wake_up_all(&wq->drain_wq);
  (void)self;
}

// The worker of pool running work, or nullptr. Caller holds pool->lock.
Worker *find_worker_executing(WorkPool *pool, work_struct *work) {
  for (auto &w : pool->workers)
    if (w->running == work) return w.get();
  return nullptr;
}

void worker_fn(WorkPool *pool, Worker *self) {
  std::unique_lock<std::mutex> lk(pool->lock);
  for (;;) {
    if (pool->worklist.empty()) {
      if (pool->stop) break;
      pool->idle.push_back(self);
      set_current_state(TASK_UNINTERRUPTIBLE);
      set_wait_reason("worker idle");
      lk.unlock();
      schedule();
      lk.lock();
      auto it = std::find(pool->idle.begin(), pool->idle.end(), self);
      if (it != pool->idle.end()) pool->idle.erase(it);
      continue;
    }
    // Take the first item and the barriers linked behind it.
    self->scheduled.push_back(pool->worklist.front());
    pool->worklist.pop_front();
    pool->linked.pop_front();
    while (!pool->worklist.empty() && pool->linked.front()) {
      self->scheduled.push_back(pool->worklist.front());
      pool->worklist.pop_front();
      pool->linked.pop_front();
    }
    // Non-reentrancy: an item another worker of this pool is running (it was queued again
    // meanwhile) goes to that worker, which runs it next (find_worker_executing_work()).
    if (Worker *collision = find_worker_executing(pool, self->scheduled.front())) {
      for (work_struct *w : self->scheduled) collision->scheduled.push_back(w);
      self->scheduled.clear();
      continue;
    }
    if (!pool->worklist.empty()) kick_pool(pool);  // more work: let another worker help
    while (!self->scheduled.empty()) {
      work_struct *work = self->scheduled.front();
      self->scheduled.pop_front();
      self->running = work;
      // Taken under the lock: once PENDING is clear, a queueing on another CPU writes emu_wq
      // again (insert_work) while this execution runs.
      workqueue_struct *wq = work->emu_wq;
      work->emu_wq = nullptr;
      // PENDING is cleared before the function runs, with a full barrier, so that a queueing
      // after this point is not lost: it sets PENDING again and queues the item anew.
      test_and_clear_bit(WORK_STRUCT_PENDING_BIT, &work->data);
      lk.unlock();
      run_one(self, work, wq);
      lk.lock();
      self->running = nullptr;
    }
  }
  pool->nr_exited++;
}

WorkPool *pool_for(workqueue_struct *wq, int cpu) {
  WqState *s = state();
  if (wq->flags & WQ_UNBOUND) return s->unbound.get();
  if (cpu == WORK_CPU_UNBOUND || cpu < 0) cpu = tls_vcpu ? tls_vcpu->id : 0;
  BUG_ON(cpu >= static_cast<int>(s->cpu_pools.size()));
  return s->cpu_pools[cpu].get();
}

// The work's PENDING bit is set by the caller.
void insert_work(int cpu, workqueue_struct *wq, work_struct *work) {
  BUG_ON(!g_machine || !work->func);
  WorkPool *pool = pool_for(wq, cpu);
  // Non-reentrancy across pools (__queue_work()): an item still running on the pool it last
  // ran on is queued there, so that it never runs twice at once.
  if (WorkPool *last = READ_ONCE(work->emu_pool); last && last != pool) {
    std::lock_guard<std::mutex> g(last->lock);
    if (find_worker_executing(last, work)) pool = last;
  }
  wq->in_flight.fetch_add(1);
  std::lock_guard<std::mutex> g(pool->lock);
  WRITE_ONCE(work->emu_pool, pool);
  work->emu_wq = wq;
  pool->worklist.push_back(work);
  pool->linked.push_back(false);
  kick_pool(pool);
}

// Finds work in the pools: where it is queued, or which worker runs it. Returns with the pool
// locked in *lk, or false.
bool find_work(work_struct *work, std::unique_lock<std::mutex> *lk, WorkPool **pool_out,
               std::size_t *queued_at, Worker **runner) {
  WqState *s = state();
  auto look = [&](WorkPool *p) {
    std::unique_lock<std::mutex> l(p->lock);
    for (std::size_t i = 0; i < p->worklist.size(); i++) {
      if (p->worklist[i] == work && !p->linked[i]) {
        *pool_out = p;
        *queued_at = i;
        *runner = nullptr;
        *lk = std::move(l);
        return true;
      }
    }
    for (auto &w : p->workers) {
      if (w->running == work) {
        *pool_out = p;
        *runner = w.get();
        *lk = std::move(l);
        return true;
      }
    }
    return false;
  };
  // Where it was last queued is only a hint (a queueing elsewhere may move it meanwhile): every
  // pool is looked at under its own lock.
  WorkPool *hint = READ_ONCE(work->emu_pool);
  if (hint && look(hint)) return true;
  for (auto &p : s->cpu_pools)
    if (p.get() != hint && look(p.get())) return true;
  return s->unbound.get() != hint && look(s->unbound.get());
}

// Inserts a barrier behind work (queued or running). Caller holds the pool lock.
void insert_barrier(WorkPool *pool, std::size_t queued_at, Worker *runner, Barrier *b) {
  INIT_WORK(&b->work, barrier_func);
  init_completion(&b->done);
  set_bit(WORK_STRUCT_PENDING_BIT, &b->work.data);
  if (runner) {
    runner->scheduled.push_back(&b->work);
    return;
  }
  std::size_t pos = queued_at + 1;
  while (pos < pool->worklist.size() && pool->linked[pos]) pos++;
  pool->worklist.insert(pool->worklist.begin() + static_cast<long>(pos), &b->work);
  pool->linked.insert(pool->linked.begin() + static_cast<long>(pos), true);
}

bool start_flush(work_struct *work, Barrier *b) {
  std::unique_lock<std::mutex> lk;
  WorkPool *pool;
  std::size_t at = 0;
  Worker *runner = nullptr;
  if (!find_work(work, &lk, &pool, &at, &runner)) return false;
  // Flushing the item this very worker runs would wait for itself.
  BUG_ON(runner && runner->task == current);
  insert_barrier(pool, at, runner, b);
  return true;
}

bool do_cancel(work_struct *work, bool sync) {
  bool was_pending = false;
  {
    std::unique_lock<std::mutex> lk;
    WorkPool *pool;
    std::size_t at = 0;
    Worker *runner = nullptr;
    if (find_work(work, &lk, &pool, &at, &runner) && !runner) {
      pool->worklist.erase(pool->worklist.begin() + static_cast<long>(at));
      pool->linked.erase(pool->linked.begin() + static_cast<long>(at));
      if (work->emu_wq && work->emu_wq->in_flight.fetch_sub(1) == 1)
        wake_up_all(&work->emu_wq->drain_wq);
      work->emu_wq = nullptr;
      clear_bit(WORK_STRUCT_PENDING_BIT, &work->data);
      was_pending = true;
    }
  }
  if (sync) flush_work(work);
  return was_pending;
}
}  // namespace

void workqueue_boot(Machine::Impl *m) {
  auto *s = new WqState;
  for (unsigned i = 0; i < m->vcpus.size(); i++) {
    s->cpu_pools.push_back(std::make_unique<WorkPool>());
    s->cpu_pools.back()->cpu = static_cast<int>(i);
  }
  s->unbound = std::make_unique<WorkPool>();
  m->wq_state = s;
  system_wq = alloc_workqueue("events", WQ_PERCPU, 0);
  system_percpu_wq = system_wq;
  system_unbound_wq = alloc_workqueue("events_unbound", WQ_UNBOUND, 0);
  system_dfl_wq = system_unbound_wq;
}

void workqueue_shutdown(Machine::Impl *m) {
  WqState *s = static_cast<WqState *>(m->wq_state);
  if (!s) return;
  std::vector<WorkPool *> pools;
  for (auto &p : s->cpu_pools) pools.push_back(p.get());
  pools.push_back(s->unbound.get());
  for (WorkPool *p : pools) {
    std::lock_guard<std::mutex> g(p->lock);
    p->stop = true;
    for (Worker *w : p->idle) wake_up_process(w->task);
    p->idle.clear();
  }
  auto all_exited = [pools] {
    for (WorkPool *p : pools) {
      std::lock_guard<std::mutex> g(p->lock);
      if (p->nr_exited != static_cast<int>(p->workers.size())) return false;
    }
    return true;
  };
  if (m->sim()) {
    RunResult r = m->sim_run_until(all_exited);
    if (r.deadlock) std::fprintf(stderr, "umemcg: workqueue shutdown stuck:\n%s", r.report.c_str());
  } else {
    for (WorkPool *p : pools) {
      std::vector<std::thread *> threads;
      {
        std::lock_guard<std::mutex> g(p->lock);
        for (auto &w : p->workers) threads.push_back(&task_impl(w->task)->thread);
      }
      for (std::thread *t : threads)
        if (t->joinable()) t->join();
    }
  }
  system_wq = system_percpu_wq = system_unbound_wq = system_dfl_wq = nullptr;
  delete s;
  m->wq_state = nullptr;
}

}  // namespace emu

void INIT_WORK(work_struct *work, work_func_t func) {
  *work = work_struct{};
  work->func = func;
}

void INIT_DELAYED_WORK(delayed_work *dwork, work_func_t func) {
  INIT_WORK(&dwork->work, func);
  timer_setup(&dwork->timer, [](timer_list *t) {
    auto *dw = reinterpret_cast<delayed_work *>(reinterpret_cast<char *>(t) -
                                                offsetof(delayed_work, timer));
    emu::insert_work(dw->cpu, dw->wq, &dw->work);
  }, 0);
}

workqueue_struct *alloc_workqueue(const char *name, unsigned int flags, int max_active) {
  (void)max_active;
  auto wq = std::make_unique<workqueue_struct>();
  wq->name = name;
  wq->flags = flags;
  init_waitqueue_head(&wq->drain_wq);
  workqueue_struct *p = wq.get();
  emu::state()->queues.push_back(std::move(wq));
  return p;
}

void flush_workqueue(workqueue_struct *wq) {
  wait_event(wq->drain_wq, wq->in_flight.load() == 0);
}

void destroy_workqueue(workqueue_struct *wq) {
  flush_workqueue(wq);
  auto &q = emu::state()->queues;
  q.erase(std::remove_if(q.begin(), q.end(), [wq](auto &p) { return p.get() == wq; }), q.end());
}

bool queue_work_on(int cpu, workqueue_struct *wq, work_struct *work) {
  if (test_and_set_bit(WORK_STRUCT_PENDING_BIT, &work->data)) return false;
  emu::insert_work(cpu, wq, work);
  return true;
}

bool queue_work(workqueue_struct *wq, work_struct *work) {
  return queue_work_on(WORK_CPU_UNBOUND, wq, work);
}

bool queue_delayed_work_on(int cpu, workqueue_struct *wq, delayed_work *dwork,
                           unsigned long delay) {
  if (test_and_set_bit(WORK_STRUCT_PENDING_BIT, &dwork->work.data)) return false;
  if (!delay) {
    emu::insert_work(cpu, wq, &dwork->work);
    return true;
  }
  dwork->wq = wq;
  // A per-CPU queue's delayed work runs on the CPU that armed it unless one is named.
  dwork->cpu = (cpu == WORK_CPU_UNBOUND && emu::tls_vcpu) ? emu::tls_vcpu->id : cpu;
  mod_timer(&dwork->timer, jiffies + delay);
  return true;
}

bool mod_delayed_work_on(int cpu, workqueue_struct *wq, delayed_work *dwork,
                         unsigned long delay) {
  bool was = cancel_delayed_work(dwork);
  queue_delayed_work_on(cpu, wq, dwork, delay);
  return was;
}

bool flush_work(work_struct *work) {
  emu::Barrier b;
  if (!emu::start_flush(work, &b)) return false;
  wait_for_completion(&b.done);
  return true;
}

bool flush_delayed_work(delayed_work *dwork) {
  if (timer_delete_sync(&dwork->timer)) emu::insert_work(dwork->cpu, dwork->wq, &dwork->work);
  return flush_work(&dwork->work);
}

bool cancel_work(work_struct *work) { return emu::do_cancel(work, false); }
bool cancel_work_sync(work_struct *work) { return emu::do_cancel(work, true); }

bool cancel_delayed_work(delayed_work *dwork) {
  if (timer_delete(&dwork->timer)) {
    clear_bit(WORK_STRUCT_PENDING_BIT, &dwork->work.data);
    return true;
  }
  return emu::do_cancel(&dwork->work, false);
}

bool cancel_delayed_work_sync(delayed_work *dwork) {
  if (timer_delete_sync(&dwork->timer)) {
    clear_bit(WORK_STRUCT_PENDING_BIT, &dwork->work.data);
    flush_work(&dwork->work);
    return true;
  }
  return emu::do_cancel(&dwork->work, true);
}

bool work_pending(const work_struct *work) { return test_bit(WORK_STRUCT_PENDING_BIT, &work->data); }

bool work_busy(work_struct *work) {
  if (work_pending(work)) return true;
  std::unique_lock<std::mutex> lk;
  emu::WorkPool *pool;
  std::size_t at;
  emu::Worker *runner = nullptr;
  return emu::find_work(work, &lk, &pool, &at, &runner);
}

work_struct *current_work() {
  emu::TaskImpl *t = emu::task_impl(current);
  return t ? t->current_work : nullptr;
}

}  // namespace umemcg
