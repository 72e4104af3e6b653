// SPDX-License-Identifier: GPL-2.0-only
// mm/filemap.h: in-memory files and their page cache.
//
// A file (struct inode) has a size and a page cache (address_space): folios indexed by page
// offset, and the shadow entries evicted folios left behind. Reading a range faults every
// missing page into the cache, charged to the reader's memcg, and marks each page accessed.
// The pages stay cached and charged after the reader exits, for as long as the file lives;
// truncating or deleting the file frees and uncharges them. Reclaim evicts clean cached folios,
// leaving a shadow entry (mm/workingset.h) from which a later read detects the refault.
//
// Mirrors: mm/filemap.c (filemap_read, filemap_add_folio, __filemap_add_folio,
//   filemap_get_folio), mm/truncate.c (truncate_inode_pages), mm/vmscan.c (__remove_mapping)
//   (Linux 6.19)
// Emulation: files have no contents and no backing store: every page is clean and uptodate, a
//   read of a missing page costs the modelled I/O and nothing else.
// Emulation: the xarray is a std::map of folios and one of shadow entries under i_pages_lock.
#pragma once

#include <map>
#include <string>

#include "mm/workingset.h"
#include "shim/spinlock.h"

namespace umemcg {

struct address_space {
  spinlock_t i_pages_lock{0, "i_pages"};
  std::map<unsigned long, folio *> pages GUARDED_BY(i_pages_lock);
  std::map<unsigned long, shadow_entry> shadows GUARDED_BY(i_pages_lock);
};

struct inode {
  address_space i_data;
  atomic_long_t i_size;  // bytes
  atomic_long_t i_count;  // references (iget/iput)
};

/**
 * filemap_read - read pages [@index, @index + @nr) of @ino through the page cache
 * @ino: file
 * @index: first page
 * @nr: pages
 *
 * Missing pages are allocated, charged to the current task's memcg (GFP_KERNEL), added to the
 * cache (a shadow entry there is a refault) and to the LRU; every page read is marked accessed.
 * Context: inside a kernel entry of the reading task. Returns 0, -ENOMEM (charge failed) or
 * -EINTR (fatal signal pending).
 */
int filemap_read(inode *ino, unsigned long index, unsigned long nr);
// Removes and frees every cached page from @lstart on (and its shadow entries).
void truncate_inode_pages(inode *ino, unsigned long lstart);
/**
 * __remove_mapping - take a folio isolated by reclaim out of its page cache
 * @f: locked, isolated, clean file folio (references: cache + isolation)
 * @target_memcg: the reclaim target (for the shadow entry)
 *
 * Returns true if the folio left the cache (a shadow entry replaces it, its refcount is frozen
 * to zero and the caller frees it); false if it is still in use or was truncated meanwhile.
 */
bool __remove_mapping(folio *f, mem_cgroup *target_memcg);

// Pages cached for @ino.
unsigned long filemap_nr_pages(inode *ino);

}  // namespace umemcg

namespace umemcg::emu {
// A new empty file with one reference.
inode *file_create();
// Takes / drops a reference; the last iput truncates the cache and frees the file.
void iget(inode *ino);
void iput(inode *ino);
// The machine's named file NAME (created on first use), with a reference for the caller.
inode *file_lookup(const std::string &name);
// Drops the machine's own references on every named file (machine shutdown).
void file_release_all();
}  // namespace umemcg::emu
