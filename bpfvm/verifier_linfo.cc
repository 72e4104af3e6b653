// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_linfo.cc: the program's line info (.BTF.ext line_info, as the loader hands it
// over in bpf_verifier_opts::line_info): checked before the walk, printed in the log as
// "; <source line> @ <file>:<line>" before the first instruction of each source line.
//
// Mirrors: kernel/bpf/verifier.c (check_btf_line), kernel/bpf/log.c (find_linfo,
//          verbose_linfo) (Linux 6.19)
// Emulation: records arrive as an array of struct bpf_line_info; the kernel's checks of the
//   user record size and its zero tail (bpf_check_uarg_tail_zero) belong to the loader's
//   parsing of .BTF.ext here (bpfvm/loader_btf_ext.cc).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "bpfvm/verifier_state.h"

#include <bpf/btf.h>

namespace umemcg {

int check_btf_line(bpf_verifier_env &env) {
  const std::span<const bpf_line_info> linfo = env.opts.line_info;
  if (linfo.empty()) return 0;
  const u32 len = (u32)env.insns.size();
  u32 prev_offset = 0;
  size_t s = 0;
  for (u32 i = 0; i < linfo.size(); i++) {
    const bpf_line_info &li = linfo[i];
    if ((i && li.insn_off <= prev_offset) || li.insn_off >= len) {
      env.verbose_err("Invalid line_info[%u].insn_off:%u (prev_offset:%u prog->len:%u)", i,
                      li.insn_off, prev_offset, len);
      return -EINVAL;
    }
    if (!env.insns[li.insn_off].code) {
      env.verbose_err("Invalid insn code at line_info[%u].insn_off", i);
      return -EINVAL;
    }
    if (!env.opts.btf || !btf__name_by_offset(env.opts.btf, li.line_off) ||
        !btf__name_by_offset(env.opts.btf, li.file_name_off)) {
      env.verbose_err("Invalid line_info[%u].line_off or .file_name_off", i);
      return -EINVAL;
    }
    if (s != env.subprogs.size()) {
      if (li.insn_off == env.subprogs[s].start) {
        s++;
      } else if (env.subprogs[s].start < li.insn_off) {
        env.verbose_err("missing bpf_line_info for func#%zu", s);
        return -EINVAL;
      }
    }
    prev_offset = li.insn_off;
  }
  if (s != env.subprogs.size()) {
    env.verbose_err("missing bpf_line_info for %zu funcs starting from func#%zu",
                    env.subprogs.size() - s, s);
    return -EINVAL;
  }
  return 0;
}

namespace {

// The record covering insn_off: the last one starting at or before it (find_linfo()).
const bpf_line_info *find_linfo(const bpf_verifier_env &env, u32 insn_off) {
  const std::span<const bpf_line_info> linfo = env.opts.line_info;
  if (linfo.empty() || insn_off >= env.insns.size()) return nullptr;
  auto it = std::upper_bound(linfo.begin(), linfo.end(), insn_off,
                             [](u32 off, const bpf_line_info &li) { return off < li.insn_off; });
  if (it == linfo.begin()) return nullptr;
  return &*(it - 1);
}

}  // namespace

void verbose_linfo(bpf_verifier_env &env, u32 insn_off, const char *prefix) {
  if (!env.opts.log_level || !env.opts.btf) return;
  const bpf_line_info *li = find_linfo(env, insn_off);
  const bpf_line_info *prev = env.prev_linfo;
  if (!li || li == prev) return;
  // Two records of one source line (different columns) print it once.
  if (prev && li->file_name_off == prev->file_name_off &&
      BPF_LINE_INFO_LINE_NUM(li->line_col) == BPF_LINE_INFO_LINE_NUM(prev->line_col))
    return;
  const char *line = btf__name_by_offset(env.opts.btf, li->line_off);
  const char *file = btf__name_by_offset(env.opts.btf, li->file_name_off);
  if (!line || !file) return;  // check_btf_line() refused such a record before the walk
  while (std::isspace((unsigned char)*line)) line++;
  const char *slash = std::strrchr(file, '/');
  env.res.log += absl::StrFormat("%s%s @ %s:%u\n", prefix, line, slash ? slash + 1 : file,
                                 BPF_LINE_INFO_LINE_NUM(li->line_col));
  env.prev_linfo = li;
}

}  // namespace umemcg
