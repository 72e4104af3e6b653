// SPDX-License-Identifier: GPL-2.0-only
// shim/hooks.cc: instrumentation points (see hooks.h).
#include "shim/hooks.h"

#include <cstring>
#include <mutex>
#include <vector>

#include "shim/mutex.h"
#include "shim/rcupdate.h"

namespace umemcg::emu {

struct HookList {
  struct Entry {
    int id;
    hook_fn_t fn;
    void *data;
  };
  std::vector<Entry> entries;
};

namespace {
HookPoint *g_points = nullptr;  // registered at static initialisation, never removed
// Serialises attach/detach. A kernel mutex, not std::mutex: it is held across synchronize_rcu(),
// a scheduling point in simulated mode.
mutex g_attach_mu{"hook_attach"};
int g_next_id = 1;

void run_list(std::atomic<HookList *> &head, const std::uint64_t *args, unsigned int nargs,
              std::uint64_t ret) {
  rcu_read_guard g;
  HookList *l = head.load(std::memory_order_acquire);
  if (!l) return;
  for (const auto &e : l->entries) e.fn(e.data, args, nargs, ret);
}
}  // namespace

HookPoint::HookPoint(const char *name, unsigned int nargs) : name_(name), nargs_(nargs) {
  next_ = g_points;
  g_points = this;
}

void HookPoint::call_entry(const std::uint64_t *args) { run_list(entry_, args, nargs_, 0); }
void HookPoint::call_exit(const std::uint64_t *args, std::uint64_t ret) {
  run_list(exit_, args, nargs_, ret);
}

int HookPoint::attach(bool is_exit, hook_fn_t fn, void *data) {
  mutex_guard g(&g_attach_mu);
  std::atomic<HookList *> &head = is_exit ? exit_ : entry_;
  HookList *old = head.load(std::memory_order_relaxed);
  auto *l = new HookList;
  if (old) l->entries = old->entries;
  const int id = g_next_id++;
  l->entries.push_back({id, fn, data});
  head.store(l, std::memory_order_release);
  if (old) {
    synchronize_rcu();
    delete old;
  }
  return id;
}

bool HookPoint::detach(int id) {
  mutex_guard g(&g_attach_mu);
  for (std::atomic<HookList *> *head : {&entry_, &exit_}) {
    HookList *old = head->load(std::memory_order_relaxed);
    if (!old) continue;
    for (std::size_t i = 0; i < old->entries.size(); i++) {
      if (old->entries[i].id != id) continue;
      HookList *l = nullptr;
      if (old->entries.size() > 1) {
        l = new HookList;
        l->entries = old->entries;
        l->entries.erase(l->entries.begin() + static_cast<long>(i));
      }
      head->store(l, std::memory_order_release);
      synchronize_rcu();
      delete old;
      return true;
    }
  }
  return false;
}

HookPoint *HookPoint::find(const char *name) {
  for (HookPoint *p = g_points; p; p = p->next_)
    if (!std::strcmp(p->name_, name)) return p;
  return nullptr;
}

void HookPoint::for_each(void (*fn)(HookPoint *, void *), void *arg) {
  for (HookPoint *p = g_points; p; p = p->next_) fn(p, arg);
}

}  // namespace umemcg::emu
