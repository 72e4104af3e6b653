// SPDX-License-Identifier: GPL-2.0-only
// test/mm/lru_check_test.cc: the memory model's LRU consistency check (mm/lru_check.h), which
// the shell runs at the end of every run: silent on a consistent model, and it names the memcg,
// the list and the figures when a list, its size or its statistic disagree.
#include <catch2/catch.hpp>

#include "mm/lru_check.h"
#include "mm/memcontrol_stat.h"
#include "test/mm/mm_test_util.h"

using namespace umemcg;
using namespace umemcg::test;

TEST_CASE("lru_check_memcgs: silent on anon and page cache in a subtree, both designs, v1 and "
          "v2; names the list whose statistic or size disagrees", "[mm][lru]") {
  for (const memcg_boot_params &params :
       {v2_params(), v2_params(true), v1_params(), v1_params(true)}) {
    INFO(params_name(params));
    WarnCheck wc;
    MemcgEnv env(params);
    mem_cgroup *a = env.mkdir(nullptr, "a");
    mem_cgroup *b = env.mkdir(a, "b");
    env.run([&] {
      emu::Process *p = anon_holder_started(b, 40);
      inode *ino = cached_file(a, 30);
      lru_add_drain_all();
      CHECK(emu::lru_check_memcgs().empty());
      CHECK(lru_total(b) == 40);

      // A statistic one page off.
      local_irq_disable();
      __mod_memcg_state(b, static_cast<int>(NR_LRU_BASE) + LRU_INACTIVE_ANON, 1);
      local_irq_enable();
      std::string why = emu::lru_check_memcgs();
      CHECK(why.find("inactive_anon list holds 40 pages") != std::string::npos);
      CHECK(why.find("its statistic 41") != std::string::npos);
      local_irq_disable();
      __mod_memcg_state(b, static_cast<int>(NR_LRU_BASE) + LRU_INACTIVE_ANON, -1);
      local_irq_enable();
      CHECK(emu::lru_check_memcgs().empty());

      // A size one page off.
      lruvec *lv = mem_cgroup_lruvec(a);
      spin_lock_irq(&lv->lru_lock);
      lv->lru_zone_size[LRU_INACTIVE_FILE]++;
      spin_unlock_irq(&lv->lru_lock);
      why = emu::lru_check_memcgs();
      CHECK(why.find("inactive_file list holds 30 pages, its size says 31") != std::string::npos);
      spin_lock_irq(&lv->lru_lock);
      lv->lru_zone_size[LRU_INACTIVE_FILE]--;
      spin_unlock_irq(&lv->lru_lock);
      CHECK(emu::lru_check_memcgs().empty());

      emu::process_kill(p);
      emu::process_wait(p);
      emu::iput(ino);
    });
    env.finish();
  }
}
