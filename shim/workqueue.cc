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
#include <cstdio>
#include <deque>
#include <memory>
#include <string>

#include "shim/atomic.h"
#include "shim/bug.h"
#include "shim/completion.h"
#include "shim/emu/machine_impl.h"
#include "shim/jiffies.h"

namespace umemcg {

namespace emu {
struct PoolWq;
}

struct workqueue_struct {
  std::string name;
  unsigned int flags = 0;
  int max_active = 0;  // items of this queue running at once per pool (per vCPU; unbound: all)
  // Its share of each pool it queues on, by pool index (emu::WorkPool::index): set at
  // alloc_workqueue(), constant until destroy_workqueue(). Each is under its pool's lock.
  std::vector<emu::PoolWq *> pwqs;
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
  workqueue_struct *running_wq = nullptr;  // the queue `running` was queued on (null: a barrier)
  std::deque<work_struct *> scheduled;  // taken from the pool, run in order
};

// A list of queued items. linked[i]: item i is a flush barrier linked to the item before it
// (the kernel's WORK_STRUCT_LINKED on that item): whoever takes that item takes it too.
struct WorkList {
  std::deque<work_struct *> items;
  std::deque<bool> linked;
  bool empty() const { return items.empty(); }
  std::size_t size() const { return items.size(); }
  void push_back(work_struct *w, bool is_linked) {
    items.push_back(w);
    linked.push_back(is_linked);
  }
  // Moves the first item and the barriers linked behind it to the end of *to.
  void move_head_linked(std::deque<work_struct *> *to_items, std::deque<bool> *to_linked) {
    do {
      to_items->push_back(items.front());
      if (to_linked) to_linked->push_back(to_items->size() > 1 && linked.front());
      items.pop_front();
      linked.pop_front();
    } while (!items.empty() && linked.front());
  }
  // Removes item i. A barrier that was linked to it stays where it is, linked to nothing (the
  // kernel leaves it on the list when the item it follows is grabbed).
  void erase(std::size_t i) {
    const bool was_linked = linked[i];
    items.erase(items.begin() + static_cast<long>(i));
    linked.erase(linked.begin() + static_cast<long>(i));
    if (i < linked.size() && linked[i] && !was_linked) linked[i] = false;
  }
};

// The kernel's pool_workqueue: one workqueue's share of one pool. At most wq->max_active of its
// items are active (on the pool's worklist or running); the rest wait on `inactive`, in queueing
// order, and become active one by one as active ones finish (pwq_dec_nr_active()). Barriers do
// not count. Under the pool's lock.
struct PoolWq {
  workqueue_struct *wq = nullptr;
  int nr_active = 0;
  WorkList inactive;
};

struct WorkPool {
  int cpu = -1;    // -1: unbound
  int index = 0;   // in workqueue_struct::pwqs: the vCPU's id, or the number of vCPUs (unbound)
  std::mutex lock;
  WorkList worklist;
  std::vector<std::unique_ptr<PoolWq>> pwqs;  // one per workqueue that queues here
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
  std::mutex queues_lock;  // the kernel's wq_pool_mutex, for the list of queues
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

// Runs work, which worker_fn took off its pool's list (under the pool lock, which it no
// longer holds). The function may free work: nothing here touches it after the call.
void run_one(work_struct *work) {
  TaskImpl *me = task_impl(current);
  me->current_work = work;
  work->func(work);
  me->current_work = nullptr;
  WARN_ON(preempt_count() != 0);
}

// The worker of pool running work, or nullptr. Caller holds pool->lock.
Worker *find_worker_executing(WorkPool *pool, work_struct *work) {
  for (auto &w : pool->workers)
    if (w->running == work) return w.get();
  return nullptr;
}

// wq's share of pool. Caller holds pool->lock (the pointer itself is constant).
PoolWq *pwq_of(workqueue_struct *wq, WorkPool *pool) {
  PoolWq *pwq = wq->pwqs[static_cast<std::size_t>(pool->index)];
  BUG_ON(!pwq);
  return pwq;
}

// An active item of pwq finished or was cancelled (pwq_dec_nr_active()): the first inactive
// one, with the barriers linked behind it, becomes active at the end of the pool's worklist.
// Caller holds pool->lock.
void pwq_dec_nr_active(WorkPool *pool, PoolWq *pwq) {
  pwq->nr_active--;
  if (pwq->inactive.empty() || pwq->nr_active >= pwq->wq->max_active) return;
  pwq->inactive.move_head_linked(&pool->worklist.items, &pool->worklist.linked);
  pwq->nr_active++;
  kick_pool(pool);
}

// One item of wq left the queue for good (ran or was cancelled). Caller holds the lock of a
// pool wq has a share of: destroy_workqueue() takes each such lock after its flush, so wq is
// not freed before this returns, even when the flusher sees in_flight reach 0 before the
// wake-up.
void wq_dec_in_flight(workqueue_struct *wq) {
  if (wq->in_flight.fetch_sub(1) == 1) wake_up_all(&wq->drain_wq);
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
    pool->worklist.move_head_linked(&self->scheduled, nullptr);
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
      self->running_wq = wq;
      // PENDING is cleared before the function runs, with a full barrier, so that a queueing
      // after this point is not lost: it sets PENDING again and queues the item anew.
      test_and_clear_bit(WORK_STRUCT_PENDING_BIT, &work->data);
      lk.unlock();
      run_one(work);
      lk.lock();
      self->running = nullptr;
      self->running_wq = nullptr;
      if (wq) {  // not a barrier: it counted in its queue's nr_active and in_flight
        pwq_dec_nr_active(pool, pwq_of(wq, pool));
        wq_dec_in_flight(wq);
      }
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
  // Non-reentrancy across pools (__queue_work()): an item still running for this queue on the
  // pool it last ran on is queued there, so that it never runs twice at once.
  if (WorkPool *last = READ_ONCE(work->emu_pool); last && last != pool) {
    std::lock_guard<std::mutex> g(last->lock);
    if (Worker *w = find_worker_executing(last, work); w && w->running_wq == wq) pool = last;
  }
  wq->in_flight.fetch_add(1);
  std::lock_guard<std::mutex> g(pool->lock);
  WRITE_ONCE(work->emu_pool, pool);
  work->emu_wq = wq;
  PoolWq *pwq = pwq_of(wq, pool);
  if (pwq->nr_active >= wq->max_active) {
    pwq->inactive.push_back(work, false);  // activated when an active item finishes
    return;
  }
  pwq->nr_active++;
  pool->worklist.push_back(work, false);
  kick_pool(pool);
}

// Where a queued or running item is: its pool (returned locked in *lk) and either the list and
// index it is queued at or the worker running it.
struct WorkLocation {
  WorkPool *pool = nullptr;
  WorkList *list = nullptr;  // the pool's worklist or a queue's inactive list
  std::size_t index = 0;
  Worker *runner = nullptr;
};

// Finds work in the pools: where it is queued, or which worker runs it. Returns with the pool
// locked in *lk, or false.
bool find_work(work_struct *work, std::unique_lock<std::mutex> *lk, WorkLocation *loc) {
  WqState *s = state();
  auto in_list = [&](WorkPool *p, WorkList *list) {
    for (std::size_t i = 0; i < list->size(); i++) {
      if (list->items[i] == work && !list->linked[i]) {
        *loc = WorkLocation{p, list, i, nullptr};
        return true;
      }
    }
    return false;
  };
  auto look = [&](WorkPool *p) {
    std::unique_lock<std::mutex> l(p->lock);
    bool found = in_list(p, &p->worklist);
    for (std::size_t i = 0; !found && i < p->pwqs.size(); i++)
      found = in_list(p, &p->pwqs[i]->inactive);
    for (std::size_t i = 0; !found && i < p->workers.size(); i++) {
      if (p->workers[i]->running == work) {
        *loc = WorkLocation{p, nullptr, 0, p->workers[i].get()};
        found = true;
      }
    }
    if (found) *lk = std::move(l);
    return found;
  };
  // Where it was last queued is only a hint (a queueing elsewhere may move it meanwhile): every
  // pool is looked at under its own lock.
  WorkPool *hint = READ_ONCE(work->emu_pool);
  if (hint && look(hint)) return true;
  for (auto &p : s->cpu_pools)
    if (p.get() != hint && look(p.get())) return true;
  return s->unbound.get() != hint && look(s->unbound.get());
}

// Inserts a barrier behind the item at loc (queued, active or not, or running). Caller holds
// the pool lock. A barrier behind an inactive item is activated with it (insert_wq_barrier()).
void insert_barrier(const WorkLocation &loc, Barrier *b) {
  INIT_WORK(&b->work, barrier_func);
  init_completion(&b->done);
  set_bit(WORK_STRUCT_PENDING_BIT, &b->work.data);
  if (loc.runner) {
    loc.runner->scheduled.push_back(&b->work);
    return;
  }
  WorkList *list = loc.list;
  std::size_t pos = loc.index + 1;
  while (pos < list->size() && list->linked[pos]) pos++;
  list->items.insert(list->items.begin() + static_cast<long>(pos), &b->work);
  list->linked.insert(list->linked.begin() + static_cast<long>(pos), true);
}

bool start_flush(work_struct *work, Barrier *b) {
  std::unique_lock<std::mutex> lk;
  WorkLocation loc;
  if (!find_work(work, &lk, &loc)) return false;
  // Flushing the item this very worker runs would wait for itself.
  BUG_ON(loc.runner && loc.runner->task == current);
  insert_barrier(loc, b);
  return true;
}

bool do_cancel(work_struct *work, bool sync) {
  bool was_pending = false;
  {
    std::unique_lock<std::mutex> lk;
    WorkLocation loc;
    if (find_work(work, &lk, &loc) && !loc.runner) {
      loc.list->erase(loc.index);
      workqueue_struct *wq = work->emu_wq;
      work->emu_wq = nullptr;
      // An active item leaves its queue's nr_active (pwq_dec_nr_in_flight() for a grabbed
      // pending item); an inactive one never entered it.
      if (wq && loc.list == &loc.pool->worklist) pwq_dec_nr_active(loc.pool, pwq_of(wq, loc.pool));
      if (wq) wq_dec_in_flight(wq);
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
    s->cpu_pools.back()->index = static_cast<int>(i);
  }
  s->unbound = std::make_unique<WorkPool>();
  s->unbound->index = static_cast<int>(m->vcpus.size());
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
  auto wq = std::make_unique<workqueue_struct>();
  wq->name = name;
  wq->flags = flags;
  // 0 asks for the default; anything else is clamped to [1, WQ_MAX_ACTIVE], with the kernel's
  // warning (wq_clamp_max_active(); Emulation: the machine has no kernel log: stderr).
  if (max_active == 0) max_active = WQ_DFL_ACTIVE;
  if (max_active < 1 || max_active > WQ_MAX_ACTIVE) {
    std::fprintf(stderr, "workqueue: max_active %d requested for %s is out of range, clamping between %d and %d\n",
            max_active, name, 1, WQ_MAX_ACTIVE);
    max_active = std::clamp(max_active, 1, WQ_MAX_ACTIVE);
  }
  wq->max_active = max_active;
  init_waitqueue_head(&wq->drain_wq);
  emu::WqState *s = emu::state();
  wq->pwqs.assign(s->cpu_pools.size() + 1, nullptr);
  auto add_pwq = [&](emu::WorkPool *pool) {
    auto pwq = std::make_unique<emu::PoolWq>();
    pwq->wq = wq.get();
    wq->pwqs[static_cast<std::size_t>(pool->index)] = pwq.get();
    std::lock_guard<std::mutex> g(pool->lock);
    pool->pwqs.push_back(std::move(pwq));
  };
  if (flags & WQ_UNBOUND) {
    add_pwq(s->unbound.get());
  } else {
    for (auto &pool : s->cpu_pools) add_pwq(pool.get());
  }
  workqueue_struct *p = wq.get();
  std::lock_guard<std::mutex> g(s->queues_lock);
  s->queues.push_back(std::move(wq));
  return p;
}

void flush_workqueue(workqueue_struct *wq) {
  wait_event(wq->drain_wq, wq->in_flight.load() == 0);
}

void destroy_workqueue(workqueue_struct *wq) {
  flush_workqueue(wq);
  emu::WqState *s = emu::state();
  auto drop_pwq = [wq](emu::WorkPool *pool) {
    // Taking the lock also waits out a worker still inside wq_dec_in_flight() for wq.
    std::lock_guard<std::mutex> g(pool->lock);
    auto &v = pool->pwqs;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if ((*it)->wq != wq) continue;
      WARN_ON((*it)->nr_active != 0 || !(*it)->inactive.empty());
      v.erase(it);
      return;
    }
  };
  for (auto &pool : s->cpu_pools) drop_pwq(pool.get());
  drop_pwq(s->unbound.get());
  std::lock_guard<std::mutex> g(s->queues_lock);
  auto &q = s->queues;
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
  emu::WorkLocation loc;
  return emu::find_work(work, &lk, &loc);
}

work_struct *current_work() {
  emu::TaskImpl *t = emu::task_impl(current);
  return t ? t->current_work : nullptr;
}

}  // namespace umemcg
