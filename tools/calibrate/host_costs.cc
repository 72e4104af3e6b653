// SPDX-License-Identifier: GPL-2.0-only
// tools/calibrate/host_costs.cc: the host kernel's anon fault, zap and page-cache read costs
// (see host_costs.h).
#include "tools/calibrate/host_costs.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace umemcg::calibrate {

namespace {

constexpr std::uint64_t kPage = 4096;

// "N MiB" for the descriptions.
std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

std::string errno_text(const char *what) { return std::string(what) + ": " + std::strerror(errno); }

// The median ns per page of @rounds timed rounds, after one untimed warm-up round.
template <typename F>
std::uint64_t per_page_median(unsigned rounds, std::uint64_t pages, F &&round) {
  round();  // warm-up
  std::vector<std::uint64_t> t;
  for (unsigned r = 0; r < rounds; r++) t.push_back(round() / pages);
  return median(std::move(t));
}

}  // namespace

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t median(std::vector<std::uint64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

void measure_anon(const CalibrateSizes &sz, Figure *fault, Figure *zap) {
  const std::uint64_t pages = sz.anon_bytes / kPage;
  void *p = mmap(nullptr, sz.anon_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) {
    fault->how = zap->how = "not measured: " + errno_text("mmap");
    return;
  }
  // One fault per 4 KiB page, as the model's: no transparent huge page (an error here only
  // means the kernel has no THP).
  madvise(p, sz.anon_bytes, MADV_NOHUGEPAGE);
  auto *bytes = static_cast<volatile char *>(p);
  std::vector<std::uint64_t> faults, zaps;
  bool dontneed_failed = false;
  for (unsigned r = 0; r <= sz.rounds; r++) {  // round 0: the warm-up
    const std::uint64_t t0 = now_ns();
    for (std::uint64_t i = 0; i < pages; i++) bytes[i * kPage] = 1;
    const std::uint64_t t1 = now_ns();
    dontneed_failed |= madvise(p, sz.anon_bytes, MADV_DONTNEED) != 0;
    const std::uint64_t t2 = now_ns();
    if (r == 0) continue;
    faults.push_back((t1 - t0) / pages);
    zaps.push_back((t2 - t1) / pages);
  }
  munmap(p, sz.anon_bytes);
  const std::string rounds = "; median of " + std::to_string(sz.rounds) + " rounds";
  fault->measured = true;
  fault->ns = median(faults);
  fault->how = "mmap " + mib(sz.anon_bytes) +
               " private anon (MADV_NOHUGEPAGE), write one byte per page; per page" + rounds;
  if (dontneed_failed) {
    zap->how = "not measured: madvise(MADV_DONTNEED) failed";
    return;
  }
  zap->measured = true;
  zap->ns = median(zaps);
  zap->how = "madvise(MADV_DONTNEED) of those " + mib(sz.anon_bytes) + ", every page present; per page" + rounds;
}

std::string make_file(const std::string &dir, std::uint64_t bytes, std::string *why) {
  std::string path = dir + "/umemcg-calibrate-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return *why = errno_text(("mkstemp in " + dir).c_str()), "";
  std::vector<char> buf(1 << 20, 'x');
  bool ok = true;
  for (std::uint64_t done = 0; ok && done < bytes; done += buf.size())
    ok = write(fd, buf.data(), buf.size()) == static_cast<ssize_t>(buf.size());
  ok = ok && fsync(fd) == 0;  // clean pages: POSIX_FADV_DONTNEED can drop them
  if (!ok) *why = errno_text(("writing " + path).c_str());
  close(fd);
  if (!ok) {
    unlink(path.c_str());
    return "";
  }
  return path;
}

void measure_page_cache(const CalibrateSizes &sz, const std::string &dir, Figure *miss,
                        Figure *hit) {
  struct statfs st{};
  if (statfs(dir.c_str(), &st) != 0) {
    miss->how = hit->how = "not measured: " + errno_text(("statfs " + dir).c_str());
    return;
  }
  const bool memory_fs = st.f_type == TMPFS_MAGIC || st.f_type == RAMFS_MAGIC;
  std::string why;
  const std::string path = make_file(dir, sz.file_bytes, &why);
  if (path.empty()) {
    miss->how = hit->how = "not measured: " + why;
    return;
  }
  const int fd = open(path.c_str(), O_RDONLY);
  unlink(path.c_str());  // gone when closed
  if (fd < 0) {
    miss->how = hit->how = "not measured: " + errno_text("open");
    return;
  }
  const std::uint64_t pages = sz.file_bytes / kPage;
  char buf[kPage];
  bool read_failed = false;
  auto read_all = [&] {
    const std::uint64_t t0 = now_ns();
    for (std::uint64_t i = 0; i < pages; i++)
      read_failed |= pread(fd, buf, kPage, static_cast<off_t>(i * kPage)) != kPage;
    return now_ns() - t0;
  };
  const std::string rounds = "; median of " + std::to_string(sz.rounds) + " rounds";
  if (memory_fs) {
    miss->how = "not measured: " + dir + " is a tmpfs/ramfs (no disk to miss to); give --dir";
  } else {
    miss->ns = per_page_median(sz.rounds, pages, [&] {
      posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      return read_all();
    });
    miss->measured = true;
    miss->how = "pread 4 KiB at a time through a " + mib(sz.file_bytes) + " file in " + dir +
                " after POSIX_FADV_DONTNEED (readahead on); per page" + rounds;
  }
  read_all();  // cached now
  hit->ns = per_page_median(sz.rounds, pages, read_all);
  hit->measured = true;
  hit->how = "pread 4 KiB at a time through the same file, cached; per page" + rounds;
  close(fd);
  if (read_failed) {
    miss->measured = hit->measured = false;
    miss->how = hit->how = "not measured: a pread came back short";
  }
}

}  // namespace umemcg::calibrate
