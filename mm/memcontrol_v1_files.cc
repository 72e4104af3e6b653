// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_v1_files.cc: the cgroup v1 memory control files (mem_cgroup_legacy_files[]).
//
// The page-counter files share two handlers keyed by cftype::private_ (MEMFILE_PRIVATE(type,
// attribute)): mem_cgroup_read_u64 (usage, limit, max usage, failcnt in bytes or counts) and
// mem_cgroup_write (limits: "-1" is unlimited; -EBUSY when usage cannot be reclaimed below a
// new limit), plus mem_cgroup_reset for max_usage_in_bytes and failcnt (any write resets).
//
// Mirrors: mm/memcontrol-v1.c (Linux 6.19): MEMFILE_PRIVATE, enum res_type, memcg_max_mutex,
//   mem_cgroup_resize_max, mem_cgroup_force_empty(_write), mem_cgroup_hierarchy_{read,write},
//   mem_cgroup_read_u64, mem_cgroup_dummy_seq_show, memcg_update_tcp_max, mem_cgroup_write,
//   mem_cgroup_reset, mem_cgroup_swappiness_{read,write}, mem_cgroup_oom_control_{read,write},
//   mem_cgroup_slab_show, mem_cgroup_move_charge_{read,write}, mem_cgroup_legacy_files[],
//   memsw_files[]
// Emulation: see memcontrol_files.h (memsw rows in the same table).
// Emulation: memory.soft_limit_in_bytes stores and reads back its value; soft-limit reclaim
//   (global reclaim picking the largest soft-limit excess) is not modelled.
// memory.oom_control: oom_kill_disable 1 makes a task whose page fault meets an OOM wait (under_oom
//   1) until an uncharge, a limit raise or oom_kill_disable 0 (mm/memcontrol_v1_events.h).
// cgroup.event_control registers eventfds against memory.usage_in_bytes,
//   memory.memsw.usage_in_bytes, memory.oom_control and memory.pressure_level
//   (mm/memcontrol_v1_events.h); reading memory.pressure_level fails with -EINVAL, as in the
//   kernel.
// memory.move_charge_at_immigrate: charge moving is gone from the kernel (6.19): the file reads
//   0 and takes only 0 (-EINVAL for anything else), with a deprecation warning at the first
//   write; cgroup.procs / tasks never move charges.
// Emulation: pr_warn_once() is a line on stderr, once per process (there is no kernel log).
// Emulation: writing kmem.tcp.limit_in_bytes sets the counter's max; there is no v1 socket
//   accounting to activate (tcpmem_active).
// Emulation: force_empty's lru_add_drain_all() is not modelled (no per-CPU LRU add batches).
#include <atomic>
#include <cstdio>

#include "mm/memcontrol_files.h"
#include "mm/memcontrol_stat.h"
#include "mm/memcontrol_internal.h"
#include "mm/memcontrol_v1_events.h"
#include "shim/errno.h"
#include "shim/mutex.h"

namespace umemcg {

namespace {

enum res_type { _MEM, _MEMSWAP, _KMEM, _TCP };
enum { RES_USAGE, RES_LIMIT, RES_MAX_USAGE, RES_FAILCNT, RES_SOFT_LIMIT };

constexpr unsigned long MEMFILE_PRIVATE(unsigned long type, unsigned long attr) {
  return type << 16 | attr;
}
constexpr unsigned long MEMFILE_TYPE(unsigned long val) { return val >> 16 & 0xffff; }
constexpr unsigned long MEMFILE_ATTR(unsigned long val) { return val & 0xffff; }

// Serialises limit changes so that memory.limit <= memsw.limit holds across both files.
DEFINE_MUTEX(memcg_max_mutex);

page_counter *memfile_counter(mem_cgroup *memcg, unsigned long priv) {
  switch (MEMFILE_TYPE(priv)) {
    case _MEMSWAP:
      return &memcg->memsw;
    case _KMEM:
      return &memcg->kmem;
    case _TCP:
      return &memcg->tcpmem;
    default:
      return &memcg->memory;
  }
}

/*
 * Sets memory's (or memsw's) max, reclaiming until usage fits: -EINTR on a pending signal,
 * -EINVAL if the new value would break memory.max <= memsw.max, -EBUSY once a drain of the
 * stocks and then a reclaim pass (one page at a time) makes no progress.
 */
int mem_cgroup_resize_max(mem_cgroup *memcg, unsigned long max, bool memsw) {
  bool enlarge = false;
  bool drained = false;
  int ret;
  page_counter *counter = memsw ? &memcg->memsw : &memcg->memory;

  for (;;) {
    if (signal_pending(current)) {
      ret = -EINTR;
      break;
    }
    mutex_lock(&memcg_max_mutex);
    bool limits_invariant =
        memsw ? max >= READ_ONCE(memcg->memory.max) : max <= READ_ONCE(memcg->memsw.max);
    if (!limits_invariant) {
      mutex_unlock(&memcg_max_mutex);
      ret = -EINVAL;
      break;
    }
    if (max > counter->max) enlarge = true;
    ret = page_counter_set_max(counter, max);
    mutex_unlock(&memcg_max_mutex);

    if (!ret) break;
    if (!drained) {
      drain_all_stock(memcg);
      drained = true;
      continue;
    }
    // memsw: reclaim without swapping (swapping does not lower memory + swap).
    if (!try_to_free_mem_cgroup_pages(memcg, 1, GFP_KERNEL, memsw ? 0 : MEMCG_RECLAIM_MAY_SWAP,
                                      nullptr)) {
      ret = -EBUSY;
      break;
    }
  }
  // A raised limit may end a v1 OOM wait.
  if (!ret && enlarge) memcg1_oom_recover(memcg);
  return ret;
}

// Reclaims as much of @memcg as it can: 16 passes without progress end it.
int mem_cgroup_force_empty(mem_cgroup *memcg) {
  int nr_retries = MAX_RECLAIM_RETRIES;

  drain_all_stock(memcg);
  while (nr_retries && page_counter_read(&memcg->memory)) {
    if (signal_pending(current)) return -EINTR;
    if (!try_to_free_mem_cgroup_pages(memcg, 1, GFP_KERNEL, MEMCG_RECLAIM_MAY_SWAP, nullptr))
      nr_retries--;
  }
  return 0;
}

ssize_t mem_cgroup_force_empty_write(kernfs_open_file *of, char *, size_t nbytes, off_t) {
  mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));

  if (mem_cgroup_is_root(memcg)) return -EINVAL;
  int ret = mem_cgroup_force_empty(memcg);
  return ret ? ret : static_cast<ssize_t>(nbytes);
}

u64 mem_cgroup_hierarchy_read(cgroup_subsys_state *, const cftype *) { return 1; }

// Non-hierarchical mode is gone: only 1 is accepted.
int mem_cgroup_hierarchy_write(cgroup_subsys_state *, const cftype *, u64 val) {
  return val == 1 ? 0 : -EINVAL;
}

u64 mem_cgroup_read_u64(cgroup_subsys_state *css, const cftype *cft) {
  mem_cgroup *memcg = mem_cgroup_from_css(css);
  page_counter *counter = memfile_counter(memcg, cft->private_);

  switch (MEMFILE_ATTR(cft->private_)) {
    case RES_USAGE:
      if (counter == &memcg->memory)
        return static_cast<u64>(mem_cgroup_usage(memcg, false)) * PAGE_SIZE;
      if (counter == &memcg->memsw)
        return static_cast<u64>(mem_cgroup_usage(memcg, true)) * PAGE_SIZE;
      return static_cast<u64>(page_counter_read(counter)) * PAGE_SIZE;
    case RES_LIMIT:
      return static_cast<u64>(READ_ONCE(counter->max)) * PAGE_SIZE;
    case RES_MAX_USAGE:
      return static_cast<u64>(READ_ONCE(counter->watermark)) * PAGE_SIZE;
    case RES_FAILCNT:
      return READ_ONCE(counter->failcnt);
    case RES_SOFT_LIMIT:
      return static_cast<u64>(READ_ONCE(memcg->soft_limit)) * PAGE_SIZE;
    default:
      return 0;
  }
}

// A read handler only so that the file is readable; reading it fails.
int mem_cgroup_dummy_seq_show(seq_file *, void *) { return -EINVAL; }

int memcg_update_tcp_max(mem_cgroup *memcg, unsigned long max) {
  mutex_lock(&memcg_max_mutex);
  int ret = page_counter_set_max(&memcg->tcpmem, max);
  mutex_unlock(&memcg_max_mutex);
  return ret;
}

ssize_t mem_cgroup_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));
  unsigned long priv = of_cft(of)->private_;
  unsigned long nr_pages;

  buf = strstrip(buf);
  int ret = page_counter_memparse(buf, "-1", &nr_pages);
  if (ret) return ret;

  switch (MEMFILE_ATTR(priv)) {
    case RES_LIMIT:
      if (mem_cgroup_is_root(memcg)) {  // the root has no limit
        ret = -EINVAL;
        break;
      }
      switch (MEMFILE_TYPE(priv)) {
        case _MEM:
          ret = mem_cgroup_resize_max(memcg, nr_pages, false);
          break;
        case _MEMSWAP:
          ret = mem_cgroup_resize_max(memcg, nr_pages, true);
          break;
        case _KMEM:
          ret = 0;  // deprecated: accepted and ignored
          break;
        case _TCP:
          ret = memcg_update_tcp_max(memcg, nr_pages);
          break;
        default:
          break;
      }
      break;
    case RES_SOFT_LIMIT:
      WRITE_ONCE(memcg->soft_limit, nr_pages);
      ret = 0;
      break;
    default:
      break;
  }
  return ret ? ret : static_cast<ssize_t>(nbytes);
}

// max_usage_in_bytes: the watermark restarts from the current usage; failcnt: back to 0. The
// content written is ignored.
ssize_t mem_cgroup_reset(kernfs_open_file *of, char *, size_t nbytes, off_t) {
  mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));
  unsigned long priv = of_cft(of)->private_;
  page_counter *counter = memfile_counter(memcg, priv);

  switch (MEMFILE_ATTR(priv)) {
    case RES_MAX_USAGE:
      page_counter_reset_watermark(counter);
      break;
    case RES_FAILCNT:
      WRITE_ONCE(counter->failcnt, 0UL);
      break;
    default:
      break;
  }
  return static_cast<ssize_t>(nbytes);
}

u64 mem_cgroup_swappiness_read(cgroup_subsys_state *css, const cftype *) {
  return static_cast<u64>(mem_cgroup_swappiness(mem_cgroup_from_css(css)));
}

// 0..200; the root's file is the global vm.swappiness.
int mem_cgroup_swappiness_write(cgroup_subsys_state *css, const cftype *, u64 val) {
  mem_cgroup *memcg = mem_cgroup_from_css(css);

  if (val > MAX_SWAPPINESS) return -EINVAL;
  if (!mem_cgroup_is_root(memcg))
    WRITE_ONCE(memcg->swappiness, static_cast<int>(val));
  else
    WRITE_ONCE(vm_swappiness, static_cast<int>(val));
  return 0;
}

int mem_cgroup_oom_control_read(seq_file *sf, void *) {
  mem_cgroup *memcg = mem_cgroup_from_css(seq_css(sf));

  seq_printf(sf, "oom_kill_disable %d\n", READ_ONCE(memcg->oom_kill_disable) ? 1 : 0);
  seq_printf(sf, "under_oom %d\n", memcg1_under_oom(memcg) ? 1 : 0);
  seq_printf(sf, "oom_kill %lu\n",
             static_cast<unsigned long>(atomic_long_read(&memcg->memory_events[MEMCG_OOM_KILL])));
  return 0;
}

std::atomic<bool> oom_control_warned{false};

// Only 0 and 1, and not on the root; 0 wakes the tasks waiting out an OOM (the killer runs
// when they retry). The first write of any value warns that the file is deprecated.
int mem_cgroup_oom_control_write(cgroup_subsys_state *css, const cftype *, u64 val) {
  mem_cgroup *memcg = mem_cgroup_from_css(css);

  if (!oom_control_warned.exchange(true, std::memory_order_relaxed))
    std::fprintf(stderr,
                 "oom_control is deprecated and will be removed. Please report your usecase to "
                 "linux-mm@kvack.org if you depend on this functionality.\n");
  if (mem_cgroup_is_root(memcg) || !(val == 0 || val == 1)) return -EINVAL;
  WRITE_ONCE(memcg->oom_kill_disable, val == 1);
  if (!val) memcg1_oom_recover(memcg);
  return 0;
}

// Deprecated: always empty.
int mem_cgroup_slab_show(seq_file *, void *) { return 0; }

// Charge moving was removed: nothing is ever moved, so the file reads 0.
u64 mem_cgroup_move_charge_read(cgroup_subsys_state *, const cftype *) { return 0; }

std::atomic<bool> move_charge_warned{false};

// Only 0 (no moving) is accepted; the first write of any value warns that the file is
// deprecated.
int mem_cgroup_move_charge_write(cgroup_subsys_state *, const cftype *, u64 val) {
  if (!move_charge_warned.exchange(true, std::memory_order_relaxed))
    std::fprintf(stderr,
                 "Cgroup memory moving (move_charge_at_immigrate) is deprecated. Please report "
                 "your usecase to linux-mm@kvack.org if you depend on this functionality.\n");
  return val != 0 ? -EINVAL : 0;
}

}  // namespace

// Designated initialisers follow cftype's member order (kernel/cftype.h).
const cftype mem_cgroup_legacy_files[] = {
    {.name = "usage_in_bytes",
     .private_ = MEMFILE_PRIVATE(_MEM, RES_USAGE),
     .read_u64 = mem_cgroup_read_u64},
    {.name = "max_usage_in_bytes",
     .private_ = MEMFILE_PRIVATE(_MEM, RES_MAX_USAGE),
     .read_u64 = mem_cgroup_read_u64,
     .write = mem_cgroup_reset},
    {.name = "limit_in_bytes",
     .private_ = MEMFILE_PRIVATE(_MEM, RES_LIMIT),
     .read_u64 = mem_cgroup_read_u64,
     .write = mem_cgroup_write},
    {.name = "soft_limit_in_bytes",
     .private_ = MEMFILE_PRIVATE(_MEM, RES_SOFT_LIMIT),
     .read_u64 = mem_cgroup_read_u64,
     .write = mem_cgroup_write},
    {.name = "failcnt",
     .private_ = MEMFILE_PRIVATE(_MEM, RES_FAILCNT),
     .read_u64 = mem_cgroup_read_u64,
     .write = mem_cgroup_reset},
    {.name = "stat", .seq_show = memcg1_stat_show},
    {.name = "force_empty", .write = mem_cgroup_force_empty_write},
    {.name = "use_hierarchy",
     .read_u64 = mem_cgroup_hierarchy_read,
     .write_u64 = mem_cgroup_hierarchy_write},
    {.name = "cgroup.event_control",  // for compatibility: no "memory." prefix
     .flags = CFTYPE_NO_PREFIX | CFTYPE_WORLD_WRITABLE,
     .write = memcg_write_event_control},
    {.name = "swappiness",
     .read_u64 = mem_cgroup_swappiness_read,
     .write_u64 = mem_cgroup_swappiness_write},
    {.name = "move_charge_at_immigrate",
     .read_u64 = mem_cgroup_move_charge_read,
     .write_u64 = mem_cgroup_move_charge_write},
    {.name = "oom_control",
     .seq_show = mem_cgroup_oom_control_read,
     .write_u64 = mem_cgroup_oom_control_write},
    {.name = "pressure_level", .seq_show = mem_cgroup_dummy_seq_show},
    {.name = "numa_stat", .seq_show = memcg_numa_stat_show},
    {.name = "kmem.limit_in_bytes",
     .private_ = MEMFILE_PRIVATE(_KMEM, RES_LIMIT),
     .read_u64 = mem_cgroup_read_u64,
     .write = mem_cgroup_write},
    {.name = "kmem.usage_in_bytes",
     .private_ = MEMFILE_PRIVATE(_KMEM, RES_USAGE),
     .read_u64 = mem_cgroup_read_u64},
    {.name = "kmem.failcnt",
     .private_ = MEMFILE_PRIVATE(_KMEM, RES_FAILCNT),
     .read_u64 = mem_cgroup_read_u64,
     .write = mem_cgroup_reset},
    {.name = "kmem.max_usage_in_bytes",
     .private_ = MEMFILE_PRIVATE(_KMEM, RES_MAX_USAGE),
     .read_u64 = mem_cgroup_read_u64,
     .write = mem_cgroup_reset},
    {.name = "kmem.slabinfo", .seq_show = mem_cgroup_slab_show},
    {.name = "kmem.tcp.limit_in_bytes",
     .private_ = MEMFILE_PRIVATE(_TCP, RES_LIMIT),
     .read_u64 = mem_cgroup_read_u64,
     .write = mem_cgroup_write},
    {.name = "kmem.tcp.usage_in_bytes",
     .private_ = MEMFILE_PRIVATE(_TCP, RES_USAGE),
     .read_u64 = mem_cgroup_read_u64},
    {.name = "kmem.tcp.failcnt",
     .private_ = MEMFILE_PRIVATE(_TCP, RES_FAILCNT),
     .read_u64 = mem_cgroup_read_u64,
     .write = mem_cgroup_reset},
    {.name = "kmem.tcp.max_usage_in_bytes",
     .private_ = MEMFILE_PRIVATE(_TCP, RES_MAX_USAGE),
     .read_u64 = mem_cgroup_read_u64,
     .write = mem_cgroup_reset},
    // memsw_files[] (see the banner of memcontrol_files.h).
    {.name = "memsw.usage_in_bytes",
     .private_ = MEMFILE_PRIVATE(_MEMSWAP, RES_USAGE),
     .read_u64 = mem_cgroup_read_u64},
    {.name = "memsw.max_usage_in_bytes",
     .private_ = MEMFILE_PRIVATE(_MEMSWAP, RES_MAX_USAGE),
     .read_u64 = mem_cgroup_read_u64,
     .write = mem_cgroup_reset},
    {.name = "memsw.limit_in_bytes",
     .private_ = MEMFILE_PRIVATE(_MEMSWAP, RES_LIMIT),
     .read_u64 = mem_cgroup_read_u64,
     .write = mem_cgroup_write},
    {.name = "memsw.failcnt",
     .private_ = MEMFILE_PRIVATE(_MEMSWAP, RES_FAILCNT),
     .read_u64 = mem_cgroup_read_u64,
     .write = mem_cgroup_reset},
    {},  // terminate
};

}  // namespace umemcg
