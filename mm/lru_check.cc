// SPDX-License-Identifier: GPL-2.0-only
// mm/lru_check.cc: the per-memcg LRU consistency check (see mm/lru_check.h).
#include "mm/lru_check.h"

#include <sstream>

#include "mm/memcontrol.h"
#include "mm/memcontrol_folio.h"
#include "mm/memcontrol_iter.h"
#include "mm/memcontrol_stat.h"
#include "mm/page_flags.h"
#include "mm/swap.h"

namespace umemcg::emu {

namespace {

const char *const kLruNames[NR_LRU_LISTS] = {"inactive_anon", "active_anon", "inactive_file",
                                             "active_file", "unevictable"};

std::string check_one(mem_cgroup *memcg) {
  lruvec *lv = mem_cgroup_lruvec(memcg);
  spin_guard g(&lv->lru_lock);
  for (int l = 0; l < NR_LRU_LISTS; l++) {
    const lru_list lru = static_cast<lru_list>(l);
    unsigned long walked = 0;
    list_head *head = &lv->lists[lru];
    for (list_head *pos = head->next; pos != head; pos = pos->next) {
      const folio *f = container_of(pos, folio, lru);
      if (folio_memcg(f) != memcg || folio_lru_list(f) != lru) {
        std::ostringstream s;
        s << "memcg id " << memcg->css.id << ": a folio on its " << kLruNames[l]
          << " list belongs to " << (folio_memcg(f) != memcg ? "another memcg" : "another list");
        return s.str();
      }
      walked += folio_nr_pages(f);
    }
    const long stat = memcg_page_state_local_sum(memcg, NR_LRU_BASE + l);
    if (walked != lv->lru_zone_size[lru] || stat != static_cast<long>(walked)) {
      std::ostringstream s;
      s << "memcg id " << memcg->css.id << ": " << kLruNames[l] << " list holds " << walked
        << " pages, its size says " << lv->lru_zone_size[lru] << ", its statistic " << stat;
      return s.str();
    }
  }
  return "";
}

}  // namespace

std::string lru_check_memcgs() {
  // Every memcg with a reference left, dying ones included (mem_cgroup_iter's full walk).
  for (mem_cgroup *memcg = mem_cgroup_iter(nullptr, nullptr, nullptr); memcg;
       memcg = mem_cgroup_iter(nullptr, memcg, nullptr)) {
    std::string why = check_one(memcg);
    if (!why.empty()) {
      mem_cgroup_iter_break(nullptr, memcg);
      return why;
    }
  }
  return "";
}

}  // namespace umemcg::emu
