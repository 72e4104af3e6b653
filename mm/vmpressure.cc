// SPDX-License-Identifier: GPL-2.0-only
// mm/vmpressure.cc: reclaim-efficiency pressure levels and their listeners (see vmpressure.h).
//
// Mirrors: mm/vmpressure.c (Linux 6.19)
// Lock order: sr_lock alone; events_lock (mutex) -> an eventfd's lock (eventfd_signal).
#include "mm/vmpressure.h"

#include <cstring>
#include <new>
#include <string>

#include "kernel/eventfd.h"
#include "mm/memcontrol.h"
#include "shim/errno.h"

namespace umemcg {

namespace {

constexpr unsigned int vmpressure_level_med = 60;
constexpr unsigned int vmpressure_level_critical = 95;
// ilog2(100 / 10): reclaim at this priority or below has scanned a tenth of the LRUs.
constexpr int vmpressure_level_critical_prio = 3;

enum vmpressure_levels {
  VMPRESSURE_LOW = 0,
  VMPRESSURE_MEDIUM,
  VMPRESSURE_CRITICAL,
  VMPRESSURE_NUM_LEVELS,
};

enum vmpressure_modes {
  VMPRESSURE_NO_PASSTHROUGH = 0,
  VMPRESSURE_HIERARCHY,
  VMPRESSURE_LOCAL,
  VMPRESSURE_NUM_MODES,
};

const char *const vmpressure_str_levels[] = {"low", "medium", "critical"};
const char *const vmpressure_str_modes[] = {"default", "hierarchy", "local"};

// strlen("critical") + strlen("hierarchy") + 2
constexpr size_t MAX_VMPRESSURE_ARGS_LEN = 8 + 9 + 2;

struct vmpressure_event {
  eventfd_ctx *efd = nullptr;
  vmpressure_levels level = VMPRESSURE_LOW;
  vmpressure_modes mode = VMPRESSURE_NO_PASSTHROUGH;
  list_head node;
};

struct vmpressure *work_to_vmpressure(work_struct *work) {
  return container_of(work, struct vmpressure, work);
}

struct vmpressure *vmpressure_parent(struct vmpressure *vmpr) {
  mem_cgroup *memcg = parent_mem_cgroup(vmpressure_to_memcg(vmpr));
  return memcg ? memcg_to_vmpressure(memcg) : nullptr;
}

vmpressure_levels vmpressure_level(unsigned long pressure) {
  if (pressure >= vmpressure_level_critical) return VMPRESSURE_CRITICAL;
  if (pressure >= vmpressure_level_med) return VMPRESSURE_MEDIUM;
  return VMPRESSURE_LOW;
}

vmpressure_levels vmpressure_calc_level(unsigned long scanned, unsigned long reclaimed) {
  unsigned long scale = scanned + reclaimed;
  unsigned long pressure = 0;
  // Reclaim can report more than it scanned (huge pages, slab): no pressure then.
  if (reclaimed < scanned) {
    // The share of scanned pages not reclaimed, in percent, computed over scanned + reclaimed
    // as the kernel does (the rounding is the kernel's).
    pressure = scale - (reclaimed * scale / scanned);
    pressure = pressure * 100 / scale;
  }
  return vmpressure_level(pressure);
}

// Signals @vmpr's listeners for @level. @ancestor: the window is a descendant's (local
// listeners skip it); @signalled: a listener lower in the walk was signalled (default-mode
// listeners skip it). Returns whether any listener was signalled.
bool vmpressure_event(struct vmpressure *vmpr, vmpressure_levels level, bool ancestor,
                      bool signalled) {
  bool ret = false;
  mutex_lock(&vmpr->events_lock);
  for (list_head *p = vmpr->events.next; p != &vmpr->events; p = p->next) {
    struct vmpressure_event *ev = list_entry(p, struct vmpressure_event, node);
    if (ancestor && ev->mode == VMPRESSURE_LOCAL) continue;
    if (signalled && ev->mode == VMPRESSURE_NO_PASSTHROUGH) continue;
    if (level < ev->level) continue;
    eventfd_signal(ev->efd);
    ret = true;
  }
  mutex_unlock(&vmpr->events_lock);
  return ret;
}

void vmpressure_work_fn(work_struct *work) {
  struct vmpressure *vmpr = work_to_vmpressure(work);
  spin_lock(&vmpr->sr_lock);
  // Several windows may have filled before the work ran: they are taken as one. A window
  // taken by an earlier execution leaves nothing.
  unsigned long scanned = vmpr->tree_scanned;
  if (!scanned) {
    spin_unlock(&vmpr->sr_lock);
    return;
  }
  unsigned long reclaimed = vmpr->tree_reclaimed;
  vmpr->tree_scanned = 0;
  vmpr->tree_reclaimed = 0;
  spin_unlock(&vmpr->sr_lock);

  vmpressure_levels level = vmpressure_calc_level(scanned, reclaimed);
  bool ancestor = false, signalled = false;
  // The walk up needs no references: css_free flushes this work before a memcg goes, and a
  // memcg pins its parent.
  do {
    if (vmpressure_event(vmpr, level, ancestor, signalled)) signalled = true;
    ancestor = true;
  } while ((vmpr = vmpressure_parent(vmpr)));
}

// strsep(&s, ","): the next field, or nullptr after the last one.
char *strsep_comma(char **s) {
  char *tok = *s;
  if (!tok) return nullptr;
  char *end = std::strchr(tok, ',');
  if (end) {
    *end = '\0';
    *s = end + 1;
  } else {
    *s = nullptr;
  }
  return tok;
}

// match_string(): the index of @s in @array, or -EINVAL.
template <size_t N>
int match_string(const char *const (&array)[N], const char *s) {
  for (size_t i = 0; i < N; i++)
    if (!std::strcmp(array[i], s)) return static_cast<int>(i);
  return -EINVAL;
}

}  // namespace

struct vmpressure *memcg_to_vmpressure(mem_cgroup *memcg) {
  if (!memcg) memcg = root_mem_cgroup;
  return &memcg->vmpressure;
}

mem_cgroup *vmpressure_to_memcg(struct vmpressure *vmpr) {
  return container_of(vmpr, mem_cgroup, vmpressure);
}

void vmpressure(gfp_t gfp, mem_cgroup *memcg, bool tree, unsigned long scanned,
                unsigned long reclaimed) {
  // See the banner: only the subtree's window is kept.
  if (!tree) return;
  struct vmpressure *vmpr = memcg_to_vmpressure(memcg);
  // Only reclaim on behalf of allocations that could use every kind of page: a GFP_NOIO
  // kernel allocation's reclaim says little about the memory user space sees.
  if (!(gfp & (__GFP_HIGHMEM | __GFP_MOVABLE | __GFP_IO | __GFP_FS))) return;
  // A pass that scanned nothing (everything isolated by others, or protected) says nothing
  // either.
  if (!scanned) return;
  spin_lock(&vmpr->sr_lock);
  scanned = vmpr->tree_scanned += scanned;
  vmpr->tree_reclaimed += reclaimed;
  spin_unlock(&vmpr->sr_lock);
  if (scanned < vmpressure_win) return;
  schedule_work(&vmpr->work);
}

void vmpressure_prio(gfp_t gfp, mem_cgroup *memcg, int prio) {
  // Priorities above the critical one mean reclaim still scans little of the LRUs.
  if (prio > vmpressure_level_critical_prio) return;
  // A full window of nothing reclaimed: critical.
  vmpressure(gfp, memcg, true, vmpressure_win, 0);
}

int vmpressure_register_event(mem_cgroup *memcg, eventfd_ctx *eventfd, const char *args) {
  struct vmpressure *vmpr = memcg_to_vmpressure(memcg);
  // kstrndup(args, MAX_VMPRESSURE_ARGS_LEN): longer arguments are cut there.
  std::string spec_orig(args, strnlen(args, MAX_VMPRESSURE_ARGS_LEN));
  char *spec = spec_orig.data();

  char *token = strsep_comma(&spec);
  int ret = match_string(vmpressure_str_levels, token);
  if (ret < 0) return ret;
  auto level = static_cast<vmpressure_levels>(ret);

  auto mode = VMPRESSURE_NO_PASSTHROUGH;
  token = strsep_comma(&spec);
  if (token) {
    ret = match_string(vmpressure_str_modes, token);
    if (ret < 0) return ret;
    mode = static_cast<vmpressure_modes>(ret);
  }

  auto *ev = new (std::nothrow) struct vmpressure_event;
  if (!ev) return -ENOMEM;
  ev->efd = eventfd;
  ev->level = level;
  ev->mode = mode;
  mutex_lock(&vmpr->events_lock);
  list_add(&ev->node, &vmpr->events);
  mutex_unlock(&vmpr->events_lock);
  return 0;
}

void vmpressure_unregister_event(mem_cgroup *memcg, eventfd_ctx *eventfd) {
  struct vmpressure *vmpr = memcg_to_vmpressure(memcg);
  mutex_lock(&vmpr->events_lock);
  for (list_head *p = vmpr->events.next; p != &vmpr->events; p = p->next) {
    struct vmpressure_event *ev = list_entry(p, struct vmpressure_event, node);
    if (ev->efd != eventfd) continue;
    list_del(&ev->node);
    delete ev;
    break;
  }
  mutex_unlock(&vmpr->events_lock);
}

void vmpressure_init(struct vmpressure *vmpr) {
  INIT_WORK(&vmpr->work, vmpressure_work_fn);
}

void vmpressure_cleanup(struct vmpressure *vmpr) {
  // The work item must not run once the memcg is freed.
  flush_work(&vmpr->work);
}

}  // namespace umemcg
