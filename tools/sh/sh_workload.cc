// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_workload.cc: workload words to WorkloadSpec (see sh_workload.h), and inotify
// masks as names.
#include "tools/sh/sh_workload.h"

#include <sys/inotify.h>

#include <cstdio>

#include "tools/sh/sh_options.h"

namespace umemcg::sh {

bool parse_workload(const std::vector<std::string> &words, WorkloadSpec *spec, std::string *why) {
  *spec = WorkloadSpec{};
  if (words.empty()) return *why = "missing workload", false;
  const std::string &kind = words[0];
  if (kind == "anon") spec->kind = WorkloadSpec::Kind::kAnon;
  else if (kind == "pagecache") spec->kind = WorkloadSpec::Kind::kPagecache;
  else if (kind == "mlock") spec->kind = WorkloadSpec::Kind::kMlock;
  else if (kind == "sleep") spec->kind = WorkloadSpec::Kind::kSleep;
  else return *why = "unknown workload " + kind, false;
  const bool sized = spec->kind != WorkloadSpec::Kind::kSleep;
  bool have_operand = false;
  for (size_t i = 1; i < words.size(); i++) {
    const std::string &w = words[i];
    if (w == "--oom-score-adj") {
      long long n;
      if (i + 1 >= words.size()) return *why = kind + ": --oom-score-adj needs a value", false;
      if (!parse_int(words[++i], -1000, 1000, &n))
        return *why = kind + ": --oom-score-adj " + words[i] + " is not in -1000..1000", false;
      spec->oom_score_adj = static_cast<int>(n);
    } else if (w == "--hold" && (spec->kind == WorkloadSpec::Kind::kAnon ||
                                 spec->kind == WorkloadSpec::Kind::kPagecache)) {
      spec->hold = true;
    } else if (w == "--file" && spec->kind == WorkloadSpec::Kind::kPagecache) {
      if (i + 1 >= words.size() || words[i + 1].empty())
        return *why = kind + ": --file needs a name", false;
      spec->file = words[++i];
    } else if (w.size() > 1 && w[0] == '-' && w[1] == '-') {
      return *why = kind + ": unknown option " + w, false;
    } else if (have_operand) {
      return *why = kind + ": extra argument " + w, false;
    } else if (sized) {
      if (!parse_size(w, &spec->size)) return *why = kind + ": bad size " + w, false;
      if (spec->size == 0) return *why = kind + ": size 0", false;
      have_operand = true;
    } else {
      if (!parse_seconds(w, &spec->sleep_ns)) return *why = kind + ": bad time " + w, false;
      have_operand = true;
    }
  }
  if (!have_operand) return *why = kind + (sized ? ": missing SIZE" : ": missing SECONDS"), false;
  return true;
}

std::string inotify_mask_names(uint32_t mask) {
  static const struct {
    uint32_t bit;
    const char *name;
  } kBits[] = {
      {IN_ACCESS, "IN_ACCESS"},           {IN_MODIFY, "IN_MODIFY"},
      {IN_ATTRIB, "IN_ATTRIB"},           {IN_CLOSE_WRITE, "IN_CLOSE_WRITE"},
      {IN_CLOSE_NOWRITE, "IN_CLOSE_NOWRITE"}, {IN_OPEN, "IN_OPEN"},
      {IN_MOVED_FROM, "IN_MOVED_FROM"},   {IN_MOVED_TO, "IN_MOVED_TO"},
      {IN_CREATE, "IN_CREATE"},           {IN_DELETE, "IN_DELETE"},
      {IN_DELETE_SELF, "IN_DELETE_SELF"}, {IN_MOVE_SELF, "IN_MOVE_SELF"},
      {IN_UNMOUNT, "IN_UNMOUNT"},         {IN_Q_OVERFLOW, "IN_Q_OVERFLOW"},
      {IN_IGNORED, "IN_IGNORED"},         {IN_ISDIR, "IN_ISDIR"},
  };
  std::string r;
  for (const auto &b : kBits)
    if (mask & b.bit) {
      r += (r.empty() ? "" : "|") + std::string(b.name);
      mask &= ~b.bit;
    }
  if (mask || r.empty()) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%x", mask);
    r += (r.empty() ? "" : "|") + std::string(buf);
  }
  return r;
}

}  // namespace umemcg::sh
