// SPDX-License-Identifier: GPL-2.0-only
// shim/timer.cc: timer_list on the machine clock, and the native mode's timer thread.
#include "shim/timer.h"

#include "shim/bug.h"
#include "shim/emu/machine_impl.h"
#include "shim/jiffies.h"

namespace umemcg {
namespace emu {

void Machine::Impl::fire_timer(timer_list *t) {
  t->emu_pending = false;
  t->function(t);
}

void Machine::Impl::timer_start_native() {
  note_os_thread_started();
  timer_thread = std::thread([this] {
    std::unique_lock<std::mutex> lk(timer_mu);
    while (!timer_stop) {
      if (native_timers.empty()) {
        timer_cv.wait(lk);
        continue;
      }
      auto it = native_timers.begin();
      const std::uint64_t deadline = it->first.first;
      if (now() < deadline) {
        timer_cv.wait_until(lk, boot_time + std::chrono::nanoseconds(deadline));
        continue;
      }
      timer_list *t = it->second;
      native_timers.erase(it);
      t->emu_pending = false;
      native_timer_running = t;
      lk.unlock();
      t->function(t);
      lk.lock();
      native_timer_running = nullptr;
      timer_cv.notify_all();
    }
  });
}

void Machine::Impl::timer_stop_native() {
  {
    std::lock_guard<std::mutex> g(timer_mu);
    timer_stop = true;
  }
  timer_cv.notify_all();
  if (timer_thread.joinable()) timer_thread.join();
}

namespace {
// Removes a pending timer's clock entry. Native: caller holds timer_mu.
bool unlink_timer(Machine::Impl *m, timer_list *t) {
  if (!t->emu_pending) return false;
  TimerKey key{t->emu_key_deadline, t->emu_key_seq};
  if (m->sim())
    m->sim_timers.erase(key);
  else
    m->native_timers.erase(key);
  t->emu_pending = false;
  return true;
}
}  // namespace

}  // namespace emu

void timer_setup(timer_list *timer, void (*fn)(timer_list *), u32 flags) {
  timer->function = fn;
  timer->flags = flags;
  timer->emu_pending = false;
}

int mod_timer(timer_list *timer, unsigned long expires) {
  emu::Machine::Impl *m = emu::g_machine;
  BUG_ON(!m);
  timer->expires = expires;
  const std::uint64_t deadline = static_cast<std::uint64_t>(expires) * NSEC_PER_JIFFY;
  if (m->sim()) {
    const bool was = emu::unlink_timer(m, timer);
    emu::TimerKey key = m->sim_add_timer(emu::SimTimer::timer_cb, deadline, nullptr, timer, 0);
    timer->emu_key_deadline = key.first;
    timer->emu_key_seq = key.second;
    timer->emu_pending = true;
    return was;
  }
  std::lock_guard<std::mutex> g(m->timer_mu);
  const bool was = emu::unlink_timer(m, timer);
  emu::TimerKey key{deadline, m->native_timer_seq++};
  m->native_timers.emplace(key, timer);
  timer->emu_key_deadline = key.first;
  timer->emu_key_seq = key.second;
  timer->emu_pending = true;
  m->timer_cv.notify_all();
  return was;
}

void add_timer(timer_list *timer) { mod_timer(timer, timer->expires); }

int timer_delete(timer_list *timer) {
  emu::Machine::Impl *m = emu::g_machine;
  if (!m) return 0;
  if (m->sim()) return emu::unlink_timer(m, timer);
  std::lock_guard<std::mutex> g(m->timer_mu);
  return emu::unlink_timer(m, timer);
}

int timer_delete_sync(timer_list *timer) {
  emu::Machine::Impl *m = emu::g_machine;
  if (!m) return 0;
  if (m->sim()) return emu::unlink_timer(m, timer);  // callbacks never run concurrently
  std::unique_lock<std::mutex> lk(m->timer_mu);
  const bool was = emu::unlink_timer(m, timer);
  m->timer_cv.wait(lk, [m, timer] { return m->native_timer_running != timer; });
  return was;
}

bool timer_pending(const timer_list *timer) {
  emu::Machine::Impl *m = emu::g_machine;
  if (!m || m->sim()) return timer->emu_pending;
  std::lock_guard<std::mutex> g(m->timer_mu);
  return timer->emu_pending;
}

}  // namespace umemcg
