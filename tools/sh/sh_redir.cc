// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_redir.cc: redirections (XCU 2.7): < FILE, > FILE, >> FILE, <> FILE, <&N, >&N,
// N<&- and N>&-, with N in 0..9.
//
// Emulation: `>` and `>>` both open O_WRONLY|O_APPEND, without O_CREAT or O_TRUNC: the files
//   are the machine's control files, and ../shared/spec/cgroup-shell.md makes `echo ... > FILE`
//   exactly one write to the file as it is.
#include <fcntl.h>

#include <cerrno>
#include <memory>

#include "tools/sh/sh_shell.h"

namespace umemcg::sh {

bool Shell::apply_redirs(const std::vector<Redir> &redirs, int line, const char *cmd) {
  Cmd c;
  c.line = line;
  c.argv.push_back(cmd);
  for (const Redir &r : redirs) {
    std::vector<std::string> fields;
    if (!expand_fields(r.target, line, &fields)) return false;
    if (fields.size() != 1) {
      std::string w;
      for (const std::string &f : fields) w += (w.empty() ? "" : " ") + f;
      error(c, "ambiguous redirect " + w, EINVAL);
      return false;
    }
    const std::string &t = fields[0];
    if (r.op == Redir::Op::kDupIn || r.op == Redir::Op::kDupOut) {
      if (t == "-") {
        fds_[r.fd] = FdEntry{};
        continue;
      }
      if (t.size() != 1 || t[0] < '0' || t[0] > '9') {
        error(c, "descriptor " + t, EBADF);
        return false;
      }
      int from = t[0] - '0';
      if (fds_[from].kind == FdEntry::Kind::kClosed) {
        error(c, "descriptor " + t, EBADF);
        return false;
      }
      fds_[r.fd] = fds_[from];
      continue;
    }
    int flags = O_RDONLY;
    const char *verb = "cannot open ";
    if (r.op == Redir::Op::kOut || r.op == Redir::Op::kAppend) {
      flags = O_WRONLY | O_APPEND;
      verb = "cannot create ";
    } else if (r.op == Redir::Op::kReadWrite) {
      flags = O_RDWR;
    }
    if (t == "/dev/null") {
      fds_[r.fd] = FdEntry{FdEntry::Kind::kNull, nullptr, nullptr};
      continue;
    }
    int fd = os_.open(resolve(t), flags);
    if (fd < 0) {
      error(c, verb + t, -fd);
      return false;
    }
    fds_[r.fd] = FdEntry{FdEntry::Kind::kOs, nullptr, std::make_shared<OsFile>(&os_, fd)};
  }
  return true;
}

}  // namespace umemcg::sh
