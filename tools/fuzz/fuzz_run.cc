// SPDX-License-Identifier: GPL-2.0-only
// tools/fuzz/fuzz_run.cc: one case in a child process, judged (see fuzz_run.h).
#include "tools/fuzz/fuzz_run.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>

#include "shim/bug.h"
#include "tools/sh/machine_os.h"
#include "tools/sh/sh_options.h"

namespace umemcg::fuzz {

namespace {

// What the machine's hung-task check warns (shim/hung_task.h).
constexpr const char *kHungTaskWarning = "INFO: task ";

// The child's report: "<warnings>\n<last warning>\n<len>\n<stdout><len>\n<stderr>", then the
// coverage: "<programs>\n" and per program "<name>\n<len>\n<states>" (one character per
// instruction slot, '@' + its BPF_COV_* bits).
std::string run_in_child(const FuzzCase &c) {
  emu::bpf_coverage_enable(true);
  sh::ShOptions opts;
  opts.seed = c.seed;
  opts.high_debt_limit = c.high_debt_limit;
  opts.hung_task_timeout_ns = c.hung_task_timeout_ns;
  std::istringstream in(fuzz_case_script(c, false));
  std::ostringstream out, err;
  emu::set_warnings_quiet(true);
  const std::uint64_t w0 = emu::warn_count();
  sh::machine_sh_main(opts, in, out, err);
  const std::uint64_t warns = emu::warn_count() - w0;
  std::string last = warns ? emu::last_warning() : "";
  for (char &ch : last)
    if (ch == '\n') ch = ' ';
  const std::string o = out.str(), e = err.str();
  std::string rep = std::to_string(warns) + "\n" + last + "\n" + std::to_string(o.size()) + "\n" +
                    o + std::to_string(e.size()) + "\n" + e;
  const std::vector<emu::BpfCoverageProg> cov = emu::bpf_coverage_snapshot();
  rep += std::to_string(cov.size()) + "\n";
  for (const emu::BpfCoverageProg &p : cov) {
    rep += p.name + "\n" + std::to_string(p.state.size()) + "\n";
    for (u8 st : p.state) rep += static_cast<char>('@' + (st & 31));
  }
  return rep;
}

bool write_all(int fd, const std::string &s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Reads what the child sends until it closes the pipe or the deadline passes.
bool read_until(int fd, std::chrono::steady_clock::time_point deadline, std::string *buf) {
  char tmp[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = ::read(fd, tmp, sizeof tmp);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    buf->append(tmp, static_cast<size_t>(n));
  }
}

// Sets the outcome's kind and detail from the run's warnings and output (see fuzz_run.h).
void judge(unsigned long warns, const std::string &last, const FuzzRunOptions &o,
           FuzzOutcome *res);

// Parses the child's report into o; false if it is cut short.
bool parse_report(const std::string &s, unsigned long *warns, std::string *last, FuzzOutcome *o) {
  std::istringstream in(s);
  std::string line;
  if (!std::getline(in, line)) return false;
  *warns = std::stoul(line);
  if (!std::getline(in, *last)) return false;
  for (std::string *dst : {&o->out, &o->err}) {
    if (!std::getline(in, line)) return false;
    const size_t len = std::stoul(line);
    dst->resize(len);
    in.read(dst->data(), static_cast<std::streamsize>(len));
    if (static_cast<size_t>(in.gcount()) != len) return false;
  }
  if (!std::getline(in, line)) return false;
  const size_t progs = std::stoul(line);
  for (size_t i = 0; i < progs; i++) {
    emu::BpfCoverageProg p;
    if (!std::getline(in, p.name) || !std::getline(in, line)) return false;
    const size_t len = std::stoul(line);
    std::string st(len, '\0');
    in.read(st.data(), static_cast<std::streamsize>(len));
    if (static_cast<size_t>(in.gcount()) != len) return false;
    for (char ch : st) p.state.push_back(static_cast<u8>((ch - '@') & 31));
    o->coverage.push_back(std::move(p));
  }
  return true;
}

// The --assert variable from the dump after kAssertMarker: its bytes, little-endian, as a
// number (0 when absent).
unsigned long long assert_value(const std::string &out, int off, int size) {
  size_t at = out.find(std::string(kAssertMarker) + "\n");
  if (at == std::string::npos) return 0;
  at = out.find("value:", at);
  if (at == std::string::npos) return 0;
  std::istringstream in(out.substr(at + 6));
  std::string tok;
  std::vector<unsigned char> bytes;
  while (in >> tok && tok != "Found") {
    if (tok.size() != 2) break;
    bytes.push_back(static_cast<unsigned char>(std::stoul(tok, nullptr, 16)));
  }
  unsigned long long v = 0;
  for (int i = size - 1; i >= 0; i--) {
    const size_t b = static_cast<size_t>(off + i);
    v = (v << 8) | (b < bytes.size() ? bytes[b] : 0);
  }
  return v;
}

}  // namespace

const char *fuzz_kind_name(FuzzOutcome::Kind k) {
  switch (k) {
    case FuzzOutcome::Kind::kOk: return "ok";
    case FuzzOutcome::Kind::kCrash: return "crash";
    case FuzzOutcome::Kind::kTimeout: return "timeout";
    case FuzzOutcome::Kind::kWarning: return "warning";
    case FuzzOutcome::Kind::kStall: return "stall";
    case FuzzOutcome::Kind::kAssert: return "assert";
  }
  return "?";
}

FuzzOutcome fuzz_run_case(const FuzzCase &c, const FuzzRunOptions &o) {
  FuzzOutcome res;
  int fds[2];
  if (::pipe(fds) != 0) {
    res.kind = FuzzOutcome::Kind::kCrash;
    res.detail = std::string("pipe: ") + std::strerror(errno);
    return res;
  }
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    const bool ok = write_all(fds[1], run_in_child(c));
    ::_exit(ok ? 0 : 3);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    res.kind = FuzzOutcome::Kind::kCrash;
    res.detail = std::string("fork: ") + std::strerror(errno);
    return res;
  }
  std::string buf;
  const bool done = read_until(fds[0], std::chrono::steady_clock::now() +
                                           std::chrono::seconds(o.timeout_s), &buf);
  ::close(fds[0]);
  if (!done) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!done) {
    res.kind = FuzzOutcome::Kind::kTimeout;
    res.detail = "no result after " + std::to_string(o.timeout_s) + " s";
    return res;
  }
  unsigned long warns = 0;
  std::string last;
  if (WIFSIGNALED(status) || !parse_report(buf, &warns, &last, &res)) {
    res.kind = FuzzOutcome::Kind::kCrash;
    res.detail = WIFSIGNALED(status) ? std::string("killed by signal ") + strsignal(WTERMSIG(status))
                                     : "the run ended without its report";
    return res;
  }
  judge(warns, last, o, &res);
  return res;
}

FuzzOutcome fuzz_run_case_here(const FuzzCase &c, const FuzzRunOptions &o) {
  FuzzOutcome res;
  unsigned long warns = 0;
  std::string last;
  if (!parse_report(run_in_child(c), &warns, &last, &res)) {
    res.kind = FuzzOutcome::Kind::kCrash;
    res.detail = "the run ended without its report";
    return res;
  }
  judge(warns, last, o, &res);
  return res;
}

namespace {

void judge(unsigned long warns, const std::string &last, const FuzzRunOptions &o,
           FuzzOutcome *out) {
  FuzzOutcome &res = *out;
  if (warns && last.find(kHungTaskWarning) != std::string::npos) {
    // The machine's hung-task check (the case's --hung-task-timeout): a liveness failure.
    res.kind = FuzzOutcome::Kind::kStall;
    res.detail = last.substr(last.find("INFO: task "));
  } else if (warns) {
    res.kind = FuzzOutcome::Kind::kWarning;
    res.detail = last;
  } else if (res.err.find("Resource deadlock avoided") != std::string::npos) {
    res.kind = FuzzOutcome::Kind::kStall;
    res.detail = "a process can never finish (the machine went idle while it waited)";
  } else if (o.assert_offset >= 0) {
    if (unsigned long long v = assert_value(res.out, o.assert_offset, o.assert_size)) {
      res.kind = FuzzOutcome::Kind::kAssert;
      res.detail = "the assertion variable is " + std::to_string(v);
    }
  }
}

}  // namespace

bool fuzz_same_failure(const FuzzOutcome &a, const FuzzOutcome &b) {
  if (a.kind != b.kind) return false;
  return a.kind != FuzzOutcome::Kind::kWarning || a.detail == b.detail;
}

}  // namespace umemcg::fuzz
