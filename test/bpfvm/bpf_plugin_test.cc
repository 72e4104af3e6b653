// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/bpf_plugin_test.cc: runs the built umemcg-bpf-plugin the way the bpf_conformance
// suite does (program as hex bytes on stdin, memory as hex bytes in argv[1]).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bpfvm/asm.h"

#ifndef BPF_PLUGIN_PATH
#error "BPF_PLUGIN_PATH must name the built umemcg-bpf-plugin"
#endif

using namespace umemcg;

namespace {

struct PluginRun {
  int status;
  std::string out;
};

// The suite's encoding: each byte as two hex digits followed by two spaces.
std::string encode(const std::vector<u8> &bytes) {
  std::string s;
  char buf[8];
  for (u8 b : bytes) {
    std::snprintf(buf, sizeof(buf), "%02x  ", b);
    s += buf;
  }
  return s;
}

std::vector<u8> assemble(const char *src) {
  auto insns = emu::bpf_assemble(src);
  REQUIRE(insns.ok());
  const u8 *p = reinterpret_cast<const u8 *>(insns->data());
  return std::vector<u8>(p, p + insns->size() * sizeof(bpf_insn));
}

// Runs cmd with /bin/sh and waits for it: its exit status (-1: killed) and standard output.
PluginRun run_shell(const std::string &cmd) {
  FILE *f = popen(cmd.c_str(), "r");
  REQUIRE(f != nullptr);
  std::string out;
  char buf[256];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  int st = pclose(f);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

// stdin_text and mem_arg contain only hex digits, spaces and 'x': safe inside single quotes.
PluginRun run_plugin(const std::string &stdin_text, const std::string *mem_arg) {
  std::string cmd = "printf '%s\\n' '" + stdin_text + "' | " BPF_PLUGIN_PATH;
  if (mem_arg) cmd += " '" + *mem_arg + "'";
  return run_shell(cmd + " 2>/dev/null");
}

}  // namespace

TEST_CASE("bpf plugin: r0 as lowercase hex, exit 0", "[bpfvm][plugin]") {
  PluginRun r = run_plugin(encode(assemble("lddw %r0, 0x1122334455667788\nexit")), nullptr);
  CHECK(r.status == 0);
  CHECK(r.out == "1122334455667788\n");
  r = run_plugin(encode(assemble("mov %r0, 0xab\nexit")), nullptr);
  CHECK(r.out == "ab\n");
}

TEST_CASE("bpf plugin: memory in argv[1], r1 = memory, r2 = length", "[bpfvm][plugin]") {
  std::string mem = "01  ab  03  ";
  PluginRun r = run_plugin(encode(assemble("ldxb %r0, [%r1+1]\nexit")), &mem);
  CHECK(r.status == 0);
  CHECK(r.out == "ab\n");
  r = run_plugin(encode(assemble("mov %r0, %r2\nexit")), &mem);
  CHECK(r.out == "3\n");
  std::string empty;
  r = run_plugin(encode(assemble("mov %r0, %r2\nexit")), &empty);
  CHECK(r.status == 0);
  CHECK(r.out == "0\n");
}

TEST_CASE("bpf plugin: the suite's callx test", "[bpfvm][plugin]") {
  PluginRun r = run_plugin(
      encode(assemble("mov %r1, -1\nmov %r2, 5\ncall %r2\nmov %r0, 2\nexit")), nullptr);
  CHECK(r.status == 0);
  CHECK(r.out == "2\n");
}

TEST_CASE("bpf plugin: rejected and faulting programs exit non-zero with a reason", "[bpfvm][plugin]") {
  PluginRun r = run_plugin("ff  00  00  00  00  00  00  00", nullptr);
  CHECK(r.status == 1);
  CHECK(r.out == "unknown opcode ff at insn 0\n");
  r = run_plugin(encode(assemble("ldxw %r0, [%r1+0]\nexit")), nullptr);
  CHECK(r.status == 1);
  CHECK(r.out.find("invalid memory read of 4 bytes") != std::string::npos);
  std::string mem = "01  02  ";
  r = run_plugin(encode(assemble("ldxw %r0, [%r1+0]\nexit")), &mem);
  CHECK(r.status == 1);
  r = run_plugin("b7  00  00", nullptr);
  CHECK(r.status == 2);
  r = run_plugin("zz", nullptr);
  CHECK(r.status == 2);
}

// A bounded loop the verifier unrolls (200,000 processed instructions).
static const char *const kBoundedLoop = R"(
  mov %r6, 100000
loop:
  sub %r6, 1
  jne %r6, 0, loop
  mov %r0, 7
  exit
)";

// With UMEMCG_BPF_PLUGIN_VERBOSE set, the plugin says on stderr which mode ran: its standard
// output and standard error. args: the plugin's arguments, quoted.
std::string run_plugin_verbose(const std::string &stdin_text, const std::string &args = "") {
  return run_shell("printf '%s\\n' '" + stdin_text +
                   "' | UMEMCG_BPF_PLUGIN_VERBOSE=1 " BPF_PLUGIN_PATH + args + " 2>&1")
      .out;
}

TEST_CASE("bpf plugin: a verifier-clean program runs in the fast mode", "[bpfvm][plugin]") {
  const PluginRun r = run_plugin(encode(assemble(kBoundedLoop)), nullptr);
  CHECK(r.status == 0);
  CHECK(r.out == "7\n");
  CHECK_THAT(run_plugin_verbose(encode(assemble(kBoundedLoop))),
             Catch::Contains("verifier: accepted, fast mode"));
}

TEST_CASE("bpf plugin: a program the verifier rejects still runs, bounds-checked",
          "[bpfvm][plugin]") {
  // Helper id 1 is the kernel's bpf_map_lookup_elem (the verifier wants a map in r1); the
  // plugin's helper 1 adds r1 and r2. Every register is written before it is read: safe mode.
  const char *src = "mov %r1, 2\nmov %r2, 3\ncall 1\nexit";
  const PluginRun r = run_plugin(encode(assemble(src)), nullptr);
  CHECK(r.status == 0);
  CHECK(r.out == "5\n");
  CHECK_THAT(run_plugin_verbose(encode(assemble(src))), Catch::Contains("safe mode"));
  // An unsafe program still faults cleanly.
  const PluginRun bad = run_plugin(encode(assemble("ldxdw %r0, [%r1+8]\nexit")), nullptr);
  CHECK(bad.status == 1);
  CHECK(bad.out.find("invalid memory read of 8 bytes") != std::string::npos);
  // A read of a register nothing wrote: only the checked mode tracks that.
  const char *uninit = "mov %r0, %r5\nexit";
  const PluginRun u = run_plugin(encode(assemble(uninit)), nullptr);
  CHECK(u.status == 1);
  CHECK(u.out == "R5 !read_ok at insn 0\n");
  CHECK_THAT(run_plugin_verbose(encode(assemble(uninit))), Catch::Contains("checked mode"));
}

// 10 million iterations of a memory-reading loop: 40M executed instructions, far past what the
// verifier can explore (it gives up at 1M processed instructions).
static const char *const kLongLoop = R"(
  mov %r0, 0
  lddw %r3, 10000000
loop:
  ldxb %r4, [%r1+0]
  add %r0, %r4
  sub %r3, 1
  jne %r3, 0, loop
  TAIL
  exit
)";

std::string long_loop(const char *tail) {
  std::string src = kLongLoop;
  src.replace(src.find("TAIL"), 4, tail);
  return encode(assemble(src.c_str()));
}

TEST_CASE("bpf plugin: a loop too long for the verifier runs in the safe mode",
          "[bpfvm][plugin]") {
  std::string mem = "03  ";
  const PluginRun r = run_plugin(long_loop(""), &mem);
  CHECK(r.status == 0);
  CHECK(r.out == "1c9c380\n");  // 3 * 10,000,000
  const std::string out = run_plugin_verbose(long_loop(""), " '03'");
  CHECK_THAT(out, Catch::Contains("BPF program is too large") && Catch::Contains("safe mode"));
  // The verbose mode also reports the verifier's and the run's time (tools/plugin_speed.py).
  CHECK_THAT(out, Catch::Matches("(.|\n)*time: verify [0-9.]+ ms, run [0-9.]+ ms\n(.|\n)*"));
}

TEST_CASE("bpf plugin: a bad access after a long loop is an error exit", "[bpfvm][plugin]") {
  std::string mem = "03  ";
  const PluginRun r = run_plugin(long_loop("ldxdw %r0, [%r1+4096]"), &mem);
  CHECK(r.status == 1);
  CHECK(r.out.find("invalid memory read of 8 bytes") != std::string::npos);
  CHECK(r.out.find("at insn 7") != std::string::npos);
  // A store below the frame through r10 (not the in-frame fast form).
  const PluginRun w = run_plugin(long_loop("stxdw [%r10-520], %r0"), &mem);
  CHECK(w.status == 1);
  CHECK(w.out.find("invalid memory write of 8 bytes") != std::string::npos);
  // Context stores: one inside the 1-byte memory, then one past it (the run checks each
  // access then, not the whole context extent once).
  const PluginRun c = run_plugin(long_loop("stxb [%r1+0], %r0\nldxb %r0, [%r1+0]"), &mem);
  CHECK(c.status == 0);
  CHECK(c.out == "80\n");  // (u8)30,000,000
  const PluginRun c2 = run_plugin(long_loop("stxb [%r1+0], %r0\nstxb [%r1+1], %r0"), &mem);
  CHECK(c2.status == 1);
  CHECK(c2.out.find("invalid memory write of 1 bytes") != std::string::npos);
  CHECK(c2.out.find("at insn 8") != std::string::npos);
}

TEST_CASE("bpf plugin: an endless loop ends at the budget", "[bpfvm][plugin]") {
  const PluginRun r = run_plugin(encode(assemble("mov %r0, 1\nloop:\nja loop\nexit")), nullptr);
  CHECK(r.status == 1);
  CHECK(r.out.find("instruction budget of 100000000 exhausted") != std::string::npos);
}
