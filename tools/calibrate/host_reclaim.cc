// SPDX-License-Identifier: GPL-2.0-only
// tools/calibrate/host_reclaim.cc: the host kernel's memcg reclaim cost per page scanned (see
// host_costs.h: measure_reclaim).
//
// The memory cgroup is a new child (host_cgroup.h). Each round drops the file from the page
// cache, moves this process into the child, reads the file (its pages are charged to the
// child), moves back (charges stay where they are), then times the reclaim of the whole child:
// v2 memory.reclaim of the file's size, v1 memory.force_empty. The pages scanned and reclaimed
// come from the child's memory.stat (v2 pgscan, pgsteal) or, on v1 whose memory.stat has no scan
// counters, from /proc/vmstat (pgscan_anon + pgscan_file, pgsteal_anon + pgsteal_file:
// host-wide, so reclaim elsewhere on the host at the same time inflates them).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "tools/calibrate/host_cgroup.h"
#include "tools/calibrate/host_costs.h"

namespace umemcg::calibrate {

namespace {

// One round's figures.
struct Round {
  std::uint64_t ns = 0, scanned = 0, reclaimed = 0;
};

}  // namespace

Figure measure_reclaim(const CalibrateSizes &sz, const std::string &dir) {
  Figure fig;
  const Placement pl = find_placement();
  if (!pl.why.empty()) return fig.how = "not measured: " + pl.why, fig;
  const std::string memcg = pl.parent + "/umemcg-calibrate-" + std::to_string(getpid());
  if (mkdir(memcg.c_str(), 0755) != 0)
    return fig.how = "not measured: mkdir " + memcg + ": " + std::strerror(errno) +
                     (geteuid() ? " (not root)" : ""),
           fig;
  std::string why;
  const std::string path = make_file(dir, sz.reclaim_bytes, &why);
  const int fd = path.empty() ? -1 : open(path.c_str(), O_RDONLY);
  if (!path.empty()) unlink(path.c_str());
  if (fd < 0) {
    rmdir(memcg.c_str());
    return fig.how = "not measured: " + (why.empty() ? std::string("open failed") : why), fig;
  }
  const std::string pid = std::to_string(getpid());
  // The scan and steal counters now: {scanned, reclaimed}.
  auto counters = [&] {
    const std::string text = pl.v2 ? read_text(memcg + "/memory.stat") : read_text("/proc/vmstat");
    return std::pair{pl.v2 ? stat_sum(text, {"pgscan"}) : stat_sum(text, {"pgscan_anon", "pgscan_file"}),
                     pl.v2 ? stat_sum(text, {"pgsteal"})
                           : stat_sum(text, {"pgsteal_anon", "pgsteal_file"})};
  };
  std::vector<char> buf(1 << 20);
  std::vector<Round> rounds;
  for (unsigned i = 0; i <= sz.rounds && why.empty(); i++) {  // round 0: the warm-up
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (int e = write_text(memcg + "/cgroup.procs", pid)) {
      why = "joining " + memcg + ": " + std::strerror(e);
      break;
    }
    for (std::uint64_t off = 0; off < sz.reclaim_bytes; off += buf.size())
      if (pread(fd, buf.data(), buf.size(), static_cast<off_t>(off)) <= 0) why = "reading the file back failed";
    if (int e = write_text(pl.home + "/cgroup.procs", pid)) {
      why = "moving back to " + pl.home + ": " + std::strerror(e);
      break;
    }
    Round r;
    const auto before = counters();
    const std::uint64_t t0 = now_ns();
    // memory.reclaim may stop short with EAGAIN: the counters say what it did.
    const int e = pl.v2 ? write_text(memcg + "/memory.reclaim", std::to_string(sz.reclaim_bytes))
                        : write_text(memcg + "/memory.force_empty", "0");
    r.ns = now_ns() - t0;
    const auto after = counters();
    r.scanned = after.first - before.first;
    r.reclaimed = after.second - before.second;
    if (e && e != EAGAIN) why = std::string(pl.v2 ? "memory.reclaim" : "memory.force_empty") +
                                ": " + std::strerror(e);
    else if (r.scanned == 0) why = "the kernel's counters show no page scanned";
    if (i > 0) rounds.push_back(r);
  }
  close(fd);
  rmdir(memcg.c_str());
  if (!why.empty()) return fig.how = "not measured: " + why, fig;
  std::vector<std::uint64_t> per_page, scanned, reclaimed;
  for (const Round &r : rounds) {
    per_page.push_back(r.ns / r.scanned);
    scanned.push_back(r.scanned);
    reclaimed.push_back(r.reclaimed);
  }
  fig.measured = true;
  fig.ns = median(per_page);
  fig.how = std::string(pl.v2 ? "cgroup v2" : "cgroup v1") + ": " +
            std::to_string(sz.reclaim_bytes >> 20) + " MiB of clean page cache charged to a new memcg, " +
            (pl.v2 ? "memory.reclaim" : "memory.force_empty") +
            " timed; per page scanned (" +
            (pl.v2 ? "its memory.stat pgscan" : "/proc/vmstat pgscan_anon+pgscan_file") +
            ", median " + std::to_string(median(scanned)) + " scanned and " +
            std::to_string(median(reclaimed)) + " reclaimed a round); median of " +
            std::to_string(sz.rounds) + " rounds";
  return fig;
}

}  // namespace umemcg::calibrate
