// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_main.h: the entry of `umemcg sh`: runs a script file, or standard input line by
// line, on the machine behind a ShellOs (../shared/spec/cgroup-shell.md).
#pragma once

#include <istream>
#include <ostream>

#include "tools/sh/sh_options.h"
#include "tools/sh/sh_os.h"

namespace umemcg::sh {

/**
 * sh_main - run the cgroup shell
 * @opts: the parsed options (parse_sh_options()); the machine behind @os is built from them
 * @os: the machine
 * @in: standard input: read and run line by line when @opts.script is empty or "-"
 * @out: standard output
 * @err: standard error
 *
 * A SCRIPT file (a host path) is read and parsed whole before anything runs. Returns the exit
 * status: the last command's or exit N's; 2 on a syntax error; 127 when SCRIPT cannot be read.
 */
int sh_main(const ShOptions &opts, ShellOs &os, std::istream &in, std::ostream &out,
            std::ostream &err);

}  // namespace umemcg::sh
