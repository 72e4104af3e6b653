// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_cmd_proc.cc: processes and time: run, spawn, wait, kill, sleep, watch, event, and
// cgroup v1 memory notifications: memevent, memevent-wait, memevent-close.
//
// A process's status is 0 when its workload completed and 128 + the signal when it was killed
// (an OOM kill: 137), as a POSIX shell reports a child's waitpid() status.
#include <fcntl.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "tools/sh/sh_cmds.h"
#include "tools/sh/sh_workload.h"

namespace umemcg::sh {
namespace {

int exit_code(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return 128;
}

// run/spawn CGROUP WORKLOAD...: the pid, or -1 after the error line.
int start(Shell &sh, const Cmd &c) {
  if (c.argv.size() < 3) {
    sh.error(c, "usage: " + c.argv[0] + " CGROUP WORKLOAD [ARGS...]", EINVAL);
    return -1;
  }
  WorkloadSpec spec;
  std::string why;
  if (!parse_workload(std::vector<std::string>(c.argv.begin() + 2, c.argv.end()), &spec, &why)) {
    sh.error(c, why, EINVAL);
    return -1;
  }
  int pid = sh.os().spawn(sh.resolve(c.argv[1]), spec);
  if (pid < 0) {
    sh.error(c, "cannot start in " + c.argv[1], -pid);
    return -1;
  }
  return pid;
}

bool parse_pid(const std::string &s, int *pid) {
  long long v;
  if (!parse_int(s, 1, 1ll << 30, &v)) return false;
  *pid = static_cast<int>(v);
  return true;
}

}  // namespace

int cmd_run(Shell &sh, const Cmd &c) {
  int pid = start(sh, c);
  if (pid < 0) return 1;
  int wstatus = 0;
  int r = sh.os().wait(pid, &wstatus);
  if (r < 0) {
    sh.error(c, "wait for " + std::to_string(pid), -r);
    return 1;
  }
  return exit_code(wstatus);
}

int cmd_spawn(Shell &sh, const Cmd &c) {
  int pid = start(sh, c);
  if (pid < 0) return 1;
  sh.set_last_pid(pid);
  return 0;
}

// wait: every child, status 0; wait PID...: the last one's status, 127 when not a child.
int cmd_wait(Shell &sh, const Cmd &c) {
  int wstatus = 0;
  if (c.argv.size() == 1) {
    while (sh.os().wait(-1, &wstatus) > 0) {
    }
    return 0;
  }
  int st = 0;
  for (size_t i = 1; i < c.argv.size(); i++) {
    int pid;
    if (!parse_pid(c.argv[i], &pid)) {
      sh.error(c, "illegal pid " + c.argv[i], EINVAL);
      st = 1;
      continue;
    }
    int r = sh.os().wait(pid, &wstatus);
    if (r < 0) {
      sh.error(c, "pid " + c.argv[i], -r);
      st = 127;
      continue;
    }
    st = exit_code(wstatus);
  }
  return st;
}

namespace {

bool parse_signal(std::string s, int *sig) {
  if (s.compare(0, 3, "SIG") == 0) s = s.substr(3);
  static const struct {
    const char *name;
    int sig;
  } kSigs[] = {{"HUP", SIGHUP}, {"INT", SIGINT}, {"QUIT", SIGQUIT}, {"KILL", SIGKILL},
               {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"CONT", SIGCONT},
               {"STOP", SIGSTOP}};
  for (const auto &k : kSigs)
    if (s == k.name) return *sig = k.sig, true;
  long long n;
  if (!parse_int(s, 0, 64, &n)) return false;
  *sig = static_cast<int>(n);
  return true;
}

}  // namespace

// kill [-SIG | -s SIG] PID...: SIG a number (0..64) or a name (KILL, TERM, ...); TERM by default.
int cmd_kill(Shell &sh, const Cmd &c) {
  size_t i = 1;
  int sig = SIGTERM;
  if (i < c.argv.size() && c.argv[i] == "-s") {
    if (i + 1 >= c.argv.size() || !parse_signal(c.argv[i + 1], &sig)) {
      sh.error(c, "bad signal " + (i + 1 < c.argv.size() ? c.argv[i + 1] : std::string()), EINVAL);
      return 1;
    }
    i += 2;
  } else if (i < c.argv.size() && c.argv[i].size() > 1 && c.argv[i][0] == '-' && c.argv[i] != "--") {
    if (!parse_signal(c.argv[i].substr(1), &sig)) {
      sh.error(c, "bad signal " + c.argv[i].substr(1), EINVAL);
      return 1;
    }
    i++;
  }
  if (i < c.argv.size() && c.argv[i] == "--") i++;
  if (i == c.argv.size()) {
    sh.error(c, "usage: kill [-9|-KILL|-TERM] PID...", EINVAL);
    return 1;
  }
  int st = 0;
  for (; i < c.argv.size(); i++) {
    int pid;
    if (!parse_pid(c.argv[i], &pid)) {
      sh.error(c, "illegal pid " + c.argv[i], EINVAL);
      st = 1;
      continue;
    }
    int r = sh.os().kill(pid, sig);
    if (r < 0) {
      sh.error(c, c.argv[i], -r);
      st = 1;
    }
  }
  return st;
}

namespace {

// SECONDS with an optional fraction and an optional s/m/h/d unit (as GNU sleep takes).
bool parse_duration(const std::string &s, uint64_t *ns) {
  uint64_t mult = 1;
  std::string num = s;
  if (!num.empty()) {
    switch (num.back()) {
      case 's': mult = 1; num.pop_back(); break;
      case 'm': mult = 60; num.pop_back(); break;
      case 'h': mult = 3600; num.pop_back(); break;
      case 'd': mult = 86400; num.pop_back(); break;
      default: break;
    }
  }
  uint64_t v;
  if (!parse_seconds(num, &v) || v > 1000000000ull * 1000000000ull / mult) return false;
  *ns = v * mult;
  return true;
}

// A descriptor number: decimal digits, at most 9.
bool parse_fd(const std::string &s, int *fd) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *fd = std::stoi(s);
  return true;
}

}  // namespace

int cmd_sleep(Shell &sh, const Cmd &c) {
  if (c.argv.size() < 2) {
    sh.error(c, "missing operand", EINVAL);
    return 1;
  }
  uint64_t total = 0;
  for (size_t i = 1; i < c.argv.size(); i++) {
    uint64_t ns;
    if (!parse_duration(c.argv[i], &ns)) {
      sh.error(c, "invalid time interval " + c.argv[i], EINVAL);
      return 1;
    }
    total += ns;
  }
  int r = sh.os().sleep(total);
  if (r < 0) {
    sh.error(c, "sleep", -r);
    return 1;
  }
  return 0;
}

int cmd_watch(Shell &sh, const Cmd &c) {
  if (c.argv.size() != 2) {
    sh.error(c, "usage: watch PATH", EINVAL);
    return 1;
  }
  int wd = sh.os().watch(sh.resolve(c.argv[1]));
  if (wd < 0) {
    sh.error(c, "cannot watch " + c.argv[1], -wd);
    return 1;
  }
  return sh.out(c, std::to_string(wd) + "\n");
}

// event [SECONDS]: the next event as "WD MASK"; status 1 (nothing printed) on timeout.
int cmd_event(Shell &sh, const Cmd &c) {
  uint64_t ns = 10ull * 1000000000ull;
  if (c.argv.size() > 2 || (c.argv.size() == 2 && !parse_duration(c.argv[1], &ns))) {
    sh.error(c, "usage: event [SECONDS]", EINVAL);
    return 1;
  }
  ShEvent ev;
  int r = sh.os().next_event(ns, &ev);
  if (r < 0) {
    sh.error(c, "read", -r);
    return 1;
  }
  if (r == 0) return 1;
  return sh.out(c, std::to_string(ev.wd) + " " + inotify_mask_names(ev.mask) + "\n");
}

// memevent FILE [ARGS...]: what a cgroup v1 user does to be notified of FILE's events
// (memory.usage_in_bytes / memory.memsw.usage_in_bytes with a threshold, memory.oom_control):
// eventfd(), open(FILE), one write of "<eventfd> <FILE's fd> ARGS" to cgroup.event_control in
// FILE's directory, close(FILE's fd). Prints the eventfd's descriptor, which stays open.
int cmd_memevent(Shell &sh, const Cmd &c) {
  if (c.argv.size() < 2) {
    sh.error(c, "usage: memevent FILE [ARGS...]", EINVAL);
    return 1;
  }
  ShellOs &os = sh.os();
  const std::string path = sh.resolve(c.argv[1]);
  const std::string control = path.substr(0, path.rfind('/')) + "/cgroup.event_control";
  std::string args;
  for (size_t i = 2; i < c.argv.size(); i++) args += " " + c.argv[i];
  int efd = os.eventfd();
  if (efd < 0) {
    sh.error(c, "eventfd", -efd);
    return 1;
  }
  int cfd = os.open(path, O_RDONLY);
  if (cfd < 0) {
    os.close(efd);
    sh.error(c, "cannot open " + c.argv[1], -cfd);
    return 1;
  }
  int wfd = os.open(control, O_WRONLY | O_APPEND);
  long r = wfd;
  if (wfd >= 0) {
    r = os.write(wfd, std::to_string(efd) + " " + std::to_string(cfd) + args);
    os.close(wfd);
  }
  os.close(cfd);
  if (r < 0) {
    os.close(efd);
    sh.error(c, "cgroup.event_control", static_cast<int>(-r));
    return 1;
  }
  return sh.out(c, std::to_string(efd) + "\n");
}

// memevent-wait FD [SECONDS]: waits (virtual time, default 10 s) until the eventfd's count is
// non-zero, prints it (it drops back to 0); status 1 and nothing printed on timeout.
int cmd_memevent_wait(Shell &sh, const Cmd &c) {
  uint64_t ns = 10ull * 1000000000ull;
  int fd = -1;
  if (c.argv.size() < 2 || c.argv.size() > 3 || !parse_fd(c.argv[1], &fd) ||
      (c.argv.size() == 3 && !parse_duration(c.argv[2], &ns))) {
    sh.error(c, "usage: memevent-wait FD [SECONDS]", EINVAL);
    return 1;
  }
  uint64_t count = 0;
  int r = sh.os().eventfd_read(fd, ns, &count);
  if (r < 0) {
    sh.error(c, "read", -r);
    return 1;
  }
  if (r == 0) return 1;
  return sh.out(c, std::to_string(count) + "\n");
}

// memevent-close FD: closes the eventfd; its registration goes away (the kernel signals it one
// last time, which nobody reads).
int cmd_memevent_close(Shell &sh, const Cmd &c) {
  int fd = -1;
  if (c.argv.size() != 2 || !parse_fd(c.argv[1], &fd)) {
    sh.error(c, "usage: memevent-close FD", EINVAL);
    return 1;
  }
  int r = sh.os().close(fd);
  if (r < 0) {
    sh.error(c, "close", -r);
    return 1;
  }
  return 0;
}

}  // namespace umemcg::sh
