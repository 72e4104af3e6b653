// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_cmd_fs.cc: the commands on the cgroup tree: cd, pwd, ls, mkdir [-p], rmdir, cat,
// echo. Paths resolve against the working directory; every file access is one system call of
// the machine's (open, one pread of the whole file, one write, close).
//
// Mirrors: what coreutils and dash do with these commands on cgroupfs (the error texts are
//   theirs, in the shell's one-line form).
// Emulation: echo takes -n only and never interprets backslashes (bash's echo, not dash's).
#include <fcntl.h>

#include <algorithm>
#include <cerrno>

#include "tools/sh/sh_cmds.h"

namespace umemcg::sh {

int cmd_cd(Shell &sh, const Cmd &c) {
  if (c.argv.size() > 2) {
    sh.error(c, "too many arguments", EINVAL);
    return 1;
  }
  std::string dir = c.argv.size() == 2 ? c.argv[1] : "/sys/fs/cgroup";
  bool print = false;
  if (dir == "-") {
    dir = sh.var("OLDPWD");
    print = true;
    if (dir.empty()) {
      sh.error(c, "OLDPWD not set", EINVAL);
      return 1;
    }
  }
  std::string path = sh.resolve(dir);
  bool is_dir = false;
  int err = sh.os().stat(path, &is_dir);
  if (err == 0 && !is_dir) err = -ENOTDIR;
  if (err < 0) {
    sh.error(c, "can't cd to " + dir, -err);
    return 1;
  }
  sh.set_cwd(path);
  return print ? sh.out(c, path + "\n") : 0;
}

int cmd_pwd(Shell &sh, const Cmd &c) { return sh.out(c, sh.cwd() + "\n"); }

// ls [PATH...]: a directory's names sorted (C locale), one a line; a file's operand as given.
// With several operands each directory's list is headed "PATH:" and lists are separated by a
// blank line, as ls does.
int cmd_ls(Shell &sh, const Cmd &c) {
  std::vector<std::string> ops(c.argv.begin() + 1, c.argv.end());
  if (ops.empty()) ops.push_back(".");
  int st = 0;
  bool first = true;
  for (const std::string &op : ops) {
    std::string path = sh.resolve(op);
    bool is_dir = false;
    int err = sh.os().stat(path, &is_dir);
    std::vector<std::string> names;
    if (err == 0 && is_dir) err = sh.os().readdir(path, &names);
    if (err < 0) {
      sh.error(c, "cannot access " + op, -err);
      st = 1;
      continue;
    }
    std::string text;
    if (!is_dir) {
      text = op + "\n";
    } else {
      std::sort(names.begin(), names.end());
      if (ops.size() > 1) text = (first ? "" : "\n") + op + ":\n";
      for (const std::string &n : names) text += n + "\n";
    }
    first = false;
    if (sh.out(c, text)) return 1;
  }
  return st;
}

namespace {

// mkdir -p: each missing ancestor, then the directory; an existing directory is fine.
int mkdir_parents(Shell &sh, const std::string &path) {
  size_t i = 1;
  for (;;) {
    size_t j = path.find('/', i);
    std::string prefix = path.substr(0, j);
    bool is_dir = false;
    int err = sh.os().stat(prefix, &is_dir);
    if (err == -ENOENT) {
      err = sh.os().mkdir(prefix);
      if (err == -EEXIST) err = 0;
    } else if (err == 0 && !is_dir) {
      err = j == std::string::npos ? -EEXIST : -ENOTDIR;
    }
    if (err < 0) return err;
    if (j == std::string::npos) return 0;
    i = j + 1;
  }
}

}  // namespace

int cmd_mkdir(Shell &sh, const Cmd &c) {
  size_t i = 1;
  bool parents = false;
  if (i < c.argv.size() && c.argv[i] == "-p") parents = true, i++;
  if (i < c.argv.size() && c.argv[i] == "--") i++;
  if (i == c.argv.size()) {
    sh.error(c, "missing operand", EINVAL);
    return 1;
  }
  int st = 0;
  for (; i < c.argv.size(); i++) {
    std::string path = sh.resolve(c.argv[i]);
    int err = parents && !path.empty() ? mkdir_parents(sh, path) : sh.os().mkdir(path);
    if (err < 0) {
      sh.error(c, "cannot create directory " + c.argv[i], -err);
      st = 1;
    }
  }
  return st;
}

int cmd_rmdir(Shell &sh, const Cmd &c) {
  if (c.argv.size() < 2) {
    sh.error(c, "missing operand", EINVAL);
    return 1;
  }
  int st = 0;
  for (size_t i = 1; i < c.argv.size(); i++) {
    int err = sh.os().rmdir(sh.resolve(c.argv[i]));
    if (err < 0) {
      sh.error(c, "failed to remove " + c.argv[i], -err);
      st = 1;
    }
  }
  return st;
}

// cat [FILE|-]...: each file opened read-only, read whole from offset 0 in one pread, closed,
// and written out in one write; "-" or no operand: descriptor 0 (so `cat <&3` reads through
// descriptor 3, from offset 0).
int cmd_cat(Shell &sh, const Cmd &c) {
  std::vector<std::string> ops(c.argv.begin() + 1, c.argv.end());
  if (ops.empty()) ops.push_back("-");
  int st = 0;
  for (const std::string &op : ops) {
    std::string text;
    int err;
    if (op == "-") {
      err = sh.read_fd(0, &text);
    } else {
      int fd = sh.os().open(sh.resolve(op), O_RDONLY);
      err = fd;
      if (fd >= 0) {
        err = sh.os().read(fd, 0, &text);
        sh.os().close(fd);
      }
    }
    if (err < 0) {
      sh.error(c, op, -err);
      st = 1;
      continue;
    }
    if (sh.out(c, text)) return 1;
  }
  return st;
}

int cmd_echo(Shell &sh, const Cmd &c) {
  size_t i = 1;
  bool newline = true;
  while (i < c.argv.size() && c.argv[i] == "-n") newline = false, i++;
  std::string text;
  for (size_t k = i; k < c.argv.size(); k++) text += (k > i ? " " : "") + c.argv[k];
  if (newline) text += '\n';
  return sh.out(c, text);
}

}  // namespace umemcg::sh
