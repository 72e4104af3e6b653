// SPDX-License-Identifier: GPL-2.0-only
// test/tools/cli_bpf_test.cc: `umemcg bpf verify | disasm | run | dump`, run as a user would:
// exit statuses, the lines they print, and clear errors on bad input (missing or truncated
// objects, unknown programs, bad --ctx).
#include <catch2/catch.hpp>

#include "test/tools/umemcg_cli.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace {

using Run = umemcg::test::CommandResult;
using umemcg::test::has;
using umemcg::test::prog;
using umemcg::test::run_umemcg;

// A copy of an object cut to `keep` bytes, in a temporary file.
std::string truncated_copy(const char *name, size_t keep) {
  std::ifstream in(prog(name), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > keep);
  char path[] = "/tmp/umemcg-cli-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, bytes.data(), keep) == (ssize_t)keep);
  close(fd);
  return path;
}

}  // namespace

TEST_CASE("cli: usage and unknown commands", "[tools][cli]") {
  CHECK(run_umemcg("").status == 2);
  Run h = run_umemcg("--help");
  CHECK(h.status == 0);
  CHECK(has(h, "bpf"));
  Run b = run_umemcg("bpf help");
  CHECK(b.status == 0);
  CHECK(has(b, "verify FILE.o"));
  CHECK(has(b, "run FILE.o PROG"));
  Run u = run_umemcg("bpf frobnicate");
  CHECK(u.status == 2);
  CHECK(has(u, "unknown command 'frobnicate'"));
  CHECK(run_umemcg("bpf verify").status == 2);
  CHECK(run_umemcg("bpf verify a b").status == 2);
}

TEST_CASE("cli: bpf verify", "[tools][cli]") {
  Run r = run_umemcg("bpf verify " + prog("rt_maps.bpf.o"));
  INFO(r.out);
  CHECK(has(r, "object rt_maps: 5 programs, 3 maps"));
  if (has(r, "verification is not available")) {
    CHECK(r.status == 0);
    CHECK(has(r, "program update_and_emit (syscall, syscall): linked, not verified"));
  } else {
    // With the verifier: leak_record leaks a ring-buffer reservation and is rejected;
    // the others are accepted.
    CHECK(r.status == 1);
    CHECK(has(r, "program leak_record (syscall, syscall): REJECTED"));
    CHECK(has(r, "Unreleased reference"));
    CHECK(has(r, "program output_discard (syscall, syscall): accepted"));
    CHECK(has(r, "program update_and_emit (syscall, syscall): accepted"));
  }
  Run w = run_umemcg("bpf verify " + prog("maps.bpf.o"));
  CHECK(has(w, "warning: map 'outer'"));
  Run missing = run_umemcg("bpf verify /nonexistent/x.bpf.o");
  CHECK(missing.status == 2);
  CHECK(has(missing, "cannot load /nonexistent/x.bpf.o"));
  // memcg programs verify against what mm/ registered at boot (struct_ops bpf_memcg_ops, the
  // cgroup iterator, the rwsem and over-high tracing targets, the memcg kfuncs).
  Run policy = run_umemcg("bpf verify " + prog("memcg_policy.bpf.o"));
  INFO(policy.out);
  CHECK(policy.status == 0);
  CHECK(has(policy, "program high_policy (struct_ops/high_policy, struct_ops): accepted"));
  CHECK(has(policy, "program cgroup_usage (iter.s/cgroup, tracing): accepted"));
  CHECK(has(policy, "program after_down_read_trylock (fexit/down_read_trylock, tracing): accepted"));
  CHECK(has(policy, "program reclaim_root (syscall, syscall): accepted"));
  // The loader's test object implements a member the kernel type lacks, passes a scalar as a
  // css and asks for a sleepable fentry on a function that is not sleepable: exit 1.
  Run ops = run_umemcg("bpf verify " + prog("memcg_ops.bpf.o"));
  INFO(ops.out);
  CHECK(ops.status == 1);
  CHECK(has(ops, "reason: struct_ops type bpf_memcg_ops has no function member charged"));
  CHECK(has(ops, "reason: arg#0 expected pointer to STRUCT cgroup_subsys_state but R1 is scalar"));
  CHECK(has(ops, "reason: __mem_cgroup_handle_over_high is not sleepable"));
  CHECK(has(ops, "program high_policy (struct_ops/high_policy, struct_ops): accepted"));
}

TEST_CASE("cli: a truncated object exits 2 with a clear message", "[tools][cli]") {
  for (size_t keep : {size_t{0}, size_t{10}, size_t{64}, size_t{700}}) {
    const std::string path = truncated_copy("rt_maps.bpf.o", keep);
    for (const char *verb : {"verify", "disasm", "dump"}) {
      Run r = run_umemcg(std::string("bpf ") + verb + " " + path);
      INFO(verb << " keep " << keep << ": " << r.out);
      CHECK(r.status == 2);
      CHECK(has(r, "cannot load " + path + ":"));
    }
    Run r = run_umemcg("bpf run " + path + " update_and_emit");
    CHECK(r.status == 2);
    CHECK(has(r, "cannot load"));
    unlink(path.c_str());
  }
}

TEST_CASE("cli: bpf disasm names relocations", "[tools][cli]") {
  Run r = run_umemcg("bpf disasm " + prog("rt_maps.bpf.o"));
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK(has(r, "program update_and_emit (section syscall, syscall):"));
  CHECK(has(r, "; map hash"));
  CHECK(has(r, "; map rb"));
  CHECK(has(r, "call bpf_ringbuf_reserve#131"));
  CHECK(has(r, "exit"));
  Run l = run_umemcg("bpf disasm " + prog("rt_loop.bpf.o"));
  CHECK(has(l, "; callback outer_cb"));
  CHECK(has(l, "inner_cb:"));
  Run g = run_umemcg("bpf disasm " + prog("rt_globals.bpf.o"));
  CHECK(has(g, "; .rodata+0"));
  Run k = run_umemcg("bpf disasm " + prog("memcg_ops.bpf.o"));
  CHECK(has(k, "; kfunc bpf_get_mem_cgroup"));
}

TEST_CASE("cli: bpf run", "[tools][cli]") {
  // struct glob_args { u32 in = 5; ... } (40 bytes)
  const std::string ctx = "05" + std::string(78, '0');
  Run r = run_umemcg("bpf run " + prog("rt_globals.bpf.o") + " use_globals --ctx " + ctx);
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK(has(r, "retval: 0 (0x0)"));
  CHECK(has(r, "ctx out: 05000000"));
  CHECK(has(r, "7300000000000000"));  // out = 115
  CHECK(has(r, "bpf_trace_printk: in=5 out=115 calls=1"));
  Run lp = run_umemcg("bpf run " + prog("rt_loop.bpf.o") + " loops --ctx " +
                  "0a000000" "03000000" + std::string(48, '0'));
  CHECK(lp.status == 0);
  CHECK(has(lp, "ctx out: 0a000000030000001e00000000000000"));
  Run fault = run_umemcg("bpf run " + prog("rt_maps.bpf.o") + " bad_ctx_read --ctx 00");
  CHECK(fault.status == 1);
  CHECK(has(fault, "test run failed"));
  CHECK(has(fault, "smaller than the program reads"));
  char hexfile[] = "/tmp/umemcg-ctx-XXXXXX";
  int fd = mkstemp(hexfile);
  REQUIRE(fd >= 0);
  const std::string hex(2 * 65536, '0');
  REQUIRE(write(fd, hex.data(), hex.size()) == (ssize_t)hex.size());
  close(fd);
  Run big = run_umemcg("bpf run " + prog("rt_maps.bpf.o") + " delete_key --ctx @" + hexfile);
  unlink(hexfile);
  CHECK(big.status == 1);
  CHECK(has(big, "larger than 65535"));
  CHECK(run_umemcg("bpf run " + prog("rt_maps.bpf.o") + " delete_key --ctx @/nonexistent").status == 2);
  Run nop = run_umemcg("bpf run " + prog("rt_maps.bpf.o") + " no_such_prog");
  CHECK(nop.status == 2);
  CHECK(has(nop, "has no program 'no_such_prog'"));
  Run bad = run_umemcg("bpf run " + prog("rt_maps.bpf.o") + " delete_key --ctx 0g");
  CHECK(bad.status == 2);
  CHECK(has(bad, "--ctx"));
  CHECK(run_umemcg("bpf run " + prog("rt_maps.bpf.o") + " delete_key --ctx 123").status == 2);
  CHECK(run_umemcg("bpf run " + prog("rt_maps.bpf.o")).status == 2);
  Run notsys = run_umemcg("bpf run " + prog("maps.bpf.o") + " use_storage");
  CHECK(notsys.status == 1);
  CHECK(has(notsys, "not a SYSCALL program"));
}

TEST_CASE("cli: bpf dump", "[tools][cli]") {
  Run r = run_umemcg("bpf dump " + prog("rt_maps.bpf.o"));
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK(has(r, "update_and_emit"));
  CHECK(has(r, "ringbuf"));
}

TEST_CASE("cli: a directory, a FIFO or a missing file exits 2 and says why", "[tools][cli]") {
  char dir[] = "/tmp/umemcg-cli-dir-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string fifo = std::string(dir) + "/fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  for (const char *verb : {"verify", "disasm", "dump"}) {
    Run d = run_umemcg(std::string("bpf ") + verb + " " + dir);
    INFO(verb << ": " << d.out);
    CHECK(d.status == 2);
    CHECK(has(d, std::string("cannot load ") + dir + ": cannot load a directory"));
    Run f = run_umemcg(std::string("bpf ") + verb + " " + fifo);
    INFO(f.out);
    CHECK(f.status == 2);
    CHECK(has(f, "cannot load a FIFO"));
    Run m = run_umemcg(std::string("bpf ") + verb + " " + dir + "/missing.o");
    CHECK(m.status == 2);
    CHECK(has(m, "cannot open: No such file or directory"));
    // A path through a regular file: ENOTDIR, whoever runs the test (root reads any file).
    Run n = run_umemcg(std::string("bpf ") + verb + " " + prog("rt_maps.bpf.o") + "/x");
    CHECK(n.status == 2);
    CHECK(has(n, "cannot open: Not a directory"));
  }
  Run r = run_umemcg("bpf run " + std::string(dir) + " p");
  CHECK(r.status == 2);
  CHECK(has(r, "cannot load a directory"));
  Run c = run_umemcg("bpf run " + prog("rt_maps.bpf.o") + " delete_key --ctx @" + dir);
  CHECK(c.status == 2);
  CHECK(has(c, "cannot read"));
  CHECK(has(c, "Is a directory"));
  unlink(fifo.c_str());
  rmdir(dir);
}

TEST_CASE("cli: --help and -h for every verb, --version", "[tools][cli]") {
  for (const char *verb : {"verify", "disasm", "run", "dump"}) {
    for (const char *h : {"--help", "-h"}) {
      Run r = run_umemcg(std::string("bpf ") + verb + " " + h);
      INFO(verb << " " << h << ": " << r.out);
      CHECK(r.status == 0);
      CHECK(has(r, std::string("usage: umemcg bpf ") + verb + " FILE.o"));
      CHECK(has(r, "exit: 0"));
    }
  }
  CHECK(run_umemcg("-h").status == 0);
  CHECK(run_umemcg("bpf -h").status == 0);
  Run v = run_umemcg("--version");
  CHECK(v.status == 0);
  CHECK(has(v, "umemcg 0."));
}

TEST_CASE("cli: bpf verify --log-level", "[tools][cli]") {
  Run l2 = run_umemcg("bpf verify " + prog("rt_maps.bpf.o") + " --log-level 2");
  INFO(l2.out);
  if (has(l2, "verification is not available")) return;
  CHECK(l2.status == 1);
  CHECK(has(l2, "R10=fp0"));             // register state lines
  CHECK(has(l2, " ; R0="));              // the state after an instruction, in its column
  CHECK(has(l2, "; int "));              // source lines from .BTF.ext
  CHECK_FALSE(has(l2, "R0_w="));         // no liveness marks, as kernel 6.18
  Run l0 = run_umemcg("bpf verify " + prog("rt_maps.bpf.o") + " --log-level 0");
  CHECK(l0.status == 1);
  CHECK_FALSE(has(l0, "R10=fp0"));
  CHECK(has(l0, "REJECTED"));
  Run bad = run_umemcg("bpf verify " + prog("rt_maps.bpf.o") + " --log-level 3");
  CHECK(bad.status == 2);
  CHECK(has(bad, "--log-level: 0, 1 or 2"));
  CHECK(run_umemcg("bpf verify " + prog("rt_maps.bpf.o") + " --log-level").status == 2);
  CHECK(run_umemcg("bpf verify " + prog("rt_maps.bpf.o") + " --frobnicate").status == 2);
}

TEST_CASE("cli: struct_ops maps, autoload, dead frame-pointer writes", "[tools][cli]") {
  Run policy = run_umemcg("bpf verify " + prog("memcg_policy.bpf.o"));
  INFO(policy.out);
  CHECK_FALSE(has(policy, "warning"));
  CHECK_FALSE(has(policy, "not implemented"));
  Run e = run_umemcg("bpf verify " + prog("cli_edges.bpf.o"));
  INFO(e.out);
  if (has(e, "verification is not available")) return;
  CHECK(e.status == 0);
  CHECK(has(e, "program not_autoloaded (?syscall, syscall): not loaded (autoload off)"));
  CHECK(has(e, "program dead_fp_write (syscall, syscall): accepted"));
  CHECK(has(e, "program probe_read (syscall, syscall): accepted"));
  Run fp = run_umemcg("bpf run " + prog("cli_edges.bpf.o") + " dead_fp_write");
  INFO(fp.out);
  CHECK(fp.status == 0);
  CHECK(has(fp, "retval: 3 (0x3)"));
  // bpf_probe_read_kernel from address 0: -EFAULT (-14) and a zeroed buffer.
  Run pr = run_umemcg("bpf run " + prog("cli_edges.bpf.o") + " probe_read --ctx " + std::string(48, '0'));
  INFO(pr.out);
  CHECK(pr.status == 0);
  CHECK(has(pr, "ctx out: 00000000000000000000000000000000f2ffffffffffffff"));
  Run na = run_umemcg("bpf run " + prog("cli_edges.bpf.o") + " not_autoloaded");
  INFO(na.out);
  CHECK(na.status == 1);
  CHECK(has(na, "turns autoload off"));
}
