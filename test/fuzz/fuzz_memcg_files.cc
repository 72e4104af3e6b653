// SPDX-License-Identifier: GPL-2.0-only
// test/fuzz/fuzz_memcg_files.cc: libFuzzer target for the memory controller's control-file
// write handlers (v2 memory_files[] and v1 mem_cgroup_legacy_files[]). Any bytes written to any
// writable file must give success or an -errno: crashes, sanitizer reports, hangs, warnings and
// lost charges are bugs. After every write the charge-path invariants are checked against the
// pages the target holds charged, and the cgroup's limits are reset for the next input.
//
// Input: byte 0 picks the hierarchy (bit 7: v1), the cgroup (bit 6: the root, else a child
// holding 100 charged pages) and the file (the rest, modulo the table's writable rows); byte 1
// bit 0 opens the file O_NONBLOCK; the remaining bytes are written (NUL-terminated copy, at
// most one page as kernfs allows). Reclaim and the OOM killer are the defaults (nothing to
// reclaim, nothing to kill), so every write loop has to end by its own rules.
// Seeds: FUZZ_MEMCG_FILES_WRITE_SEEDS=corpus <build>/test/fuzz/fuzz-memcg-files; then
//   <build>/test/fuzz/fuzz-memcg-files -max_total_time=60 -max_len=4200 corpus
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#undef WARN
#include "kernel/cgroup.h"
#include "mm/memcontrol.h"
#include "mm/memcontrol_files.h"
#include "mm/memcontrol_internal.h"
#include "shim/bug.h"
#include "shim/machine.h"
#include "test/support/cftype_harness.h"
#include "test/support/memcg_invariants.h"

namespace {

using namespace umemcg;
using namespace umemcg::test;

constexpr unsigned int kCharged = 100;

struct State {
  std::unique_ptr<emu::Machine> m;
  bool v1 = false;
  mem_cgroup *child = nullptr;
  ChargeLedger ledger;
};
State *g_state = nullptr;

void die(const char *what, const std::string &detail) {
  std::fprintf(stderr, "fuzz-memcg-files: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void run(const std::function<void()> &fn) {
  emu::RunResult r = g_state->m->exec(fn, 0);
  if (r.deadlock) die("deadlock", r.report);
}

void teardown() {
  if (!g_state->m) return;
  run([] {
    memcg_uncharge(g_state->child, kCharged);
    drain_all_stock(root_mem_cgroup);
  });
  g_state->ledger = ChargeLedger{};
  g_state->m.reset();
}

void boot(bool v1) {
  teardown();
  emu::MachineConfig cfg;
  cfg.mode = emu::Mode::simulated;
  cfg.nr_cpus = 2;
  cfg.seed = 1;
  g_state->m = std::make_unique<emu::Machine>(cfg);
  g_state->v1 = v1;
  memcg_boot_params p;
  p.v1 = v1;
  int ret = -1;
  run([&] { ret = mem_cgroup_boot(p); });
  if (ret) die("boot failed", std::to_string(ret));
  run([] {
    int err = 0;
    cgroup *c = cgroup_mkdir(root_mem_cgroup->css.cgroup, "c", &err);
    if (!c) die("mkdir failed", std::to_string(err));
    g_state->child = mem_cgroup_from_cgroup(c);
    if (try_charge_memcg(g_state->child, GFP_KERNEL, kCharged)) die("charge failed", "");
  });
  g_state->ledger.user_pages[g_state->child] = kCharged;
}

std::vector<const cftype *> writable(const cftype *table) {
  std::vector<const cftype *> rows;
  for (const cftype *c = table; c->name[0]; c++)
    if (c->write || c->write_u64 || c->write_s64) rows.push_back(c);
  return rows;
}

// Puts back what a write may have changed, so that inputs do not depend on each other.
void reset(mem_cgroup *memcg) {
  memory_cgrp_subsys.css_reset(&memcg->css);
  WRITE_ONCE(memcg->oom_group, false);
  WRITE_ONCE(memcg->oom_kill_disable, false);
  WRITE_ONCE(memcg->swappiness, 60);
  WRITE_ONCE(vm_swappiness, 60);
  page_counter_reset_watermark(&memcg->memory);
  WRITE_ONCE(memcg->memory.failcnt, 0UL);
}

void write_seeds(const char *dir) {
  struct Seed {
    unsigned char sel, flags;
    const char *data;
  };
  const Seed seeds[] = {{0, 0, "1M"}, {1, 0, "max\n"}, {2, 1, "4096"}, {3, 0, "0x1000"},
                        {4, 0, "1"},  {5, 0, "1M swappiness=max"}, {6, 0, "16E"},
                        {0x80, 0, "-1"}, {0x81, 0, "2M"}, {0x82, 0, "0"}, {0xc0, 0, "1K"}};
  int i = 0;
  for (const Seed &s : seeds) {
    std::ofstream f(std::string(dir) + "/seed" + std::to_string(i++), std::ios::binary);
    f.put(static_cast<char>(s.sel));
    f.put(static_cast<char>(s.flags));
    f << s.data;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  if (const char *dir = std::getenv("FUZZ_MEMCG_FILES_WRITE_SEEDS")) {
    write_seeds(dir);
    std::exit(0);
  }
  emu::set_warnings_quiet(true);
  g_state = new State;
  boot(false);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  bool v1 = data[0] & 0x80;
  bool on_root = data[0] & 0x40;
  unsigned int flags = KF_O_RDWR | ((data[1] & 1) ? KF_O_NONBLOCK : 0);
  std::string text(reinterpret_cast<const char *>(data + 2), size - 2);

  if (v1 != g_state->v1) boot(v1);
  std::vector<const cftype *> rows = writable(v1 ? mem_cgroup_legacy_files : memory_files);
  const cftype *cft = rows[(data[0] & 0x3f) % rows.size()];

  std::uint64_t warns = emu::warn_count();
  run([&] {
    mem_cgroup *memcg = on_root ? root_mem_cgroup : g_state->child;
    // The cgroup core creates no file where the row says it does not exist.
    if (on_root && (cft->flags & CFTYPE_NOT_ON_ROOT)) return;
    CftFile f(&memcg->css, cft, flags);
    if (f.open_ret()) return;
    long ret = f.write(text);
    if (ret != static_cast<long>(text.size()) && (ret >= 0 || ret < -4095))
      die("bad write result", std::string(cft->name) + ": " + std::to_string(ret));
    // Reading back must work too (write-only files excepted).
    std::string out;
    if (cft->seq_show || cft->read_u64 || cft->read_s64) {
      int r = f.read(&out);
      if (r && std::string(cft->name) != "pressure_level")
        die("read failed", std::string(cft->name) + ": " + std::to_string(r));
    }
  });
  if (emu::warn_count() != warns) die("kernel warning", cft->name);

  std::string v = check_memcg_invariants(g_state->ledger);
  if (!v.empty()) die("invariant broken", std::string(cft->name) + ": " + v);
  run([] {
    reset(g_state->child);
    reset(root_mem_cgroup);
  });
  return 0;
}
