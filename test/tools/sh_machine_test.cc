// SPDX-License-Identifier: GPL-2.0-only
// test/tools/sh_machine_test.cc: `umemcg sh` on the emulated machine, run as a user runs it
// (the built binary, a script on standard input): the machine as booted (memory listed, not
// enabled), a limit hit and the OOM kill it ends in (status 137, memory.events), a peak reset
// through a descriptor, the no-internal-process rule refusing a placement, a watch on
// memory.events, cgroup.freeze, bpf load and attach, --swap (the device in /proc/swaps, anon memory swapped
// instead of OOM-killed, swap.max 0 refusing it), and determinism (same script and seed, same
// bytes).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "test/tools/umemcg_cli.h"

namespace {

struct Run {
  int status;
  std::string out;  // standard output
  std::string err;  // standard error
};

Run sh(const std::string &script, const std::string &opts = "") {
  char in_path[] = "/tmp/umemcg-sh-in-XXXXXX";
  char err_path[] = "/tmp/umemcg-sh-err-XXXXXX";
  int in_fd = mkstemp(in_path);
  int err_fd = mkstemp(err_path);
  REQUIRE(in_fd >= 0);
  REQUIRE(err_fd >= 0);
  REQUIRE(write(in_fd, script.data(), script.size()) == static_cast<ssize_t>(script.size()));
  close(in_fd);
  close(err_fd);
  std::string cmd = std::string(UMEMCG_PATH) + " sh " + opts + " < " + in_path + " 2> " + err_path;
  FILE *f = popen(cmd.c_str(), "r");
  REQUIRE(f != nullptr);
  Run r;
  char buf[512];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) r.out.append(buf, n);
  int st = pclose(f);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream e(err_path);
  r.err.assign(std::istreambuf_iterator<char>(e), std::istreambuf_iterator<char>());
  unlink(in_path);
  unlink(err_path);
  return r;
}

}  // namespace

TEST_CASE("umemcg sh: the machine as booted", "[sh][machine]") {
  Run r = sh("pwd\ncat cgroup.controllers\ncat cgroup.subtree_control\ncat /proc/swaps\n");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out ==
        "/sys/fs/cgroup\nmemory\n\n"
        "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
}

TEST_CASE("umemcg sh --swap: a swap device; anon over memory.max swaps instead of an OOM kill",
          "[sh][machine][swap]") {
  Run r = sh(
      "cat /proc/swaps\n"
      "echo +memory > cgroup.subtree_control\n"
      "mkdir a\n"
      "echo 10M > a/memory.max\n"
      "run a anon 20M\n"
      "echo big $?\n"
      "cat a/memory.swap.current\n"
      "cat a/memory.events\n"
      "mkdir b\n"
      "echo 10M > b/memory.max\n"
      "echo 0 > b/memory.swap.max\n"
      "run b anon 20M\n"
      "echo noswap $?\n"
      "cat b/memory.swap.events\n",
      "--swap 64M");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
                   "/swapfile                               file\t\t65536\t\t0\t\t-2\n") == 0);
  CHECK(r.out.find("big 0\n0\n") != std::string::npos);  // completed; its slots freed at exit
  CHECK(r.out.find("oom_kill 0\n") != std::string::npos);
  CHECK(r.out.find("noswap 137\n") != std::string::npos);
  CHECK(r.out.find("high 0\nmax 0\nfail 0\n") != std::string::npos);
  // Below a page: refused.
  Run tiny = sh("true\n", "--swap 100");
  CHECK(tiny.status == 2);
  CHECK(tiny.err.find("--swap") != std::string::npos);
}

TEST_CASE("umemcg sh --memory: the machine's RAM; exhausting it reclaims, then OOM-kills",
          "[sh][machine][global]") {
  Run r = sh(
      "cat /proc/meminfo\n"
      "cat /proc/zoneinfo\n"
      "echo +memory > cgroup.subtree_control\n"
      "mkdir cache\n"
      "mkdir hog\n"
      "run cache pagecache 4M --file data\n"
      "echo cache $?\n"
      "run hog anon 6M\n"
      "echo fits $?\n"
      "c=$(cat cache/memory.current)\n"
      "[ $c -lt 4194304 ] && echo reclaimed\n"
      "run hog anon 16M\n"
      "echo big $?\n"
      "cat hog/memory.events\n"
      "cat /proc/meminfo\n",
      "--memory 8M");
  INFO(r.out);
  INFO(r.err);
  // MemTotal, and MemFree with nothing allocated yet.
  CHECK(r.out.find("MemTotal:           8192 kB\nMemFree:            8192 kB\n") == 0);
  // MemAvailable (si_mem_available): the free pages less the high watermark's 134 pages.
  CHECK(r.out.find("MemFree:            8192 kB\nMemAvailable:       7656 kB\n") !=
        std::string::npos);
  // The zone's watermarks for 2048 pages: min_free_kbytes int_sqrt(8192 * 16) = 362 KiB,
  // 90 pages; low and high max(90 / 4, 2048 * 10 / 10000) = 22 pages apart.
  CHECK(r.out.find("Node 0, zone   Normal\n  pages free     2048\n        boost    0\n"
                   "        min      90\n        low      112\n        high     134\n"
                   "        promo    156\n        spanned  2048\n        present  2048\n"
                   "        managed  2048\n        cma      0\n") != std::string::npos);
  CHECK(r.out.find("cache 0\nfits 0\n") != std::string::npos);
  // The 6M process made room by reclaiming the other cgroup's cache (no limit was set).
  CHECK(r.out.find("fits 0\nreclaimed\n") != std::string::npos);
  // 16M cannot fit in 8M: the global OOM killer kills it; no memcg OOM.
  CHECK(r.out.find("big 137\nlow 0\nhigh 0\nmax 0\noom 0\noom_kill 1\n") != std::string::npos);
  // At the end no anonymous memory is left (the named file's cache lives on).
  CHECK(r.out.find("AnonPages:             0 kB\n") != std::string::npos);
  Run tiny = sh("true\n", "--memory 100K");
  CHECK(tiny.status == 2);
}

namespace {
// The value of line @key ("key value\n") in @text, or -1.
long long stat_value(const std::string &text, const std::string &key) {
  size_t at = text.find(key + " ");
  while (at != std::string::npos && at != 0 && text[at - 1] != '\n')
    at = text.find(key + " ", at + 1);
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + key.size() + 1));
}
}  // namespace

TEST_CASE("umemcg sh: /proc/vmstat and the vm sysctls: read, written, refused; /proc/zoneinfo "
          "shows the recomputed watermarks", "[sh][machine][global][vmstat]") {
  Run r = sh(
      "cat /proc/sys/vm/min_free_kbytes /proc/sys/vm/watermark_scale_factor\n"
      "cat /proc/sys/vm/swappiness\n"
      "ls /proc/sys/vm\n"
      "echo 1024 > /proc/sys/vm/min_free_kbytes\n"
      "echo 1000 > /proc/sys/vm/watermark_scale_factor\n"
      "cat /proc/zoneinfo\n"
      "echo 0 > /proc/sys/vm/watermark_scale_factor\n"
      "echo zero $?\n"
      "echo 3001 > /proc/sys/vm/watermark_scale_factor\n"
      "echo -1 > /proc/sys/vm/min_free_kbytes\n"
      "echo 201 > /proc/sys/vm/swappiness\n"
      "echo 100 > /proc/sys/vm/swappiness\n"
      "cat /proc/sys/vm/min_free_kbytes /proc/sys/vm/watermark_scale_factor\n"
      "cat /proc/sys/vm/swappiness\n"
      "echo +memory > cgroup.subtree_control\n"
      "mkdir a\n"
      "run a anon 7M\n"
      "echo run $?\n"
      "sleep 3\n"
      "cat a/memory.stat\n"
      "echo ---\n"
      "cat /proc/vmstat\n",
      "--memory 8M --swap 16M");
  INFO(r.out);
  INFO(r.err);
  CHECK(r.status == 0);
  // Boot: 362 KiB for 8M (see the --memory test), factor 10, swappiness 60.
  CHECK(r.out.find("362\n10\n60\nmin_free_kbytes\nswappiness\nwatermark_scale_factor\n") == 0);
  // 1024 KiB: min 256 pages; factor 1000: 2048 * 1000 / 10000 = 204 pages apart (> 256 / 4).
  CHECK(r.out.find("        min      256\n        low      460\n        high     664\n"
                   "        promo    868\n") != std::string::npos);
  CHECK(r.out.find("zero 1\n1024\n1000\n100\n") != std::string::npos);
  CHECK(r.err ==
        "umemcg sh: 7: echo: write error: Invalid argument\n"
        "umemcg sh: 9: echo: write error: Invalid argument\n"
        "umemcg sh: 10: echo: write error: Invalid argument\n"
        "umemcg sh: 11: echo: write error: Invalid argument\n");
  CHECK(r.out.find("run 0\n") != std::string::npos);
  size_t sep = r.out.find("---\n");
  REQUIRE(sep != std::string::npos);
  const std::string memstat = r.out.substr(0, sep), vmstat = r.out.substr(sep + 4);
  CHECK(vmstat.find("nr_free_pages ") == 0);
  CHECK(vmstat.size() > 14);
  CHECK(vmstat.substr(vmstat.size() - 14) == "nr_unstable 0\n");
  // The 7M process faulted 1792 pages on 2048 pages of RAM: kswapd swapped some out. Its
  // faults and swap-outs are the machine's (no other process faulted or was reclaimed).
  CHECK(stat_value(vmstat, "pgfault") == 1792);
  CHECK(stat_value(vmstat, "pgfault") == stat_value(memstat, "pgfault"));
  CHECK(stat_value(vmstat, "pswpout") > 0);
  CHECK(stat_value(vmstat, "pswpout") == stat_value(memstat, "pswpout"));
  CHECK(stat_value(vmstat, "pgpgout") == 4 * stat_value(vmstat, "pswpout"));
  CHECK(stat_value(vmstat, "pgscan_kswapd") == stat_value(memstat, "pgscan_kswapd"));
  CHECK(stat_value(vmstat, "pgsteal_kswapd") == stat_value(memstat, "pgsteal_kswapd"));
  CHECK(stat_value(vmstat, "pageoutrun") >= 1);
  CHECK(stat_value(vmstat, "oom_kill") == 0);
}

TEST_CASE("umemcg sh: a limit hit ends in an OOM kill; memory.events counts it", "[sh][machine]") {
  Run r = sh(
      "echo +memory > cgroup.subtree_control\n"
      "mkdir a\n"
      "echo 10M > a/memory.max\n"
      "cat a/memory.max\n"
      "run a anon 4M\n"
      "echo small $?\n"
      "run a anon 20M\n"
      "echo big $?\n"
      "cat a/memory.events\n"
      "cat a/memory.current\n"
      "rmdir a\n"
      "echo rmdir $?\n");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("10485760\nsmall 0\nbig 137\n") == 0);
  CHECK(r.out.find("oom 1\n") != std::string::npos);
  CHECK(r.out.find("oom_kill 1\n") != std::string::npos);
  CHECK(r.out.find("max 0\n") == std::string::npos);  // the limit was hit
  CHECK(r.out.find("rmdir 0\n") != std::string::npos);
}

// Found by umemcg fuzz: a memory.max write below what a process holds OOM-kills it and
// returns. In simulated mode the write's retry loop must let machine time pass while the victim
// exits (its exit waits for timers), or it spins at one instant for ever.
TEST_CASE("umemcg sh: memory.max written below an anonymous hold kills the holder and returns",
          "[sh][machine]") {
  Run r = sh(
      "echo +memory > cgroup.subtree_control\n"
      "mkdir b\n"
      "spawn b anon 30M --hold; P=$!\n"
      "sleep 0.8\n"
      "echo 5M > b/memory.max\n"
      "echo written $?\n"
      "wait $P\n"
      "echo waited $?\n"
      "cat b/memory.events\n",
      "--seed 1");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out.find("written 0\nwaited 137\n") == 0);
  CHECK(r.out.find("oom_kill 1\n") != std::string::npos);
}

TEST_CASE("umemcg sh: memory.peak resets per descriptor", "[sh][machine]") {
  Run r = sh(
      "echo +memory > cgroup.subtree_control\n"
      "mkdir a\n"
      "spawn a anon 8M --hold\n"
      "p=$!\n"
      "sleep 1\n"
      "exec 3<> a/memory.peak\n"
      "kill -9 $p\n"
      "wait $p\n"
      "echo killed $?\n"
      "echo reset >&3\n"
      "cat <&3\n"
      "cat a/memory.peak\n"
      "exec 3>&-\n");
  INFO(r.err);
  CHECK(r.status == 0);
  // The descriptor's peak restarts at the usage when written (what the stocks still hold, at
  // most a batch); the global one keeps the 8M the process faulted.
  REQUIRE(r.out.find("killed 137\n") == 0);
  size_t nl = r.out.find('\n', 11);
  REQUIRE(nl != std::string::npos);
  unsigned long long fd_peak = std::stoull(r.out.substr(11, nl - 11));
  unsigned long long global = std::stoull(r.out.substr(nl + 1));
  CHECK(fd_peak <= 64 * 4096);
  CHECK(global >= 8ull << 20);
}

TEST_CASE("umemcg sh: the no-internal-process rule refuses a placement", "[sh][machine]") {
  Run r = sh(
      "echo +memory > cgroup.subtree_control\n"
      "mkdir -p a/b\n"
      "echo +memory > a/cgroup.subtree_control\n"
      "run a sleep 1\n"
      "echo $?\n"
      "run a/b sleep 1\n"
      "echo $?\n");
  CHECK(r.out == "1\n0\n");
  CHECK(r.err.find("Device or resource busy") != std::string::npos);
}

TEST_CASE("umemcg sh: a watch on memory.events sees the OOM", "[sh][machine]") {
  Run r = sh(
      "echo +memory > cgroup.subtree_control\n"
      "mkdir a\n"
      "echo 4M > a/memory.max\n"
      "watch a/memory.events\n"
      "run a anon 16M\n"
      "event 1\n"
      "while event 0.5 > /dev/null; do :; done\n"
      "echo timeout $?\n");
  INFO(r.err);
  // The first notification at once; the rest of the OOM's events within 10 ms come as one
  // more (cgroup_file_notify's rate limit); then nothing.
  CHECK(r.out == "1\n1 IN_MODIFY\ntimeout 0\n");
}

TEST_CASE("umemcg sh: cgroup.freeze stops a faulting process, cgroup.events says frozen, a thaw "
          "lets it finish", "[sh][machine][freeze]") {
  Run r = sh(
      "echo +memory > cgroup.subtree_control\n"
      "mkdir -p p/c\n"
      "echo +memory > p/cgroup.subtree_control\n"
      "watch p/cgroup.events\n"
      "spawn p/c anon 40M; P=$!\n"
      "sleep 0.004\n"
      "echo 1 > p/cgroup.freeze\n"
      "sleep 0.01\n"
      "event 0\n"
      "cat p/cgroup.freeze p/c/cgroup.freeze p/cgroup.events p/c/cgroup.events\n"
      "A=$(cat p/c/memory.current)\n"
      "sleep 1\n"
      "B=$(cat p/c/memory.current)\n"
      "[ $A -eq $B ] && [ $A -lt 41943040 ] && [ $A -gt 0 ] && echo still\n"
      // A new child of a freezing cgroup starts frozen; the parent stays frozen.
      "mkdir p/d\n"
      "cat p/d/cgroup.events p/cgroup.events\n"
      // The child's own setting outlives the parent's thaw.
      "echo 1 > p/c/cgroup.freeze\n"
      "echo 0 > p/cgroup.freeze\n"
      "sleep 0.01\n"
      "cat p/cgroup.events p/c/cgroup.events p/d/cgroup.events\n"
      "[ $(cat p/c/memory.current) -eq $B ] && echo still\n"
      // Moved to a cgroup that is not freezing, the process thaws and finishes.
      "echo $P > p/d/cgroup.procs\n"
      "wait $P\n"
      "echo done $?\n"
      "cat p/c/cgroup.events\n"
      // Errors: only 0 and 1; the root has no cgroup.freeze.
      "echo 2 > p/cgroup.freeze\n"
      "cat cgroup.freeze\n"
      // A frozen process is killed as any other.
      "spawn p/c sleep 100; Q=$!\n"
      "sleep 0.01\n"
      "cat p/c/cgroup.events\n"
      "kill -9 $Q\n"
      "wait $Q\n"
      "echo killed $?\n",
      "--seed 3");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out ==
        "1\n1 IN_MODIFY\n"
        "1\n0\npopulated 1\nfrozen 1\npopulated 1\nfrozen 1\n"
        "still\n"
        "populated 0\nfrozen 1\npopulated 1\nfrozen 1\n"
        "populated 1\nfrozen 0\npopulated 1\nfrozen 1\npopulated 0\nfrozen 0\n"
        "still\n"
        "done 0\n"
        "populated 0\nfrozen 1\n"
        "populated 1\nfrozen 1\n"
        "killed 137\n");
  CHECK(r.err.find("write error: Numerical result out of range") != std::string::npos);
  CHECK(r.err.find("cgroup.freeze: No such file or directory") != std::string::npos);
}

TEST_CASE("umemcg sh: bpf load, attach a policy to a cgroup, run, unload", "[sh][machine]") {
  std::string obj = umemcg::test::prog("memcg_policy.bpf.o");
  Run r = sh(
      "echo +memory > cgroup.subtree_control\n"
      "mkdir a\n"
      "bpf load " + obj + " pol\n"
      "bpf attach pol/lockholder a\n"
      "bpf run pol/reclaim_root\n"
      "bpf detach pol/lockholder a\n"
      "bpf unload pol\n"
      "echo $?\n");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out == "retval 0\n0\n");
}

TEST_CASE("umemcg sh --cgroup v1: memevent, a usage threshold and the OOM notification "
          "through cgroup.event_control", "[sh][machine][v1]") {
  Run r = sh(
      "mkdir a\n"
      "echo 10M > a/memory.limit_in_bytes\n"
      "t=$(memevent a/memory.usage_in_bytes 4M)\n"
      "o=$(memevent a/memory.oom_control)\n"
      "echo fds $t $o\n"
      "memevent-wait $t 1 || echo below\n"
      "run a anon 20M\n"
      "echo big $?\n"
      "[ \"$(memevent-wait $t 0)\" -ge 1 ] && echo crossed\n"
      "memevent-wait $o 0\n"
      "cat a/memory.oom_control\n"
      "memevent-close $t\n"
      "rmdir a\n"
      "memevent-wait $o 1\n"
      "memevent a/memory.usage_in_bytes 1M\n"
      "mkdir b\n"
      "memevent b/memory.stat\n"
      "memevent-wait 99\n"
      "echo end\n",
      "--cgroup v1");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out ==
        "fds 3 4\nbelow\nbig 137\ncrossed\n1\n"
        "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n"
        "1\nend\n");  // the removal's last signal
  CHECK(r.err.find("memevent: cannot open a/memory.usage_in_bytes: No such file or directory") !=
        std::string::npos);
  CHECK(r.err.find("memevent: cgroup.event_control: Invalid argument") != std::string::npos);
  CHECK(r.err.find("memevent-wait: read: Bad file descriptor") != std::string::npos);
}

TEST_CASE("umemcg sh --cgroup v1: oom_kill_disable waits out an OOM until the limit is "
          "raised; memory.pressure_level", "[sh][machine][v1]") {
  Run r = sh(
      "mkdir a b\n"
      "echo 10M > a/memory.limit_in_bytes\n"
      "echo 1 > a/memory.oom_control\n"
      "o=$(memevent a/memory.oom_control)\n"
      "spawn a anon 20M\n"
      "memevent-wait $o\n"
      "cat a/memory.oom_control\n"
      "echo 30M > a/memory.limit_in_bytes\n"
      "wait $!; echo $?\n"
      "echo 4M > b/memory.limit_in_bytes\n"
      "p=$(memevent b/memory.pressure_level low)\n"
      "run b pagecache 16M\n"
      "[ \"$(memevent-wait $p)\" -ge 1 ] && echo pressure\n"
      "memevent b/memory.pressure_level high\n"
      "echo 2 > a/memory.oom_control\n",
      "--cgroup v1");
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.out == "1\noom_kill_disable 1\nunder_oom 1\noom_kill 0\n0\npressure\n");
  CHECK(r.err.find("memevent: cgroup.event_control: Invalid argument") != std::string::npos);
  CHECK(r.err.find("oom_control is deprecated") != std::string::npos);
}

TEST_CASE("umemcg sh: same script and seed, same bytes", "[sh][machine]") {
  std::string script =
      "echo +memory > cgroup.subtree_control\n"
      "mkdir a b\n"
      "echo 6M > a/memory.high\n"
      "spawn a anon 12M\n"
      "spawn b pagecache 6M\n"
      "wait\n"
      "cat a/memory.events b/memory.stat\n";
  Run a = sh(script, "--seed 5");
  Run b = sh(script, "--seed 5");
  CHECK(a.status == 0);
  CHECK(a.out == b.out);
  CHECK(a.err == b.err);
}
