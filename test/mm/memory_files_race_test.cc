// SPDX-License-Identifier: GPL-2.0-only
// test/mm/memory_files_race_test.cc: control-file writers racing with chargers and with each
// other (memory.peak resets on several open files, memory.max/high changes), stepped with a
// seed in simulated mode and on real threads in native mode.
#include "test/mm/memcg_files_fixture.h"

#include <atomic>
#include <cstdlib>
#include <random>

using namespace umemcg;
using namespace umemcg::test;

namespace {

unsigned long parse_bytes(const std::string &s) { return std::strtoul(s.c_str(), nullptr, 10); }

// write_file() without Catch2 assertions (those are not thread-safe).
long write_quiet(mem_cgroup *memcg, const char *file, const std::string &data,
                 unsigned int flags = KF_O_RDWR) {
  CftFile f(&memcg->css, find_cftype(memory_files, file), flags);
  return f.write(data);
}

}  // namespace

TEST_CASE("memory files race: peak resets on several files and limit writes against chargers",
          "[mm][memcg][files][race]") {
  for (emu::Mode mode : kBothModes) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      if (mode == emu::Mode::native && seed > 1) continue;
      DYNAMIC_SECTION(mode_name(mode) << " seed " << seed) {
        WarnCheck wc;
        MemcgEnv env(v2_params(), mode, 4, seed);  // default reclaim/OOM: nothing to free
        mem_cgroup *c = env.mkdir(nullptr, "c");
        const cftype *peak = find_cftype(memory_files, "peak");
        std::atomic<int> bad_peak{0}, bad_write{0}, peak_reads{0};

        // The charger: 64-page charges (no stock), given back at random and at the end.
        env.machine().spawn("charger", [&] {
          std::mt19937_64 r(seed);
          long held = 0;
          for (int i = 0; i < 200; i++) {
            emu::KernelEntry k;
            if (held < 640 && r() % 3 && try_charge_memcg(c, GFP_KERNEL, 64) == 0) held += 64;
            if (held && r() % 2) {
              memcg_uncharge(c, 64);
              held -= 64;
            }
            current->memcg_nr_pages_over_high = 0;
            cond_resched();
          }
          emu::KernelEntry k;
          if (held) memcg_uncharge(c, static_cast<unsigned int>(held));
        }, {.cpu = 0});

        // Two peak watchers: each keeps two files open, resets and reads them, reopens some.
        for (int t = 1; t <= 2; t++) {
          env.machine().spawn("peak", [&, t] {
            std::mt19937_64 r(seed * 7 + t);
            for (int round = 0; round < 20; round++) {
              emu::KernelEntry k;
              CftFile a(&c->css, peak), b(&c->css, peak);
              for (int i = 0; i < 5; i++) {
                CftFile *f = r() % 2 ? &a : &b;
                if (f->write("reset") != 5) bad_write++;
                auto *ofp = static_cast<cgroup_of_peak *>(f->of()->priv);
                unsigned long reset_at = READ_ONCE(ofp->value);
                unsigned long got = parse_bytes(f->read());
                peak_reads++;
                // A file reads at least its own reset value (values only rise), and never more
                // than the charger ever held (640 pages).
                if (got < reset_at * PAGE_SIZE || got > 640 * PAGE_SIZE || got % PAGE_SIZE)
                  bad_peak++;
                cond_resched();
              }
            }
          }, {.cpu = t});
        }

        // A limit writer: max and high down (reclaim finds nothing; OOM finds nothing) and up.
        env.machine().spawn("limits", [&] {
          for (int i = 0; i < 10; i++) {
            emu::KernelEntry k;
            if (write_quiet(c, "max", "1M") != 2) bad_write++;
            if (write_quiet(c, "high", "512K", KF_O_WRONLY | KF_O_NONBLOCK) != 4) bad_write++;
            cond_resched();
            if (write_quiet(c, "max", "max") != 3) bad_write++;
            if (write_quiet(c, "high", "max\n") != 4) bad_write++;
            cond_resched();
          }
        }, {.cpu = 3});

        REQUIRE_FALSE(env.machine().run().deadlock);
        CHECK(bad_peak == 0);
        CHECK(bad_write == 0);
        CHECK(peak_reads == 200);
        env.run([&] {
          CHECK(read_file(c, "max") == "max\n");
          CHECK(read_file(c, "high") == "max\n");
          spin_lock(&c->peaks_lock);
          CHECK(c->memory_peaks == nullptr);  // every file unregistered at release
          spin_unlock(&c->peaks_lock);
          drain_all_stock(root_mem_cgroup);
          CHECK(page_counter_read(&c->memory) == 0);
        });
        env.finish();
      }
    }
  }
}
