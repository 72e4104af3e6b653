// SPDX-License-Identifier: GPL-2.0-only
// mm/memcontrol_files.cc: the cgroup v2 memory control files (memory_files[]), memory.reclaim's
// parser and loop, and css_reset.
//
//   memory.current          usage in bytes
//   memory.min / .low       protection: page_counter_set_min/low (propagated), no reclaim
//   memory.high             set; then (unless O_NONBLOCK) drain once and reclaim toward it
//   memory.max              xchg; then (unless O_NONBLOCK) drain once, reclaim, then OOM-kill
//   memory.peak             global watermark, or the peak since this open file's last reset
//   memory.events[.local]   the 7 v2 memory events (hierarchical / local)
//   memory.oom.group        0/1 (kstrtoint, base 0)
//   memory.reclaim          proactive reclaim of a byte amount (also on the root)
//   memory.swap.*           current, high (plain set), max (xchg), peak, events
//
// Mirrors: mm/memcontrol.c (Linux 6.19): seq_puts_memcg_tunable, memory_current_read,
//   peak_show/peak_open/peak_release/peak_write, memory_{peak,min,low,high,max}_{show,write},
//   __memory_events_show, memory_events{,_local}_show, memory_oom_group_{show,write},
//   memory_reclaim, swap_{current_read,high_*,max_*,peak_*,events_show}, memory_files[],
//   swap_files[], mem_cgroup_css_reset; mm/vmscan.c: user_proactive_reclaim, vm_swappiness;
//   lib/parser.c: match_token/match_one for the "swappiness=%d" and "swappiness=max" tokens,
//   match_int
// Emulation: see memcontrol_files.h (one table with the swap rows, no zswap files).
// Emulation: memcg_wb_domain_size_changed() after a high/max write is not modelled (there is no
//   dirty-page writeback domain).
// Emulation: the per-open-file peak state is allocated by cftype::open and freed by
//   cftype::release (the kernel's cgroup core allocates it in its per-open context).
#include "mm/memcontrol_files.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstddef>
#include <cstring>
#include <new>

#include "mm/cmdline.h"
#include "mm/memcontrol_internal.h"
#include "mm/memcontrol_stat.h"
#include "mm/swap.h"
#include "shim/errno.h"

namespace umemcg {

int vm_swappiness = 60;

namespace {

mem_cgroup *mem_cgroup_from_seq(seq_file *m) { return mem_cgroup_from_css(seq_css(m)); }

// "max\n" for PAGE_COUNTER_MAX, else the value in bytes.
int seq_puts_memcg_tunable(seq_file *m, unsigned long value) {
  if (value == PAGE_COUNTER_MAX)
    seq_puts(m, "max\n");
  else
    seq_printf(m, "%llu\n", static_cast<unsigned long long>(value) * PAGE_SIZE);
  return 0;
}

// --- memory.current --------------------------------------------------------------------------

u64 memory_current_read(cgroup_subsys_state *css, const cftype *) {
  mem_cgroup *memcg = mem_cgroup_from_css(css);
  return static_cast<u64>(page_counter_read(&memcg->memory)) * PAGE_SIZE;
}

// --- memory.peak, memory.swap.peak -------------------------------------------------------------

cgroup_of_peak *of_peak(kernfs_open_file *of) { return static_cast<cgroup_of_peak *>(of->priv); }

/*
 * A file that never wrote reads the counter's global watermark; one that did reads the larger
 * of its own value (the usage at its last reset, raised by later resets through other files)
 * and the counter's local watermark (the peak since the most recent reset by any file).
 */
int peak_show(seq_file *sf, page_counter *pc) {
  cgroup_of_peak *ofp = of_peak(sf->of);
  u64 fd_peak = READ_ONCE(ofp->value), peak;

  if (fd_peak == OFP_PEAK_UNSET)
    peak = READ_ONCE(pc->watermark);
  else
    peak = std::max<u64>(fd_peak, READ_ONCE(pc->local_watermark));
  seq_printf(sf, "%llu\n", static_cast<unsigned long long>(peak * PAGE_SIZE));
  return 0;
}

int memory_peak_show(seq_file *sf, void *) {
  mem_cgroup *memcg = mem_cgroup_from_css(seq_css(sf));
  return peak_show(sf, &memcg->memory);
}

int peak_open(kernfs_open_file *of) {
  auto *ofp = new (std::nothrow) cgroup_of_peak;
  if (!ofp) return -ENOMEM;
  of->priv = ofp;
  return 0;
}

// The peak list of @swap's counter. Caller holds memcg->peaks_lock.
cgroup_of_peak **peak_list(mem_cgroup *memcg, bool swap) REQUIRES(memcg->peaks_lock) {
  return swap ? &memcg->swap_peaks : &memcg->memory_peaks;
}

void peak_release(kernfs_open_file *of) {
  mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));
  cgroup_of_peak *ofp = of_peak(of);

  if (!ofp) return;
  // A file that never wrote was never listed: no lock needed.
  if (ofp->value != OFP_PEAK_UNSET) {
    spin_lock(&memcg->peaks_lock);
    if (ofp->prev)
      ofp->prev->next = ofp->next;
    else  // the head of its counter's list
      *peak_list(memcg, memcg->swap_peaks == ofp) = ofp->next;
    if (ofp->next) ofp->next->prev = ofp->prev;
    spin_unlock(&memcg->peaks_lock);
  }
  delete ofp;
  of->priv = nullptr;
}

/*
 * Any write resets: the counter's local watermark restarts from the current usage, every other
 * listed file's value is raised to that usage (not to the old local peak), and this file joins
 * the list on its first write with the usage as its value. The content is ignored.
 */
ssize_t peak_write(kernfs_open_file *of, size_t nbytes, bool swap) {
  mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));
  cgroup_of_peak *ofp = of_peak(of);
  page_counter *pc = swap ? &memcg->swap : &memcg->memory;

  spin_lock(&memcg->peaks_lock);
  cgroup_of_peak **watchers = peak_list(memcg, swap);
  unsigned long usage = page_counter_read(pc);
  WRITE_ONCE(pc->local_watermark, usage);

  for (cgroup_of_peak *peer = *watchers; peer; peer = peer->next)
    if (usage > READ_ONCE(peer->value)) WRITE_ONCE(peer->value, usage);

  // The initial write registers the file.
  if (ofp->value == OFP_PEAK_UNSET) {
    ofp->prev = nullptr;
    ofp->next = *watchers;
    if (*watchers) (*watchers)->prev = ofp;
    *watchers = ofp;
  }
  WRITE_ONCE(ofp->value, usage);
  spin_unlock(&memcg->peaks_lock);
  return static_cast<ssize_t>(nbytes);
}

ssize_t memory_peak_write(kernfs_open_file *of, char *, size_t nbytes, off_t) {
  return peak_write(of, nbytes, false);
}

// --- memory.min, memory.low ----------------------------------------------------------------------
// Shaped alike on purpose, as swap.high's and swap.max's below: each mirrors its kernel handler.

int memory_min_show(seq_file *m, void *) {
  return seq_puts_memcg_tunable(m, READ_ONCE(mem_cgroup_from_seq(m)->memory.min));
}

ssize_t memory_min_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));
  unsigned long min;

  buf = strstrip(buf);
  int err = page_counter_memparse(buf, "max", &min);
  if (err) return err;
  page_counter_set_min(&memcg->memory, min);
  return static_cast<ssize_t>(nbytes);
}

int memory_low_show(seq_file *m, void *) {
  return seq_puts_memcg_tunable(m, READ_ONCE(mem_cgroup_from_seq(m)->memory.low));
}

ssize_t memory_low_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));
  unsigned long low;

  buf = strstrip(buf);
  int err = page_counter_memparse(buf, "max", &low);
  if (err) return err;
  page_counter_set_low(&memcg->memory, low);
  return static_cast<ssize_t>(nbytes);
}

// --- memory.high -------------------------------------------------------------------------------

int memory_high_show(seq_file *m, void *) {
  return seq_puts_memcg_tunable(m, READ_ONCE(mem_cgroup_from_seq(m)->memory.high));
}

/*
 * Sets high, then works usage down to it in the writer's context unless the file was opened
 * O_NONBLOCK: the first pass drains the per-CPU stocks, later passes reclaim the excess; 16
 * passes that reclaim nothing (after the first such) give up. A pending signal stops the loop.
 * Never OOM-kills, never raises an event, always succeeds.
 */
ssize_t memory_high_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));
  unsigned int nr_retries = MAX_RECLAIM_RETRIES;
  bool drained = false;
  unsigned long high;

  buf = strstrip(buf);
  int err = page_counter_memparse(buf, "max", &high);
  if (err) return err;

  page_counter_set_high(&memcg->memory, high);

  if (of->file_flags & KF_O_NONBLOCK) return static_cast<ssize_t>(nbytes);

  for (;;) {
    unsigned long nr_pages = page_counter_read(&memcg->memory);

    if (nr_pages <= high) break;
    if (signal_pending(current)) break;
    if (!drained) {
      drain_all_stock(memcg);
      drained = true;
      continue;
    }
    unsigned long reclaimed = try_to_free_mem_cgroup_pages(memcg, nr_pages - high, GFP_KERNEL,
                                                           MEMCG_RECLAIM_MAY_SWAP, nullptr);
    if (!reclaimed && !nr_retries--) break;
  }
  return static_cast<ssize_t>(nbytes);
}

// --- memory.max --------------------------------------------------------------------------------

int memory_max_show(seq_file *m, void *) {
  return seq_puts_memcg_tunable(m, READ_ONCE(mem_cgroup_from_seq(m)->memory.max));
}

/*
 * Exchanges max unconditionally (even below usage: no -EBUSY on v2), then, unless O_NONBLOCK,
 * enforces it in the writer's context: drain once, reclaim while the 16-pass budget for passes
 * without progress lasts, then raise MEMCG_OOM and run the OOM killer; stop when usage fits,
 * a signal is pending, or the killer finds nothing to kill. Always succeeds.
 */
ssize_t memory_max_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));
  unsigned int nr_reclaims = MAX_RECLAIM_RETRIES;
  bool drained = false;
  unsigned long max;

  buf = strstrip(buf);
  int err = page_counter_memparse(buf, "max", &max);
  if (err) return err;

  // Pairs with page_counter_try_charge(), which adds to usage before it reads max (the xchg is
  // the kernel's full barrier; a charger that read the old max is reclaimed below).
  std::atomic_ref<unsigned long>(memcg->memory.max).exchange(max, std::memory_order_seq_cst);

  if (of->file_flags & KF_O_NONBLOCK) return static_cast<ssize_t>(nbytes);

  for (;;) {
    unsigned long nr_pages = page_counter_read(&memcg->memory);

    if (nr_pages <= max) break;
    if (signal_pending(current)) break;
    if (!drained) {
      drain_all_stock(memcg);
      drained = true;
      continue;
    }
    if (nr_reclaims) {
      if (!try_to_free_mem_cgroup_pages(memcg, nr_pages - max, GFP_KERNEL,
                                        MEMCG_RECLAIM_MAY_SWAP, nullptr))
        nr_reclaims--;
      continue;
    }
    memcg_memory_event(memcg, MEMCG_OOM);
    if (!mem_cgroup_out_of_memory(memcg, GFP_KERNEL, 0)) break;
    cond_resched();
  }
  return static_cast<ssize_t>(nbytes);
}

// --- memory.events, memory.events.local ------------------------------------------------------

/*
 * memory.events and memory.events.local print the same 7 keys. Whether memory.events counts a
 * subtree or the cgroup alone (the memory_localevents mount option) is decided when an event is
 * counted (__memcg_memory_event), not here.
 */
void __memory_events_show(seq_file *m, atomic_long_t *events) {
  seq_printf(m, "low %lu\n", static_cast<unsigned long>(atomic_long_read(&events[MEMCG_LOW])));
  seq_printf(m, "high %lu\n", static_cast<unsigned long>(atomic_long_read(&events[MEMCG_HIGH])));
  seq_printf(m, "max %lu\n", static_cast<unsigned long>(atomic_long_read(&events[MEMCG_MAX])));
  seq_printf(m, "oom %lu\n", static_cast<unsigned long>(atomic_long_read(&events[MEMCG_OOM])));
  seq_printf(m, "oom_kill %lu\n",
             static_cast<unsigned long>(atomic_long_read(&events[MEMCG_OOM_KILL])));
  seq_printf(m, "oom_group_kill %lu\n",
             static_cast<unsigned long>(atomic_long_read(&events[MEMCG_OOM_GROUP_KILL])));
  seq_printf(m, "sock_throttled %lu\n",
             static_cast<unsigned long>(atomic_long_read(&events[MEMCG_SOCK_THROTTLED])));
}

int memory_events_show(seq_file *m, void *) {
  __memory_events_show(m, mem_cgroup_from_seq(m)->memory_events);
  return 0;
}

int memory_events_local_show(seq_file *m, void *) {
  __memory_events_show(m, mem_cgroup_from_seq(m)->memory_events_local);
  return 0;
}

// --- memory.oom.group --------------------------------------------------------------------------

int memory_oom_group_show(seq_file *m, void *) {
  seq_printf(m, "%d\n", READ_ONCE(mem_cgroup_from_seq(m)->oom_group) ? 1 : 0);
  return 0;
}

ssize_t memory_oom_group_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));
  int oom_group;

  buf = strstrip(buf);
  if (!buf) return -EINVAL;
  int ret = kstrtoint(buf, 0, &oom_group);
  if (ret) return ret;
  if (oom_group != 0 && oom_group != 1) return -EINVAL;
  WRITE_ONCE(memcg->oom_group, oom_group == 1);
  return static_cast<ssize_t>(nbytes);
}

// --- memory.reclaim ----------------------------------------------------------------------------

ssize_t memory_reclaim(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  int ret = user_proactive_reclaim(buf, mem_cgroup_from_css(of_css(of)));
  if (ret) return ret;
  return static_cast<ssize_t>(nbytes);
}

// --- memory.swap.* -----------------------------------------------------------------------------

u64 swap_current_read(cgroup_subsys_state *css, const cftype *) {
  mem_cgroup *memcg = mem_cgroup_from_css(css);
  return static_cast<u64>(page_counter_read(&memcg->swap)) * PAGE_SIZE;
}

int swap_peak_show(seq_file *sf, void *) {
  mem_cgroup *memcg = mem_cgroup_from_css(seq_css(sf));
  return peak_show(sf, &memcg->swap);
}

ssize_t swap_peak_write(kernfs_open_file *of, char *, size_t nbytes, off_t) {
  return peak_write(of, nbytes, true);
}

int swap_high_show(seq_file *m, void *) {
  return seq_puts_memcg_tunable(m, READ_ONCE(mem_cgroup_from_seq(m)->swap.high));
}

// Shaped alike on purpose, as memory.min's and memory.low's above: each mirrors its kernel handler.
// A plain set: swap.high is enforced only by the over-high throttling of the charging tasks.
ssize_t swap_high_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));
  unsigned long high;

  buf = strstrip(buf);
  int err = page_counter_memparse(buf, "max", &high);
  if (err) return err;
  page_counter_set_high(&memcg->swap, high);
  return static_cast<ssize_t>(nbytes);
}

int swap_max_show(seq_file *m, void *) {
  return seq_puts_memcg_tunable(m, READ_ONCE(mem_cgroup_from_seq(m)->swap.max));
}

// An exchange: no reclaim, no -EBUSY; swap-outs above the new max fail from now on.
ssize_t swap_max_write(kernfs_open_file *of, char *buf, size_t nbytes, off_t) {
  mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));
  unsigned long max;

  buf = strstrip(buf);
  int err = page_counter_memparse(buf, "max", &max);
  if (err) return err;
  std::atomic_ref<unsigned long>(memcg->swap.max).exchange(max, std::memory_order_seq_cst);
  return static_cast<ssize_t>(nbytes);
}

int swap_events_show(seq_file *m, void *) {
  mem_cgroup *memcg = mem_cgroup_from_seq(m);
  seq_printf(m, "high %lu\n",
             static_cast<unsigned long>(atomic_long_read(&memcg->memory_events[MEMCG_SWAP_HIGH])));
  seq_printf(m, "max %lu\n",
             static_cast<unsigned long>(atomic_long_read(&memcg->memory_events[MEMCG_SWAP_MAX])));
  seq_printf(m, "fail %lu\n",
             static_cast<unsigned long>(atomic_long_read(&memcg->memory_events[MEMCG_SWAP_FAIL])));
  return 0;
}

// --- memory.reclaim's argument tokens (lib/parser.c) ------------------------------------------

// strsep(&s, " "): the token up to the next space (cut there), *s moved past it or nullptr.
char *strsep_space(char **s) {
  char *start = *s;
  if (!start) return nullptr;
  char *sp = std::strchr(start, ' ');
  if (sp) {
    *sp = '\0';
    *s = sp + 1;
  } else {
    *s = nullptr;
  }
  return start;
}

// match_int(): the argument copied into a 24-byte buffer (-ERANGE if it does not fit), then
// simple_strtol base 0: no digit consumed is -EINVAL, outside int is -ERANGE. Trailing text
// cannot occur here: match_one only matched if the number ran to the end of the token.
constexpr size_t NUMBER_BUF_LEN = 24;
int match_int(const char *from, const char *to, int *result) {
  size_t len = static_cast<size_t>(to - from);
  if (len >= NUMBER_BUF_LEN) return -ERANGE;
  char buf[NUMBER_BUF_LEN];
  std::memcpy(buf, from, len);
  buf[len] = '\0';
  char *endp;
  long val = simple_strtol(buf, &endp, 0);
  if (endp == buf) return -EINVAL;
  if (val < static_cast<long>(INT_MIN) || val > static_cast<long>(INT_MAX)) return -ERANGE;
  *result = static_cast<int>(val);
  return 0;
}

}  // namespace

/*
 * memory.reclaim: "<size>[ <token>...]". The size is memparse'd (suffixes, 0x/0 bases; an
 * unparseable size, nothing consumed, is -EINVAL; a lone suffix letter such as "K" consumes
 * the letter and is 0) and rounded down to pages. The rest is cut on single spaces, empty
 * tokens skipped; tokens are matched as the kernel's match_token() table does:
 * "swappiness=%d" (simple_strtol base 0, must reach the token's end; 0..200 else -EINVAL),
 * "swappiness=max" (anon only), anything else -EINVAL. The last swappiness token wins.
 *
 * Then reclaim in batches of a quarter of what is left (try_to_free_mem_cgroup_pages raises a
 * batch to at least SWAP_CLUSTER_MAX), with the target's own protection ignored by reclaim. A
 * pending signal ends it with -EINTR; a pass reclaiming nothing spends one of 16 retries and
 * fails with -EAGAIN once none is left. Over-reclaim is possible.
 */
int user_proactive_reclaim(char *buf, mem_cgroup *memcg) {
  unsigned int nr_retries = MAX_RECLAIM_RETRIES;
  unsigned long nr_to_reclaim, nr_reclaimed = 0;
  int swappiness = -1;

  if (!buf || !memcg) return -EINVAL;

  buf = strstrip(buf);
  char *old_buf = buf;
  nr_to_reclaim = static_cast<unsigned long>(memparse(buf, &buf) / PAGE_SIZE);
  if (buf == old_buf) return -EINVAL;

  buf = strstrip(buf);

  static constexpr char kSwappiness[] = "swappiness=";
  constexpr size_t kSwappinessLen = sizeof(kSwappiness) - 1;
  char *start;
  while ((start = strsep_space(&buf)) != nullptr) {
    if (!std::strlen(start)) continue;
    // Pattern 1, "swappiness=%d": the prefix, then a simple_strtol that consumes something and
    // reaches the end of the token.
    bool matched = false;
    if (!std::strncmp(start, kSwappiness, kSwappinessLen)) {
      char *from = start + kSwappinessLen;
      char *to;
      simple_strtol(from, &to, 0);
      if (to != from && *to == '\0') {
        if (match_int(from, to, &swappiness)) return -EINVAL;
        if (swappiness < MIN_SWAPPINESS || swappiness > MAX_SWAPPINESS) return -EINVAL;
        matched = true;
      }
    }
    // Pattern 2, "swappiness=max": the whole token.
    if (!matched && !std::strcmp(start, "swappiness=max")) {
      swappiness = SWAPPINESS_ANON_ONLY;
      matched = true;
    }
    if (!matched) return -EINVAL;
  }

  while (nr_reclaimed < nr_to_reclaim) {
    // Converges on zero, but reclaim enforces a minimum batch.
    unsigned long batch_size = (nr_to_reclaim - nr_reclaimed) / 4;

    if (signal_pending(current)) return -EINTR;

    // The final attempt: folios still in per-CPU LRU add batches are not on any list yet.
    if (!nr_retries) lru_add_drain_all();
    unsigned long reclaimed = try_to_free_mem_cgroup_pages(
        memcg, batch_size, GFP_KERNEL, MEMCG_RECLAIM_MAY_SWAP | MEMCG_RECLAIM_PROACTIVE,
        swappiness == -1 ? nullptr : &swappiness);

    if (!reclaimed && !nr_retries--) return -EAGAIN;
    nr_reclaimed += reclaimed;
  }
  return 0;
}

// --- the table ---------------------------------------------------------------------------------

// Designated initialisers follow cftype's member order (kernel/cftype.h).
const cftype memory_files[] = {
    {.name = "current", .flags = CFTYPE_NOT_ON_ROOT, .read_u64 = memory_current_read},
    {.name = "peak",
     .flags = CFTYPE_NOT_ON_ROOT,
     .open = peak_open,
     .release = peak_release,
     .seq_show = memory_peak_show,
     .write = memory_peak_write},
    {.name = "min", .flags = CFTYPE_NOT_ON_ROOT, .seq_show = memory_min_show,
     .write = memory_min_write},
    {.name = "low", .flags = CFTYPE_NOT_ON_ROOT, .seq_show = memory_low_show,
     .write = memory_low_write},
    {.name = "high", .flags = CFTYPE_NOT_ON_ROOT, .seq_show = memory_high_show,
     .write = memory_high_write},
    {.name = "max", .flags = CFTYPE_NOT_ON_ROOT, .seq_show = memory_max_show,
     .write = memory_max_write},
    {.name = "events",
     .flags = CFTYPE_NOT_ON_ROOT,
     .file_offset = offsetof(mem_cgroup, events_file),
     .seq_show = memory_events_show},
    {.name = "events.local",
     .flags = CFTYPE_NOT_ON_ROOT,
     .file_offset = offsetof(mem_cgroup, events_local_file),
     .seq_show = memory_events_local_show},
    {.name = "stat", .seq_show = memory_stat_show},
    {.name = "numa_stat", .seq_show = memory_numa_stat_show},
    {.name = "oom.group",
     .flags = CFTYPE_NOT_ON_ROOT | CFTYPE_NS_DELEGATABLE,
     .seq_show = memory_oom_group_show,
     .write = memory_oom_group_write},
    {.name = "reclaim", .flags = CFTYPE_NS_DELEGATABLE, .write = memory_reclaim},
    // swap_files[] (see the banner of memcontrol_files.h).
    {.name = "swap.current", .flags = CFTYPE_NOT_ON_ROOT, .read_u64 = swap_current_read},
    {.name = "swap.high", .flags = CFTYPE_NOT_ON_ROOT, .seq_show = swap_high_show,
     .write = swap_high_write},
    {.name = "swap.max", .flags = CFTYPE_NOT_ON_ROOT, .seq_show = swap_max_show,
     .write = swap_max_write},
    {.name = "swap.peak",
     .flags = CFTYPE_NOT_ON_ROOT,
     .open = peak_open,
     .release = peak_release,
     .seq_show = swap_peak_show,
     .write = swap_peak_write},
    {.name = "swap.events",
     .flags = CFTYPE_NOT_ON_ROOT,
     .file_offset = offsetof(mem_cgroup, swap_events_file),
     .seq_show = swap_events_show},
    {},  // terminate
};

void mem_cgroup_css_reset(cgroup_subsys_state *css) {
  mem_cgroup *memcg = mem_cgroup_from_css(css);

  page_counter_set_max(&memcg->memory, PAGE_COUNTER_MAX);
  page_counter_set_max(&memcg->swap, PAGE_COUNTER_MAX);
  // Emulation: swap and memsw are separate counters here (the kernel's union): reset both.
  page_counter_set_max(&memcg->memsw, PAGE_COUNTER_MAX);
  page_counter_set_max(&memcg->kmem, PAGE_COUNTER_MAX);
  page_counter_set_max(&memcg->tcpmem, PAGE_COUNTER_MAX);
  page_counter_set_min(&memcg->memory, 0);
  page_counter_set_low(&memcg->memory, 0);
  page_counter_set_high(&memcg->memory, PAGE_COUNTER_MAX);
  WRITE_ONCE(memcg->soft_limit, PAGE_COUNTER_MAX);  // memcg1_soft_limit_reset
  page_counter_set_high(&memcg->swap, PAGE_COUNTER_MAX);
}

}  // namespace umemcg
