// SPDX-License-Identifier: GPL-2.0-only
// Random-operation property test of the charge path (target R4), simulated mode, both stock
// designs, v1 and v2, many seeds: charges and uncharges of many sizes and gfp masks, sockets,
// kmem objects, limit and high writes, drains, dead-CPU drains, cgroups created and removed,
// on several vCPUs; the invariant checker runs after every step. A concurrent phase then runs
// several tasks at once. A failing run prints its seed; UMEMCG_SEED=<seed> replays only it.
//
// Also: a real-threads (native) stress test of the same operations.
#include "test/support/memcg_env.h"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <vector>

#include "mm/memcontrol_folio.h"
#include "mm/memcontrol_internal.h"
#include "mm/obj_cgroup.h"
#include "shim/errno.h"

using namespace umemcg;
using namespace umemcg::test;

namespace {

const gfp_t kGfps[] = {GFP_KERNEL, GFP_NOWAIT, GFP_ATOMIC, GFP_KERNEL | __GFP_NORETRY, 0,
                       __GFP_HIGH, GFP_KERNEL | __GFP_NOFAIL, GFP_KERNEL | __GFP_RETRY_MAYFAIL};

struct Obj {
  obj_cgroup *objcg;
  size_t size;
};

struct World {
  MemcgEnv *env;
  std::mt19937_64 rng;
  std::vector<mem_cgroup *> live;  // online memcgs (not the root)
  std::vector<std::pair<folio *, mem_cgroup *>> folios;
  std::vector<std::pair<mem_cgroup *, unsigned>> socks;
  std::vector<Obj> objs;
  std::ostringstream digest;
  int names = 0;

  unsigned pick(unsigned n) { return static_cast<unsigned>(rng() % n); }
  mem_cgroup *any_live() { return live.empty() ? nullptr : live[pick(live.size())]; }

  bool has_child(mem_cgroup *m) {
    for (auto *c : live)
      if (c != m && c->css.parent == &m->css) return true;
    return false;
  }

  void charge_folio(mem_cgroup *m, unsigned order, gfp_t gfp) {
    auto *f = new folio;
    f->order = order;
    int ret = charge_memcg(f, m, gfp);
    if (std::getenv("UMEMCG_TRACE"))
      std::fprintf(stderr, "  charge %s order %u gfp %x -> %d usage %lu root %lu\n",
                   m->css.cgroup->name.c_str(), order, gfp, ret, page_counter_read(&m->memory),
                   page_counter_read(&root_mem_cgroup->memory));
    if (ret == 0) {
      env->ledger.user_pages[m] += folio_nr_pages(f);
      env->ledger.css_refs[m] += 1;
      folios.push_back({f, m});
    } else {
      delete f;
    }
  }
  void uncharge_folio(size_t i) {
    auto [f, m] = folios[i];
    __mem_cgroup_uncharge(f);
    env->ledger.user_pages[m] -= folio_nr_pages(f);
    env->ledger.css_refs[m] -= 1;
    delete f;
    folios.erase(folios.begin() + static_cast<long>(i));
  }
  void charge_obj(mem_cgroup *m, size_t size, gfp_t gfp) {
    obj_cgroup *o = m->objcg;
    if (!o) return;
    if (obj_cgroup_charge(o, gfp, size) == 0) {
      obj_cgroup_get(o);
      env->ledger.objcg_refs[o] += 1;
      env->ledger.obj_bytes[o] += static_cast<long>(size);
      objs.push_back({o, size});
    }
  }
  void uncharge_obj(size_t i) {
    Obj ob = objs[i];
    obj_cgroup_uncharge(ob.objcg, ob.size);
    env->ledger.obj_bytes[ob.objcg] -= static_cast<long>(ob.size);
    env->ledger.objcg_refs[ob.objcg] -= 1;
    obj_cgroup_put(ob.objcg);
    objs.erase(objs.begin() + static_cast<long>(i));
  }

  // One random operation, run in a task on a random vCPU.
  void step() {
    unsigned op = pick(100);
    int cpu = static_cast<int>(pick(env->machine().nr_cpus()));
    if (std::getenv("UMEMCG_TRACE")) std::fprintf(stderr, "op %u cpu %d\n", op, cpu);
    if (op < 6 && live.size() < 10) {
      mem_cgroup *parent = pick(3) == 0 ? nullptr : any_live();
      live.push_back(env->mkdir(parent, "g" + std::to_string(names++)));
      return;
    }
    if (op < 10 && !live.empty()) {
      mem_cgroup *m = any_live();
      if (!has_child(m)) {
        REQUIRE(env->rmdir(m) == 0);
        live.erase(std::find(live.begin(), live.end(), m));
      }
      return;
    }
    env->run([&] {
      if (op < 40) {
        mem_cgroup *m = any_live();
        if (!m) return;
        unsigned order = pick(10) == 0 ? 9 : pick(4);
        charge_folio(m, order, kGfps[pick(ARRAY_SIZE(kGfps))]);
      } else if (op < 62) {
        if (!folios.empty()) uncharge_folio(pick(folios.size()));
      } else if (op < 68) {
        mem_cgroup *m = any_live();
        if (!m) return;
        unsigned n = 1 + pick(80);
        if (mem_cgroup_sk_charge(m, n, kGfps[pick(ARRAY_SIZE(kGfps))])) {
          css_get(&m->css);  // a socket pins its memcg (sk_memcg)
          env->ledger.css_refs[m] += 1;
          socks.push_back({m, n});
        }
      } else if (op < 72) {
        if (socks.empty()) return;
        size_t i = pick(socks.size());
        mem_cgroup_sk_uncharge(socks[i].first, socks[i].second);
        env->ledger.css_refs[socks[i].first] -= 1;
        css_put(&socks[i].first->css);
        socks.erase(socks.begin() + static_cast<long>(i));
      } else if (op < 80) {
        mem_cgroup *m = any_live();
        if (m) charge_obj(m, 8 + pick(3 * PAGE_SIZE), kGfps[pick(ARRAY_SIZE(kGfps))]);
      } else if (op < 86) {
        if (!objs.empty()) uncharge_obj(pick(objs.size()));
      } else if (op < 91) {
        mem_cgroup *m = any_live();
        if (!m) return;
        unsigned long cur = page_counter_read(&m->memory);
        unsigned long lim = pick(4) == 0 ? PAGE_COUNTER_MAX : cur + pick(200);
        (void)page_counter_set_max(&m->memory, lim);
        if (do_memsw_account()) (void)page_counter_set_max(&m->memsw, lim + pick(100));
      } else if (op < 94) {
        mem_cgroup *m = any_live();
        if (m) page_counter_set_high(&m->memory, pick(2) ? PAGE_COUNTER_MAX : pick(300));
      } else if (op < 98) {
        mem_cgroup *m = any_live();
        drain_all_stock(m ? m : root_mem_cgroup);
      } else {
        // The dead-CPU drain of some other, idle vCPU.
        int other = (cpu + 1) % static_cast<int>(env->machine().nr_cpus());
        memcg_hotplug_cpu_dead(static_cast<unsigned>(other));
      }
      current->memcg_nr_pages_over_high = 0;
    }, cpu);
  }

  void teardown() {
    env->run([&] {
      while (!folios.empty()) uncharge_folio(folios.size() - 1);
      while (!objs.empty()) uncharge_obj(objs.size() - 1);
      for (auto &[m, n] : socks) {
        mem_cgroup_sk_uncharge(m, n);
        env->ledger.css_refs[m] -= 1;
        css_put(&m->css);
      }
      socks.clear();
    });
    while (!live.empty()) {
      for (size_t i = 0; i < live.size(); i++) {
        if (!has_child(live[i])) {
          REQUIRE(env->rmdir(live[i]) == 0);
          live.erase(live.begin() + static_cast<long>(i));
          break;
        }
      }
    }
  }
};

// One seeded run. Returns the digest (usage after every step) for replay comparison.
std::string run_seed(std::uint64_t seed, bool pcstock, bool v1, int steps) {
  MemcgEnv env(v1 ? v1_params(pcstock) : v2_params(pcstock), emu::Mode::simulated, 4, seed);
  World w{&env, std::mt19937_64(seed)};
  bool failed = false;
  for (int s = 0; s < steps && !failed; s++) {
    w.step();
    std::string v = check_memcg_invariants(env.ledger);
    w.digest << page_counter_read(&root_mem_cgroup->memory) << ",";
    if (!v.empty()) {
      failed = true;
      FAIL_CHECK("seed " << seed << " (" << (pcstock ? "pcstock" : "memcg-stock")
                         << (v1 ? ", v1" : ", v2") << ") step " << s << ": " << v
                         << "replay: UMEMCG_SEED=" << seed);
    }
  }
  // Concurrent phase: 4 tasks charge and uncharge their own folios at once.
  if (!failed && !w.live.empty()) {
    std::vector<mem_cgroup *> targets(w.live.begin(), w.live.end());
    long pages[4] = {0, 0, 0, 0};
    for (int t = 0; t < 4; t++) {
      env.machine().spawn("stress", [&, t] {
        std::mt19937_64 r(seed * 31 + t);
        std::vector<std::pair<folio *, mem_cgroup *>> mine;
        for (int i = 0; i < 60; i++) {
          emu::KernelEntry k;
          mem_cgroup *m = targets[r() % targets.size()];
          auto *f = new folio;
          f->order = static_cast<unsigned>(r() % 3);
          if (charge_memcg(f, m, kGfps[r() % ARRAY_SIZE(kGfps)]) == 0)
            mine.push_back({f, m});
          else
            delete f;
          if (r() % 2 && !mine.empty()) {
            auto [g, gm] = mine.back();
            mine.pop_back();
            __mem_cgroup_uncharge(g);
            delete g;
          }
          if (r() % 10 == 0) drain_all_stock(m);
          current->memcg_nr_pages_over_high = 0;
          cond_resched();
        }
        for (auto &[g, gm] : mine) {
          emu::KernelEntry k;
          pages[t] += folio_nr_pages(g);
          __mem_cgroup_uncharge(g);
          delete g;
        }
      }, {.cpu = t});
    }
    REQUIRE_FALSE(env.machine().run().deadlock);
    std::string v = check_memcg_invariants(env.ledger);
    if (!v.empty())
      FAIL_CHECK("seed " << seed << " concurrent phase: " << v << "replay: UMEMCG_SEED=" << seed);
    w.digest << env.machine().trace_hash();
  }
  w.teardown();
  env.finish();
  return w.digest.str();
}

}  // namespace

TEST_CASE("property: random operations keep every invariant, both designs, v1 and v2",
          "[mm][memcg][property]") {
  WarnCheck wc;
  emu::set_warnings_quiet(false);
  std::vector<std::uint64_t> seeds;
  if (const char *env_seed = std::getenv("UMEMCG_SEED")) {
    seeds.push_back(std::strtoull(env_seed, nullptr, 0));
  } else {
    for (std::uint64_t s = 1; s <= 24; s++) seeds.push_back(s * 7919);
  }
  for (std::uint64_t seed : seeds)
    for (bool pc : {false, true})
      for (bool v1 : {false, true}) run_seed(seed, pc, v1, 250);
}

TEST_CASE("property: a seed replays exactly", "[mm][memcg][property]") {
  WarnCheck wc;
  for (bool pc : {false, true}) {
    std::string a = run_seed(4242, pc, false, 150);
    std::string b = run_seed(4242, pc, false, 150);
    CHECK(a == b);
    std::string c = run_seed(4243, pc, false, 150);
    CHECK(a != c);
  }
}

TEST_CASE("stress: real threads charging, uncharging and draining (native)",
          "[mm][memcg][stress]") {
  for (bool pc : {false, true}) {
    WarnCheck wc;
    MemcgEnv env(v2_params(pc), emu::Mode::native, 4);
    mem_cgroup *p = env.mkdir(nullptr, "p");
    mem_cgroup *a = env.mkdir(p, "a");
    mem_cgroup *b = env.mkdir(p, "b");
    env.run([&] { REQUIRE(page_counter_set_max(&p->memory, 2000) == 0); });
    std::atomic<long> failures{0};
    for (int t = 0; t < 4; t++) {
      env.machine().spawn("stress", [&, t] {
        std::mt19937_64 r(t + 1);
        std::vector<folio *> mine;
        for (int i = 0; i < 20000; i++) {
          emu::KernelEntry k;
          mem_cgroup *m = (r() & 1) ? a : b;
          auto *f = new folio;
          f->order = static_cast<unsigned>(r() % 2);
          if (charge_memcg(f, m, r() % 4 ? GFP_NOWAIT : GFP_ATOMIC) == 0)
            mine.push_back(f);
          else {
            delete f;
            failures++;
          }
          if (mine.size() > 100 || (r() % 3 == 0 && !mine.empty())) {
            folio *g = mine.back();
            mine.pop_back();
            __mem_cgroup_uncharge(g);
            delete g;
          }
          if (r() % 500 == 0) drain_all_stock(p);
          current->memcg_nr_pages_over_high = 0;
        }
        emu::KernelEntry k;
        for (folio *g : mine) {
          __mem_cgroup_uncharge(g);
          delete g;
        }
      }, {.cpu = t});
    }
    env.machine().run();
    env.check();  // every folio is gone: usage == stocked pages
    env.run([&] { drain_all_stock(root_mem_cgroup); flush_workqueue(memcg_wq); });
    CHECK(page_counter_read(&p->memory) == 0);
    CHECK(p->memory.watermark <= 2000 + 4 * 2);  // only GFP_ATOMIC forced charges exceed max
    env.finish();
  }
}
