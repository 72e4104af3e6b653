// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_exec.cc: running the syntax tree: lists, && ||, !, if, while/until, for, { },
// ( ), simple commands; $? and -e; whole scripts and streamed input.
//
// Mirrors: XCU 2.9 (Shell Commands) and 2.8.1 (Consequences of Shell Errors) as dash does them.
// Emulation: a failed redirection or expansion fails that command ($? = 1) and the script goes
//   on (../shared/spec/cgroup-shell.md: "the script goes on"), also for special built-ins,
//   where a POSIX shell would exit.
#include <fnmatch.h>

#include <cerrno>
#include <cstring>
#include <istream>
#include <optional>
#include <sstream>

#include "tools/sh/sh_parser.h"
#include "tools/sh/sh_shell.h"

namespace umemcg::sh {

struct Shell::Saved {
  std::map<std::string, std::string> vars;
  std::vector<std::string> positional;
  std::string cwd;
  FdTable fds;
  bool errexit;
  int last_pid;
  int errexit_suppressed;
  int loop_depth;
};

namespace {

struct Suppress {
  int *n;
  explicit Suppress(int *c) : n(c) { ++*n; }
  ~Suppress() { --*n; }
};

}  // namespace

Shell::Shell(ShellOs &os, std::ostream &out, std::ostream &err, const ShOptions &opts)
    : os_(os), out_(out), err_(err), opts_(opts) {
  fds_[0].kind = FdEntry::Kind::kNull;
  fds_[1].kind = FdEntry::Kind::kStream;
  fds_[1].stream = &out_;
  fds_[2].kind = FdEntry::Kind::kStream;
  fds_[2].stream = &err_;
  errexit_ = opts.errexit;
  positional_.push_back(opts.script.empty() ? "umemcg sh" : opts.script);
  for (const std::string &a : opts.args) positional_.push_back(a);
  vars_["PWD"] = cwd_;
  vars_["IFS"] = " \t\n";
}

void Shell::exit_shell(int status) { throw ExitRequest{status & 255}; }

void Shell::set_cwd(const std::string &dir) {
  vars_["OLDPWD"] = cwd_;
  cwd_ = dir;
  vars_["PWD"] = dir;
}

std::string Shell::var(const std::string &name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? "" : it->second;
}

void Shell::set_var(const std::string &name, const std::string &value) { vars_[name] = value; }

std::string Shell::resolve(const std::string &p) const {
  if (p.empty()) return "";
  std::string full = p[0] == '/' ? p : cwd_ + "/" + p;
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= full.size()) {
    size_t j = full.find('/', i);
    if (j == std::string::npos) j = full.size();
    std::string comp = full.substr(i, j - i);
    if (comp == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!comp.empty() && comp != ".") {
      parts.push_back(comp);
    }
    i = j + 1;
  }
  std::string r;
  for (const std::string &c : parts) r += "/" + c;
  return r.empty() ? "/" : r;
}

int Shell::write_fd(int fd, const std::string &bytes) {
  if (fd < 0 || fd > 9) return -EBADF;
  FdEntry &e = fds_[fd];
  switch (e.kind) {
    case FdEntry::Kind::kClosed:
      return -EBADF;
    case FdEntry::Kind::kNull:
      return 0;
    case FdEntry::Kind::kStream:
      if (e.stream != &out_ && e.stream != &err_ &&
          static_cast<size_t>(e.stream->tellp()) + bytes.size() > kMaxWordBytes)
        return -E2BIG;
      e.stream->write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      e.stream->flush();
      return *e.stream ? 0 : -EIO;
    case FdEntry::Kind::kOs: {
      long n = os_.write(e.file->fd, bytes);
      return n < 0 ? static_cast<int>(n) : 0;
    }
  }
  return -EBADF;
}

int Shell::read_fd(int fd, std::string *out) {
  out->clear();
  if (fd < 0 || fd > 9) return -EBADF;
  FdEntry &e = fds_[fd];
  switch (e.kind) {
    case FdEntry::Kind::kNull:
      return 0;
    case FdEntry::Kind::kOs:
      return os_.read(e.file->fd, 0, out);
    default:
      return -EBADF;
  }
}

void Shell::error_line(int line, const std::string &text) {
  std::string l = "umemcg sh: " + std::to_string(line) + ": " + text + "\n";
  if (write_fd(2, l) < 0 && fds_[2].kind != FdEntry::Kind::kClosed) err_ << l;
}

void Shell::error(const Cmd &c, const std::string &what, int err) {
  error_line(c.line, (c.argv.empty() ? std::string("sh") : c.argv[0]) + ": " + what + ": " +
                         std::strerror(err));
}

int Shell::out(const Cmd &c, const std::string &bytes) {
  int r = write_fd(1, bytes);
  if (r == 0) return 0;
  error(c, "write error", -r);
  return 1;
}

void Shell::check_errexit(int status) {
  if (status != 0 && errexit_ && errexit_suppressed_ == 0) exit_shell(status);
}

int Shell::subshell(const Node &n, std::ostream *capture, int *status_out) {
  Saved s{vars_, positional_, cwd_, fds_, errexit_, last_pid_, errexit_suppressed_, loop_depth_};
  loop_depth_ = 0;
  if (capture) {
    fds_[1].kind = FdEntry::Kind::kStream;
    fds_[1].stream = capture;
    fds_[1].file.reset();
  }
  // The parent shell's state comes back however the subshell ends.
  auto restore = [&] {
    vars_ = std::move(s.vars);
    positional_ = std::move(s.positional);
    cwd_ = s.cwd;
    fds_ = s.fds;
    errexit_ = s.errexit;
    last_pid_ = s.last_pid;
    errexit_suppressed_ = s.errexit_suppressed;
    loop_depth_ = s.loop_depth;
  };
  int st;
  try {
    st = exec(n);
  } catch (const ExitRequest &e) {
    st = e.status;
  } catch (...) {
    restore();
    throw;
  }
  restore();
  *status_out = st;
  return st;
}

int Shell::exec(const Node &n) {
  int st = 0;
  if (n.kind == Node::Kind::kSimple) {
    st = exec_simple(n);
  } else if (n.redirs.empty()) {
    st = exec_compound(n);
  } else {
    FdTable saved = fds_;
    if (!apply_redirs(n.redirs, n.line, "sh")) {
      fds_ = saved;
      st = status_ = 1;
      check_errexit(st);
      return st;
    }
    try {
      st = exec_compound(n);
    } catch (...) {
      fds_ = saved;
      throw;
    }
    fds_ = saved;
  }
  status_ = st;
  return st;
}

int Shell::exec_compound(const Node &n) {
  int st = 0;
  switch (n.kind) {
    case Node::Kind::kList:
      for (const NodePtr &k : n.kids) st = exec(*k);
      return st;
    case Node::Kind::kAndOr:
      for (size_t i = 0; i < n.kids.size(); i++) {
        if (i > 0 && (n.and_ops[i - 1] ? st != 0 : st == 0)) continue;
        if (i + 1 < n.kids.size()) {
          Suppress s(&errexit_suppressed_);
          st = exec(*n.kids[i]);
        } else {
          st = exec(*n.kids[i]);
        }
      }
      return st;
    case Node::Kind::kNot: {
      Suppress s(&errexit_suppressed_);
      return exec(*n.kids[0]) == 0 ? 1 : 0;
    }
    case Node::Kind::kIf:
      for (size_t i = 0; i + 1 < n.kids.size(); i += 2) {
        int c;
        {
          Suppress s(&errexit_suppressed_);
          c = exec(*n.kids[i]);
        }
        if (c == 0) return exec(*n.kids[i + 1]);
      }
      if (n.kids.size() % 2) return exec(*n.kids.back());
      return 0;
    case Node::Kind::kWhile:
    case Node::Kind::kUntil:
      for (;;) {
        if (step_hook_ && !step_hook_()) {
          error_line(n.line, "sh: step budget exhausted");
          exit_shell(2);
        }
        int c;
        {
          Suppress s(&errexit_suppressed_);
          c = exec(*n.kids[0]);
        }
        if ((n.kind == Node::Kind::kWhile) != (c == 0)) break;
        if (!loop_body(*n.kids[1], &st)) break;
      }
      return st;
    case Node::Kind::kFor: {
      std::vector<std::string> items;
      if (n.has_in) {
        for (const Word &w : n.items)
          if (!expand_fields(w, n.line, &items)) {
            check_errexit(1);
            return 1;
          }
      } else {
        items.assign(positional_.begin() + 1, positional_.end());
      }
      for (const std::string &v : items) {
        if (step_hook_ && !step_hook_()) {
          error_line(n.line, "sh: step budget exhausted");
          exit_shell(2);
        }
        set_var(n.var, v);
        if (!loop_body(*n.kids[0], &st)) break;
      }
      return st;
    }
    case Node::Kind::kBrace:
      return exec(*n.kids[0]);
    case Node::Kind::kCase: {
      std::string subject;
      if (!expand_string(n.words[0], n.line, &subject)) {
        check_errexit(1);
        return 1;
      }
      for (size_t i = 0; i < n.kids.size(); i++)
        for (const Word &w : n.patterns[i]) {
          std::string pattern;
          if (!expand_pattern(w, n.line, &pattern)) {
            check_errexit(1);
            return 1;
          }
          if (fnmatch(pattern.c_str(), subject.c_str(), 0) == 0) return exec(*n.kids[i]);
        }
      return 0;
    }
    case Node::Kind::kSubshell:
      subshell(*n.kids[0], nullptr, &st);
      check_errexit(st);
      return st;
    case Node::Kind::kSimple:
      break;
  }
  return exec_simple(n);
}

bool Shell::loop_body(const Node &body, int *st) {
  struct Depth {
    int *d;
    explicit Depth(int *x) : d(x) { ++*d; }
    ~Depth() { --*d; }
  } depth(&loop_depth_);
  try {
    *st = exec(body);
  } catch (LoopControl &lc) {
    if (--lc.levels > 0) throw;
    *st = 0;
    return !lc.is_break;
  }
  return true;
}

int Shell::exec_simple(const Node &n) {
  if (step_hook_ && !step_hook_()) {
    error_line(n.line, "sh: step budget exhausted");
    exit_shell(2);
  }
  Cmd c;
  c.line = n.line;
  cmdsub_status_ = 0;
  auto fail = [&](int st) {
    status_ = st;
    check_errexit(st);
    return st;
  };
  for (const Word &w : n.words)
    if (!expand_fields(w, n.line, &c.argv)) return fail(1);
  if (c.argv.empty()) {
    // Assignments alone: each expanded and assigned in turn (x=1 y=$x gives y=1).
    for (const auto &[name, w] : n.assigns) {
      std::string v;
      if (!expand_string(w, n.line, &v)) return fail(1);
      set_var(name, v);
    }
    int st = cmdsub_status_;
    if (!n.redirs.empty()) {
      FdTable saved = fds_;
      if (!apply_redirs(n.redirs, n.line, "sh")) st = 1;
      fds_ = saved;
    }
    return fail(st);
  }

  const std::string &name = c.argv[0];
  if (name == "exec" && c.argv.size() == 1) {
    // exec with redirections only: they stay for the rest of the script.
    return fail(apply_redirs(n.redirs, n.line, "exec") ? 0 : 1);
  }
  Builtin fn = find_builtin(name);
  static const char *const kSpecial[] = {"exit", "set", "exec", ":", "export", "unset", "break", "continue"};
  bool special = false;
  for (const char *s : kSpecial) special |= name == s;

  std::vector<std::pair<std::string, std::string>> assigns;
  for (const auto &[aname, w] : n.assigns) {
    std::string v;
    if (!expand_string(w, n.line, &v)) return fail(1);
    assigns.emplace_back(aname, std::move(v));
  }
  FdTable saved = fds_;
  std::vector<std::pair<std::string, std::optional<std::string>>> old;
  auto restore = [&] {
    fds_ = saved;
    for (auto it = old.rbegin(); it != old.rend(); ++it) {
      if (it->second) vars_[it->first] = *it->second;
      else vars_.erase(it->first);
    }
  };
  int st;
  try {
    if (!apply_redirs(n.redirs, n.line, name.c_str())) {
      restore();
      return fail(1);
    }
    for (auto &[vname, v] : assigns) {
      if (!special) {
        auto it = vars_.find(vname);
        old.emplace_back(vname, it == vars_.end() ? std::nullopt : std::optional<std::string>(it->second));
      }
      set_var(vname, v);
    }
    if (!fn) {
      error(c, "command not found", ENOENT);
      st = 127;
    } else {
      st = fn(*this, c);
    }
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return fail(st);
}

int Shell::run_script(const std::string &text) {
  ParseResult r = sh_parse(text, 1, false);
  if (!r.ok) {
    err_ << "umemcg sh: " << r.error_line << ": " << r.error << "\n";
    return status_ = 2;
  }
  return run_list_streamed(*r.program);
}

int Shell::run_list_streamed(const Node &program) {
  if (exited_) return status_;
  try {
    for (const NodePtr &k : program.kids) exec(*k);
  } catch (const ExitRequest &e) {
    exited_ = true;
    status_ = e.status;
  }
  out_.flush();
  return status_;
}

int Shell::run_stream(std::istream &in) {
  std::string buf, line;
  int first_line = 1, next_line = 1;
  while (!exited_ && std::getline(in, line)) {
    buf += line;
    buf += '\n';
    next_line++;
    ParseResult r = sh_parse(buf, first_line, true);
    if (!r.ok && r.incomplete) continue;
    if (!r.ok) {
      err_ << "umemcg sh: " << r.error_line << ": " << r.error << "\n";
      exited_ = true;
      return status_ = 2;
    }
    run_list_streamed(*r.program);
    buf.clear();
    first_line = next_line;
  }
  if (!exited_ && !buf.empty()) {
    ParseResult r = sh_parse(buf, first_line, false);
    if (!r.ok) {
      err_ << "umemcg sh: " << r.error_line << ": " << r.error << "\n";
      exited_ = true;
      return status_ = 2;
    }
    run_list_streamed(*r.program);
  }
  return status_;
}

}  // namespace umemcg::sh
