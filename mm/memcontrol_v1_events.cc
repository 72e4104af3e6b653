// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_v1_events.cc: cgroup v1 memory notifications (see memcontrol_v1_events.h).
//
// Mirrors: mm/memcontrol-v1.c (Linux 6.19), the functions the header lists.
// Lock order: thresholds_lock (mutex) -> RCU; memcg_oom_lock (spinlock) alone;
//   memcg_oom_waitq_lock (spinlock) -> the scheduler's wake-up; an eventfd's
//   wait-queue lock -> event_list_lock (the close hook), as the kernel's memcg_event_wake runs
//   under the eventfd's wait-queue lock.
#include "mm/memcontrol_v1_events.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>

#include "kernel/cgroup.h"
#include "kernel/fdtable.h"
#include "kernel/kernfs/kernfs.h"
#include "mm/memcontrol_internal.h"
#include "mm/memcontrol_iter.h"
#include "mm/vmpressure.h"
#include "shim/bug.h"
#include "shim/errno.h"
#include "shim/rcupdate.h"
#include "shim/sched.h"
#include "shim/wait.h"
#include "shim/workqueue.h"

namespace umemcg {

DEFINE_SPINLOCK(memcg_oom_lock);

namespace {

// Thresholds are checked every THRESHOLDS_EVENTS_TARGET page events per CPU.
constexpr unsigned long THRESHOLDS_EVENTS_TARGET = 128;

memcg1_events *ev_of(mem_cgroup *memcg) { return memcg->v1_events; }

// under_oom read without memcg_oom_lock (memory.oom_control, the recovery's test): one
// READ_ONCE of a count its writers WRITE_ONCE under the lock, hence no thread-safety analysis.
int under_oom_once(const memcg1_events *ev) NO_THREAD_SAFETY_ANALYSIS {
  return READ_ONCE(ev->under_oom);
}

// One registration of cgroup.event_control.
struct mem_cgroup_event {
  mem_cgroup *memcg = nullptr;
  eventfd_ctx *eventfd = nullptr;
  list_head list;  // on memcg's event_list while registered (self-linked once detached)
  int (*register_event)(mem_cgroup *memcg, eventfd_ctx *eventfd, const char *args) = nullptr;
  void (*unregister_event)(mem_cgroup *memcg, eventfd_ctx *eventfd) = nullptr;
  eventfd_hup_hook wait;  // the eventfd's close (EPOLLHUP)
  work_struct remove;
};

// An OOM listener.
struct mem_cgroup_eventfd_list {
  list_head list;
  eventfd_ctx *eventfd = nullptr;
};

// One allocation: the header, then room for @size entries.
mem_cgroup_threshold_ary *alloc_thresholds(unsigned int size) {
  static_assert(alignof(mem_cgroup_threshold_ary) >= alignof(struct mem_cgroup_threshold));
  size_t bytes = sizeof(mem_cgroup_threshold_ary) + size * sizeof(struct mem_cgroup_threshold);
  auto *t = static_cast<mem_cgroup_threshold_ary *>(std::calloc(1, bytes));
  if (!t) return nullptr;
  t->size = size;
  t->entries = reinterpret_cast<struct mem_cgroup_threshold *>(t + 1);
  return t;
}

// Signals the thresholds crossed since the last check of @memcg's (memsw's) usage.
void __mem_cgroup_threshold(mem_cgroup *memcg, bool swap) {
  memcg1_events *ev = ev_of(memcg);
  rcu_read_guard g;
  mem_cgroup_threshold_ary *t =
      rcu_dereference(swap ? ev->memsw_thresholds.primary : ev->thresholds.primary);
  if (!t) return;
  unsigned long usage = mem_cgroup_usage(memcg, swap);
  // current_threshold is the last entry <= usage at the previous check: walk down over the
  // entries usage fell below, then up over those it reached.
  int i = READ_ONCE(t->current_threshold);
  for (; i >= 0 && t->entries[i].threshold > usage; i--) eventfd_signal(t->entries[i].eventfd);
  i++;
  for (; i < static_cast<int>(t->size) && t->entries[i].threshold <= usage; i++)
    eventfd_signal(t->entries[i].eventfd);
  WRITE_ONCE(t->current_threshold, i - 1);
}

}  // namespace

// The kernel's function and struct share the name mem_cgroup_threshold: both live in the
// namespace, the struct is named with an elaborated specifier below.
static void mem_cgroup_threshold(mem_cgroup *memcg) {
  for (; memcg; memcg = parent_mem_cgroup(memcg)) {
    __mem_cgroup_threshold(memcg, false);
    if (do_memsw_account()) __mem_cgroup_threshold(memcg, true);
  }
}

namespace {

bool memcg1_event_ratelimit(memcg1_events_percpu *pc, mem_cgroup_events_target target) {
  unsigned long val = pc->nr_page_events;
  unsigned long next = pc->targets[target];
  if (static_cast<long>(next - val) < 0) {
    pc->targets[target] = val + THRESHOLDS_EVENTS_TARGET;
    return true;
  }
  return false;
}

int __mem_cgroup_usage_register_event(mem_cgroup *memcg, eventfd_ctx *eventfd, const char *args,
                                      bool swap) {
  memcg1_events *ev = ev_of(memcg);
  unsigned long threshold;
  int ret = page_counter_memparse(args, "-1", &threshold);
  if (ret) return ret;

  mutex_lock(&ev->thresholds_lock);
  mem_cgroup_thresholds *thresholds = swap ? &ev->memsw_thresholds : &ev->thresholds;
  unsigned long usage = mem_cgroup_usage(memcg, swap);
  // A threshold crossed before this one is added is signalled first.
  if (thresholds->primary) __mem_cgroup_threshold(memcg, swap);
  unsigned int size = thresholds->primary ? thresholds->primary->size + 1 : 1;
  mem_cgroup_threshold_ary *n = alloc_thresholds(size);
  if (!n) {
    mutex_unlock(&ev->thresholds_lock);
    return -ENOMEM;
  }
  if (thresholds->primary)
    std::memcpy(n->entries, thresholds->primary->entries,
                (size - 1) * sizeof(struct mem_cgroup_threshold));
  n->entries[size - 1] = {eventfd, threshold};
  // Sorted by value (the kernel's sort() is not stable either: equal values keep no order).
  std::sort(n->entries, n->entries + size,
            [](const struct mem_cgroup_threshold &a, const struct mem_cgroup_threshold &b) {
              return a.threshold < b.threshold;
            });
  n->current_threshold = -1;
  for (unsigned int i = 0; i < size && n->entries[i].threshold <= usage; i++)
    n->current_threshold++;
  std::free(thresholds->spare);
  thresholds->spare = thresholds->primary;
  rcu_assign_pointer(thresholds->primary, n);
  // Nobody uses the old array any more once readers are gone.
  synchronize_rcu();
  mutex_unlock(&ev->thresholds_lock);
  return 0;
}

int mem_cgroup_usage_register_event(mem_cgroup *memcg, eventfd_ctx *eventfd, const char *args) {
  return __mem_cgroup_usage_register_event(memcg, eventfd, args, false);
}
int memsw_cgroup_usage_register_event(mem_cgroup *memcg, eventfd_ctx *eventfd,
                                      const char *args) {
  return __mem_cgroup_usage_register_event(memcg, eventfd, args, true);
}

void __mem_cgroup_usage_unregister_event(mem_cgroup *memcg, eventfd_ctx *eventfd, bool swap) {
  memcg1_events *ev = ev_of(memcg);
  mutex_lock(&ev->thresholds_lock);
  mem_cgroup_thresholds *thresholds = swap ? &ev->memsw_thresholds : &ev->thresholds;
  unsigned long usage = mem_cgroup_usage(memcg, swap);
  mem_cgroup_threshold_ary *primary = thresholds->primary;
  if (!primary) {
    mutex_unlock(&ev->thresholds_lock);
    return;
  }
  __mem_cgroup_threshold(memcg, swap);
  unsigned int size = 0, entries = 0;
  for (unsigned int i = 0; i < primary->size; i++) {
    if (primary->entries[i].eventfd != eventfd)
      size++;
    else
      entries++;
  }
  if (!entries) {
    mutex_unlock(&ev->thresholds_lock);
    return;
  }
  // The spare array has room for primary->size - 1 entries (it was the primary before the last
  // registration), enough once at least one entry goes.
  mem_cgroup_threshold_ary *n = thresholds->spare;
  if (!size) {
    std::free(n);
    n = nullptr;
  } else {
    n->size = size;
    n->current_threshold = -1;
    for (unsigned int i = 0, j = 0; i < primary->size; i++) {
      if (primary->entries[i].eventfd == eventfd) continue;
      n->entries[j] = primary->entries[i];
      if (n->entries[j].threshold <= usage) n->current_threshold++;
      j++;
    }
  }
  thresholds->spare = primary;
  rcu_assign_pointer(thresholds->primary, n);
  synchronize_rcu();
  if (!n) {
    std::free(thresholds->spare);
    thresholds->spare = nullptr;
  }
  mutex_unlock(&ev->thresholds_lock);
}

void mem_cgroup_usage_unregister_event(mem_cgroup *memcg, eventfd_ctx *eventfd) {
  __mem_cgroup_usage_unregister_event(memcg, eventfd, false);
}
void memsw_cgroup_usage_unregister_event(mem_cgroup *memcg, eventfd_ctx *eventfd) {
  __mem_cgroup_usage_unregister_event(memcg, eventfd, true);
}

int mem_cgroup_oom_register_event(mem_cgroup *memcg, eventfd_ctx *eventfd, const char *) {
  memcg1_events *ev = ev_of(memcg);
  auto *event = new (std::nothrow) mem_cgroup_eventfd_list;
  if (!event) return -ENOMEM;
  spin_lock(&memcg_oom_lock);
  event->eventfd = eventfd;
  list_add(&event->list, &ev->oom_notify);
  // Already under OOM: signalled at once.
  if (ev->under_oom) eventfd_signal(eventfd);
  spin_unlock(&memcg_oom_lock);
  return 0;
}

void mem_cgroup_oom_unregister_event(mem_cgroup *memcg, eventfd_ctx *eventfd) {
  memcg1_events *ev = ev_of(memcg);
  spin_lock(&memcg_oom_lock);
  for (list_head *p = ev->oom_notify.next, *n = p->next; p != &ev->oom_notify;
       p = n, n = p->next) {
    auto *e = list_entry(p, mem_cgroup_eventfd_list, list);
    if (e->eventfd == eventfd) {
      list_del(&e->list);
      delete e;
    }
  }
  spin_unlock(&memcg_oom_lock);
}

// Every memcg of @memcg's subtree (@memcg first), with a reference held for the body.
template <typename F>
void for_each_mem_cgroup_tree(mem_cgroup *memcg, F fn) {
  for (mem_cgroup *iter = mem_cgroup_iter(memcg, nullptr, nullptr); iter;
       iter = mem_cgroup_iter(memcg, iter, nullptr)) {
    if (!fn(iter)) {
      mem_cgroup_iter_break(memcg, iter);
      return;
    }
  }
}

void mem_cgroup_oom_notify(mem_cgroup *memcg) {
  for_each_mem_cgroup_tree(memcg, [](mem_cgroup *iter) {
    memcg1_events *ev = ev_of(iter);
    spin_lock(&memcg_oom_lock);
    for (list_head *p = ev->oom_notify.next; p != &ev->oom_notify; p = p->next)
      eventfd_signal(list_entry(p, mem_cgroup_eventfd_list, list)->eventfd);
    spin_unlock(&memcg_oom_lock);
    return true;
  });
}

// The OOM lock of a subtree: taken only if no memcg of it holds it (a concurrent OOM).
bool mem_cgroup_oom_trylock(mem_cgroup *memcg) {
  mem_cgroup *failed = nullptr;
  spin_lock(&memcg_oom_lock);
  for_each_mem_cgroup_tree(memcg, [&](mem_cgroup *iter) {
    lockdep_assert_held(&memcg_oom_lock);  // the walk's callbacks run under it
    if (ev_of(iter)->oom_lock) {
      failed = iter;
      return false;
    }
    ev_of(iter)->oom_lock = true;
    return true;
  });
  if (failed) {
    // Undo up to the one that failed.
    for_each_mem_cgroup_tree(memcg, [&](mem_cgroup *iter) {
      lockdep_assert_held(&memcg_oom_lock);
      if (iter == failed) return false;
      ev_of(iter)->oom_lock = false;
      return true;
    });
  }
  spin_unlock(&memcg_oom_lock);
  return !failed;
}

void mem_cgroup_oom_unlock(mem_cgroup *memcg) {
  spin_lock(&memcg_oom_lock);
  for_each_mem_cgroup_tree(memcg, [](mem_cgroup *iter) {
    lockdep_assert_held(&memcg_oom_lock);
    ev_of(iter)->oom_lock = false;
    return true;
  });
  spin_unlock(&memcg_oom_lock);
}

void mem_cgroup_mark_under_oom(mem_cgroup *memcg) {
  spin_lock(&memcg_oom_lock);
  for_each_mem_cgroup_tree(memcg, [](mem_cgroup *iter) {
    lockdep_assert_held(&memcg_oom_lock);
    memcg1_events *ev = ev_of(iter);
    WRITE_ONCE(ev->under_oom, ev->under_oom + 1);  // memory.oom_control reads it locklessly
    return true;
  });
  spin_unlock(&memcg_oom_lock);
}

void mem_cgroup_unmark_under_oom(mem_cgroup *memcg) {
  spin_lock(&memcg_oom_lock);
  // A child created after the marking has nothing to undo.
  for_each_mem_cgroup_tree(memcg, [](mem_cgroup *iter) {
    lockdep_assert_held(&memcg_oom_lock);
    memcg1_events *ev = ev_of(iter);
    if (ev->under_oom > 0) WRITE_ONCE(ev->under_oom, ev->under_oom - 1);
    return true;
  });
  spin_unlock(&memcg_oom_lock);
}

// The registration's teardown, from a worker (it may sleep): unhook from the eventfd,
// unregister, one last signal, drop the references.
void memcg_event_remove(work_struct *work) {
  mem_cgroup_event *event = container_of(work, mem_cgroup_event, remove);
  mem_cgroup *memcg = event->memcg;
  eventfd_remove_hup_hook(event->eventfd, &event->wait);
  event->unregister_event(memcg, event->eventfd);
  // Userspace learns that the event is gone.
  eventfd_signal(event->eventfd);
  eventfd_ctx_put(event->eventfd);
  delete event;
  css_put(&memcg->css);
}

// The eventfd was closed (under its wait-queue lock): detach and tear down from a worker,
// unless cgroup removal already did.
void memcg_event_wake(eventfd_hup_hook *hook) {
  mem_cgroup_event *event = container_of(hook, mem_cgroup_event, wait);
  memcg1_events *ev = ev_of(event->memcg);
  spin_lock(&ev->event_list_lock);
  if (!list_empty(&event->list)) {
    list_del_init(&event->list);
    schedule_work(&event->remove);
  }
  spin_unlock(&ev->event_list_lock);
}

// simple_strtoul(buf, &endp, 10): digits only, no sign, no overflow check.
unsigned long simple_strtoul10(const char *s, const char **endp) {
  unsigned long v = 0;
  while (*s >= '0' && *s <= '9') v = v * 10 + static_cast<unsigned long>(*s++ - '0');
  *endp = s;
  return v;
}

}  // namespace

bool memcg1_alloc_events(mem_cgroup *memcg) {
  auto *ev = new (std::nothrow) memcg1_events;
  if (!ev) return false;
  ev->events_percpu = alloc_percpu<memcg1_events_percpu>();
  if (!ev->events_percpu) {
    delete ev;
    return false;
  }
  INIT_LIST_HEAD(&ev->oom_notify);
  INIT_LIST_HEAD(&ev->event_list);
  memcg->v1_events = ev;
  return true;
}

void memcg1_free_events(mem_cgroup *memcg) {
  memcg1_events *ev = memcg->v1_events;
  if (!ev) return;
  // Every registration held a css reference: none is left.
  WARN_ON(!list_empty(&ev->oom_notify) || !list_empty(&ev->event_list));
  std::free(ev->thresholds.primary);
  std::free(ev->thresholds.spare);
  std::free(ev->memsw_thresholds.primary);
  std::free(ev->memsw_thresholds.spare);
  free_percpu(ev->events_percpu);
  delete ev;
  memcg->v1_events = nullptr;
}

void memcg1_css_offline(mem_cgroup *memcg) {
  memcg1_events *ev = ev_of(memcg);
  if (!ev) return;
  // Unregister and notify after the directory is gone, so that user space cannot race it.
  spin_lock_irq(&ev->event_list_lock);
  for (list_head *p = ev->event_list.next, *n = p->next; p != &ev->event_list;
       p = n, n = p->next) {
    mem_cgroup_event *event = list_entry(p, mem_cgroup_event, list);
    list_del_init(&event->list);
    schedule_work(&event->remove);
  }
  spin_unlock_irq(&ev->event_list_lock);
}

void __memcg1_check_events(mem_cgroup *memcg, unsigned long nr_pages) {
  memcg1_events *ev = ev_of(memcg);
  preempt_disable();
  memcg1_events_percpu *pc = this_cpu_ptr(ev->events_percpu);
  pc->nr_page_events += nr_pages;
  bool check = memcg1_event_ratelimit(pc, MEM_CGROUP_TARGET_THRESH);
  preempt_enable();
  // Emulation: the kernel checks with interrupts off; the thresholds are read under RCU either
  // way, and a racing check on another CPU signals the same crossing at most once per array
  // update, as in the kernel.
  if (check) mem_cgroup_threshold(memcg);
}

bool memcg1_oom_prepare(mem_cgroup *memcg, bool *locked) {
  *locked = false;
  if (!ev_of(memcg)) return true;
  // The charge path may hold locks here: no sleeping. A user fault remembers the OOM and waits
  // at the end of the fault, with every lock dropped (mem_cgroup_oom_synchronize()); any other
  // charge just fails.
  if (READ_ONCE(memcg->oom_kill_disable)) {
    if (current->in_user_fault) {
      css_get(&memcg->css);
      current->memcg_in_oom = memcg;
    }
    return false;
  }
  mem_cgroup_mark_under_oom(memcg);
  *locked = mem_cgroup_oom_trylock(memcg);
  if (*locked) mem_cgroup_oom_notify(memcg);
  mem_cgroup_unmark_under_oom(memcg);
  return true;
}

void memcg1_oom_finish(mem_cgroup *memcg, bool locked) {
  if (locked) mem_cgroup_oom_unlock(memcg);
}

namespace {
// A task waiting out a v1 OOM of @memcg.
struct oom_wait_info {
  mem_cgroup *memcg = nullptr;
  task_struct *task = nullptr;
  list_head entry;  // on memcg_oom_waitq while queued (self-linked once woken)
};

// memcg_oom_waitq.
// Emulation: the kernel's wait queue with a custom wake function (memcg_oom_wake_function) is a
//   list of oom_wait_info under its own spinlock, woken the same way: every waiter whose memcg
//   is an ancestor or a descendant of the recovering memcg is dequeued and woken (the
//   autoremove wake); the others stay.
DEFINE_SPINLOCK(memcg_oom_waitq_lock);
list_head memcg_oom_waitq GUARDED_BY(memcg_oom_waitq_lock);
}  // namespace

void memcg1_oom_recover(mem_cgroup *memcg) {
  if (!memcg || !ev_of(memcg)) return;
  // The lockless under_oom test: an OOM marks under_oom before it notifies, so a recovery that
  // user space makes in answer to the notification sees it.
  if (!under_oom_once(ev_of(memcg))) return;
  unsigned long flags;
  spin_lock_irqsave(&memcg_oom_waitq_lock, flags);
  for (list_head *p = memcg_oom_waitq.next, *n = p->next; p != &memcg_oom_waitq;
       p = n, n = p->next) {
    oom_wait_info *w = list_entry(p, oom_wait_info, entry);
    if (!mem_cgroup_is_descendant(memcg, w->memcg) && !mem_cgroup_is_descendant(w->memcg, memcg))
      continue;
    // The waiter's entry lives on its stack: it is off the list before the waiter can run.
    list_del_init(&w->entry);
    wake_up_state(w->task, TASK_NORMAL);
  }
  spin_unlock_irqrestore(&memcg_oom_waitq_lock, flags);
}

bool mem_cgroup_oom_synchronize(bool handle) {
  mem_cgroup *memcg = current->memcg_in_oom;
  // Not a memcg OOM (a global one): nothing to do here.
  if (!memcg) return false;
  if (handle) {
    oom_wait_info owait;
    owait.memcg = memcg;
    owait.task = current;
    // prepare_to_wait(): queued, then the state set, so that a recovery from now on wakes us.
    unsigned long flags;
    spin_lock_irqsave(&memcg_oom_waitq_lock, flags);
    list_add(&owait.entry, &memcg_oom_waitq);
    set_current_state(TASK_KILLABLE);
    spin_unlock_irqrestore(&memcg_oom_waitq_lock, flags);

    mem_cgroup_mark_under_oom(memcg);
    bool locked = mem_cgroup_oom_trylock(memcg);
    if (locked) mem_cgroup_oom_notify(memcg);

    emu::set_wait_reason("memcg_oom_waitq");
    schedule();  // one sleep: woken by a recovery or SIGKILL, the fault is retried either way
    mem_cgroup_unmark_under_oom(memcg);
    // finish_wait()
    __set_current_state(TASK_RUNNING);
    emu::set_wait_reason("running");
    spin_lock_irqsave(&memcg_oom_waitq_lock, flags);
    if (!list_empty(&owait.entry)) list_del_init(&owait.entry);
    spin_unlock_irqrestore(&memcg_oom_waitq_lock, flags);

    if (locked) mem_cgroup_oom_unlock(memcg);
  }
  current->memcg_in_oom = nullptr;
  css_put(&memcg->css);
  return true;
}

bool memcg1_under_oom(mem_cgroup *memcg) {
  memcg1_events *ev = ev_of(memcg);
  return ev && under_oom_once(ev) > 0;
}

ssize_t memcg_write_event_control(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  cgroup_subsys_state *css = of_css(of);
  mem_cgroup *memcg = mem_cgroup_from_css(css);
  memcg1_events *ev = ev_of(memcg);
  if (!ev) return -EINVAL;

  const char *p = strstrip(buf);
  const char *endp;
  // unsigned int, as the kernel's: larger numbers wrap.
  auto efd = static_cast<unsigned int>(simple_strtoul10(p, &endp));
  if (*endp != ' ') return -EINVAL;
  p = endp + 1;
  auto cfd = static_cast<unsigned int>(simple_strtoul10(p, &endp));
  if (*endp == '\0')
    p = endp;
  else if (*endp == ' ')
    p = endp + 1;
  else
    return -EINVAL;

  // fdget() of both; an unknown efd fails first, an unknown cfd once the eventfd is taken.
  fd_entry efile, cfile;
  if (efd > INT_MAX || fdget(static_cast<int>(efd), &efile)) return -EBADF;
  bool have_cfile = cfd <= INT_MAX && fdget(static_cast<int>(cfd), &cfile) == 0;

  auto *event = new (std::nothrow) mem_cgroup_event;
  if (!event) return -ENOMEM;
  event->memcg = memcg;
  INIT_LIST_HEAD(&event->list);
  event->wait.func = memcg_event_wake;
  INIT_WORK(&event->remove, memcg_event_remove);

  int ret;
  cgroup_subsys_state *cfile_css = nullptr;
  const char *name;
  kernfs_node *ckn;
  // eventfd_ctx_fileget(): only an eventfd.
  if (!efile.efd) {
    ret = -EINVAL;
    goto out_kfree;
  }
  event->eventfd = efile.efd;
  eventfd_ctx_get(event->eventfd);
  if (!have_cfile) {
    ret = -EBADF;
    goto out_put_eventfd;
  }
  // The control file must be a regular file of the cgroup hierarchy (file names cannot change,
  // so the name is read without locks).
  if (!cfile.kf || kernfs_type(cfile.kf->of.kn) != KERNFS_FILE ||
      cfile.kf->of.kn->root != css->cgroup->root->kf_root) {
    ret = -EINVAL;
    goto out_put_eventfd;
  }
  ckn = cfile.kf->of.kn;
  name = ckn->name.c_str();
  if (!std::strcmp(name, "memory.usage_in_bytes")) {
    event->register_event = mem_cgroup_usage_register_event;
    event->unregister_event = mem_cgroup_usage_unregister_event;
  } else if (!std::strcmp(name, "memory.oom_control")) {
    event->register_event = mem_cgroup_oom_register_event;
    event->unregister_event = mem_cgroup_oom_unregister_event;
  } else if (!std::strcmp(name, "memory.pressure_level")) {
    event->register_event = vmpressure_register_event;
    event->unregister_event = vmpressure_unregister_event;
  } else if (!std::strcmp(name, "memory.memsw.usage_in_bytes")) {
    event->register_event = memsw_cgroup_usage_register_event;
    event->unregister_event = memsw_cgroup_usage_unregister_event;
  } else {
    ret = -EINVAL;
    goto out_put_eventfd;
  }
  // The file must belong to this css; removal tears registrations down asynchronously, so the
  // registration holds a reference on the css (css_tryget_online_from_dir).
  {
    auto *ccg = static_cast<cgroup *>(ckn->parent->priv);
    ret = -EINVAL;
    if (!ccg || !css_tryget_online(ccg->subsys_css)) goto out_put_eventfd;
    cfile_css = ccg->subsys_css;
  }
  if (cfile_css != css) goto out_put_css;

  ret = event->register_event(memcg, event->eventfd, p);
  if (ret) goto out_put_css;

  eventfd_add_hup_hook(event->eventfd, &event->wait);
  spin_lock_irq(&ev->event_list_lock);
  list_add(&event->list, &ev->event_list);
  spin_unlock_irq(&ev->event_list_lock);
  return static_cast<ssize_t>(nbytes);

out_put_css:
  css_put(cfile_css);
out_put_eventfd:
  eventfd_ctx_put(event->eventfd);
out_kfree:
  delete event;
  return ret;
}

}  // namespace umemcg
