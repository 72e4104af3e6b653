// SPDX-License-Identifier: GPL-2.0-only
// bench/shim_bench.cc: costs of the shim's primitives, and of a scheduling decision in each mode.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "shim/local_lock.h"
#include "shim/machine.h"
#include "shim/percpu.h"
#include "shim/rcupdate.h"
#include "shim/rwsem.h"
#include "shim/sched.h"

using namespace umemcg;

namespace {

emu::MachineConfig native_config(unsigned cpus) {
  emu::MachineConfig c;
  c.mode = emu::Mode::native;
  c.nr_cpus = cpus;
  return c;
}

struct bench_pcp {
  local_lock_t lock;
  long n GUARDED_BY(lock) = 0;
};
DEFINE_PER_CPU(bench_pcp, bench_counter);

// local_lock + this CPU's counter increment + local_unlock, on the task's vCPU: the shape of a
// per-CPU stock hit. Target: <= 0.5x BM_atomic_add_uncontended.
void BM_local_lock_percpu_inc(benchmark::State &state) {
  emu::Machine m(native_config(2));
  emu::AttachThread at("bench", 0);
  for (auto _ : state) {
    bench_pcp *c = this_cpu_ptr(&bench_counter);
    local_lock(&c->lock);
    c->n++;
    local_unlock(&c->lock);
  }
  benchmark::DoNotOptimize(per_cpu_ptr(&bench_counter, 0));
}
BENCHMARK(BM_local_lock_percpu_inc);

// Thread CPU time in ns: the ratio counters below compare two loops of the same thread.
double thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Cost of `op` relative to one uncontended fetch_add, measured in the same run: rounds of
// interleaved loops, the best round of each (the least disturbed by other processes).
template <typename Op>
double ratio_to_atomic_add(Op op) {
  static std::atomic<long> counter{0};
  constexpr int kIters = 200000;
  double best_op = 1e300, best_add = 1e300;
  for (int round = 0; round < 5; round++) {
    double t0 = thread_cpu_ns();
    for (int i = 0; i < kIters; i++) op();
    double t1 = thread_cpu_ns();
    for (int i = 0; i < kIters; i++) counter.fetch_add(1);
    double t2 = thread_cpu_ns();
    best_op = std::min(best_op, t1 - t0);
    best_add = std::min(best_add, t2 - t1);
  }
  return best_op / best_add;
}

// Uncontended down_read + up_read: the reader fast path (one atomic add each way) with its
// statistics (two clock reads, the hold record in the task) and idle hook points. Counter
// x_atomic_add: the pair's cost in uncontended fetch_adds, measured in this run.
void BM_rwsem_read_uncontended(benchmark::State &state) {
  emu::Machine m(native_config(2));
  emu::AttachThread at("bench", 0);
  rw_semaphore sem("bench");
  auto pair = [&sem] {
    down_read(&sem);
    up_read(&sem);
  };
  for (auto _ : state) pair();
  state.counters["x_atomic_add"] = ratio_to_atomic_add(pair);
}
BENCHMARK(BM_rwsem_read_uncontended);

// The same with lock_stat off (emu::set_rwsem_lock_stat): the lock alone, no clock, no record.
void BM_rwsem_read_uncontended_nostat(benchmark::State &state) {
  emu::Machine m(native_config(2));
  emu::AttachThread at("bench", 0);
  rw_semaphore sem("bench");
  const bool was = emu::set_rwsem_lock_stat(false);
  auto pair = [&sem] {
    down_read(&sem);
    up_read(&sem);
  };
  for (auto _ : state) pair();
  state.counters["x_atomic_add"] = ratio_to_atomic_add(pair);
  emu::set_rwsem_lock_stat(was);
}
BENCHMARK(BM_rwsem_read_uncontended_nostat);

// Uncontended down_write + up_write: cmpxchg and atomic subtract, with statistics.
void BM_rwsem_write_uncontended(benchmark::State &state) {
  emu::Machine m(native_config(2));
  emu::AttachThread at("bench", 0);
  rw_semaphore sem("bench");
  auto pair = [&sem] {
    down_write(&sem);
    up_write(&sem);
  };
  for (auto _ : state) pair();
  state.counters["x_atomic_add"] = ratio_to_atomic_add(pair);
}
BENCHMARK(BM_rwsem_write_uncontended);

// The statistics' native clock alone (one TSC read and conversion): what two of them add to
// each uncontended pair above.
void BM_rwsem_clock_read(benchmark::State &state) {
  emu::Machine m(native_config(2));
  for (auto _ : state) benchmark::DoNotOptimize(emu::rwsem_clock_ns());
  state.counters["x_atomic_add"] = ratio_to_atomic_add([] {
    benchmark::DoNotOptimize(emu::rwsem_clock_ns());
  });
}
BENCHMARK(BM_rwsem_clock_read);

void BM_rcu_read_lock(benchmark::State &state) {
  emu::Machine m(native_config(2));
  emu::AttachThread at("bench", 0);
  for (auto _ : state) {
    rcu_read_lock();
    rcu_read_unlock();
  }
}
BENCHMARK(BM_rcu_read_lock);

// Scheduling decisions of the simulated mode: two tasks alternate through cond_resched(), 1000
// decisions per iteration (each a switch to the scheduler fiber and into a task fiber).
// items_per_second = decisions per second.
void BM_sim_sched_decision(benchmark::State &state) {
  emu::MachineConfig c;
  c.mode = emu::Mode::simulated;
  c.nr_cpus = 2;
  emu::Machine m(c);
  constexpr long kDecisions = 1000;
  for (auto _ : state) {
    long left = kDecisions;
    for (int i = 0; i < 2; i++) {
      m.spawn("yield", [&left] {
        emu::KernelEntry k;
        while (left-- > 0) cond_resched();
      });
    }
    m.run();
  }
  state.SetItemsProcessed(state.iterations() * kDecisions);
}
BENCHMARK(BM_sim_sched_decision);

// The alternative design for the simulated mode: handing a baton between two OS threads.
void BM_thread_baton_handoff(benchmark::State &state) {
  std::mutex mu;
  std::condition_variable cv;
  int turn = 0;
  bool stop = false;
  std::thread other([&] {
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      cv.wait(lk, [&] { return turn == 1 || stop; });
      if (stop) return;
      turn = 0;
      cv.notify_all();
    }
  });
  for (auto _ : state) {
    std::unique_lock<std::mutex> lk(mu);
    turn = 1;
    cv.notify_all();
    cv.wait(lk, [&] { return turn == 0; });
  }
  {
    std::lock_guard<std::mutex> g(mu);
    stop = true;
  }
  cv.notify_all();
  other.join();
  state.SetItemsProcessed(state.iterations() * 2);  // two hand-offs per round trip
}
BENCHMARK(BM_thread_baton_handoff)->UseRealTime();

}  // namespace
