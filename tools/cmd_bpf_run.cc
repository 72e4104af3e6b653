// SPDX-License-Identifier: GPL-2.0-only
// tools/cmd_bpf_run.cc: `umemcg bpf run FILE.o PROG [--ctx HEX] [--seed N] [--unverified]`:
// test-runs a SYSCALL program (BPF_PROG_TEST_RUN) on a fresh simulated machine and prints the
// return value, the context as it came back, and the bpf_trace_printk log. A program the
// verifier rejects is refused with its reason, as the kernel refuses to load it; --unverified
// runs it anyway in the checked interpreter.
// Exit: 0 the program ran, 1 the test run failed (rejected attributes, a fault), 2 bad arguments
// or an object that cannot be loaded/linked, or no such program.
#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bpfvm/kernel_env.h"
#include "bpfvm/log.h"
#include "bpfvm/runtime.h"
#include "shim/machine.h"
#include "tools/cmd_bpf.h"

namespace umemcg::cli {

namespace {

using namespace umemcg::emu;

bool parse_hex(const char *s, std::vector<u8> *out, std::string *why) {
  std::string digits;
  for (const char *p = s; *p; p++) {
    if (std::isspace((unsigned char)*p)) continue;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
      p++;
      continue;
    }
    if (!std::isxdigit((unsigned char)*p)) {
      *why = std::string("not a hex digit: '") + *p + "'";
      return false;
    }
    digits += *p;
  }
  if (digits.size() % 2) {
    *why = "odd number of hex digits";
    return false;
  }
  for (size_t i = 0; i < digits.size(); i += 2)
    out->push_back((u8)std::strtoul(digits.substr(i, 2).c_str(), nullptr, 16));
  return true;
}

// The contents of a regular file; a directory or FIFO is refused before reading (a FIFO
// without a writer would block), an error says why.
bool read_text_file(const std::string &path, std::string *out, std::string *why) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *why = std::strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) < 0) {
    *why = std::strerror(errno);
    close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = S_ISDIR(st.st_mode) ? std::strerror(EISDIR) : "not a regular file";
    close(fd);
    return false;
  }
  out->clear();
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = std::strerror(errno);
      close(fd);
      return false;
    }
    if (n == 0) break;
    out->append(buf, (size_t)n);
  }
  close(fd);
  return true;
}

int usage() {
  std::fprintf(stderr, "usage: umemcg bpf run FILE.o PROG [--ctx HEX|@HEXFILE] [--seed N] [--unverified]\n");
  return kExitUsage;
}

}  // namespace

int cmd_bpf_run(std::span<char *const> args) {
  if (args.size() < 2) return usage();
  const char *file = args[0];
  const std::string prog_name = args[1];
  std::vector<u8> ctx;
  u64 seed = 1;
  BpfLinkOptions lopts;
  for (size_t i = 2; i < args.size(); i++) {
    std::string why;
    if (!std::strcmp(args[i], "--ctx") && i + 1 < args.size()) {
      std::string text = args[++i];
      if (!text.empty() && text[0] == '@') {  // hex read from a file (large contexts)
        const std::string path = text.substr(1);
        if (!read_text_file(path, &text, &why)) {
          std::fprintf(stderr, "umemcg bpf run: --ctx: cannot read %s: %s\n", path.c_str(),
                       why.c_str());
          return kExitUsage;
        }
      }
      if (!parse_hex(text.c_str(), &ctx, &why)) {
        std::fprintf(stderr, "umemcg bpf run: --ctx: %s\n", why.c_str());
        return kExitUsage;
      }
    } else if (!std::strcmp(args[i], "--unverified")) {
      lopts.run_unverified = true;
    } else if (!std::strcmp(args[i], "--seed") && i + 1 < args.size()) {
      char *end = nullptr;
      seed = std::strtoull(args[++i], &end, 0);
      if (!end || *end) return usage();
    } else {
      return usage();
    }
  }

  int status = kExitOk;
  MachineConfig cfg;
  cfg.mode = Mode::simulated;
  cfg.nr_cpus = 2;
  cfg.seed = seed;
  bpf_trace_log_clear();
  {
    Machine m(cfg);
    m.exec([&] {
      auto lo = BpfLoadedObject::open(file, bpf_kernel_load_options(), lopts);
      if (!lo.ok()) {
        std::fprintf(stderr, "umemcg bpf run: cannot load %s\n",
                     std::string(lo.status().message()).c_str());
        status = kExitUsage;
        return;
      }
      BpfLoadedProg *p = (*lo)->find_program(prog_name);
      if (!p) {
        std::fprintf(stderr, "umemcg bpf run: %s has no program '%s'\n", file, prog_name.c_str());
        status = kExitUsage;
        return;
      }
      if (!p->fast() && p->runnable())
        std::printf("mode: checked interpreter (--unverified: %s)\n",
                    p->verdict().available ? "the verifier rejected it" : "not verified");
      BpfTestRunOpts opts;
      opts.ctx_in = ctx;
      BpfTestRunResult r = bpf_prog_test_run(*p, opts);
      if (r.err) {
        std::printf("test run failed: %s (%d)\n", r.error.c_str(), r.err);
        status = kExitFailed;
        return;
      }
      std::printf("retval: %u (0x%x)\n", r.retval, r.retval);
      std::string hex;
      char b[4];
      for (u8 c : opts.ctx_in) {
        std::snprintf(b, sizeof(b), "%02x", c);
        hex += b;
      }
      std::printf("ctx out: %s\n", hex.empty() ? "(none)" : hex.c_str());
    });
  }
  const std::string log = bpf_trace_log_text();
  if (!log.empty()) std::printf("trace_printk:\n%s", log.c_str());
  return status;
}

}  // namespace umemcg::cli
