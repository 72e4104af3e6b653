// SPDX-License-Identifier: GPL-2.0-only
// tools/calibrate/host_swap.cc: the host kernel's swap-out and swap-in cost per page, when the
// host has a swap device (see host_costs.h: measure_swap).
//
// Each round charges anon pages to a new memory cgroup (host_cgroup.h: this process joins it,
// writes a byte per page, moves back), times the reclaim of the whole child (v2 memory.reclaim,
// v1 memory.force_empty) per page written to swap, then times writing every page again per
// page read back, and frees the pages and their slots (MADV_DONTNEED). The pages written and
// read back are /proc/vmstat's pswpout and pswpin (host-wide: swapping elsewhere on the host at
// the same time inflates them).
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tools/calibrate/host_cgroup.h"
#include "tools/calibrate/host_costs.h"

namespace umemcg::calibrate {

void measure_swap(const CalibrateSizes &sz, std::uint64_t fault_ns, Figure *out, Figure *in) {
  auto fail = [&](const std::string &why) { out->how = in->how = "not measured: " + why; };
  const Placement pl = find_placement();
  if (!pl.why.empty()) return fail(pl.why);
  const std::string pid = std::to_string(getpid());
  const std::string memcg = pl.parent + "/umemcg-calibrate-swap-" + pid;
  if (mkdir(memcg.c_str(), 0755) != 0)
    return fail("mkdir " + memcg + ": " + std::strerror(errno) + (geteuid() ? " (not root)" : ""));
  constexpr std::uint64_t kPage = 4096;
  const std::uint64_t pages = sz.reclaim_bytes / kPage;
  void *p = mmap(nullptr, sz.reclaim_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) {
    rmdir(memcg.c_str());
    return fail(std::string("mmap: ") + std::strerror(errno));
  }
  madvise(p, sz.reclaim_bytes, MADV_NOHUGEPAGE);  // 4 KiB pages, as the model's
  auto *bytes = static_cast<volatile char *>(p);
  std::vector<std::uint64_t> outs, ins;
  std::string why;
  for (unsigned r = 0; r <= sz.rounds && why.empty(); r++) {  // round 0: the warm-up
    if (int e = write_text(memcg + "/cgroup.procs", pid)) {
      why = "joining " + memcg + ": " + std::strerror(e);
      break;
    }
    for (std::uint64_t i = 0; i < pages; i++) bytes[i * kPage] = 1;
    if (int e = write_text(pl.home + "/cgroup.procs", pid)) {
      why = "moving back to " + pl.home + ": " + std::strerror(e);
      break;
    }
    const std::string v0 = read_text("/proc/vmstat");
    const std::uint64_t t0 = now_ns();
    const int e = pl.v2 ? write_text(memcg + "/memory.reclaim", std::to_string(sz.reclaim_bytes))
                        : write_text(memcg + "/memory.force_empty", "0");
    const std::uint64_t t1 = now_ns();
    const std::string v1 = read_text("/proc/vmstat");
    for (std::uint64_t i = 0; i < pages; i++) bytes[i * kPage] = 2;
    const std::uint64_t t2 = now_ns();
    const std::string v2 = read_text("/proc/vmstat");
    madvise(p, sz.reclaim_bytes, MADV_DONTNEED);  // the pages and their slots go
    const std::uint64_t written = stat_sum(v1, {"pswpout"}) - stat_sum(v0, {"pswpout"});
    const std::uint64_t read_back = stat_sum(v2, {"pswpin"}) - stat_sum(v1, {"pswpin"});
    // memory.reclaim and force_empty may stop short (EAGAIN, EBUSY): the counters say what
    // they did.
    if (e && e != EAGAIN && e != EBUSY)
      why = std::string(pl.v2 ? "memory.reclaim" : "memory.force_empty") + ": " + std::strerror(e);
    else if (written == 0 || read_back == 0)
      why = "the kernel's counters show no page written to swap and read back";
    else if (r > 0) {
      outs.push_back((t1 - t0) / written);
      ins.push_back((t2 - t1) / read_back);
    }
  }
  munmap(p, sz.reclaim_bytes);
  rmdir(memcg.c_str());
  if (!why.empty()) return fail(why);
  const std::string how = std::string(pl.v2 ? "cgroup v2" : "cgroup v1") + ": " +
                          std::to_string(sz.reclaim_bytes >> 20) +
                          " MiB of anon charged to a new memcg, ";
  const std::string rounds = " (/proc/vmstat); median of " + std::to_string(sz.rounds) + " rounds";
  out->measured = true;
  out->ns = median(outs);
  out->how = how + (pl.v2 ? "memory.reclaim" : "memory.force_empty") +
             " timed; per page written to swap, its scan included (pswpout)" + rounds;
  // The model charges a swap-in on top of the fault's own cost.
  const std::uint64_t back = median(ins);
  in->measured = true;
  in->ns = back > fault_ns ? back - fault_ns : 1;
  in->how = how + "then written again, timed; per page read back (pswpin), less the anon_fault "
                  "figure" + rounds;
}

}  // namespace umemcg::calibrate
