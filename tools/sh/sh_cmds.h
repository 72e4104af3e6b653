// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_cmds.h: the cgroup shell's commands, one function each (the table is in
// sh_cmd_core.cc). Each takes the expanded words (argv[0] is the command's name), writes its
// output through descriptor 1 and its error lines through descriptor 2, and returns its status.
#pragma once

#include "tools/sh/sh_shell.h"

namespace umemcg::sh {

// sh_cmd_core.cc
int cmd_true(Shell &sh, const Cmd &c);
int cmd_false(Shell &sh, const Cmd &c);
int cmd_exit(Shell &sh, const Cmd &c);
int cmd_set(Shell &sh, const Cmd &c);
int cmd_export(Shell &sh, const Cmd &c);
int cmd_break(Shell &sh, const Cmd &c);  // break and continue
int cmd_unset(Shell &sh, const Cmd &c);
int cmd_exec(Shell &sh, const Cmd &c);
// sh_cmd_fs.cc
int cmd_cd(Shell &sh, const Cmd &c);
int cmd_pwd(Shell &sh, const Cmd &c);
int cmd_ls(Shell &sh, const Cmd &c);
int cmd_mkdir(Shell &sh, const Cmd &c);
int cmd_rmdir(Shell &sh, const Cmd &c);
int cmd_cat(Shell &sh, const Cmd &c);
int cmd_echo(Shell &sh, const Cmd &c);
// sh_cmd_printf.cc
int cmd_printf(Shell &sh, const Cmd &c);
// sh_cmd_test.cc: test and [
int cmd_test(Shell &sh, const Cmd &c);
// sh_cmd_proc.cc
int cmd_run(Shell &sh, const Cmd &c);
int cmd_spawn(Shell &sh, const Cmd &c);
int cmd_wait(Shell &sh, const Cmd &c);
int cmd_kill(Shell &sh, const Cmd &c);
int cmd_sleep(Shell &sh, const Cmd &c);
int cmd_watch(Shell &sh, const Cmd &c);
int cmd_event(Shell &sh, const Cmd &c);
int cmd_memevent(Shell &sh, const Cmd &c);
int cmd_memevent_wait(Shell &sh, const Cmd &c);
int cmd_memevent_close(Shell &sh, const Cmd &c);
// sh_cmd_bpf.cc
int cmd_bpf(Shell &sh, const Cmd &c);

}  // namespace umemcg::sh
