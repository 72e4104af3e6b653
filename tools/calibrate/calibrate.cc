// SPDX-License-Identifier: GPL-2.0-only
// tools/calibrate/calibrate.cc: `umemcg calibrate`: options, and the cost table it prints (see
// calibrate.h).
#include "tools/calibrate/calibrate.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include "mm/cost_model.h"
#include "tools/calibrate/host_costs.h"
#include "tools/sh/sh_options.h"

namespace umemcg::calibrate {

namespace {

struct Options {
  CalibrateSizes sizes;
  std::string dir;  // empty: $TMPDIR, else /var/tmp
  bool cgroup = true;
};

bool parse_options(const std::vector<std::string> &args, Options *o, std::string *error) {
  for (size_t i = 0; i < args.size(); i++) {
    const std::string &a = args[i];
    if (a == "--quick") {
      o->sizes.anon_bytes = 8ull << 20;
      o->sizes.file_bytes = 4ull << 20;
      o->sizes.reclaim_bytes = 8ull << 20;
      o->sizes.rounds = 3;
    } else if (a == "--no-cgroup") {
      o->cgroup = false;
    } else if (a == "--rounds" || a == "--dir") {
      if (i + 1 >= args.size()) return *error = a + ": needs a value", false;
      const std::string &v = args[++i];
      long long n = 0;
      if (a == "--dir") {
        if (v.empty()) return *error = "--dir: needs a directory", false;
        o->dir = v;
      } else if (!sh::parse_int(v, 1, 101, &n) || n % 2 == 0) {
        return *error = "--rounds '" + v + "': not an odd number in 1..101", false;
      } else {
        o->sizes.rounds = static_cast<unsigned>(n);
      }
    } else {
      return *error = a + ": unknown option", false;
    }
  }
  return true;
}

// One table line: NAME NS, then the comment.
void print_line(std::ostream &out, const emu::CostName &n, const Figure &f) {
  // A table's costs are 1..kCostMaxNs: a step timed at less than 1 ns says 1.
  const std::uint64_t ns = f.measured ? std::clamp<std::uint64_t>(f.ns, 1, emu::kCostMaxNs)
                                      : emu::CostModel{}.*n.field;
  out << n.name << " " << ns << "  # " << n.what << ": "
      << (f.measured ? f.how : f.how + "; the built-in figure") << "\n";
}

// /proc/swaps: a header line, then one line per active swap device.
bool host_has_swap() {
  std::ifstream f("/proc/swaps");
  std::string line;
  int n = 0;
  while (std::getline(f, line)) n++;
  return n > 1;
}

}  // namespace

const char *calibrate_usage() {
  return "usage: umemcg calibrate [--quick] [--rounds N] [--dir DIR] [--no-cgroup]\n"
         "  Times the host kernel's own work for each cost of the simulated-mode cost model and\n"
         "  prints a cost table (`umemcg sh --costs FILE` reads it): one `NAME NS` line per cost,\n"
         "  with how it was measured; a cost the host cannot show keeps the built-in figure and\n"
         "  says why. Each figure: one warm-up round, then the median of N rounds.\n"
         "  --quick       small sizes and 3 rounds (a smoke run of a few seconds)\n"
         "  --rounds N    timed rounds per figure, odd, 1..101 (default 7)\n"
         "  --dir DIR     where the page-cache test file goes, on a disk-backed filesystem\n"
         "                (default $TMPDIR, else /var/tmp)\n"
         "  --no-cgroup   do not create a memory cgroup on the host (no reclaim or swap figure)\n";
}

int calibrate_main(const std::vector<std::string> &args, std::ostream &out, std::ostream &err) {
  Options o;
  std::string error;
  if (!parse_options(args, &o, &error)) {
    err << "umemcg calibrate: " << error << "\n" << calibrate_usage();
    return 2;
  }
  if (o.dir.empty()) {
    const char *t = std::getenv("TMPDIR");
    o.dir = t && *t ? t : "/var/tmp";
  }
  utsname u{};
  uname(&u);
  out << "# umemcg calibrate: the host kernel's cost of each step the memory model charges in\n"
      << "# simulated mode, ns (a cost table: umemcg sh --costs FILE)\n"
      << "# host: " << u.sysname << " " << u.release << " " << u.machine << ", "
      << sysconf(_SC_NPROCESSORS_ONLN) << " CPUs online; each figure: one warm-up round, then "
      << "the median of " << o.sizes.rounds << " rounds\n";
  std::map<std::string, Figure> figs;
  measure_anon(o.sizes, &figs["anon_fault"], &figs["zap"]);
  measure_page_cache(o.sizes, o.dir, &figs["read_miss"], &figs["read_hit"]);
  figs["reclaim_scan"] = o.cgroup ? measure_reclaim(o.sizes, o.dir)
                                  : Figure{false, 0, "not measured: --no-cgroup"};
  figs["reclaim_visit"].how =
      "not measured: the host's reclaim walk shows no cost per memcg apart from its pages";
  if (!host_has_swap()) {
    figs["swap_out"].how = figs["swap_in"].how = "not measured: the host has no swap device";
  } else if (!o.cgroup) {
    figs["swap_out"].how = figs["swap_in"].how = "not measured: --no-cgroup";
  } else {
    const Figure &fault = figs["anon_fault"];
    measure_swap(o.sizes, fault.measured ? fault.ns : emu::CostModel{}.anon_fault,
                 &figs["swap_out"], &figs["swap_in"]);
  }
  for (const emu::CostName &n : emu::cost_names()) print_line(out, n, figs[n.name]);
  return 0;
}

}  // namespace umemcg::calibrate
