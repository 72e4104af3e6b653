// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_main.cc: sh_main(), the entry of `umemcg sh` (see sh_main.h).
#include "tools/sh/sh_main.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "tools/sh/sh_shell.h"

namespace umemcg::sh {

int sh_main(const ShOptions &opts, ShellOs &os, std::istream &in, std::ostream &out,
            std::ostream &err) {
  Shell sh(os, out, err, opts);
  if (opts.script.empty() || opts.script == "-") return sh.run_stream(in);
  std::ifstream f(opts.script, std::ios::binary);
  if (!f) {
    err << "umemcg sh: cannot open " << opts.script << ": " << std::strerror(errno) << "\n";
    return 127;
  }
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) {
    err << "umemcg sh: cannot read " << opts.script << ": " << std::strerror(errno) << "\n";
    return 127;
  }
  return sh.run_script(text);
}

}  // namespace umemcg::sh
