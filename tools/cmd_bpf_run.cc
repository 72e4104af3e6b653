// SPDX-License-Identifier: GPL-2.0-only
// tools/cmd_bpf_run.cc: `umemcg bpf run FILE.o PROG [ARGS...] [options]`: test-runs a SYSCALL
// program (BPF_PROG_TEST_RUN) in a task of the machine `umemcg sh` boots (the cgroup v2
// hierarchy with the memory controller, kernfs, the memory model; simulated, with the seed),
// after an optional `umemcg sh` script (--sh) made cgroups and started workloads on it, and
// prints the return value, the context as it came back and the bpf_trace_printk log. When the
// program called memcg kfuncs, it then says which machine they ran on, what the lookups and
// reclaims found, and, one line each, what the machine lacked when one returned NULL, nothing
// or an error (mm/bpf_memcontrol_report.h).
//
// The context is built from words in order: ARGS and --ctx-u64 N are u64 words (as the
// shell's `bpf run NAME/PROG [ARGS...]`), --ctx-cgroup PATH the id of that cgroup (a u64),
// --ctx HEX raw bytes. A program the verifier rejects is refused with its reason, as the kernel
// refuses to load it; --unverified runs it anyway in the checked interpreter.
// Exit: 0 the program ran, 1 the test run failed (rejected attributes, a fault) or the machine
// failed to boot, 2 bad arguments, an object that cannot be loaded/linked, no such program, a
// --sh script that cannot be read or fails, or a --ctx-cgroup that names no cgroup.
#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bpfvm/kernel_env.h"
#include "bpfvm/log.h"
#include "bpfvm/runtime.h"
#include "kernel/cgroup.h"
#include "kernel/cgroupfs.h"
#include "mm/bpf_memcontrol_report.h"
#include "shim/machine.h"
#include "tools/cmd_bpf.h"
#include "tools/sh/machine_os.h"
#include "tools/sh/sh_main.h"
#include "tools/sh/sh_options.h"

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

const char kUsage[] =
    "usage: umemcg bpf run FILE.o PROG [ARGS...] [--ctx HEX|@HEXFILE] [--ctx-u64 N] "
    "[--ctx-cgroup PATH] [--sh SCRIPT] [--cpus N] [--memory SIZE] [--swap SIZE] [--seed N] "
    "[--unverified]\n";

int usage() {
  std::fputs(kUsage, stderr);
  return kExitUsage;
}

// One piece of the context, in the order of the words: bytes, or a cgroup whose id (a u64) is
// looked up on the machine once --sh made it.
struct CtxPiece {
  std::vector<u8> bytes;
  std::string cgroup;  // non-empty: the id of this cgroup
};

void put_u64(std::vector<u8> *out, u64 v) {
  for (int i = 0; i < 8; i++) out->push_back((u8)(v >> (8 * i)));  // little-endian, as BPF's
}

// A u64 word as the shell's `bpf run` reads ARGS: decimal, 0x hex or 0 octal; a leading '-'
// gives the two's complement.
bool parse_u64_word(const std::string &s, u64 *v) {
  if (s.empty() || s[0] == ' ' || s[0] == '+') return false;
  char *end = nullptr;
  errno = 0;
  *v = s[0] == '-' ? (u64)std::strtoll(s.c_str(), &end, 0) : std::strtoull(s.c_str(), &end, 0);
  return end && !*end && errno != ERANGE;
}

// PATH as a cgroup directory: absolute (under the mount point), or relative to the mount point.
std::string cgroup_dir(const std::string &path) {
  if (!path.empty() && path[0] == '/') return path;
  return std::string(CGROUP_MOUNT_POINT) + "/" + path;
}

std::string size_text(u64 bytes) {
  if (bytes && bytes % (1ull << 30) == 0) return std::to_string(bytes >> 30) + "G";
  if (bytes && bytes % (1ull << 20) == 0) return std::to_string(bytes >> 20) + "M";
  return std::to_string(bytes) + " bytes";
}

// The kfuncs that look up or act on the machine's cgroups and memory: their calls are listed.
bool looks_up(const bpf_memcg_kfunc_record &r) {
  for (const char *k : {"bpf_get_root_mem_cgroup", "bpf_get_mem_cgroup", "bpf_cgroup_from_id",
                        "bpf_proactive_reclaim"})
    if (!std::strcmp(r.kfunc, k)) return true;
  return false;
}

// After the run: the kfuncs called, the machine they ran on, each distinct lookup and its
// result, and one line for each distinct failure with what the machine lacked.
void print_report(const std::vector<bpf_memcg_kfunc_record> &recs, unsigned long dropped,
                  const sh::ShOptions &mo) {
  if (recs.empty()) return;
  std::vector<std::pair<std::string, unsigned long>> counts;  // in first-call order
  for (const bpf_memcg_kfunc_record &r : recs) {
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&](const auto &c) { return c.first == r.kfunc; });
    if (it == counts.end()) counts.emplace_back(r.kfunc, 1);
    else it->second++;
  }
  std::string line = "kfunc calls:";
  for (size_t i = 0; i < counts.size(); i++)
    line += (i ? ", " : " ") + counts[i].first + " " + std::to_string(counts[i].second);
  if (dropped) line += " (and " + std::to_string(dropped) + " more calls not recorded)";
  std::printf("%s\n", line.c_str());
  std::printf("environment: cgroup v%d with the memory controller at %s, %s of memory, %s; "
              "simulated, %d CPUs, seed %llu\n",
              mo.cgroup_version, CGROUP_MOUNT_POINT, size_text(mo.memory).c_str(),
              mo.swap ? (size_text(mo.swap) + " of swap").c_str() : "no swap",
              mo.cpus, (unsigned long long)mo.seed);
  // Distinct lines, in first-seen order, with their repeat counts; at most kMaxLines.
  constexpr size_t kMaxLines = 20;
  std::vector<std::pair<std::string, unsigned long>> lines;
  size_t more = 0;
  for (const bpf_memcg_kfunc_record &r : recs) {
    std::string text;
    const std::string call = r.call + " = " + r.result;
    switch (r.kind) {
      case bpf_memcg_report_kind::lacks: text = "lacks: " + call + ": " + r.note; break;
      case bpf_memcg_report_kind::bad_arg:
        text = "bad argument: " + call + ": " + r.note;
        break;
      case bpf_memcg_report_kind::ok:
        if (!looks_up(r)) continue;
        text = "  " + call + (r.note.empty() ? "" : ": " + r.note);
        break;
    }
    auto it = std::find_if(lines.begin(), lines.end(),
                           [&](const auto &l) { return l.first == text; });
    if (it != lines.end()) {
      it->second++;
    } else if (lines.size() < kMaxLines) {
      lines.emplace_back(text, 1);
    } else {
      more++;
    }
  }
  for (const auto &[text, n] : lines) {
    const std::string times = n > 1 ? " (" + std::to_string(n) + " calls)" : "";
    std::printf("%s%s\n", text.c_str(), times.c_str());
  }
  if (more) std::printf("(%zu more calls with other arguments or results)\n", more);
}

struct RunArgs {
  const char *file = nullptr;
  std::string prog;
  std::vector<CtxPiece> ctx;
  std::string script;  // --sh: a `umemcg sh` script run first
  BpfLinkOptions lopts;
  sh::ShOptions machine;
};

// The body, in the task of a process of the machine's root cgroup.
int run_on_machine(const RunArgs &a, sh::ShellOs &os) {
  std::unique_ptr<BpfLoadedObject> obj;
  {
    KernelEntry k;
    auto lo = BpfLoadedObject::open(a.file, bpf_kernel_load_options(), a.lopts);
    if (!lo.ok()) {
      std::fprintf(stderr, "umemcg bpf run: cannot load %s\n",
                   std::string(lo.status().message()).c_str());
      return kExitUsage;
    }
    obj = std::move(*lo);
  }
  int status = kExitOk;
  // The object goes away on the machine, in this task, whatever the outcome.
  auto unload = [&] {
    KernelEntry k;
    obj.reset();
  };
  BpfLoadedProg *p = obj->find_program(a.prog);
  if (!p) {
    std::fprintf(stderr, "umemcg bpf run: %s has no program '%s'\n", a.file, a.prog.c_str());
    unload();
    return kExitUsage;
  }
  if (!a.script.empty()) {
    // The setup script, on this machine and in this task, as `umemcg sh -e SCRIPT` runs it:
    // the first failing command ends it.
    sh::ShOptions so = a.machine;
    so.script = a.script;
    so.errexit = true;
    std::istringstream no_input;
    std::fflush(stdout);
    const int st = sh::sh_main(so, os, no_input, std::cout, std::cerr);
    std::cout.flush();
    if (st != 0) {
      std::fprintf(stderr, "umemcg bpf run: --sh %s: the script failed (exit status %d)\n",
                   a.script.c_str(), st);
      unload();
      return kExitUsage;
    }
  }
  BpfTestRunOpts opts;
  for (const CtxPiece &c : a.ctx) {
    if (c.cgroup.empty()) {
      opts.ctx_in.insert(opts.ctx_in.end(), c.bytes.begin(), c.bytes.end());
      continue;
    }
    KernelEntry k;
    cgroup *cg = nullptr;
    const std::string dir = cgroup_dir(c.cgroup);
    if (int err = cgroupfs_lookup_cgroup(dir, &cg)) {
      std::fprintf(stderr, "umemcg bpf run: --ctx-cgroup %s: %s: %s\n", c.cgroup.c_str(),
                   dir.c_str(), std::strerror(-err));
      status = kExitUsage;
      break;
    }
    put_u64(&opts.ctx_in, cg->id);
  }
  if (status != kExitOk) {
    unload();
    return status;
  }
  if (!p->fast() && p->runnable())
    std::printf("mode: checked interpreter (--unverified: %s)\n",
                p->verdict().available ? "the verifier rejected it" : "not verified");
  BpfTestRunResult r;
  std::vector<bpf_memcg_kfunc_record> recs;
  unsigned long dropped = 0;
  {
    KernelEntry k;
    bpf_memcg_report_start();
    r = bpf_prog_test_run(*p, opts);
    recs = bpf_memcg_report_stop();
    dropped = bpf_memcg_report_dropped();
  }
  if (r.err) {
    std::printf("test run failed: %s (%d)\n", r.error.c_str(), r.err);
    status = kExitFailed;
  } else {
    std::printf("retval: %u (0x%x)\n", r.retval, r.retval);
    std::string hex;
    char b[4];
    for (u8 c : opts.ctx_in) {
      std::snprintf(b, sizeof(b), "%02x", c);
      hex += b;
    }
    std::printf("ctx out: %s\n", hex.empty() ? "(none)" : hex.c_str());
  }
  print_report(recs, dropped, a.machine);
  unload();
  return status;
}

}  // namespace

int cmd_bpf_run(std::span<char *const> args) {
  if (args.size() < 2) return usage();
  RunArgs a;
  a.file = args[0];
  a.prog = args[1];
  std::vector<std::string> machine_words;
  std::string why;
  auto value = [&](size_t *i, const char *opt) -> const char * {
    if (*i + 1 >= args.size()) {
      std::fprintf(stderr, "umemcg bpf run: %s needs a value\n", opt);
      return nullptr;
    }
    return args[++*i];
  };
  for (size_t i = 2; i < args.size(); i++) {
    const std::string w = args[i];
    const bool is_number = !w.empty() && (std::isdigit((unsigned char)w[0]) ||
                                          (w[0] == '-' && w.size() > 1 &&
                                           std::isdigit((unsigned char)w[1])));
    if (is_number) {  // an ARG: a u64 word of the context
      u64 v = 0;
      if (!parse_u64_word(w, &v)) {
        std::fprintf(stderr, "umemcg bpf run: bad argument '%s': not a 64-bit number\n", w.c_str());
        return kExitUsage;
      }
      a.ctx.push_back({});
      put_u64(&a.ctx.back().bytes, v);
    } else if (w == "--ctx") {
      const char *v = value(&i, "--ctx");
      if (!v) return usage();
      std::string text = v;
      if (!text.empty() && text[0] == '@') {  // hex read from a file (large contexts)
        const std::string path = text.substr(1);
        if (!read_text_file(path, &text, &why)) {
          std::fprintf(stderr, "umemcg bpf run: --ctx: cannot read %s: %s\n", path.c_str(),
                       why.c_str());
          return kExitUsage;
        }
      }
      a.ctx.push_back({});
      if (!parse_hex(text.c_str(), &a.ctx.back().bytes, &why)) {
        std::fprintf(stderr, "umemcg bpf run: --ctx: %s\n", why.c_str());
        return kExitUsage;
      }
    } else if (w == "--ctx-u64") {
      const char *v = value(&i, "--ctx-u64");
      if (!v) return usage();
      u64 n = 0;
      if (!parse_u64_word(v, &n)) {
        std::fprintf(stderr, "umemcg bpf run: --ctx-u64 '%s': not a 64-bit number\n", v);
        return kExitUsage;
      }
      a.ctx.push_back({});
      put_u64(&a.ctx.back().bytes, n);
    } else if (w == "--ctx-cgroup") {
      const char *v = value(&i, "--ctx-cgroup");
      if (!v) return usage();
      if (!*v) {
        std::fprintf(stderr, "umemcg bpf run: --ctx-cgroup: an empty path\n");
        return kExitUsage;
      }
      a.ctx.push_back({});
      a.ctx.back().cgroup = v;
    } else if (w == "--sh") {
      const char *v = value(&i, "--sh");
      if (!v) return usage();
      std::string text;
      // Read here first: a directory, a FIFO or a missing file is refused before the boot.
      if (!read_text_file(v, &text, &why)) {
        std::fprintf(stderr, "umemcg bpf run: --sh: cannot read %s: %s\n", v, why.c_str());
        return kExitUsage;
      }
      a.script = v;
    } else if (w == "--cpus" || w == "--memory" || w == "--swap" || w == "--seed") {
      const char *v = value(&i, w.c_str());
      if (!v) return usage();
      machine_words.push_back(w);  // the machine's options, read as `umemcg sh` reads them
      machine_words.push_back(v);
    } else if (w == "--unverified") {
      a.lopts.run_unverified = true;
    } else {
      std::fprintf(stderr, "umemcg bpf run: unknown option '%s'\n", w.c_str());
      return usage();
    }
  }

  if (!sh::parse_sh_options(machine_words, &a.machine, &why)) {
    const std::string sh_prefix = "umemcg sh: ";
    if (why.compare(0, sh_prefix.size(), sh_prefix) == 0) why = why.substr(sh_prefix.size());
    std::fprintf(stderr, "umemcg bpf run: %s\n", why.c_str());
    return kExitUsage;
  }

  bpf_trace_log_clear();
  std::fflush(stdout);
  const int status = sh::machine_run(
      a.machine, [&](sh::ShellOs &os) { return run_on_machine(a, os); }, std::cerr,
      "umemcg bpf run");
  std::fflush(stdout);
  const std::string log = bpf_trace_log_text();
  if (!log.empty()) std::printf("trace_printk:\n%s", log.c_str());
  return status;
}

}  // namespace umemcg::cli
