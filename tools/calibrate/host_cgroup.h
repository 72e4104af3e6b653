// SPDX-License-Identifier: GPL-2.0-only
// tools/calibrate/host_cgroup.h: a fresh memory cgroup on the host for the reclaim and swap
// measurements, and the small file helpers they share.
//
// Where the cgroup goes: on cgroup v2, a child of the v2 root when the root's
// cgroup.subtree_control enables memory (a non-root cgroup holding this process could not
// enable it: no internal processes); else on cgroup v1, a child of this process's own memory
// cgroup. The process joins the child to charge pages to it and moves back home before timing
// anything (charges stay where they were made).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

namespace umemcg::calibrate {

struct Placement {
  bool v2 = false;
  std::string parent;  // the new cgroup's parent directory
  std::string home;    // this process's cgroup directory, to move back to
  std::string why;     // no placement: why
};

// Where a new memory cgroup can go (see the banner), or why none can.
Placement find_placement();

// A file's whole text ("" when it cannot be read).
std::string read_text(const std::string &path);

// One write(2) of @text to @path; 0 or the errno.
int write_text(const std::string &path, const std::string &text);

// The sum of the "KEY VALUE" lines of @text whose KEY is one of @keys.
std::uint64_t stat_sum(const std::string &text, std::initializer_list<const char *> keys);

}  // namespace umemcg::calibrate
