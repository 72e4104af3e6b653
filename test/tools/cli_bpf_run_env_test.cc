// SPDX-License-Identifier: GPL-2.0-only
// test/tools/cli_bpf_run_env_test.cc: `umemcg bpf run` on the machine `umemcg sh` boots, run as
// a user would: a --sh script makes a cgroup with anonymous memory and the memcg_reclaim
// program reclaims from it by cgroup id (--ctx-cgroup, --ctx-u64, ARGS); without that setup,
// the run names what the machine lacks (no cgroup with the id, no swap, no pages) instead of a
// bare retval; bad scripts, bad cgroup paths and bad context words exit 2 with a clear error.
#include <catch2/catch.hpp>

#include "test/tools/umemcg_cli.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace {

using Run = umemcg::test::CommandResult;
using umemcg::test::line_starting;
using umemcg::test::has;
using umemcg::test::run_umemcg;

const std::string kObj = umemcg::test::prog("memcg_reclaim.bpf.o");

// A `umemcg sh` script in a temporary file, removed with the object.
struct Script {
  std::string path;
  explicit Script(const std::string &text) {
    char p[] = "/tmp/umemcg-bpf-run-sh-XXXXXX";
    const int fd = mkstemp(p);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, text.data(), text.size()) == (ssize_t)text.size());
    close(fd);
    path = p;
  }
  ~Script() { unlink(path.c_str()); }
};

// Cgroup a with 8M of anonymous memory held by a process.
const char kAnonSetup[] =
    "echo +memory > cgroup.subtree_control\n"
    "mkdir a\n"
    "spawn a anon 8M --hold\n"
    "sleep 1\n";

// The number after "retval: " (the u32 the program returned), or -1.
long long retval(const Run &r) {
  const std::string l = line_starting(r.out, "retval: ");
  return l.empty() ? -1 : std::strtoll(l.c_str() + 8, nullptr, 10);
}

}  // namespace

TEST_CASE("cli: bpf run reclaims from a cgroup the --sh script filled", "[tools][cli][bpf_run]") {
  Script setup(kAnonSetup);
  // struct reclaim_args { cgid, size, swappiness, reclaimed }: the id by path, 64K, the
  // memcg's own swappiness (-1), 0.
  Run r = run_umemcg("bpf run " + kObj + " reclaim --sh " + setup.path +
                     " --swap 64M --ctx-cgroup a --ctx-u64 65536 -1 0");
  INFO(r.out);
  CHECK(r.status == 0);
  // Pages reclaimed: one pass tries for at least the 16 asked (SWAP_CLUSTER_MAX pages) and
  // takes at most a charge batch.
  const long long pages = retval(r);
  CHECK(pages >= 16);
  CHECK(pages <= 64);
  CHECK(has(r, "kfunc calls: bpf_cgroup_from_id 1, bpf_get_mem_cgroup 1, bpf_cgroup_release 1, "
               "bpf_proactive_reclaim 1, bpf_put_mem_cgroup 1\n"));
  CHECK(has(r, "environment: cgroup v2 with the memory controller at /sys/fs/cgroup, 4G of "
               "memory, 64M of swap; simulated, 4 CPUs, seed 1\n"));
  CHECK(has(r, "  bpf_get_mem_cgroup(css of /sys/fs/cgroup/a) = /sys/fs/cgroup/a\n"));
  CHECK(has(r, "  bpf_proactive_reclaim(/sys/fs/cgroup/a, 65536, -1) = " +
                   std::to_string(pages * 4096) + "\n"));
  CHECK_FALSE(has(r, "lacks:"));
  // The id --ctx-cgroup put in the context is cgroup a's (not the root's, 1).
  const std::string id_line = line_starting(r.out, "  bpf_cgroup_from_id(");
  REQUIRE(!id_line.empty());
  const unsigned long long id = std::strtoull(id_line.c_str() + 21, nullptr, 10);
  CHECK(id > 1);
  CHECK(id_line == "  bpf_cgroup_from_id(" + std::to_string(id) + ") = /sys/fs/cgroup/a");
}

TEST_CASE("cli: bpf run without the setup names what the machine lacks",
          "[tools][cli][bpf_run]") {
  // No cgroup has the id: the program's -1 comes with the reason.
  Run none = run_umemcg("bpf run " + kObj + " reclaim --ctx-u64 99 65536 -1 0");
  INFO(none.out);
  CHECK(none.status == 0);
  CHECK(has(none, "retval: 4294967295 (0xffffffff)"));
  CHECK(has(none, "kfunc calls: bpf_cgroup_from_id 1\n"));
  CHECK(has(none, "lacks: bpf_cgroup_from_id(99) = NULL: no cgroup has id 99\n"));
  Run zero = run_umemcg("bpf run " + kObj + " reclaim 0 65536 -1 0");
  CHECK(has(zero, "lacks: bpf_cgroup_from_id(0) = NULL: no cgroup has id 0 (ids run from 1 to "
                  "65535)\n"));

  // Anonymous memory and no swap device: nothing to reclaim it to.
  Script anon(kAnonSetup);
  Run noswap = run_umemcg("bpf run " + kObj + " reclaim --sh " + anon.path +
                          " --ctx-cgroup /sys/fs/cgroup/a --ctx-u64 65536 --ctx-u64 -1 0");
  INFO(noswap.out);
  CHECK(noswap.status == 0);
  CHECK(retval(noswap) == 0);
  const std::string l = line_starting(noswap.out, "lacks: ");
  CHECK(l.rfind("lacks: bpf_proactive_reclaim(/sys/fs/cgroup/a, 65536, -1) = 0: nothing to "
                "reclaim in /sys/fs/cgroup/a: ", 0) == 0);
  CHECK(l.find(" pages of anon memory and no swap space for them (the machine has no swap "
               "device)") != std::string::npos);

  // Swap, but the cgroup may not use it (memory.swap.max 0); swap, but swappiness 0 asked.
  Script capped(std::string(kAnonSetup) + "echo 0 > a/memory.swap.max\n");
  Run swapmax = run_umemcg("bpf run " + kObj + " reclaim --sh " + capped.path +
                           " --swap 64M --ctx-cgroup a 65536 -1 0");
  INFO(swapmax.out);
  CHECK(line_starting(swapmax.out, "lacks: ").find("no swap space for them (memory.swap.max "
                                                   "leaves no room)") != std::string::npos);
  Run sw0 = run_umemcg("bpf run " + kObj + " reclaim --sh " + anon.path +
                       " --swap 64M --ctx-cgroup a 65536 0 0");
  INFO(sw0.out);
  CHECK(line_starting(sw0.out, "lacks: ").find("nothing to reclaim in /sys/fs/cgroup/a: no file "
                                               "pages, and swappiness 0 leaves its ") !=
        std::string::npos);

  // Swappiness 201 (anon only) with swap, but an empty cgroup: no pages at all.
  Script empty("echo +memory > cgroup.subtree_control\nmkdir e\n");
  Run nopages = run_umemcg("bpf run " + kObj + " reclaim --sh " + empty.path +
                           " --swap 16M --ctx-cgroup e 65536 201 0");
  INFO(nopages.out);
  CHECK(nopages.status == 0);
  CHECK(has(nopages, "lacks: bpf_proactive_reclaim(/sys/fs/cgroup/e, 65536, 201) = 0: nothing "
                     "to reclaim in /sys/fs/cgroup/e: no pages on its LRU lists\n"));

  // An argument the kfunc refuses is not something the machine lacks.
  Run small = run_umemcg("bpf run " + kObj + " reclaim --sh " + empty.path +
                         " --ctx-cgroup e 100 -1 0");
  INFO(small.out);
  CHECK(has(small, "retval: 4294967274 (0xffffffea)"));  // -EINVAL
  CHECK(has(small, "bad argument: bpf_proactive_reclaim(/sys/fs/cgroup/e, 100, -1) = -EINVAL: "
                   "size 100 is less than a page (4096 bytes)\n"));
  CHECK_FALSE(has(small, "lacks:"));

  // The root memcg is always there on this machine.
  Run root = run_umemcg("bpf run " + kObj + " root_usage");
  INFO(root.out);
  CHECK(root.status == 0);
  CHECK(has(root, "  bpf_get_root_mem_cgroup() = /sys/fs/cgroup\n"));
  CHECK(has(root, "kfunc calls: bpf_get_root_mem_cgroup 1, bpf_mem_cgroup_usage 1, "
                  "bpf_put_mem_cgroup 1\n"));
}

TEST_CASE("cli: bpf run refuses a bad --sh script, cgroup path or context word with exit 2",
          "[tools][cli][bpf_run]") {
  Script failing("mkdir /sys/fs/cgroup/x/y\necho not reached\n");
  Run f = run_umemcg("bpf run " + kObj + " reclaim --sh " + failing.path + " 1 65536 -1 0");
  INFO(f.out);
  CHECK(f.status == 2);
  CHECK(has(f, "umemcg bpf run: --sh " + failing.path + ": the script failed (exit status 1)"));
  CHECK_FALSE(has(f, "not reached"));
  CHECK_FALSE(has(f, "retval"));
  Script syntax("if true; then\n");
  Run s = run_umemcg("bpf run " + kObj + " reclaim --sh " + syntax.path + " 1 65536 -1 0");
  CHECK(s.status == 2);
  CHECK(has(s, "the script failed"));
  Run missing = run_umemcg("bpf run " + kObj + " reclaim --sh /nonexistent/setup.sh 1 2 3 4");
  CHECK(missing.status == 2);
  CHECK(has(missing, "umemcg bpf run: --sh: cannot read /nonexistent/setup.sh: No such file or "
                     "directory"));
  Run dir = run_umemcg("bpf run " + kObj + " reclaim --sh /tmp 1 2 3 4");
  CHECK(dir.status == 2);
  CHECK(has(dir, "Is a directory"));

  Run nocg = run_umemcg("bpf run " + kObj + " reclaim --ctx-cgroup nosuch 65536 -1 0");
  INFO(nocg.out);
  CHECK(nocg.status == 2);
  CHECK(has(nocg, "umemcg bpf run: --ctx-cgroup nosuch: /sys/fs/cgroup/nosuch: No such file or "
                  "directory"));
  CHECK_FALSE(has(nocg, "retval"));
  Run file = run_umemcg("bpf run " + kObj + " reclaim --ctx-cgroup cgroup.procs 65536 -1 0");
  CHECK(file.status == 2);
  CHECK(has(file, "Not a directory"));
  Run outside = run_umemcg("bpf run " + kObj + " reclaim --ctx-cgroup /tmp 65536 -1 0");
  CHECK(outside.status == 2);

  Run word = run_umemcg("bpf run " + kObj + " reclaim 12x");
  CHECK(word.status == 2);
  CHECK(has(word, "bad argument '12x'"));
  Run u64 = run_umemcg("bpf run " + kObj + " reclaim --ctx-u64 99999999999999999999");
  CHECK(u64.status == 2);
  CHECK(has(u64, "--ctx-u64"));
  Run swap = run_umemcg("bpf run " + kObj + " reclaim --swap lots");
  CHECK(swap.status == 2);
  CHECK(has(swap, "umemcg bpf run: --swap 'lots': not a size"));
  Run opt = run_umemcg("bpf run " + kObj + " reclaim --frobnicate");
  CHECK(opt.status == 2);
  CHECK(has(opt, "unknown option '--frobnicate'"));
}

TEST_CASE("cli: bpf run --help documents the machine and the context words",
          "[tools][cli][bpf_run]") {
  Run h = run_umemcg("bpf run --help");
  INFO(h.out);
  CHECK(h.status == 0);
  for (const char *opt : {"--sh SCRIPT", "--ctx-u64 N", "--ctx-cgroup PATH", "--ctx HEX",
                          "--swap SIZE", "--seed N", "ARGS", "lacks: ..."})
    CHECK(has(h, opt));
}
