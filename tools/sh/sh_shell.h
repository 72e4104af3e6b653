// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_shell.h: the cgroup shell's interpreter (../shared/spec/cgroup-shell.md).
//
// A Shell holds what a POSIX shell process holds: variables, the working directory, the last
// status ($?) and the last spawned pid ($!), the -e option, and descriptors 0..9. Every effect
// on the machine goes through its ShellOs. Command output is written through the command's
// descriptor 1 and error lines through its descriptor 2; the shell's own descriptors 1 and 2
// are the std::ostreams it was given (or a command substitution's buffer).
//
// Emulation: descriptor 0 of the commands is empty (a script's input is not handed to the
//   commands it runs: `cat` with no file reads nothing unless given `<&N` or `< FILE`).
// Emulation: /dev/null is known to the shell itself (reads are empty, writes vanish); every
//   other path is the machine's.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tools/sh/sh_ast.h"
#include "tools/sh/sh_options.h"
#include "tools/sh/sh_os.h"

namespace umemcg::sh {

// The longest word an expansion may build and the most output a command substitution may
// capture (E2BIG beyond): a script cannot exhaust memory by doubling a variable.
inline constexpr size_t kMaxWordBytes = 1u << 20;

// An open file of the machine, closed when the last descriptor naming it goes.
struct OsFile {
  ShellOs *os;
  int fd;
  OsFile(ShellOs *o, int f) : os(o), fd(f) {}
  ~OsFile() { os->close(fd); }
  OsFile(const OsFile &) = delete;
  OsFile &operator=(const OsFile &) = delete;
};

struct FdEntry {
  enum class Kind { kClosed, kStream, kNull, kOs };
  Kind kind = Kind::kClosed;
  std::ostream *stream = nullptr;      // kStream
  std::shared_ptr<OsFile> file;        // kOs
};

using FdTable = std::array<FdEntry, 10>;

// One simple command being run: its words after expansion and its line.
struct Cmd {
  std::vector<std::string> argv;
  int line = 0;
};

class Shell;
using Builtin = int (*)(Shell &sh, const Cmd &c);

class Shell {
 public:
  Shell(ShellOs &os, std::ostream &out, std::ostream &err, const ShOptions &opts);
  Shell(const Shell &) = delete;
  Shell &operator=(const Shell &) = delete;

  /**
   * run_script - parse a whole script, then run it
   * Returns the exit status: 2 and nothing run on a syntax error.
   */
  int run_script(const std::string &text);

  /**
   * run_stream - read and run @in line by line: each complete command runs as soon as its last
   * line has arrived (a compound command once its closing word has).
   * Returns the exit status.
   */
  int run_stream(std::istream &in);

  // Called before each command; returning false stops the shell (status 2, an error line).
  void set_step_hook(std::function<bool()> hook) { step_hook_ = std::move(hook); }

  int status() const { return status_; }
  bool exited() const { return exited_; }

  // A piece of an expanded word.
  struct Piece {
    std::string text;
    bool quoted;    // inside quotes (or backslash-escaped): no splitting, no pattern
    bool expanded;  // the result of an expansion (split on IFS when unquoted)
  };

  // --- for the commands (tools/sh/sh_cmd_*.cc) ---
  ShellOs &os() { return os_; }
  const ShOptions &options() const { return opts_; }
  // An absolute path for @p: resolved against the working directory, "." and ".." removed.
  std::string resolve(const std::string &p) const;
  const std::string &cwd() const { return cwd_; }
  void set_cwd(const std::string &dir);
  std::string var(const std::string &name) const;
  void set_var(const std::string &name, const std::string &value);
  void unset_var(const std::string &name) { vars_.erase(name); }
  const std::map<std::string, std::string> &vars() const { return vars_; }
  int last_pid() const { return last_pid_; }
  void set_last_pid(int pid) { last_pid_ = pid; }
  void set_errexit(bool on) { errexit_ = on; }
  bool errexit() const { return errexit_; }
  [[noreturn]] void exit_shell(int status);
  std::vector<std::string> &positional() { return positional_; }
  // break N / continue N: unwinds to the N-th enclosing loop (all of them when fewer).
  struct LoopControl {
    bool is_break;
    int levels;
  };
  int loop_depth() const { return loop_depth_; }

  // Writes @bytes to descriptor @fd in one write: 0, or -errno.
  int write_fd(int fd, const std::string &bytes);
  // Reads descriptor @fd whole from offset 0: 0, or -errno.
  int read_fd(int fd, std::string *out);
  FdTable &fds() { return fds_; }
  // `umemcg sh: LINE: COMMAND: WHAT: strerror(err)` on descriptor 2.
  void error(const Cmd &c, const std::string &what, int err);
  void error_line(int line, const std::string &text);
  // Writes to descriptor 1; on failure the command's "write error" line. Returns 0 or 1.
  int out(const Cmd &c, const std::string &bytes);

 private:
  struct ExitRequest {
    int status;
  };
  struct Saved;

  int run_list_streamed(const Node &program);
  int exec(const Node &n);
  int exec_simple(const Node &n);
  int exec_compound(const Node &n);
  // One iteration's body: false when a break ends the loop.
  bool loop_body(const Node &body, int *st);
  void check_errexit(int status);
  int subshell(const Node &n, std::ostream *capture, int *status_out);

  // Expansion (sh_expand.cc). Each returns false after printing the error line.
  bool expand_fields(const Word &w, int line, std::vector<std::string> *fields);
  bool expand_string(const Word &w, int line, std::string *out);
  // A pattern (case): quoted characters stand for themselves, unquoted * ? [ ] match.
  bool expand_pattern(const Word &w, int line, std::string *out);
  bool expand_pieces(const std::vector<WordPart> &parts, int line, std::vector<Piece> *pieces);
  void glob(const std::vector<Piece> &field, std::vector<std::string> *out);
  std::string param(const std::string &name) const;
  bool param_set(const std::string &name) const;
  bool param_op(const WordPart &p, int line, std::vector<Piece> *pieces, Piece *piece);

  // Redirections (sh_redir.cc): applied to fds_; false after the error line.
  bool apply_redirs(const std::vector<Redir> &redirs, int line, const char *cmd);

  ShellOs &os_;
  std::ostream &out_;
  std::ostream &err_;
  ShOptions opts_;
  std::map<std::string, std::string> vars_;
  std::vector<std::string> positional_;  // $0, $1, ...
  std::string cwd_ = "/sys/fs/cgroup";
  FdTable fds_;
  int status_ = 0;
  int last_pid_ = 0;
  int cmdsub_status_ = 0;      // the last command substitution's status
  bool errexit_ = false;
  int errexit_suppressed_ = 0; // > 0 inside conditions, ! and the left of && ||
  bool exited_ = false;
  int loop_depth_ = 0;         // loops the running command is in (this shell, not a subshell)
  std::function<bool()> step_hook_;
};

// The command table (sh_cmd_*.cc): nullptr when @name is not a command.
Builtin find_builtin(const std::string &name);

}  // namespace umemcg::sh
