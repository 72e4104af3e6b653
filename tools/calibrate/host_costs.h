// SPDX-License-Identifier: GPL-2.0-only
// tools/calibrate/host_costs.h: timing the host kernel's own work for each cost the memory
// model charges in simulated mode (mm/cost_model.h): anon fault and zap, page-cache read miss
// and hit, memcg reclaim per page scanned (host_reclaim.cc), swap-out and swap-in
// (host_swap.cc). Each measurement runs one
// warm-up round, then CalibrateSizes::rounds rounds, and reports the median round's figure per
// page. A figure the host cannot show says why instead (no swap device, no memory cgroup, not
// root, a tmpfs directory, ...).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace umemcg::calibrate {

// What one measurement found: ns per step, or why there is no figure.
struct Figure {
  bool measured = false;
  std::uint64_t ns = 0;
  std::string how;  // measured: how; not measured: why not
};

struct CalibrateSizes {
  std::uint64_t anon_bytes = 64ull << 20;     // the anon mapping faulted and zapped
  std::uint64_t file_bytes = 16ull << 20;     // the file read missing, then cached
  std::uint64_t reclaim_bytes = 64ull << 20;  // page cache filled into the memcg, then reclaimed
  unsigned rounds = 7;                        // after one warm-up round
};

// The median of @v (the lower middle of an even count); 0 for none.
std::uint64_t median(std::vector<std::uint64_t> v);

// Anon fault (first write per page of a private anon mapping) and its zap (MADV_DONTNEED).
void measure_anon(const CalibrateSizes &sz, Figure *fault, Figure *zap);

// Page-cache read of a missing page and of a cached one: pread 4 KiB at a time through a file
// created in @dir (dropped with POSIX_FADV_DONTNEED between rounds). @dir must be on a
// disk-backed filesystem for the miss: a tmpfs has no disk to read.
void measure_page_cache(const CalibrateSizes &sz, const std::string &dir, Figure *miss,
                        Figure *hit);

// Reclaim per page scanned: page cache charged to a fresh memory cgroup of the host, then
// reclaimed whole (cgroup v2 memory.reclaim, or v1 memory.force_empty), timed, divided by the
// pages the kernel's counters say it scanned. The file lives in @dir.
Figure measure_reclaim(const CalibrateSizes &sz, const std::string &dir);

// Swap-out and swap-in per page, on a host with a swap device (host_swap.cc): anon pages
// charged to a fresh memory cgroup, reclaimed to swap (per page written), then written again
// (per page read back, less @fault_ns: the model charges swap_in on top of anon_fault).
void measure_swap(const CalibrateSizes &sz, std::uint64_t fault_ns, Figure *out, Figure *in);

// Monotonic clock, ns.
std::uint64_t now_ns();

// A temporary file of @bytes in @dir, written and synced (its pages clean); "" and *@why on
// failure. The caller unlinks it.
std::string make_file(const std::string &dir, std::uint64_t bytes, std::string *why);

}  // namespace umemcg::calibrate
