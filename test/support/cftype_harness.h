// SPDX-License-Identifier: GPL-2.0-only
// test/support/cftype_harness.h: drives a controller's cftype handlers directly, the way the
// cgroup core calls them (kernel/cftype.h): open (cftype::open), write (a NUL-terminated copy of
// the data; write_u64/write_s64 rows parsed with kstrtoull/kstrtoll first; -E2BIG past
// max_write_len), read (seq_show from offset 0, or "%llu\n"/"%lld\n" of read_u64/read_s64) and
// release (cftype::release). Call from inside a kernel task (MemcgEnv::run).
//
// Emulation: a handler's return value is what the writer sees; the kernfs layer's partial-write
// and offset handling is not involved.
#pragma once

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernel/cftype.h"
#include "mm/cmdline.h"
#include "shim/errno.h"
#include "shim/types.h"

namespace umemcg::test {

// The row named @name in a table ending with an empty row, or nullptr.
inline const cftype *find_cftype(const cftype *table, const char *name) {
  for (const cftype *c = table; c->name[0]; c++)
    if (!std::strcmp(c->name, name)) return c;
  return nullptr;
}

// One open file of @cft on @css.
class CftFile {
 public:
  CftFile(cgroup_subsys_state *css, const cftype *cft, unsigned int flags = KF_O_RDWR) {
    of_.css = css;
    of_.cft = cft;
    of_.seq = &sf_;
    of_.file_flags = flags;
    sf_.of = &of_;
    open_ret_ = cft->open ? cft->open(&of_) : 0;
    open_ = open_ret_ == 0;
  }
  ~CftFile() { close(); }
  CftFile(const CftFile &) = delete;
  CftFile &operator=(const CftFile &) = delete;

  int open_ret() const { return open_ret_; }
  kernfs_open_file *of() { return &of_; }

  void close() {
    if (open_ && of_.cft->release) of_.cft->release(&of_);
    open_ = false;
  }

  // Writes @data (any bytes, embedded NULs included): the handler's result.
  long write(const std::string &data) {
    const cftype *cft = of_.cft;
    size_t max_len = cft->max_write_len ? cft->max_write_len : PAGE_SIZE;
    if (data.size() > max_len) return -E2BIG;
    std::vector<char> buf(data.begin(), data.end());
    buf.push_back('\0');
    if (cft->write) return cft->write(&of_, buf.data(), data.size(), 0);
    if (cft->write_u64) {
      unsigned long long v;
      int ret = kstrtoull(buf.data(), 0, &v);
      if (!ret) ret = cft->write_u64(of_.css, cft, v);
      return ret ? ret : static_cast<long>(data.size());
    }
    if (cft->write_s64) {
      long long v;
      int ret = kstrtoll(buf.data(), 0, &v);
      if (!ret) ret = cft->write_s64(of_.css, cft, v);
      return ret ? ret : static_cast<long>(data.size());
    }
    return -EINVAL;  // not writable
  }

  // Reads the whole file into *@out; returns 0 or the handler's -errno.
  int read(std::string *out) {
    const cftype *cft = of_.cft;
    char num[32];
    out->clear();
    if (cft->seq_show) {
      sf_.buf.clear();
      int ret = cft->seq_show(&sf_, nullptr);
      if (ret) return ret;
      *out = sf_.buf;
      return 0;
    }
    if (cft->read_u64) {
      std::snprintf(num, sizeof(num), "%" PRIu64 "\n",
                    static_cast<std::uint64_t>(cft->read_u64(of_.css, cft)));
      *out = num;
      return 0;
    }
    if (cft->read_s64) {
      std::snprintf(num, sizeof(num), "%" PRId64 "\n",
                    static_cast<std::int64_t>(cft->read_s64(of_.css, cft)));
      *out = num;
      return 0;
    }
    return -EINVAL;  // not readable
  }
  std::string read() {
    std::string s;
    int ret = read(&s);
    return ret ? "<err " + std::to_string(ret) + ">" : s;
  }

 private:
  kernfs_open_file of_;
  seq_file sf_;
  int open_ret_ = 0;
  bool open_ = false;
};

}  // namespace umemcg::test
