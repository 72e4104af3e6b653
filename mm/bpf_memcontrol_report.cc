// SPDX-License-Identifier: GPL-2.0-only
// mm/bpf_memcontrol_report.cc: the record of the memcg kfunc calls of one task (see
// bpf_memcontrol_report.h).
//
// Mirrors: the conditions of mm/bpf_memcontrol.c's kfuncs and of kernel/bpf/helpers.c's
//   bpf_cgroup_from_id (as mm/bpf_memcontrol.cc implements them), and of mm/vmscan.c's
//   get_scan_count (which lists reclaim scans) (Linux 6.19)
// Emulation: see bpf_memcontrol_report.h.
#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include "mm/bpf_memcontrol_report.h"

#include <cerrno>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "kernel/cgroup.h"
#include "kernel/cgroupfs.h"
#include "kernel/kernfs/kernfs.h"
#include "mm/memcontrol.h"
#include "mm/memcontrol_files.h"
#include "mm/memcontrol_folio.h"
#include "mm/memcontrol_iter.h"
#include "mm/swap.h"
#include "mm/swapfile.h"
#include "shim/rcupdate.h"

namespace umemcg {

std::atomic<task_struct *> bpf_memcg_report_task{nullptr};

namespace {

// Written only by the armed task (between its start and stop): the kfuncs append while
// bpf_memcg_report_armed() holds, which is true for that task alone.
std::vector<bpf_memcg_kfunc_record> g_records;
unsigned long g_dropped = 0;

void add(bpf_memcg_kfunc_record r) {
  if (g_records.size() >= BPF_MEMCG_REPORT_MAX_CALLS) {
    g_dropped++;
    return;
  }
  g_records.push_back(std::move(r));
}

bpf_memcg_kfunc_record rec(const char *kfunc, std::string args, std::string result) {
  bpf_memcg_kfunc_record r;
  r.kfunc = kfunc;
  r.call = absl::StrFormat("%s(%s)", kfunc, args);
  r.result = std::move(result);
  return r;
}

std::string pages_text(unsigned long pages) {
  return absl::StrFormat("%lu page%s", pages, pages == 1 ? "" : "s");
}

}  // namespace

void bpf_memcg_report_start() {
  g_records.clear();
  g_dropped = 0;
  bpf_memcg_report_task.store(current, std::memory_order_relaxed);
}

std::vector<bpf_memcg_kfunc_record> bpf_memcg_report_stop() {
  bpf_memcg_report_task.store(nullptr, std::memory_order_relaxed);
  std::vector<bpf_memcg_kfunc_record> out;
  out.swap(g_records);
  return out;
}

unsigned long bpf_memcg_report_dropped() { return g_dropped; }

std::string bpf_cgroup_report_path(cgroup *cgrp) {
  if (!cgrp) return "NULL";
  if (!cgrp->kn) return "(a cgroup without a directory)";
  const std::string rel = kernfs_path(cgrp->kn);
  return std::string(CGROUP_MOUNT_POINT) + (rel == "/" ? "" : rel);
}

std::string bpf_memcg_report_path(mem_cgroup *memcg) {
  if (!memcg) return "NULL";
  return bpf_cgroup_report_path(memcg->css.cgroup);
}

void bpf_memcg_report_root(mem_cgroup *ret) {
  bpf_memcg_kfunc_record r = rec("bpf_get_root_mem_cgroup", "", bpf_memcg_report_path(ret));
  if (!ret) {
    // The kfunc returns root_mem_cgroup: NULL only where memcg never booted.
    r.kind = bpf_memcg_report_kind::lacks;
    r.note = "no root memcg: the memory controller is not enabled";
  }
  add(std::move(r));
}

void bpf_memcg_report_get(cgroup_subsys_state *css, mem_cgroup *ret) {
  cgroup *cgrp = css ? css->cgroup : nullptr;
  // A cgroup's path only while the call holds its memcg: a failed lookup may be on a cgroup
  // whose directory is already gone, so it is named by its id.
  const std::string arg = !css  ? std::string("NULL")
                          : ret ? "css of " + bpf_cgroup_report_path(cgrp)
                          : cgrp ? absl::StrFormat("css of cgroup %llu",
                                                   (unsigned long long)cgrp->id)
                                 : std::string("a css without a cgroup");
  bpf_memcg_kfunc_record r = rec("bpf_get_mem_cgroup", arg, bpf_memcg_report_path(ret));
  if (!ret) {
    if (!css) {
      r.kind = bpf_memcg_report_kind::bad_arg;
      r.note = "the css argument is NULL";
    } else {
      r.kind = bpf_memcg_report_kind::lacks;
      rcu_read_lock();
      // The kfunc's own lookup: a css of another controller leads to the cgroup's memory css.
      cgroup_subsys_state *mcss = css;
      if (mcss->ss != &memory_cgrp_subsys) mcss = cgrp ? READ_ONCE(cgrp->subsys_css) : nullptr;
      const bool has_memory_css = mcss && mcss->ss == &memory_cgrp_subsys;
      rcu_read_unlock();
      // Then css_tryget() failed: no reference is left, the memcg is being freed.
      r.note = has_memory_css ? "the memcg is being freed (its css has no references left)"
                              : "the cgroup has no memory css: the memory controller is not "
                                "enabled there";
    }
  }
  add(std::move(r));
}

void bpf_memcg_report_cgroup_from_id(u64 cgid, cgroup *ret) {
  bpf_memcg_kfunc_record r = rec("bpf_cgroup_from_id",
                                 absl::StrFormat("%llu", (unsigned long long)cgid),
                                 bpf_cgroup_report_path(ret));
  if (!ret) {
    r.kind = bpf_memcg_report_kind::lacks;
    if (!root_mem_cgroup) {
      // Emulation: cgroups are found through memcg's id table (bpf_memcontrol.h).
      r.note = "no cgroup can be found: the memory controller is not enabled";
    } else if (cgid == 0 || cgid > (u64)MEM_CGROUP_ID_MAX) {
      r.note = absl::StrFormat("no cgroup has id %llu (ids run from 1 to %d)",
                               (unsigned long long)cgid, MEM_CGROUP_ID_MAX);
    } else {
      rcu_read_lock();
      mem_cgroup *memcg = mem_cgroup_from_id((unsigned short)cgid);
      cgroup *found = memcg && memcg->css.cgroup && memcg->css.cgroup->id == cgid
                          ? memcg->css.cgroup
                          : nullptr;
      // The kfunc found it and css_tryget_online() failed: rmdir() has begun (its directory
      // may be gone: no path).
      r.note = found ? absl::StrFormat("cgroup %llu is being removed", (unsigned long long)cgid)
                     : absl::StrFormat("no cgroup has id %llu", (unsigned long long)cgid);
      rcu_read_unlock();
    }
  }
  add(std::move(r));
}

void bpf_memcg_report_reclaim(mem_cgroup *memcg, unsigned long size, int swappiness, long ret) {
  const std::string path = bpf_memcg_report_path(memcg);
  bpf_memcg_kfunc_record r =
      rec("bpf_proactive_reclaim", absl::StrFormat("%s, %lu, %d", path, size, swappiness),
          ret == -EINVAL ? "-EINVAL" : absl::StrFormat("%ld", ret));
  if (ret == -EINVAL) {
    // The kfunc's argument checks, in its order.
    r.kind = bpf_memcg_report_kind::bad_arg;
    r.note = swappiness != -1 && swappiness != SWAPPINESS_ANON_ONLY &&
                     (swappiness < 0 || swappiness > MAX_SWAPPINESS)
                 ? absl::StrFormat("swappiness %d is not -1, 0..%d or %d", swappiness,
                                   MAX_SWAPPINESS, SWAPPINESS_ANON_ONLY)
                 : absl::StrFormat("size %lu is less than a page (%lu bytes)", size, PAGE_SIZE);
  } else if (ret == 0) {
    // Nothing reclaimed: what get_scan_count() had to scan in the subtree. Anon pages are
    // scanned only with swap space the memcg may use (can_reclaim_anon_pages) and, for this
    // cgroup reclaim, a swappiness above 0; swappiness SWAPPINESS_ANON_ONLY scans anon only.
    unsigned long anon = 0, file = 0, unevictable = 0;
    for (mem_cgroup *m = mem_cgroup_iter(memcg, nullptr, nullptr); m;
         m = mem_cgroup_iter(memcg, m, nullptr)) {
      lruvec *lv = mem_cgroup_lruvec(m);
      anon += lruvec_lru_size(lv, LRU_INACTIVE_ANON) + lruvec_lru_size(lv, LRU_ACTIVE_ANON);
      file += lruvec_lru_size(lv, LRU_INACTIVE_FILE) + lruvec_lru_size(lv, LRU_ACTIVE_FILE);
      unevictable += lruvec_lru_size(lv, LRU_UNEVICTABLE);
    }
    const int sw = swappiness == -1 ? mem_cgroup_swappiness(memcg) : swappiness;
    const bool swap_room = mem_cgroup_get_nr_swap_pages(memcg) > 0;
    const std::string in = "nothing to reclaim in " + path + ": ";
    r.kind = bpf_memcg_report_kind::lacks;
    if (anon + file == 0) {
      r.note = in + "no pages on its LRU lists";
      if (unevictable)
        r.note += absl::StrFormat(" (%s unevictable)", pages_text(unevictable));
    } else if ((sw == SWAPPINESS_ANON_ONLY || file == 0) && anon && !swap_room) {
      const std::string why = total_swap_pages() == 0 ? "the machine has no swap device"
                              : get_nr_swap_pages() == 0 ? "the swap device is full"
                                                         : "memory.swap.max leaves no room";
      r.note = in + pages_text(anon) + " of anon memory and no swap space for them (" + why + ")";
    } else if (sw == SWAPPINESS_ANON_ONLY && anon == 0) {
      r.note = in + "no anon pages for swappiness " + std::to_string(sw) + " (anon only)";
    } else if (sw == 0 && file == 0) {
      r.note = in + "no file pages, and swappiness 0 leaves its " + pages_text(anon) +
               " of anon memory alone";
    } else {
      // Pages that could be scanned: nothing the machine lacks (protection, references).
      r.kind = bpf_memcg_report_kind::ok;
      r.note = absl::StrFormat("reclaimed nothing of %s anon and %s file on the LRU lists",
                               pages_text(anon), pages_text(file));
    }
  }
  add(std::move(r));
}

void bpf_memcg_report_plain(const char *kfunc, const std::string &args,
                            const std::string &result) {
  add(rec(kfunc, args, result));
}

}  // namespace umemcg
