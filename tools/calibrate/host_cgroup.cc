// SPDX-License-Identifier: GPL-2.0-only
// tools/calibrate/host_cgroup.cc: where the calibration's memory cgroup goes, and file helpers
// (see host_cgroup.h).
#include "tools/calibrate/host_cgroup.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

namespace umemcg::calibrate {

namespace {

// @word is one of the @sep-separated words of @list (a final newline ignored).
bool has_word(const std::string &list, const std::string &word, char sep) {
  std::istringstream in(list);
  std::string w;
  while (std::getline(in, w, sep))
    if (w == word || w == word + "\n") return true;
  return false;
}

}  // namespace

std::string read_text(const std::string &path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int write_text(const std::string &path, const std::string &text) {
  const int fd = open(path.c_str(), O_WRONLY);
  if (fd < 0) return errno;
  const int err = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : errno;
  close(fd);
  return err;
}

std::uint64_t stat_sum(const std::string &text, std::initializer_list<const char *> keys) {
  std::istringstream in(text);
  std::string key;
  std::uint64_t value = 0, sum = 0;
  while (in >> key >> value)
    for (const char *k : keys)
      if (key == k) sum += value;
  return sum;
}

Placement find_placement() {
  std::string v1_mnt, v2_mnt;
  {
    std::istringstream mounts(read_text("/proc/mounts"));
    std::string dev, mnt, type, opts, rest;
    while (mounts >> dev >> mnt >> type >> opts && std::getline(mounts, rest)) {
      if (type == "cgroup2" && v2_mnt.empty()) v2_mnt = mnt;
      if (type == "cgroup" && has_word(opts, "memory", ',') && v1_mnt.empty()) v1_mnt = mnt;
    }
  }
  std::string v1_path, v2_path;
  {
    std::istringstream lines(read_text("/proc/self/cgroup"));
    std::string line;
    while (std::getline(lines, line)) {
      const auto c1 = line.find(':'), c2 = line.find(':', c1 + 1);
      if (c1 == std::string::npos || c2 == std::string::npos) continue;
      const std::string ctrl = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
      if (line.compare(0, c1, "0") == 0 && ctrl.empty()) v2_path = path;
      else if (has_word(ctrl, "memory", ',')) v1_path = path;
    }
  }
  Placement p;
  if (!v2_mnt.empty() && has_word(read_text(v2_mnt + "/cgroup.subtree_control"), "memory", ' ')) {
    p.v2 = true;
    p.parent = v2_mnt;
    p.home = v2_mnt + v2_path;
    return p;
  }
  if (!v1_mnt.empty()) {
    p.parent = p.home = v1_mnt + (v1_path == "/" ? "" : v1_path);
    return p;
  }
  p.why = v2_mnt.empty() ? "no cgroup v2 and no cgroup v1 memory hierarchy is mounted"
                         : "the cgroup v2 root (" + v2_mnt +
                               ") does not enable memory in cgroup.subtree_control and no cgroup "
                               "v1 memory hierarchy is mounted";
  return p;
}

}  // namespace umemcg::calibrate
