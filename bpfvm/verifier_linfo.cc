// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_linfo.cc: the program's func info and line info (.BTF.ext, as the loader hands
// them over in bpf_verifier_opts::func_info and ::line_info): checked before the walk, the line
// info printed in the log as "; <source line> @ <file>:<line>" before the first instruction of
// each source line.
//
// Mirrors: kernel/bpf/verifier.c (check_btf_func_early, check_btf_func, check_abnormal_return,
//          check_btf_line), kernel/bpf/log.c (find_linfo, verbose_linfo) (Linux 6.19)
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

namespace {

// A subprogram's LD_ABS/LD_IND and bpf_tail_call (the kernel's has_ld_abs, has_tail_call).
void subprog_abnormal_exits(const bpf_verifier_env &env, const bpf_subprog_info &sp,
                            bool *ld_abs, bool *tail_call) {
  *ld_abs = *tail_call = false;
  for (u32 i = sp.start; i < sp.end; i++) {
    if (!env.aux[i].desc) continue;
    const bpf_insn &in = env.insns[i];
    if (BPF_CLASS(in.code) == BPF_LD && (BPF_MODE(in.code) == BPF_ABS || BPF_MODE(in.code) == BPF_IND))
      *ld_abs = true;
    if (in.code == (BPF_JMP | BPF_CALL) && in.src_reg == 0 && in.imm == BPF_FUNC_tail_call)
      *tail_call = true;
  }
}

const struct btf_type *skip_modifiers(const struct btf *btf, u32 id) {
  for (int n = 0; n < 32; n++) {
    const struct btf_type *t = btf__type_by_id(btf, id);
    if (!t || !(btf_is_mod(t) || btf_is_typedef(t))) return t;
    id = t->type;
  }
  return nullptr;
}

}  // namespace

int check_btf_func(bpf_verifier_env &env) {
  const std::span<const bpf_func_info> finfo = env.opts.func_info;
  if (finfo.empty()) {
    // check_abnormal_return(): without BTF no subprogram may leave through LD_ABS's hidden
    // exit or a tail call.
    for (size_t s = 1; s < env.subprogs.size(); s++) {
      bool ld_abs, tail_call;
      subprog_abnormal_exits(env, env.subprogs[s], &ld_abs, &tail_call);
      if (ld_abs) {
        env.verbose_err("LD_ABS is not allowed in subprogs without BTF");
        return -EINVAL;
      }
      if (tail_call) {
        env.verbose_err("tail_call is not allowed in subprogs without BTF");
        return -EINVAL;
      }
    }
    return 0;
  }
  // check_btf_func_early(): order and types.
  for (u32 i = 0; i < finfo.size(); i++) {
    if (i == 0 && finfo[i].insn_off) {
      env.verbose_err("nonzero insn_off %u for the first func info record", finfo[i].insn_off);
      return -EINVAL;
    }
    if (i && finfo[i].insn_off <= finfo[i - 1].insn_off) {
      env.verbose_err("same or smaller insn offset (%u) than previous func info record (%u)",
                      finfo[i].insn_off, finfo[i - 1].insn_off);
      return -EINVAL;
    }
    const struct btf_type *t = env.opts.btf ? btf__type_by_id(env.opts.btf, finfo[i].type_id) : nullptr;
    if (!t || !btf_is_func(t)) {
      env.verbose_err("invalid type id %d", finfo[i].type_id);
      return -EINVAL;
    }
    const struct btf_type *proto = btf__type_by_id(env.opts.btf, t->type);
    if (!proto || !btf_is_func_proto(proto)) {
      env.verbose_err("invalid type id %d", finfo[i].type_id);
      return -EINVAL;
    }
  }
  // check_btf_func(): one record per subprogram, at its start.
  if (finfo.size() != env.subprogs.size()) {
    env.verbose_err("number of funcs in func_info doesn't match number of subprogs");
    return -EINVAL;
  }
  for (u32 i = 0; i < finfo.size(); i++) {
    if (env.subprogs[i].start != finfo[i].insn_off) {
      env.verbose_err("func_info BTF section doesn't match subprog layout in BPF program");
      return -EINVAL;
    }
    const struct btf_type *func = btf__type_by_id(env.opts.btf, finfo[i].type_id);
    const struct btf_type *proto = btf__type_by_id(env.opts.btf, func->type);
    // The return type: an integer of at most 8 bytes or an enum (btf_type_is_small_int,
    // btf_is_any_enum); void (type 0) is neither.
    const struct btf_type *ret = proto->type ? skip_modifiers(env.opts.btf, proto->type) : nullptr;
    const bool scalar_return =
        ret && ((btf_is_int(ret) && ret->size <= 8) || btf_is_enum(ret) || btf_is_enum64(ret));
    if (!i || scalar_return) continue;
    bool ld_abs, tail_call;
    subprog_abnormal_exits(env, env.subprogs[i], &ld_abs, &tail_call);
    if (ld_abs) {
      env.verbose_err("LD_ABS is only allowed in functions that return 'int'.");
      return -EINVAL;
    }
    if (tail_call) {
      env.verbose_err("tail_call is only allowed in functions that return 'int'.");
      return -EINVAL;
    }
  }
  return 0;
}

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
