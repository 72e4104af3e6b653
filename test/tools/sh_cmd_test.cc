// SPDX-License-Identifier: GPL-2.0-only
// test/tools/sh_cmd_test.cc: the cgroup shell's commands (../shared/spec/cgroup-shell.md,
// Commands): what each asks of the machine (the FakeOs call log), what it prints, and its error
// lines, byte for byte.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include "test/tools/sh_test_util.h"
#include "tools/sh/sh_workload.h"

using namespace umemcg::sh;
using namespace umemcg::sh::test;

namespace {

std::string flags(int f) {
  char b[32];
  std::snprintf(b, sizeof(b), " 0x%x", f);
  return b;
}

}  // namespace

TEST_CASE("sh cmd: echo > FILE is one write with O_WRONLY|O_APPEND", "[tools][sh]") {
  FakeOs os;
  os.add_file("/sys/fs/cgroup/memory.max", "max\n");
  ShResult r = run_script(os, "echo 100M > memory.max\necho -n 5 >> memory.max\necho a  b >/sys/fs/cgroup/memory.max\n");
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(os.file("/sys/fs/cgroup/memory.max").writes == std::vector<std::string>{"100M\n", "5", "a b\n"});
  std::vector<std::string> want = {
      "open /sys/fs/cgroup/memory.max" + flags(O_WRONLY | O_APPEND), "write 3 100M\\n", "close 3",
      "open /sys/fs/cgroup/memory.max" + flags(O_WRONLY | O_APPEND), "write 4 5", "close 4",
      "open /sys/fs/cgroup/memory.max" + flags(O_WRONLY | O_APPEND), "write 5 a b\\n", "close 5"};
  CHECK(os.log == want);
  CHECK(os.open_fds() == 0);
}

TEST_CASE("sh cmd: write and open errors are one line and the script goes on", "[tools][sh]") {
  FakeOs os;
  os.add_file("/sys/fs/cgroup/memory.max").write_errno = EINVAL;
  ShResult r = run_script(os, "echo x\n\n\necho garbage > memory.max\necho $?\necho 1 > nope\necho $?\n"
                              "echo a 2>/dev/null > nope\necho b >&7\n");
  CHECK(r.out == "x\n1\n1\n");
  CHECK(r.err == "umemcg sh: 4: echo: write error: Invalid argument\n"
                 "umemcg sh: 6: echo: cannot create nope: No such file or directory\n"
                 "umemcg sh: 9: echo: descriptor 7: Bad file descriptor\n");
  CHECK(r.status == 1);
  CHECK(os.open_fds() == 0);
}

TEST_CASE("sh cmd: printf", "[tools][sh]") {
  CHECK(sh_out("printf '%s-%d-%i-%u-%x-%X-%o-%c-%%\\n' a -5 +6 7 255 255 8 xyz\n") ==
        "a--5-6-7-ff-FF-10-x-%\n");
  CHECK(sh_out("printf '%s,' a b c\n") == "a,b,c,");
  CHECK(sh_out("printf '%s=%d ' a 1 b\n") == "a=1 b=0 ");
  CHECK(sh_out("printf '[%5s][%-3d][%.2s][%03d][%*d]' ab 7 xyz 5 4 9\n") == "[   ab][7  ][xy][005][   9]");
  CHECK(sh_out("printf 'x\\ty\\\\z\\101\\n'\n") == "x\ty\\zA\n");
  CHECK(sh_out("printf '%d %d %x' 0x10 010 \"'A\"\n") == "16 8 41");
  CHECK(sh_out("printf '%b|' 'a\\nb' 'c\\0101' 'd\\ce'\n") == "a\nb|cA|d");
  CHECK(sh_out("printf plain\n") == "plain");
  FakeOs os;
  os.add_file("/sys/fs/cgroup/f");
  ShResult r = run_script(os, "printf 'a\\0b' > f\nprintf '%d\\n' 12x\necho $?\nprintf '%q'\nprintf\n");
  CHECK(os.file("/sys/fs/cgroup/f").writes == std::vector<std::string>{std::string("a\0b", 3)});
  CHECK(r.out == "12\n1\n");
  CHECK(r.err == "umemcg sh: 2: printf: invalid number 12x: Invalid argument\n"
                 "umemcg sh: 4: printf: invalid directive %q: Invalid argument\n"
                 "umemcg sh: 5: printf: missing format: Invalid argument\n");
}

TEST_CASE("sh cmd: cat reads whole files from offset 0", "[tools][sh]") {
  FakeOs os;
  os.add_file("/sys/fs/cgroup/memory.current", "4096\n");
  os.add_file("/sys/fs/cgroup/memory.stat", "anon 0\nfile 0\n");
  os.add_file("/sys/fs/cgroup/memory.reclaim").read_errno = EINVAL;
  ShResult r = run_script(os, "cat memory.current memory.stat\ncat memory.reclaim nope memory.current\necho $?\n");
  CHECK(r.out == "4096\nanon 0\nfile 0\n4096\n1\n");
  CHECK(r.err == "umemcg sh: 2: cat: memory.reclaim: Invalid argument\n"
                 "umemcg sh: 2: cat: nope: No such file or directory\n");
  CHECK(os.log[0] == "open /sys/fs/cgroup/memory.current" + flags(O_RDONLY));
  CHECK(os.log[1] == "read 3 0");
  CHECK(os.log[2] == "close 3");
  CHECK(os.open_fds() == 0);
}

TEST_CASE("sh cmd: exec N<> FILE keeps one open file until N>&-", "[tools][sh]") {
  FakeOs os;
  // memory.peak with per-open-file state: a write resets the peak seen through that fd.
  std::map<int, std::string> per_fd;
  FakeOs::File &peak = os.add_file("/sys/fs/cgroup/memory.peak", "");
  peak.on_read = [&](int fd) { return per_fd.count(fd) ? per_fd[fd] : std::string("8192\n"); };
  peak.on_write = [&](int fd, const std::string &b) {
    per_fd[fd] = "0\n";
    return static_cast<long>(b.size());
  };
  ShResult r = run_script(os,
                          "exec 3<> memory.peak\n"
                          "echo reset >&3\n"
                          "cat <&3\n"
                          "cat memory.peak\n"
                          "printf 'x\\n' >&3\n"
                          "exec 3>&-\n"
                          "cat <&3\n"
                          "echo $?\n");
  CHECK(r.out == "0\n8192\n1\n");
  CHECK(r.err == "umemcg sh: 7: cat: descriptor 3: Bad file descriptor\n");
  std::vector<std::string> want = {
      "open /sys/fs/cgroup/memory.peak" + flags(O_RDWR),
      "write 3 reset\\n",
      "read 3 0",
      "open /sys/fs/cgroup/memory.peak" + flags(O_RDONLY),
      "read 4 0",
      "close 4",
      "write 3 x\\n",
      "close 3",
  };
  CHECK(os.log == want);
  CHECK(os.open_fds() == 0);
}

TEST_CASE("sh cmd: exec errors and descriptor copies", "[tools][sh]") {
  FakeOs os;
  os.add_file("/sys/fs/cgroup/f", "data\n");
  ShResult r = run_script(os, "exec 4<> nope\necho $?\nexec 4<> f 5>&4\nexec 4>&-\ncat <&5\nexec 5>&-\n");
  CHECK(r.out == "1\ndata\n");
  CHECK(r.err == "umemcg sh: 1: exec: cannot open nope: No such file or directory\n");
  CHECK(os.open_fds() == 0);  // closed when the last descriptor naming it went
}

TEST_CASE("sh cmd: descriptors 1 and 2 are redirected like any other", "[tools][sh]") {
  FakeOs os;
  os.add_file("/sys/fs/cgroup/log");
  ShResult r = run_script(os,
                          "x=$(cat nope 2>&1); echo \"[$x]\"\n"
                          "cat nope 2>/dev/null; echo $?\n"
                          "{ echo a; cat nope; } >log 2>&1\n"
                          "echo b 1>&2\n"
                          "exec 2>/dev/null; cat nope; echo quiet\n");
  CHECK(r.out == "[umemcg sh: 1: cat: nope: No such file or directory]\n1\nquiet\n");
  CHECK(r.err == "b\n");
  CHECK(os.file("/sys/fs/cgroup/log").writes ==
        std::vector<std::string>{"a\n", "umemcg sh: 3: cat: nope: No such file or directory\n"});
  CHECK(os.open_fds() == 0);
}

TEST_CASE("sh cmd: cd, pwd, ls", "[tools][sh]") {
  FakeOs os;
  ShResult r = run_script(os,
                          "pwd\nmkdir a\ncd a\npwd\ncd ..\npwd\ncd /sys/fs/cgroup/a/../a\npwd\n"
                          "cd nope\ncd cgroup.procs\npwd\ncd\npwd\nls\nls a/cgroup.procs\nls nope\n");
  CHECK(r.out == "/sys/fs/cgroup\n/sys/fs/cgroup/a\n/sys/fs/cgroup\n/sys/fs/cgroup/a\n"
                 "/sys/fs/cgroup/a\n/sys/fs/cgroup\n"
                 "a\ncgroup.controllers\ncgroup.procs\ncgroup.subtree_control\n"
                 "a/cgroup.procs\n");
  CHECK(r.err == "umemcg sh: 9: cd: can't cd to nope: No such file or directory\n"
                 "umemcg sh: 10: cd: can't cd to cgroup.procs: Not a directory\n"
                 "umemcg sh: 16: ls: cannot access nope: No such file or directory\n");
  FakeOs os2;
  r = run_script(os2, "mkdir a b\nrmdir a/../a\nls . b\n");
  CHECK(r.out == ".:\nb\ncgroup.controllers\ncgroup.procs\ncgroup.subtree_control\n\nb:\n"
                 "cgroup.controllers\ncgroup.events\ncgroup.procs\ncgroup.subtree_control\n"
                 "memory.current\nmemory.max\nmemory.peak\n");
}

TEST_CASE("sh cmd: mkdir [-p] and rmdir with the kernel's errnos", "[tools][sh]") {
  FakeOs os;
  ShResult r = run_script(os,
                          "mkdir a\nmkdir a\nmkdir -p x/y/z\nmkdir -p x/y\nmkdir q/r\nrmdir x\n"
                          "rmdir x/y/z x/y\nrmdir nope\nmkdir\nmkdir -p a/cgroup.procs\n");
  CHECK(os.exists("/sys/fs/cgroup/x"));
  CHECK_FALSE(os.exists("/sys/fs/cgroup/x/y"));
  CHECK(r.err == "umemcg sh: 2: mkdir: cannot create directory a: File exists\n"
                 "umemcg sh: 5: mkdir: cannot create directory q/r: No such file or directory\n"
                 "umemcg sh: 6: rmdir: failed to remove x: Device or resource busy\n"
                 "umemcg sh: 8: rmdir: failed to remove nope: No such file or directory\n"
                 "umemcg sh: 9: mkdir: missing operand: Invalid argument\n"
                 "umemcg sh: 10: mkdir: cannot create directory a/cgroup.procs: File exists\n");
  CHECK(r.status == 1);
}

TEST_CASE("sh cmd: run, spawn, wait, kill and their statuses", "[tools][sh]") {
  FakeOs os;
  ShResult r = run_script(os,
                          "mkdir a\n"
                          "run a anon 10M\necho run $?\n"
                          "spawn a sleep 5\necho spawn $? $!\n"
                          "wait $!\necho wait $?\n"
                          "spawn a anon 1M --hold --oom-score-adj -500\np=$!\n"
                          "kill -9 $p\nwait $p\necho killed $?\n"
                          "spawn a pagecache 64K --file shared\nspawn a mlock 1G\nwait\necho all $?\n"
                          "kill 555\nwait 555\necho $?\n");
  CHECK(r.out == "run 0\nspawn 0 101\nwait 0\nkilled 137\nall 0\n127\n");
  CHECK(r.err == "umemcg sh: 17: kill: 555: No such process\n"
                 "umemcg sh: 18: wait: pid 555: No child processes\n");
  CHECK(os.now_ns == 5000000000ull);
  REQUIRE(os.procs.size() == 5);
  CHECK(os.procs[0].cgroup == "/sys/fs/cgroup/a");
  CHECK(os.procs[0].spec.kind == WorkloadSpec::Kind::kAnon);
  CHECK(os.procs[0].spec.size == 10u << 20);
  CHECK(os.procs[2].spec.hold);
  CHECK(os.procs[2].spec.oom_score_adj == -500);
  CHECK(os.procs[3].spec.file == "shared");
  CHECK(os.procs[4].spec.kind == WorkloadSpec::Kind::kMlock);
  // An OOM kill during run: 128 + SIGKILL.
  os.next_kill_signal = 9;
  CHECK(run_script(os, "run a anon 100M\n").status == 137);
  // kill -TERM and -KILL by name, -s form.
  r = run_script(os, "spawn a anon 1M --hold\nkill -TERM $!\nwait $!\necho $?\n"
                     "spawn a anon 1M --hold\nkill -s KILL $!\nwait $!\necho $?\nkill -FOO 1\nkill\n");
  CHECK(r.out == "143\n137\n");
  CHECK(r.err == "umemcg sh: 9: kill: bad signal FOO: Invalid argument\n"
                 "umemcg sh: 10: kill: usage: kill [-9|-KILL|-TERM] PID...: Invalid argument\n");
}

TEST_CASE("sh cmd: a refused placement fails with its errno and leaves no process", "[tools][sh]") {
  FakeOs os;
  os.add_dir("/sys/fs/cgroup/busy");
  os.spawn_errno["/sys/fs/cgroup/busy"] = EBUSY;
  ShResult r = run_script(os, "spawn busy anon 1M\necho $? \"[$!]\"\nrun nope sleep 1\necho $?\n");
  CHECK(r.out == "1 []\n1\n");
  CHECK(r.err == "umemcg sh: 1: spawn: cannot start in busy: Device or resource busy\n"
                 "umemcg sh: 3: run: cannot start in nope: No such file or directory\n");
  CHECK(os.procs.empty());
}

TEST_CASE("sh cmd: workload arguments are checked by the shell", "[tools][sh]") {
  struct Case {
    const char *cmd;
    const char *what;
  } cases[] = {
      {"run a", "usage: run CGROUP WORKLOAD [ARGS...]"},
      {"run a frob 1M", "unknown workload frob"},
      {"run a anon", "anon: missing SIZE"},
      {"run a anon 12Q", "anon: bad size 12Q"},
      {"run a anon -1", "anon: bad size -1"},
      {"run a anon 0", "anon: size 0"},
      {"run a anon 16E", "anon: bad size 16E"},
      {"run a anon 1M 2M", "anon: extra argument 2M"},
      {"run a mlock 1M --hold", "mlock: unknown option --hold"},
      {"run a pagecache 1M --file", "pagecache: --file needs a name"},
      {"run a sleep x", "sleep: bad time x"},
      {"run a sleep", "sleep: missing SECONDS"},
      {"spawn a anon 1M --oom-score-adj 1001", "anon: --oom-score-adj 1001 is not in -1000..1000"},
      {"spawn a anon 1M --oom-score-adj", "anon: --oom-score-adj needs a value"},
  };
  for (const Case &c : cases) {
    INFO(c.cmd);
    FakeOs os;
    ShResult r = run_script(os, std::string(c.cmd) + "\n");
    CHECK(r.status == 1);
    std::string verb = std::string(c.cmd).substr(0, std::string(c.cmd).find(' '));
    CHECK(r.err == "umemcg sh: 1: " + verb + ": " + c.what + ": Invalid argument\n");
    CHECK(os.log.empty());  // no spawn was attempted
  }
  FakeOs os;
  CHECK(run_script(os, "mkdir a; run a anon 0x1000 --oom-score-adj 1000; run a sleep 0.5\n").status == 0);
  CHECK(os.procs[0].spec.size == 4096);
  CHECK(os.procs[1].spec.sleep_ns == 500000000ull);
}

TEST_CASE("sh cmd: sleep advances the machine's time", "[tools][sh]") {
  FakeOs os;
  ShResult r = run_script(os, "sleep 0.5\nsleep 1.25 2\nsleep .001\nsleep 1m\nsleep abc\nsleep -1\nsleep\n");
  CHECK(os.now_ns == 500000000ull + 3250000000ull + 1000000ull + 60000000000ull);
  CHECK(r.err == "umemcg sh: 5: sleep: invalid time interval abc: Invalid argument\n"
                 "umemcg sh: 6: sleep: invalid time interval -1: Invalid argument\n"
                 "umemcg sh: 7: sleep: missing operand: Invalid argument\n");
}

TEST_CASE("sh cmd: watch and event", "[tools][sh]") {
  FakeOs os;
  os.add_dir("/sys/fs/cgroup/a");
  os.add_file("/sys/fs/cgroup/a/memory.events");
  os.events.push_back({3000000000ull, 1, 0x2});  // IN_MODIFY at 3 s
  ShResult r = run_script(os,
                          "watch a/memory.events\nwatch a\nevent\necho $?\nevent 2\necho $?\n"
                          "rmdir a\nevent\nevent\nwatch nope\nevent x\n");
  CHECK(r.out == "1\n2\n1 IN_MODIFY\n0\n1\n2 IN_DELETE_SELF\n2 IN_IGNORED\n");
  CHECK(r.err == "umemcg sh: 10: watch: cannot watch nope: No such file or directory\n"
                 "umemcg sh: 11: event: usage: event [SECONDS]: Invalid argument\n");
  CHECK(os.now_ns == 5000000000ull);  // the event at 3 s, then a 2 s timeout
  CHECK(inotify_mask_names(0x40000002) == "IN_MODIFY|IN_ISDIR");
  CHECK(inotify_mask_names(0x10000000) == "0x10000000");
}

TEST_CASE("sh cmd: bpf load, attach, run, map, ringbuf, unload", "[tools][sh]") {
  FakeOs os;
  FakeOs::BpfObject obj;
  obj.progs = {"on_charge", "probe"};
  obj.maps = {"ops", "counts", "big", "pcpu", "events"};
  obj.retval = 42;
  obj.dumps["counts"] = BpfMapDump{false, 4, 8, {{std::string("\x01\0\0\0", 4), {std::string("\x2a\0\0\0\0\0\0\0", 8)}}}};
  obj.dumps["big"] = BpfMapDump{false, 4, 20, {{std::string(4, '\0'), {std::string(20, '\x11')}}}};
  obj.dumps["pcpu"] = BpfMapDump{true, 4, 4, {{std::string(4, '\0'), {std::string("\1\0\0\0", 4), std::string("\2\0\0\0", 4)}}}};
  obj.ringbufs["events"] = {std::string("\xde\xad", 2), std::string("\x01\x02\x03", 3)};
  os.bpf_catalog["/progs/policy.bpf.o"] = obj;
  FakeOs::BpfObject bad;
  bad.reject_log = "0: R1 invalid mem access 'scalar'";
  os.bpf_catalog["/progs/bad.bpf.o"] = bad;
  ShResult r = run_script(os,
                          "mkdir a\n"
                          "bpf load /progs/policy.bpf.o\n"
                          "bpf attach policy/ops a\n"
                          "bpf attach policy/probe\n"
                          "bpf run policy/on_charge 1 0x10 -1\n"
                          "bpf map policy/counts\n"
                          "bpf map policy/big\n"
                          "bpf map policy/pcpu\n"
                          "bpf ringbuf policy/events\n"
                          "bpf ringbuf policy/events\n"
                          "bpf detach policy/ops a\n"
                          "bpf unload policy\n"
                          "bpf load /progs/bad.bpf.o\n"
                          "echo $?\n"
                          "bpf attach policy\n"
                          "bpf run nope/x\n"
                          "bpf frob\n");
  CHECK(r.out == "retval 42\n"
                 "key: 01 00 00 00  value: 2a 00 00 00 00 00 00 00\nFound 1 element\n"
                 "key:\n00 00 00 00\nvalue:\n11 11 11 11 11 11 11 11  11 11 11 11 11 11 11 11\n11 11 11 11\nFound 1 element\n"
                 "key:\n00 00 00 00\nvalue (CPU 00): 01 00 00 00\nvalue (CPU 01): 02 00 00 00\nFound 1 element\n"
                 "de ad\n01 02 03\n"
                 "1\n");
  CHECK(r.err == "0: R1 invalid mem access 'scalar'\n"
                 "umemcg sh: 13: bpf: load /progs/bad.bpf.o: Permission denied\n"
                 "umemcg sh: 15: bpf: usage: bpf attach NAME/MAP CGROUP | NAME/PROG: Invalid argument\n"
                 "umemcg sh: 16: bpf: run nope/x: No such file or directory\n"
                 "umemcg sh: 17: bpf: usage: bpf load|attach|detach|run|map|ringbuf|unload ...: Invalid argument\n");
  std::vector<std::string> calls;
  for (const std::string &l : os.log)
    if (l.compare(0, 4, "bpf_") == 0) calls.push_back(l);
  std::vector<std::string> want = {
      "bpf_load /progs/policy.bpf.o policy", "bpf_attach policy/ops /sys/fs/cgroup/a",
      "bpf_attach policy/probe ",            "bpf_run policy/on_charge 1 16 18446744073709551615",
      "bpf_detach policy/ops /sys/fs/cgroup/a", "bpf_unload policy",
      "bpf_load /progs/bad.bpf.o bad",       "bpf_run nope/x"};
  CHECK(calls == want);
}

TEST_CASE("sh options: defaults, values and errors", "[tools][sh]") {
  ShOptions o;
  std::string err;
  REQUIRE(parse_sh_options({}, &o, &err));
  CHECK(o.cpus == 4);
  CHECK(o.memory == 4ull << 30);
  CHECK(o.swap == 0);
  CHECK(o.mode == ShOptions::Mode::kSim);
  CHECK(o.seed == 1);
  CHECK(o.cgroup_version == 2);
  CHECK_FALSE(o.memory_localevents);
  CHECK_FALSE(o.memory_recursiveprot);
  CHECK(o.stock == ShOptions::Stock::kMemcg);
  CHECK_FALSE(o.errexit);
  CHECK(o.script.empty());
  REQUIRE(parse_sh_options({"--cpus", "2", "--memory=1G", "--swap", "512M", "--mode", "native",
                            "--seed", "0x2a", "--cgroup", "v1", "--mount-opts",
                            "memory_localevents,memory_recursiveprot", "--stock", "pcstock", "-e",
                            "run.sh", "x", "y"},
                           &o, &err));
  CHECK(o.cpus == 2);
  CHECK(o.memory == 1ull << 30);
  CHECK(o.swap == 512ull << 20);
  CHECK(o.mode == ShOptions::Mode::kNative);
  CHECK(o.seed == 42);
  CHECK(o.cgroup_version == 1);
  CHECK(o.memory_localevents);
  CHECK(o.memory_recursiveprot);
  CHECK(o.stock == ShOptions::Stock::kPcstock);
  CHECK(o.errexit);
  CHECK(o.script == "run.sh");
  CHECK(o.args == std::vector<std::string>{"x", "y"});
  struct Bad {
    std::vector<std::string> argv;
    const char *err;
  } bad[] = {
      {{"--cpus", "0"}, "umemcg sh: --cpus '0': not a CPU count in 1..64"},
      {{"--cpus", "x"}, "umemcg sh: --cpus 'x': not a CPU count in 1..64"},
      {{"--memory", "12Q"}, "umemcg sh: --memory '12Q': not a size of at least 1M"},
      {{"--swap", "-1"}, "umemcg sh: --swap '-1': not a size"},
      {{"--mode", "fast"}, "umemcg sh: --mode 'fast': not sim or native"},
      {{"--seed", "-3"}, "umemcg sh: --seed '-3': not an unsigned 64-bit number"},
      {{"--cgroup", "v3"}, "umemcg sh: --cgroup 'v3': not v2 or v1"},
      {{"--mount-opts", "nsdelegate"}, "umemcg sh: --mount-opts 'nsdelegate': unknown mount option 'nsdelegate'"},
      {{"--stock", "x"}, "umemcg sh: --stock 'x': not memcg or pcstock"},
      {{"--frob"}, "umemcg sh: --frob: unknown option"},
      {{"--cpus"}, "umemcg sh: --cpus: needs a value"},
      {{"--costs", "/nonexistent/costs"},
       "umemcg sh: --costs '/nonexistent/costs': cannot open: No such file or directory"},
  };
  for (const Bad &b : bad) {
    INFO(b.err);
    CHECK_FALSE(parse_sh_options(b.argv, &o, &err));
    CHECK(err == b.err);
  }
  REQUIRE(parse_sh_options({"-"}, &o, &err));
  CHECK(o.script == "-");
  REQUIRE(parse_sh_options({"--help"}, &o, &err));
  CHECK(o.help);
  CHECK(std::string(sh_usage()).find("--stock memcg|pcstock") != std::string::npos);
}

TEST_CASE("sh: sizes and seconds", "[tools][sh]") {
  uint64_t v = 0;
  CHECK((parse_size("4096", &v) && v == 4096));
  CHECK((parse_size("50M", &v) && v == 50ull << 20));
  CHECK((parse_size("1g", &v) && v == 1ull << 30));
  CHECK((parse_size("0x10k", &v) && v == 16ull << 10));
  CHECK((parse_size("0xa", &v) && v == 10));
  CHECK((parse_size("15E", &v) && v == 15ull << 60));
  CHECK_FALSE(parse_size("16E", &v));
  CHECK_FALSE(parse_size("99999999999999999999", &v));
  CHECK_FALSE(parse_size("1MB", &v));
  CHECK_FALSE(parse_size("", &v));
  CHECK_FALSE(parse_size(" 1", &v));
  CHECK_FALSE(parse_size("M", &v));
  CHECK((parse_seconds("1.5", &v) && v == 1500000000ull));
  CHECK((parse_seconds(".25", &v) && v == 250000000ull));
  CHECK((parse_seconds("3", &v) && v == 3000000000ull));
  CHECK_FALSE(parse_seconds(".", &v));
  CHECK_FALSE(parse_seconds("1e3", &v));
}
