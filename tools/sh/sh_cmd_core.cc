// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_cmd_core.cc: the shell's own commands (true, false, :, exit, set, export, unset,
// exec) and the table of every command.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tools/sh/sh_cmds.h"

namespace umemcg::sh {

int cmd_true(Shell &, const Cmd &) { return 0; }
int cmd_false(Shell &, const Cmd &) { return 1; }

int cmd_exit(Shell &sh, const Cmd &c) {
  if (c.argv.size() > 2) {
    sh.error(c, "too many arguments", EINVAL);
    return 1;
  }
  if (c.argv.size() == 1) sh.exit_shell(sh.status());
  long long n;
  if (!parse_int(c.argv[1], 0, 1ll << 31, &n)) {
    sh.error(c, "Illegal number " + c.argv[1], EINVAL);
    sh.exit_shell(2);
  }
  sh.exit_shell(static_cast<int>(n & 255));
}

// set -e / +e, set -o errexit / +o errexit, set -- ARGS, set (the variables).
int cmd_set(Shell &sh, const Cmd &c) {
  if (c.argv.size() == 1) {
    // NAME='value', sorted, a ' inside written '\'' (dash's form).
    std::string text;
    for (const auto &[name, value] : sh.vars()) {
      text += name + "='";
      for (char ch : value) text += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      text += "'\n";
    }
    return sh.out(c, text);
  }
  for (size_t i = 1; i < c.argv.size(); i++) {
    const std::string &a = c.argv[i];
    if (a == "--") {
      std::vector<std::string> &pos = sh.positional();
      pos.resize(1);
      pos.insert(pos.end(), c.argv.begin() + static_cast<long>(i) + 1, c.argv.end());
      return 0;
    }
    if ((a == "-o" || a == "+o") && i + 1 < c.argv.size() && c.argv[i + 1] == "errexit") {
      sh.set_errexit(a[0] == '-');
      i++;
      continue;
    }
    if (a.size() >= 2 && (a[0] == '-' || a[0] == '+') &&
        a.find_first_not_of('e', 1) == std::string::npos) {
      sh.set_errexit(a[0] == '-');
      continue;
    }
    if (a.empty() || (a[0] != '-' && a[0] != '+')) {
      std::vector<std::string> &pos = sh.positional();
      pos.resize(1);
      pos.insert(pos.end(), c.argv.begin() + static_cast<long>(i), c.argv.end());
      return 0;
    }
    sh.error(c, "unsupported option " + a, EINVAL);
    return 1;
  }
  return 0;
}

// break [N] / continue [N]: outside a loop they do nothing (as in dash).
int cmd_break(Shell &sh, const Cmd &c) {
  long long n = 1;
  if (c.argv.size() > 2 || (c.argv.size() == 2 && !parse_int(c.argv[1], 1, 1 << 30, &n))) {
    sh.error(c, "Illegal number " + (c.argv.size() > 1 ? c.argv[1] : std::string()), EINVAL);
    return 1;
  }
  if (sh.loop_depth() == 0) return 0;
  throw Shell::LoopControl{c.argv[0] == "break", static_cast<int>(std::min<long long>(n, sh.loop_depth()))};
}

int cmd_export(Shell &sh, const Cmd &c) {
  for (size_t i = 1; i < c.argv.size(); i++) {
    size_t eq = c.argv[i].find('=');
    if (eq != std::string::npos) sh.set_var(c.argv[i].substr(0, eq), c.argv[i].substr(eq + 1));
  }
  return 0;
}

int cmd_unset(Shell &sh, const Cmd &c) {
  for (size_t i = 1; i < c.argv.size(); i++) sh.unset_var(c.argv[i]);
  return 0;
}

// exec CMD ARGS...: the command replaces the shell: its status is the shell's exit status.
// (exec with redirections only is handled by the interpreter.)
int cmd_exec(Shell &sh, const Cmd &c) {
  Cmd inner = c;
  inner.argv.erase(inner.argv.begin());
  Builtin fn = find_builtin(inner.argv[0]);
  if (!fn) {
    sh.error(inner, "command not found", ENOENT);
    sh.exit_shell(127);
  }
  sh.exit_shell(fn(sh, inner));
}

namespace {

struct Entry {
  const char *name;
  Builtin fn;
};

const Entry kCommands[] = {
    {":", cmd_true},         {"[", cmd_test},        {"bpf", cmd_bpf},        {"break", cmd_break},   {"continue", cmd_break},
    {"cat", cmd_cat},        {"cd", cmd_cd},         {"echo", cmd_echo},
    {"event", cmd_event},    {"exec", cmd_exec},     {"exit", cmd_exit},
    {"export", cmd_export},  {"false", cmd_false},   {"kill", cmd_kill},
    {"ls", cmd_ls},          {"memevent", cmd_memevent},
    {"memevent-close", cmd_memevent_close},          {"memevent-wait", cmd_memevent_wait},
    {"mkdir", cmd_mkdir},    {"printf", cmd_printf},
    {"pwd", cmd_pwd},        {"rmdir", cmd_rmdir},   {"run", cmd_run},
    {"set", cmd_set},        {"sleep", cmd_sleep},   {"spawn", cmd_spawn},
    {"test", cmd_test},      {"true", cmd_true},     {"unset", cmd_unset},
    {"wait", cmd_wait},      {"watch", cmd_watch},
};

}  // namespace

Builtin find_builtin(const std::string &name) {
  for (const Entry &e : kCommands)
    if (name == e.name) return e.fn;
  return nullptr;
}

}  // namespace umemcg::sh
