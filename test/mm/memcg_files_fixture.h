// SPDX-License-Identifier: GPL-2.0-only
// test/mm/memcg_files_fixture.h: what the control-file tests share: a scripted stand-in for
// reclaim and the OOM killer (memcg_reclaim_ops) that counts its calls and can free charged
// pages from the test's ledger, one-shot read/write helpers over a cftype table, and the
// machines with cgroups most of the tests start from (Catch2 fixtures: FilesC, FilesV1C, FilesPC).
#pragma once

#include "test/support/memcg_env.h"

#include <algorithm>
#include <string>
#include <vector>

#include "mm/memcontrol_files.h"
#include "test/support/cftype_harness.h"

namespace umemcg::test {

struct FilesScript {
  enum Mode {
    kZero,   // reclaim frees nothing
    kMin32,  // reclaim reports max(nr, SWAP_CLUSTER_MAX) pages, as real reclaim's minimum does
    kFree,   // reclaim uncharges up to nr pages (at least 1) of the target's own ledger pages
  };
  Mode mode = kZero;
  bool oom_kills = false;  // the OOM stand-in uncharges all of the target's ledger pages
  bool oom_ret = false;    // what the OOM stand-in returns
  MemcgEnv *env = nullptr;

  int reclaim_calls = 0;
  int oom_calls = 0;
  std::vector<unsigned long> nr;
  std::vector<unsigned int> opts;
  std::vector<int> swappiness;  // -1: no swappiness passed
};
inline FilesScript g_files;

inline unsigned long files_reclaim(mem_cgroup *memcg, unsigned long nr, gfp_t, unsigned int opts,
                                   int *swappiness) {
  FilesScript &s = g_files;
  s.reclaim_calls++;
  s.nr.push_back(nr);
  s.opts.push_back(opts);
  s.swappiness.push_back(swappiness ? *swappiness : -1);
  switch (s.mode) {
    case FilesScript::kMin32:
      return std::max(nr, SWAP_CLUSTER_MAX);
    case FilesScript::kFree: {
      long have = s.env->ledger.user_pages[memcg];
      unsigned long n = std::min<unsigned long>(std::max(nr, 1UL), static_cast<unsigned long>(have));
      if (n) s.env->uncharge(memcg, static_cast<unsigned int>(n));
      return n;
    }
    default:
      return 0;
  }
}

inline bool files_oom(mem_cgroup *memcg, gfp_t, int) {
  FilesScript &s = g_files;
  s.oom_calls++;
  if (s.oom_kills) {
    long have = s.env->ledger.user_pages[memcg];
    if (have) s.env->uncharge(memcg, static_cast<unsigned int>(have));
  }
  return s.oom_ret;
}

inline const memcg_reclaim_ops files_ops = {files_reclaim, files_oom};

inline memcg_boot_params files_params(bool v1 = false, bool localevents = false) {
  memcg_boot_params p = v1 ? v1_params() : v2_params();
  p.memory_localevents = localevents;
  p.ops = &files_ops;
  return p;
}

// The memory controller's table for the booted hierarchy.
inline const cftype *memcg_table() {
  return do_memsw_account() ? mem_cgroup_legacy_files : memory_files;
}

// One open-write-release of @file on @memcg (inside a kernel task). Returns the handler's result.
inline long write_file(mem_cgroup *memcg, const char *file, const std::string &data,
                       unsigned int flags = KF_O_RDWR) {
  const cftype *cft = find_cftype(memcg_table(), file);
  CHECK(cft);
  if (!cft) return -ENOENT;
  CftFile f(&memcg->css, cft, flags);
  return f.write(data);
}

// One open-read-release of @file on @memcg: the text, or "<err N>".
inline std::string read_file(mem_cgroup *memcg, const char *file) {
  const cftype *cft = find_cftype(memcg_table(), file);
  CHECK(cft);
  if (!cft) return "<no file>";
  CftFile f(&memcg->css, cft);
  return f.read();
}

inline long len(const std::string &s) { return static_cast<long>(s.size()); }

// @pages pages in bytes, as a file shows them.
inline std::string bytes(unsigned long pages) { return std::to_string(pages * PAGE_SIZE) + "\n"; }

// A fresh script in @mode for the stand-ins, uncharging from @env's ledger.
inline void reset_script(MemcgEnv *env, FilesScript::Mode mode = FilesScript::kZero) {
  g_files = FilesScript{};
  g_files.env = env;
  g_files.mode = mode;
}

// The set-up most control-file tests start from: a files_params() machine (cgroup v1 when @v1),
// a fresh kZero script and one cgroup "c" below the root. Tests take it through
// TEST_CASE_METHOD as FilesC (v2) or FilesV1C; one that wants another mode sets g_files.mode.
struct FilesCgroup {
  WarnCheck wc;
  MemcgEnv env;
  mem_cgroup *c;
  explicit FilesCgroup(bool v1) : env(files_params(v1)) {
    reset_script(&env);
    c = env.mkdir(nullptr, "c");
  }
};
struct FilesC : FilesCgroup {
  FilesC() : FilesCgroup(false) {}
};
struct FilesV1C : FilesCgroup {
  FilesV1C() : FilesCgroup(true) {}
};
// A files_params() machine (v2), a fresh kZero script, cgroup "p" below the root and "c" below p.
struct FilesPC {
  WarnCheck wc;
  MemcgEnv env{files_params()};
  mem_cgroup *p, *c;
  FilesPC() {
    reset_script(&env);
    p = env.mkdir(nullptr, "p");
    c = env.mkdir(p, "c");
  }
};

}  // namespace umemcg::test
