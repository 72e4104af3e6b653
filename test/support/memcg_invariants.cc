// SPDX-License-Identifier: GPL-2.0-only
// test/support/memcg_invariants.cc: see memcg_invariants.h.
#include "test/support/memcg_invariants.h"

#include <set>
#include <sstream>
#include <vector>

#include "kernel/cgroup_internal.h"
#include "mm/memcontrol_internal.h"
#include "mm/page_counter_stock.h"
#include "mm/process.h"
#include "mm/swap.h"
#include "shim/smp.h"

namespace umemcg::emu {
page_counter_stock *memcg_pcstock_bank(bool memsw);
}

namespace umemcg::test {

namespace {

struct Snapshot {
  std::vector<mem_cgroup *> memcgs;
  std::map<mem_cgroup *, long> stocked_mem;    // pages in slots caching m (memory)
  std::map<mem_cgroup *, long> stocked_memsw;  // pages for memsw
  std::map<mem_cgroup *, long> slot_refs;      // slots pinning m
  std::map<mem_cgroup *, long> children;
  std::map<obj_cgroup *, long> objcg_stock_refs;
  long obj_stock_bytes_total = 0;
  std::map<obj_cgroup *, long> obj_stock_bytes;
  bool over_batch = false;
};

void collect(cgroup_subsys_state *css, void *arg) {
  auto *s = static_cast<Snapshot *>(arg);
  s->memcgs.push_back(mem_cgroup_from_css(css));
}

Snapshot snapshot() NO_THREAD_SAFETY_ANALYSIS {
  Snapshot s;
  emu::for_each_css(collect, &s);
  for (mem_cgroup *m : s.memcgs)
    if (m->css.parent) s.children[mem_cgroup_from_css(m->css.parent)]++;
  int cpu;
  for_each_possible_cpu(cpu) {
    if (!memcg_pcstock()) {
      memcg_stock_pcp *st = per_cpu_ptr(&memcg_stock, cpu);
      for (int i = 0; i < NR_MEMCG_STOCK; i++) {
        mem_cgroup *m = READ_ONCE(st->cached[i]);
        if (!m) continue;
        long n = READ_ONCE(st->nr_pages[i]);
        if (n > static_cast<long>(MEMCG_CHARGE_BATCH)) s.over_batch = true;
        s.stocked_mem[m] += n;
        if (do_memsw_account()) s.stocked_memsw[m] += n;
        s.slot_refs[m]++;
      }
    } else {
      for (int bank = 0; bank < 2; bank++) {
        emu::pc_stock_slot slots[NR_PC_STOCK];
        emu::page_counter_stock_snapshot(emu::memcg_pcstock_bank(bank == 1), cpu, slots);
        for (auto &sl : slots) {
          if (!sl.counter) continue;
          if (sl.nr_pages > MEMCG_CHARGE_BATCH) s.over_batch = true;
          mem_cgroup *m = bank ? mem_cgroup_from_memsw_counter(sl.counter)
                               : mem_cgroup_from_memory_counter(sl.counter);
          (bank ? s.stocked_memsw : s.stocked_mem)[m] += sl.nr_pages;
          s.slot_refs[m]++;
        }
      }
    }
    emu::obj_stock_view ov = emu::obj_stock_snapshot(cpu);
    if (ov.cached_objcg) {
      s.objcg_stock_refs[ov.cached_objcg]++;
      s.obj_stock_bytes[ov.cached_objcg] += ov.nr_bytes;
      s.obj_stock_bytes_total += ov.nr_bytes;
    }
  }
  return s;
}

// Pages the memory model holds charged to @m: on its LRU lists or waiting in an lru_add batch
// (on a quiescent machine every model folio is in one of the two). Each is one order-0 folio
// holding one css reference.
long model_pages(mem_cgroup *m) NO_THREAD_SAFETY_ANALYSIS {
  lruvec *lv = mem_cgroup_lruvec(m);
  long n = static_cast<long>(lru_add_batched_pages(m));
  for (int l = 0; l < NR_LRU_LISTS; l++) n += static_cast<long>(lv->lru_zone_size[l]);
  return n;
}

long get(const std::map<mem_cgroup *, long> &m, mem_cgroup *k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

struct ObjcgWalk {
  const ChargeLedger *ledger;
  const Snapshot *snap;
  std::ostringstream *out;
  const std::set<obj_cgroup *> *origs;
  long bytes = 0;
};

void check_objcg(obj_cgroup *o, void *arg) {
  auto *w = static_cast<ObjcgWalk *>(arg);
  auto lb = w->ledger->obj_bytes.find(o);
  w->bytes += (lb == w->ledger->obj_bytes.end() ? 0 : lb->second);
  w->bytes += atomic_read(&o->nr_charged_bytes);
  long expect = 0;
  mem_cgroup *m = o->memcg;
  if (m && m->objcg == o) expect++;  // base reference (until offline)
  if (w->origs->count(o)) expect++;  // orig_objcg's reference, until its memcg is freed
  auto sr = w->snap->objcg_stock_refs.find(o);
  expect += sr == w->snap->objcg_stock_refs.end() ? 0 : sr->second;
  auto lr = w->ledger->objcg_refs.find(o);
  expect += lr == w->ledger->objcg_refs.end() ? 0 : lr->second;
  long have = atomic_long_read(&o->refcnt);
  if (have != expect) *w->out << "objcg " << o << ": refcnt " << have << " != " << expect << "\n";
}

}  // namespace

std::string check_memcg_invariants(const ChargeLedger &ledger) {
  std::ostringstream out;
  if (!root_mem_cgroup) return "memcg not booted\n";
  Snapshot s = snapshot();
  if (s.over_batch) out << "a stock slot holds more than MEMCG_CHARGE_BATCH pages\n";

  std::set<obj_cgroup *> origs;
  long kmem_pages_total = emu::memcg_freed_stat(MEMCG_KMEM);
  for (mem_cgroup *m : s.memcgs) {
    kmem_pages_total += emu::memcg_page_state_local_sum(m, MEMCG_KMEM);
    if (m->orig_objcg) origs.insert(m->orig_objcg);
  }

  for (mem_cgroup *m : s.memcgs) {
    long want_mem = 0, want_memsw = 0, want_swap = 0;
    for (mem_cgroup *d : s.memcgs) {
      if (!mem_cgroup_is_descendant(d, m)) continue;
      if (!mem_cgroup_is_root(d)) {
        long own = get(ledger.user_pages, d) + model_pages(d) +
                   emu::memcg_page_state_local_sum(d, MEMCG_KMEM) +
                   emu::memcg_page_state_local_sum(d, MEMCG_SOCK);
        want_mem += own;
        long swapped = emu::memcg_page_state_local_sum(d, MEMCG_SWAP);
        // v1: memsw covers the swapped-out pages too (memcg1_swapout leaves their charge).
        want_memsw += own + swapped;
        want_swap += swapped;
      }
      want_mem += atomic_long_read(&d->emu_orphaned[0]);
      want_memsw += atomic_long_read(&d->emu_orphaned[1]);
      want_swap += atomic_long_read(&d->emu_orphaned[2]);
      want_mem += get(s.stocked_mem, d);
      want_memsw += get(s.stocked_memsw, d);
    }
    const char *name = m->css.cgroup ? m->css.cgroup->name.c_str() : "?";
    long mem = atomic_long_read(&m->memory.usage);
    if (mem < 0) out << name << ": memory usage negative " << mem << "\n";
    if (mem != want_mem)
      out << name << ": memory usage " << mem << " != charged+stocked " << want_mem << "\n";
    if (do_memsw_account()) {
      long memsw = atomic_long_read(&m->memsw.usage);
      if (memsw != want_memsw)
        out << name << ": memsw usage " << memsw << " != charged+stocked " << want_memsw << "\n";
    } else {
      long swap = atomic_long_read(&m->swap.usage);
      if (swap != want_swap) out << name << ": swap usage " << swap << " != " << want_swap << "\n";
    }
    if (mem_cgroup_is_root(m)) continue;  // CSS_NO_REF
    long want_refs = (css_is_dying(&m->css) ? 0 : 1) + get(s.children, m) +
                     (atomic_long_read(&m->id_ref) > 0 ? 1 : 0) + get(s.slot_refs, m) +
                     get(ledger.css_refs, m) + model_pages(m) + emu::process_css_refs(m);
    long refs = atomic_long_read(&m->css.refcnt);
    if (refs != want_refs)
      out << name << ": css refcnt " << refs << " != expected " << want_refs << "\n";
  }

  ObjcgWalk w{&ledger, &s, &out, &origs};
  emu::for_each_objcg(check_objcg, &w);
  long bytes = w.bytes + s.obj_stock_bytes_total +
               ledger.kmem_page_pages * static_cast<long>(PAGE_SIZE);
  if (bytes != kmem_pages_total * static_cast<long>(PAGE_SIZE))
    out << "kmem bytes " << bytes << " != MEMCG_KMEM pages in bytes "
        << kmem_pages_total * static_cast<long>(PAGE_SIZE) << "\n";
  return out.str();
}

std::string check_memcg_teardown() {
  std::ostringstream out;
  if (emu::cgroup_live_css() != 0) out << emu::cgroup_live_css() << " css not freed\n";
  if (emu::objcg_live_count() != 0) out << emu::objcg_live_count() << " objcgs not freed\n";
  if (root_mem_cgroup) out << "root_mem_cgroup still set\n";
  return out.str();
}

}  // namespace umemcg::test
