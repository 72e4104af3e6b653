// SPDX-License-Identifier: GPL-2.0-only
// test/mm/memory_files_test.cc: the cgroup v2 memory control files (kernel-semantics section 4,
// reclaim-oom-kernfs sections 3 and 7.1), driven through their cftype rows.
#include "test/mm/memcg_files_fixture.h"

#include <cstring>

#include "shim/errno.h"

using namespace umemcg;
using namespace umemcg::test;

TEST_CASE("memory files: the v2 table has the kernel's rows, flags and handler kinds",
          "[mm][memcg][files]") {
  struct Row {
    const char *name;
    unsigned int flags;
    bool readable, writable, per_open;
  };
  const Row rows[] = {
      {"current", CFTYPE_NOT_ON_ROOT, true, false, false},
      {"peak", CFTYPE_NOT_ON_ROOT, true, true, true},
      {"min", CFTYPE_NOT_ON_ROOT, true, true, false},
      {"low", CFTYPE_NOT_ON_ROOT, true, true, false},
      {"high", CFTYPE_NOT_ON_ROOT, true, true, false},
      {"max", CFTYPE_NOT_ON_ROOT, true, true, false},
      {"events", CFTYPE_NOT_ON_ROOT, true, false, false},
      {"events.local", CFTYPE_NOT_ON_ROOT, true, false, false},
      {"stat", 0, true, false, false},
      {"numa_stat", 0, true, false, false},
      {"oom.group", CFTYPE_NOT_ON_ROOT | CFTYPE_NS_DELEGATABLE, true, true, false},
      {"reclaim", CFTYPE_NS_DELEGATABLE, false, true, false},
      {"swap.current", CFTYPE_NOT_ON_ROOT, true, false, false},
      {"swap.high", CFTYPE_NOT_ON_ROOT, true, true, false},
      {"swap.max", CFTYPE_NOT_ON_ROOT, true, true, false},
      {"swap.peak", CFTYPE_NOT_ON_ROOT, true, true, true},
      {"swap.events", CFTYPE_NOT_ON_ROOT, true, false, false},
  };
  int n = 0;
  for (const cftype *c = memory_files; c->name[0]; c++) n++;
  CHECK(n == static_cast<int>(sizeof(rows) / sizeof(rows[0])));
  for (const Row &r : rows) {
    INFO(r.name);
    const cftype *c = find_cftype(memory_files, r.name);
    REQUIRE(c);
    CHECK(c->flags == r.flags);
    CHECK(static_cast<bool>(c->seq_show || c->read_u64) == r.readable);
    CHECK(static_cast<bool>(c->write) == r.writable);
    CHECK(static_cast<bool>(c->open) == r.per_open);
    CHECK(static_cast<bool>(c->release) == r.per_open);
  }
  // CONFIG_ZSWAP is off; memory.stat / numa_stat live with the statistics.
  CHECK_FALSE(find_cftype(memory_files, "zswap.current"));
  CHECK_FALSE(find_cftype(memory_files, "zswap.max"));
  CHECK_FALSE(find_cftype(memory_files, "zswap.writeback"));
  // Notification targets.
  CHECK(find_cftype(memory_files, "events")->file_offset == offsetof(mem_cgroup, events_file));
  CHECK(find_cftype(memory_files, "events.local")->file_offset ==
        offsetof(mem_cgroup, events_local_file));
  CHECK(find_cftype(memory_files, "swap.events")->file_offset ==
        offsetof(mem_cgroup, swap_events_file));
  CHECK(memory_cgrp_subsys.dfl_cftypes == memory_files);
  CHECK(memory_cgrp_subsys.legacy_cftypes == mem_cgroup_legacy_files);
  CHECK(memory_cgrp_subsys.css_reset == mem_cgroup_css_reset);
}

TEST_CASE_METHOD(FilesC, "memory files: defaults of a new cgroup", "[mm][memcg][files]") {
  env.run([&] {
    CHECK(read_file(c, "current") == "0\n");
    CHECK(read_file(c, "min") == "0\n");
    CHECK(read_file(c, "low") == "0\n");
    CHECK(read_file(c, "high") == "max\n");
    CHECK(read_file(c, "max") == "max\n");
    CHECK(read_file(c, "peak") == "0\n");
    CHECK(read_file(c, "oom.group") == "0\n");
    CHECK(read_file(c, "swap.current") == "0\n");
    CHECK(read_file(c, "swap.high") == "max\n");
    CHECK(read_file(c, "swap.max") == "max\n");
    CHECK(read_file(c, "swap.peak") == "0\n");
    CHECK(read_file(c, "swap.events") == "high 0\nmax 0\nfail 0\n");
    CHECK(read_file(c, "events") ==
          "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\nsock_throttled 0\n");
    // v2 has no per-cgroup swappiness: a new cgroup takes the global value.
    CHECK(c->swappiness == vm_swappiness);
  });
  env.finish();
}

TEST_CASE_METHOD(FilesPC, "memory files: memory.current counts stocked pages",
                 "[mm][memcg][files]") {
  env.run([&] {
    REQUIRE(env.charge(c, 1) == 0);  // a batch of 64: 63 stay in this CPU's stock
    CHECK(read_file(c, "current") == bytes(64));
    CHECK(read_file(p, "current") == bytes(64));  // hierarchical
    REQUIRE(env.charge(c, 100) == 0);
    CHECK(read_file(c, "current") == bytes(164));
    CHECK(write_file(c, "current", "1") == -EINVAL);  // read-only
  });
  env.release_all();
  env.finish();
}

TEST_CASE_METHOD(FilesC,
                 "memory files: tunables parse with page_counter_memparse and read back in bytes",
                 "[mm][memcg][files]") {
  g_files.mode = FilesScript::kFree;
  struct Case {
    const char *in;
    long ret;         // 0: success (the full length)
    const char *out;  // read-back, nullptr: unchanged
  };
  const Case cases[] = {
      {"1M", 0, "1048576\n"},
      {"  2M \n", 0, "2097152\n"},  // surrounding blanks and the newline are stripped
      {"4097", 0, "4096\n"},        // rounded down to pages
      {"4095", 0, "0\n"},
      {"0x2000", 0, "8192\n"},  // base 0: hex
      {"010", 0, "0\n"},        // octal 8 bytes: 0 pages
      {"1k", 0, "0\n"},
      {"8K", 0, "8192\n"},
      {"1g", 0, "1073741824\n"},
      {"max", 0, "max\n"},
      {" max\n", 0, "max\n"},
      {"8E", 0, "max\n"},   // clamped to PAGE_COUNTER_MAX, which reads as "max"
      {"16E", 0, "0\n"},    // the shift wraps to 0
      {"99999999999999999999", 0, "7766279631452237824\n"},  // simple_strtoull wraps
      {"", 0, "0\n"},       // nothing left after stripping: 0
      {"\n", 0, "0\n"},
      {"1.5G", -EINVAL, nullptr},
      {"-1", -EINVAL, nullptr},
      {"10KB", -EINVAL, nullptr},
      {"Max", -EINVAL, nullptr},
      {"maxx", -EINVAL, nullptr},
      {"1 2", -EINVAL, nullptr},
      {"0x", -EINVAL, nullptr},  // octal 0, then 'x' is left over
  };
  const char *files[] = {"min", "low", "high", "max", "swap.high", "swap.max"};
  env.run([&] {
    for (const char *file : files) {
      std::string last = read_file(c, file);
      for (const Case &k : cases) {
        INFO(file << " <- '" << k.in << "'");
        long ret = write_file(c, file, k.in);
        CHECK(ret == (k.ret ? k.ret : len(k.in)));
        std::string now = read_file(c, file);
        if (k.out) {
          CHECK(now == k.out);
          last = now;
        } else {
          CHECK(now == last);  // an error changes nothing
        }
      }
    }
    for (const char *file : files) {
      bool prot = !std::strcmp(file, "min") || !std::strcmp(file, "low");
      CHECK(write_file(c, file, prot ? "0" : "max") > 0);
    }
    CHECK(read_file(c, "max") == "max\n");
    CHECK(read_file(c, "min") == "0\n");
    // min and low go through page_counter_set_min/low: the parent sees the protected usage.
    REQUIRE(env.charge(c, 100) == 0);
    CHECK(write_file(c, "min", "40960") == 5);
    CHECK(c->memory.min == 10);
    CHECK(atomic_long_read(&root_mem_cgroup->memory.children_min_usage) == 10);
    CHECK(write_file(c, "low", "81920") == 5);
    CHECK(atomic_long_read(&root_mem_cgroup->memory.children_low_usage) == 20);
    CHECK(write_file(c, "min", "0") == 1);
    CHECK(atomic_long_read(&root_mem_cgroup->memory.children_min_usage) == 0);
    CHECK(g_files.reclaim_calls == 0);  // min/low/high raised above usage: no reclaim
  });
  env.release_all();
  env.finish();
}

TEST_CASE_METHOD(FilesC,
                 "memory files: the \"12\\0\" write is a NUL-terminated string of its first bytes",
                 "[mm][memcg][files]") {
  // The handler sees buf[nbytes] == '\0' and strings stop at the first NUL: "12" bytes.
  env.run([&] {
    CHECK(write_file(c, "max", std::string("8192\0garbage", 12)) == 12);
    CHECK(read_file(c, "max") == "8192\n");
  });
  env.finish();
}

TEST_CASE_METHOD(FilesC, "memory.high: the write loop drains once, then reclaims the excess",
                 "[mm][memcg][files][high]") {
  g_files.mode = FilesScript::kFree;
  env.run([&] {
    REQUIRE(env.charge(c, 200) == 0);
    CHECK(write_file(c, "high", "409600") == 6);  // 100 pages
    CHECK(read_file(c, "high") == bytes(100));
    REQUIRE(g_files.reclaim_calls == 1);
    CHECK(g_files.nr[0] == 100);  // usage - high
    CHECK(g_files.opts[0] == MEMCG_RECLAIM_MAY_SWAP);
    CHECK(g_files.swappiness[0] == -1);
    CHECK(page_counter_read(&c->memory) == 100);
    CHECK(g_files.oom_calls == 0);
    CHECK(memory_events_read(c, MEMCG_HIGH) == 0);  // the write raises no event
    CHECK(memory_events_read(c, MEMCG_OOM) == 0);
  });
  env.release_all();
  env.finish();
}

TEST_CASE_METHOD(FilesC, "memory.high: the drain alone can bring usage down; no reclaim then",
                 "[mm][memcg][files][high]") {
  g_files.mode = FilesScript::kFree;
  env.run([&] {
    REQUIRE(env.charge(c, 1) == 0);  // 64 charged, 63 of them in the stock
    CHECK(page_counter_read(&c->memory) == 64);
    CHECK(write_file(c, "high", "4096") == 4);
    CHECK(page_counter_read(&c->memory) == 1);
    CHECK(g_files.reclaim_calls == 0);
  });
  env.release_all();
  env.finish();
}

TEST_CASE_METHOD(FilesC,
                 "memory.high: 16 retries after the first pass without progress, then it gives up "
                 "and still succeeds", "[mm][memcg][files][high]") {
  env.run([&] {
    REQUIRE(env.charge(c, 200) == 0);
    CHECK(write_file(c, "high", "0") == 1);
    CHECK(g_files.reclaim_calls == MAX_RECLAIM_RETRIES + 1);
    CHECK(g_files.nr.back() == 200);
    CHECK(g_files.oom_calls == 0);  // never OOM
    CHECK(read_file(c, "high") == "0\n");
  });
  env.release_all();
  env.finish();
}

TEST_CASE_METHOD(FilesC, "memory.high: progress does not spend the retry budget",
                 "[mm][memcg][files][high]") {
  g_files.mode = FilesScript::kMin32;  // reports progress, frees nothing
  env.run([&] {
    REQUIRE(env.charge(c, 200) == 0);
    // Reclaim reports pages but usage stays: the loop runs until a signal stops it. A signal
    // sent from the stand-in after 40 calls ends it.
    static int calls_at_signal;
    calls_at_signal = 40;
    struct Sig {
      static unsigned long reclaim(mem_cgroup *m, unsigned long nr, gfp_t g, unsigned int o,
                                   int *s) {
        unsigned long r = files_reclaim(m, nr, g, o, s);
        if (g_files.reclaim_calls == calls_at_signal) send_sig_other(current);
        return r;
      }
    };
    static const memcg_reclaim_ops sig_ops = {Sig::reclaim, files_oom};
    const memcg_reclaim_ops *old = memcg_set_reclaim_ops(&sig_ops);
    CHECK(write_file(c, "high", "0") == 1);
    memcg_set_reclaim_ops(old);
    clear_sig_other(current);
    CHECK(g_files.reclaim_calls == 40);  // far past 17: progress never counted
  });
  env.release_all();
  env.finish();
}

TEST_CASE_METHOD(FilesC, "memory.high and memory.max: O_NONBLOCK sets the value without reclaim",
                 "[mm][memcg][files][high][max]") {
  g_files.mode = FilesScript::kFree;
  env.run([&] {
    REQUIRE(env.charge(c, 200) == 0);
    CHECK(write_file(c, "high", "40960", KF_O_WRONLY | KF_O_NONBLOCK) == 5);
    CHECK(write_file(c, "max", "40960", KF_O_WRONLY | KF_O_NONBLOCK) == 5);
    CHECK(read_file(c, "high") == bytes(10));
    CHECK(read_file(c, "max") == bytes(10));  // set below usage: no -EBUSY on v2
    CHECK(page_counter_read(&c->memory) == 200);
    CHECK(g_files.reclaim_calls == 0);
    CHECK(g_files.oom_calls == 0);
    CHECK(memory_events_read(c, MEMCG_OOM) == 0);
    // Without O_NONBLOCK the same values are enforced.
    CHECK(write_file(c, "max", "40960", KF_O_WRONLY) == 5);
    CHECK(page_counter_read(&c->memory) == 10);
  });
  env.release_all();
  env.finish();
}

TEST_CASE_METHOD(FilesC,
                 "memory.high and memory.max: a pending signal stops the loop before any work",
                 "[mm][memcg][files][high][max]") {
  g_files.mode = FilesScript::kFree;
  env.run([&] {
    REQUIRE(env.charge(c, 200) == 0);
    send_sig_other(current);
    CHECK(write_file(c, "high", "40960") == 5);
    CHECK(write_file(c, "max", "81920") == 5);
    clear_sig_other(current);
    CHECK(g_files.reclaim_calls == 0);
    CHECK(read_file(c, "high") == bytes(10));
    CHECK(read_file(c, "max") == bytes(20));
    CHECK(page_counter_read(&c->memory) == 200);
  });
  env.release_all();
  env.finish();
}

TEST_CASE("memory.max: reclaim, then MEMCG_OOM and the OOM killer once 16 passes made no "
          "progress; the write succeeds either way", "[mm][memcg][files][max]") {
  for (bool kills : {false, true}) {
    DYNAMIC_SECTION((kills ? "the killer frees the cgroup" : "nothing to kill")) {
      WarnCheck wc;
      MemcgEnv env(files_params());
      reset_script(&env, FilesScript::kZero);
      g_files.oom_kills = kills;
      g_files.oom_ret = kills;
      mem_cgroup *p = env.mkdir(nullptr, "p");
      mem_cgroup *c = env.mkdir(p, "c");
      env.run([&] {
        REQUIRE(env.charge(c, 200) == 0);
        CHECK(write_file(c, "max", "409600") == 6);
        CHECK(read_file(c, "max") == bytes(100));
        CHECK(g_files.reclaim_calls == MAX_RECLAIM_RETRIES);
        for (unsigned long nr : g_files.nr) CHECK(nr == 100);
        CHECK(g_files.oom_calls == 1);
        CHECK(memory_events_read(c, MEMCG_OOM) == 1);
        CHECK(memory_events_local_read(c, MEMCG_OOM) == 1);
        CHECK(memory_events_read(p, MEMCG_OOM) == 1);  // hierarchical
        CHECK(memory_events_read(c, MEMCG_MAX) == 0);
        CHECK(page_counter_read(&c->memory) == (kills ? 0u : 200u));
        CHECK(read_file(c, "events") == "low 0\nhigh 0\nmax 0\noom 1\noom_kill 0\n"
                                        "oom_group_kill 0\nsock_throttled 0\n");
      });
      env.release_all();
      env.finish();
    }
  }
}

TEST_CASE_METHOD(FilesC, "memory.max: reclaim with progress is not counted against the budget",
                 "[mm][memcg][files][max]") {
  g_files.mode = FilesScript::kFree;
  env.run([&] {
    REQUIRE(env.charge(c, 300) == 0);
    // Each call frees what it is asked for, but never more than 1 page: 200 calls to get from
    // 300 down to 100, far more than 16.
    struct One {
      static unsigned long reclaim(mem_cgroup *m, unsigned long, gfp_t g, unsigned int o, int *s) {
        return files_reclaim(m, 1, g, o, s);
      }
    };
    static const memcg_reclaim_ops one_ops = {One::reclaim, files_oom};
    const memcg_reclaim_ops *old = memcg_set_reclaim_ops(&one_ops);
    CHECK(write_file(c, "max", "409600") == 6);
    memcg_set_reclaim_ops(old);
    CHECK(g_files.reclaim_calls == 200);
    CHECK(g_files.oom_calls == 0);
    CHECK(page_counter_read(&c->memory) == 100);
    // The limit holds for new charges.
    CHECK(env.charge(c, 1, GFP_NOWAIT) == -ENOMEM);
  });
  env.release_all();
  env.finish();
}

TEST_CASE_METHOD(FilesC,
                 "memory.peak: per-open-file resets, several files, and the kernel's quirks",
                 "[mm][memcg][files][peak]") {
  const cftype *peak = find_cftype(memory_files, "peak");
  const cftype *swap_peak = find_cftype(memory_files, "swap.peak");
  env.run([&] {
    REQUIRE(env.charge(c, 100) == 0);  // >= a batch: nothing stocked, usage exactly 100
    CftFile a(&c->css, peak), b(&c->css, peak), cc(&c->css, peak);
    REQUIRE(a.open_ret() == 0);
    CHECK(a.read() == bytes(100));  // never written: the global watermark

    env.uncharge(c, 60);  // 40
    CHECK(a.write("reset\n") == 6);
    CHECK(c->memory.local_watermark == 40);
    CHECK(a.read() == bytes(40));
    CHECK(b.read() == bytes(100));  // B never wrote: still global

    REQUIRE(env.charge(c, 70) == 0);  // 110
    CHECK(a.read() == bytes(110));    // the local watermark follows the charge

    env.uncharge(c, 90);  // 20
    CHECK(b.write("x") == 1);  // content ignored
    // A's own value (40) is above the usage at B's reset (20): not raised. A's 110 peak is gone.
    CHECK(a.read() == bytes(40));
    CHECK(b.read() == bytes(20));

    REQUIRE(env.charge(c, 64) == 0);  // 84
    CHECK(a.write("") == 0);          // the handler resets on any write it is given
    env.uncharge(c, 64);              // 20
    // A's reset raised B to the usage then (84), not to the old local peak.
    CHECK(b.read() == bytes(84));
    CHECK(a.read() == bytes(84));
    CHECK(cc.read() == bytes(110));  // never written: the global watermark, never reset on v2
    CHECK(c->memory.watermark == 110);

    a.close();  // unregisters A
    CHECK(b.write("r") == 1);
    CHECK(b.read() == bytes(20));
    {
      CftFile d(&c->css, peak);
      CHECK(d.write("r") == 1);
      CHECK(d.read() == bytes(20));
      REQUIRE(env.charge(c, 64) == 0);  // 84
      CHECK(d.read() == bytes(84));
      env.uncharge(c, 64);
    }  // D released while registered
    CHECK(b.write("r") == 1);
    CHECK(b.read() == bytes(20));

    // swap.peak has its own counter and list: a swap reset leaves memory.peak files alone.
    page_counter_charge(&c->swap, 10);
    mod_memcg_state(c, MEMCG_SWAP, 10);
    CftFile s(&c->css, swap_peak), s2(&c->css, swap_peak);
    CHECK(s.read() == bytes(10));
    page_counter_uncharge(&c->swap, 6);
    mod_memcg_state(c, MEMCG_SWAP, -6);
    CHECK(s2.write("r") == 1);
    CHECK(s2.read() == bytes(4));
    CHECK(s.read() == bytes(10));
    CHECK(s.write("r") == 1);
    CHECK(s2.read() == bytes(4));
    CHECK(c->swap.watermark == 10);
    CHECK(c->memory.local_watermark == 20);  // untouched by the swap resets
    CHECK(b.read() == bytes(20));
    CHECK(read_file(c, "swap.current") == bytes(4));
    page_counter_uncharge(&c->swap, 4);
    mod_memcg_state(c, MEMCG_SWAP, -4);
    s.close();
    s2.close();
    b.close();
    cc.close();
    spin_lock(&c->peaks_lock);
    CHECK(c->swap_peaks == nullptr);
    CHECK(c->memory_peaks == nullptr);
    spin_unlock(&c->peaks_lock);
  });
  env.release_all();
  env.finish();
}

TEST_CASE("memory.events: hierarchical and local counts, under both mount options",
          "[mm][memcg][files][events]") {
  for (bool localevents : {false, true}) {
    DYNAMIC_SECTION("memory_localevents=" << localevents) {
      WarnCheck wc;
      MemcgEnv env(files_params(false, localevents));
      reset_script(&env);
      mem_cgroup *p = env.mkdir(nullptr, "p");
      mem_cgroup *c = env.mkdir(p, "c");
      env.run([&] {
        memcg_memory_event(c, MEMCG_LOW);
        memcg_memory_event(c, MEMCG_HIGH);
        memcg_memory_event(c, MEMCG_HIGH);
        memcg_memory_event(c, MEMCG_MAX);
        memcg_memory_event(c, MEMCG_OOM);
        memcg_memory_event(c, MEMCG_OOM_KILL);
        memcg_memory_event(c, MEMCG_OOM_GROUP_KILL);
        memcg_memory_event(c, MEMCG_SOCK_THROTTLED);
        memcg_memory_event(c, MEMCG_SWAP_HIGH);
        memcg_memory_event(c, MEMCG_SWAP_MAX);
        memcg_memory_event(c, MEMCG_SWAP_FAIL);
        memcg_memory_event(c, MEMCG_SWAP_FAIL);
        memcg_memory_event(p, MEMCG_MAX);
        const std::string c_text =
            "low 1\nhigh 2\nmax 1\noom 1\noom_kill 1\noom_group_kill 1\nsock_throttled 1\n";
        const std::string zero =
            "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\nsock_throttled 0\n";
        const std::string p_local =
            "low 0\nhigh 0\nmax 1\noom 0\noom_kill 0\noom_group_kill 0\nsock_throttled 0\n";
        const std::string p_hier =
            "low 1\nhigh 2\nmax 2\noom 1\noom_kill 1\noom_group_kill 1\nsock_throttled 1\n";
        CHECK(read_file(c, "events") == c_text);
        CHECK(read_file(c, "events.local") == c_text);
        CHECK(read_file(p, "events.local") == p_local);
        CHECK(read_file(p, "events") == (localevents ? p_local : p_hier));
        CHECK(read_file(c, "swap.events") == "high 1\nmax 1\nfail 2\n");
        CHECK(read_file(p, "swap.events") ==
              (localevents ? "high 0\nmax 0\nfail 0\n" : "high 1\nmax 1\nfail 2\n"));
        // The root is never counted (and has no memory.events file).
        CHECK(memory_events_read(root_mem_cgroup, MEMCG_HIGH) == 0);
        for (const char *f : {"events", "events.local", "swap.events"})
          CHECK(write_file(c, f, "0") == -EINVAL);  // read-only
        (void)zero;
      });
      env.finish();
    }
  }
}

TEST_CASE_METHOD(FilesC, "memory.oom.group: kstrtoint base 0, only 0 and 1", "[mm][memcg][files]") {
  struct Case {
    const char *in;
    long ret;
    const char *out;
  };
  const Case cases[] = {
      {"1", 0, "1\n"},       {"0", 0, "0\n"},         {"0x1", 0, "1\n"},
      {" 0\n", 0, "0\n"},    {"01", 0, "1\n"},        {"+0", 0, "0\n"},
      {"1\n\n", 0, "1\n"},   {"-0", 0, "0\n"},        {"2", -EINVAL, "0\n"},
      {"-1", -EINVAL, "0\n"}, {"", -EINVAL, "0\n"},    {"yes", -EINVAL, "0\n"},
      {"1 1", -EINVAL, "0\n"}, {"0x", -EINVAL, "0\n"}, {"08", -EINVAL, "0\n"},
      {"4294967297", -ERANGE, "0\n"}, {"99999999999999999999", -ERANGE, "0\n"},
      {"1.0", -EINVAL, "0\n"},
  };
  env.run([&] {
    for (const Case &k : cases) {
      INFO("'" << k.in << "'");
      CHECK(write_file(c, "oom.group", k.in) == (k.ret ? k.ret : len(k.in)));
      CHECK(read_file(c, "oom.group") == k.out);
      CHECK(write_file(c, "oom.group", "0") == 1);
    }
    CHECK(write_file(c, "oom.group", "1") == 1);
    CHECK(c->oom_group);
  });
  env.finish();
}

TEST_CASE_METHOD(FilesC, "memory.reclaim: argument parsing", "[mm][memcg][files][reclaim]") {
  g_files.mode = FilesScript::kMin32;
  struct Case {
    const char *in;
    long ret;        // 0: success
    int calls;       // reclaim calls
    int swappiness;  // what the calls were given (-1: none)
  };
  const Case cases[] = {
      {"1M", 0, 7, -1},
      {"1M\n", 0, 7, -1},
      {"  1M  ", 0, 7, -1},
      {"1M swappiness=10", 0, 7, 10},
      {"1M swappiness=0", 0, 7, 0},
      {"1M swappiness=200", 0, 7, 200},
      {"1M swappiness=max", 0, 7, SWAPPINESS_ANON_ONLY},
      {"1M swappiness=10 swappiness=20", 0, 7, 20},  // the last wins
      {"1M swappiness=max swappiness=3", 0, 7, 3},
      {"1M   swappiness=5   ", 0, 7, 5},  // empty tokens skipped
      {"1M\tswappiness=5", 0, 7, 5},      // the blank after the size is stripped
      {"1M swappiness=0x10", 0, 7, 16},   // base 0
      {"1M swappiness=-", 0, 7, 0},       // simple_strtol consumes the '-': 0
      {"1Mswappiness=7", 0, 7, 7},        // the size ends where memparse stops
      {"K", 0, 0, -1},                    // a lone suffix is consumed: 0 bytes
      {"0", 0, 0, -1},
      {"4095", 0, 0, -1},  // under a page: nothing to do
      {"", -EINVAL, 0, -1},
      {"\n", -EINVAL, 0, -1},
      {"abc", -EINVAL, 0, -1},
      {"-1M", -EINVAL, 0, -1},
      {"1M swappiness=201", -EINVAL, 0, -1},
      {"1M swappiness=-1", -EINVAL, 0, -1},
      {"1M swappiness=", -EINVAL, 0, -1},
      {"1M swappiness=1x", -EINVAL, 0, -1},
      {"1M swappiness=maxx", -EINVAL, 0, -1},
      {"1M swappiness=MAX", -EINVAL, 0, -1},
      {"1M swappiness=5\tx", -EINVAL, 0, -1},
      {"1M swappiness=99999999999999999999999", -EINVAL, 0, -1},
      {"1M swappiness=4294967306", -EINVAL, 0, -1},  // outside int
      {"1M Swappiness=5", -EINVAL, 0, -1},
      {"1M foo", -EINVAL, 0, -1},
      {"1M 5", -EINVAL, 0, -1},
      {"1.5M", -EINVAL, 0, -1},
  };
  env.run([&] {
    for (const Case &k : cases) {
      INFO("'" << k.in << "'");
      reset_script(&env, FilesScript::kMin32);
      CHECK(write_file(c, "reclaim", k.in) == (k.ret ? k.ret : len(k.in)));
      CHECK(g_files.reclaim_calls == k.calls);
      for (int s : g_files.swappiness) CHECK(s == k.swappiness);
      for (unsigned int o : g_files.opts)
        CHECK(o == (MEMCG_RECLAIM_MAY_SWAP | MEMCG_RECLAIM_PROACTIVE));
    }
  });
  env.finish();
}

TEST_CASE_METHOD(FilesC,
                 "memory.reclaim: batches of a quarter of what is left, -EAGAIN, -EINTR, and the "
                 "root",
                 "[mm][memcg][files][reclaim]") {
  env.run([&] {
    // 1M = 256 pages; reclaim reports max(batch, 32).
    reset_script(&env, FilesScript::kMin32);
    CHECK(write_file(c, "reclaim", "1M") == 2);
    CHECK(g_files.nr == std::vector<unsigned long>{64, 48, 36, 27, 19, 11, 3});

    // No progress: the first pass and 16 retries, then -EAGAIN.
    reset_script(&env, FilesScript::kZero);
    CHECK(write_file(c, "reclaim", "1M") == -EAGAIN);
    CHECK(g_files.reclaim_calls == MAX_RECLAIM_RETRIES + 1);

    // Real pages: reclaim frees them; over-reclaim is possible but not needed here.
    REQUIRE(env.charge(c, 200) == 0);
    reset_script(&env, FilesScript::kFree);
    CHECK(write_file(c, "reclaim", "409600") == 6);  // 100 pages: 25, 18, 14, 10, 8, ...
    CHECK(page_counter_read(&c->memory) == 100);
    CHECK(g_files.oom_calls == 0);

    // A pending signal: -EINTR before any reclaim.
    reset_script(&env, FilesScript::kMin32);
    send_sig_other(current);
    CHECK(write_file(c, "reclaim", "1M") == -EINTR);
    clear_sig_other(current);
    CHECK(g_files.reclaim_calls == 0);

    // memory.reclaim also exists on the root.
    reset_script(&env, FilesScript::kMin32);
    CHECK(write_file(root_mem_cgroup, "reclaim", "128K") == 4);
    CHECK(g_files.reclaim_calls == 1);
    CHECK(g_files.nr[0] == 8);
  });
  env.release_all();
  env.finish();
}

TEST_CASE_METHOD(FilesPC,
                 "memory files: css_reset forgets every limit; offline resets min and low",
                 "[mm][memcg][files][lifecycle]") {
  env.run([&] {
    for (const char *f : {"min", "low", "high", "max", "swap.high", "swap.max"})
      CHECK(write_file(c, f, "1M") == 2);
    memory_cgrp_subsys.css_reset(&c->css);
    CHECK(read_file(c, "min") == "0\n");
    CHECK(read_file(c, "low") == "0\n");
    for (const char *f : {"high", "max", "swap.high", "swap.max"}) CHECK(read_file(c, f) == "max\n");

    // Offline: min and low go back to 0 (and stop protecting in the parent's sums).
    REQUIRE(env.charge(c, 100) == 0);
    CHECK(write_file(c, "min", "1M") == 2);
    CHECK(write_file(c, "low", "1M") == 2);
    CHECK(atomic_long_read(&p->memory.children_min_usage) == 100);
    css_get(&c->css);
  });
  env.ledger.css_refs[c] += 1;
  CHECK(env.rmdir(c) == 0);  // pages still charged: offline runs with them in place
  env.run([&] {
    CHECK(c->memory.min == 0);
    CHECK(c->memory.low == 0);
    CHECK(atomic_long_read(&p->memory.children_min_usage) == 0);
    CHECK(atomic_long_read(&p->memory.children_low_usage) == 0);
    env.uncharge(c, 100);
    css_put(&c->css);
  });
  env.ledger.css_refs[c] -= 1;
  env.ledger.forget(c);
  env.finish();
}
