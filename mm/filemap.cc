// SPDX-License-Identifier: GPL-2.0-only
// mm/filemap.cc: the page cache of in-memory files (see filemap.h).
//
// Mirrors: mm/filemap.c, mm/truncate.c, mm/vmscan.c (__remove_mapping) (Linux 6.19)
// Emulation: see filemap.h. Each page read from "disk" costs read_miss and each cached page
// read read_hit of machine time (mm/cost_model.h, docs/memory-model.md).
#include "mm/filemap.h"

#include <vector>

#include "mm/cost_model.h"
#include "mm/page_alloc.h"
#include "mm/swap.h"
#include "mm/vmstat.h"
#include "shim/errno.h"
#include "shim/machine.h"
#include "shim/mutex.h"
#include "shim/sched.h"

namespace umemcg {

namespace {

// __filemap_add_folio(): charge, insert (a shadow there is a refault), then the LRU. Returns
// -EEXIST when another reader inserted the page first (the caller drops its folio).
int filemap_add_folio(address_space *mapping, folio *f, unsigned long index) {
  int ret = __mem_cgroup_charge(f, nullptr, GFP_KERNEL);
  if (ret) return ret;
  shadow_entry shadow;
  bool had_shadow = false;
  spin_lock(&mapping->i_pages_lock);
  if (mapping->pages.count(index)) {
    spin_unlock(&mapping->i_pages_lock);
    return -EEXIST;
  }
  if (auto it = mapping->shadows.find(index); it != mapping->shadows.end()) {
    shadow = it->second;
    had_shadow = true;
    mapping->shadows.erase(it);
  }
  f->mapping = mapping;
  f->index = index;
  folio_get(f);  // the page cache's reference
  mapping->pages[index] = f;
  spin_unlock(&mapping->i_pages_lock);
  mod_memcg_lruvec_state(folio_memcg(f), NR_FILE_PAGES, static_cast<int>(folio_nr_pages(f)));
  if (had_shadow) workingset_refault(f, shadow);
  folio_add_lru(f);
  return 0;
}

}  // namespace

int filemap_read(inode *ino, unsigned long index, unsigned long nr) {
  address_space *mapping = &ino->i_data;
  for (unsigned long i = index; i < index + nr; i++) {
    if (fatal_signal_pending(current)) return -EINTR;
    spin_lock(&mapping->i_pages_lock);
    folio *f = nullptr;
    if (auto it = mapping->pages.find(i); it != mapping->pages.end() && folio_try_get(it->second))
      f = it->second;
    spin_unlock(&mapping->i_pages_lock);
    if (!f) {
      f = folio_alloc(GFP_KERNEL);
      if (!f) return -ENOMEM;
      int ret = filemap_add_folio(mapping, f, i);
      if (ret == -EEXIST) {
        folio_put(f);  // another reader filled it meanwhile: look again
        i--;
        continue;
      }
      if (ret) {
        folio_put(f);
        return ret;
      }
      // The read's bio: PGPGIN in sectors.
      count_vm_events(PGPGIN, folio_nr_pages(f) << (PAGE_SHIFT - 9));
      emu::consume_time(emu::cost_model().read_miss);
    } else {
      emu::consume_time(emu::cost_model().read_hit);
    }
    folio_mark_accessed(f);
    folio_put(f);
  }
  return 0;
}

bool __remove_mapping(folio *f, mem_cgroup *target_memcg) {
  auto *mapping = static_cast<address_space *>(f->mapping);
  if (!mapping) return false;  // truncated while isolated (the folio lock keeps it stable now)
  spin_lock(&mapping->i_pages_lock);
  // Only the cache and the isolation may hold it: freeze the count from 2 to 0.
  if (atomic_cmpxchg(&f->_refcount, 2, 0) != 2) {
    spin_unlock(&mapping->i_pages_lock);
    return false;
  }
  mapping->pages.erase(f->index);
  mapping->shadows[f->index] = workingset_eviction(f, target_memcg);
  f->mapping = nullptr;
  spin_unlock(&mapping->i_pages_lock);
  mod_memcg_lruvec_state(folio_memcg(f), NR_FILE_PAGES, -static_cast<int>(folio_nr_pages(f)));
  return true;
}

void truncate_inode_pages(inode *ino, unsigned long lstart) {
  address_space *mapping = &ino->i_data;
  std::vector<folio *> batch;
  for (;;) {
    folio *f = nullptr;
    spin_lock(&mapping->i_pages_lock);
    mapping->shadows.erase(mapping->shadows.lower_bound(lstart), mapping->shadows.end());
    if (auto it = mapping->pages.lower_bound(lstart); it != mapping->pages.end()) f = it->second;
    if (f) folio_get(f);
    spin_unlock(&mapping->i_pages_lock);
    if (!f) break;
    // The folio lock excludes reclaim's __remove_mapping of the same folio.
    while (!folio_trylock(f)) cond_resched();
    spin_lock(&mapping->i_pages_lock);
    bool ours = f->mapping == mapping;
    if (ours) {
      mapping->pages.erase(f->index);
      f->mapping = nullptr;
    }
    spin_unlock(&mapping->i_pages_lock);
    if (ours)
      mod_memcg_lruvec_state(folio_memcg(f), NR_FILE_PAGES, -static_cast<int>(folio_nr_pages(f)));
    folio_unlock(f);
    batch.push_back(f);  // our lookup reference
    if (ours) batch.push_back(f);  // the page cache's reference
    if (batch.size() >= PAGEVEC_SIZE) {
      folios_put(batch.data(), static_cast<unsigned int>(batch.size()));
      batch.clear();
    }
  }
  if (!batch.empty()) folios_put(batch.data(), static_cast<unsigned int>(batch.size()));
}

unsigned long filemap_nr_pages(inode *ino) {
  spin_lock(&ino->i_data.i_pages_lock);
  unsigned long n = ino->i_data.pages.size();
  spin_unlock(&ino->i_data.i_pages_lock);
  return n;
}

}  // namespace umemcg

namespace umemcg::emu {

namespace {
DEFINE_MUTEX(named_files_lock);
std::map<std::string, inode *> g_named_files GUARDED_BY(named_files_lock);
}  // namespace

inode *file_create() {
  auto *ino = new inode;
  atomic_long_set(&ino->i_count, 1);
  return ino;
}

void iget(inode *ino) { atomic_long_inc(&ino->i_count); }

void iput(inode *ino) {
  if (atomic_long_sub_return(1, &ino->i_count)) return;
  truncate_inode_pages(ino, 0);
  delete ino;
}

inode *file_lookup(const std::string &name) {
  mutex_lock(&named_files_lock);
  inode *&ino = g_named_files[name];
  if (!ino) ino = file_create();  // the machine's reference
  iget(ino);
  mutex_unlock(&named_files_lock);
  return ino;
}

void file_release_all() {
  mutex_lock(&named_files_lock);
  std::map<std::string, inode *> files;
  files.swap(g_named_files);
  mutex_unlock(&named_files_lock);
  for (auto &[name, ino] : files) iput(ino);
}

}  // namespace umemcg::emu
