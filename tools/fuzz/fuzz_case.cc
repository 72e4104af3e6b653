// SPDX-License-Identifier: GPL-2.0-only
// tools/fuzz/fuzz_case.cc: the case generator of `umemcg fuzz` (see fuzz_case.h).
#include "tools/fuzz/fuzz_case.h"

#include <algorithm>
#include <random>

namespace umemcg::fuzz {

namespace {

// A small, fully specified generator (the same stream on every host and library).
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {  // splitmix64
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  unsigned below(unsigned n) { return static_cast<unsigned>(next() % n); }
  bool chance(unsigned pct) { return below(100) < pct; }
  template <typename T>
  const T &pick(const std::vector<T> &v) { return v[below(static_cast<unsigned>(v.size()))]; }
};

std::string mib(unsigned n) { return std::to_string(n) + "M"; }

struct Node {
  std::string path;
  int depth = 1;
  bool parent = false;
};

// A tree of 1..6 cgroups below the root, at most 3 deep; parents enable +memory for their
// children (the lines come in creation order).
std::vector<Node> make_tree(Rng &r, std::vector<std::string> *lines) {
  std::vector<Node> nodes;
  const unsigned top = 1 + r.below(3);
  for (unsigned i = 0; i < top; i++) nodes.push_back({std::string(1, static_cast<char>('a' + i)), 1});
  for (size_t i = 0; i < nodes.size() && nodes.size() < 6; i++) {
    if (nodes[i].depth >= 3 || !r.chance(40)) continue;
    nodes[i].parent = true;
    const unsigned kids = 1 + r.below(2);
    for (unsigned k = 0; k < kids && nodes.size() < 6; k++)
      nodes.push_back({nodes[i].path + "/" + static_cast<char>('a' + k), nodes[i].depth + 1});
  }
  for (const Node &n : nodes) {
    lines->push_back("mkdir " + n.path);
    if (n.parent) lines->push_back("echo +memory > " + n.path + "/cgroup.subtree_control");
  }
  return nodes;
}

void limits(Rng &r, const std::vector<Node> &nodes, std::vector<std::string> *lines) {
  for (const Node &n : nodes) {
    if (r.chance(50)) lines->push_back("echo " + mib(2 + r.below(63)) + " > " + n.path + "/memory.high");
    if (r.chance(30)) lines->push_back("echo " + mib(4 + r.below(125)) + " > " + n.path + "/memory.max");
    if (r.chance(20)) lines->push_back("echo " + mib(1 + r.below(32)) + " > " + n.path + "/memory.low");
    if (r.chance(10)) lines->push_back("echo " + mib(1 + r.below(16)) + " > " + n.path + "/memory.min");
  }
}

}  // namespace

FuzzCase fuzz_generate_case(const FuzzTarget &t, std::uint64_t campaign_seed, std::uint64_t n) {
  Rng r{campaign_seed * 0x2545f4914f6cdd1dull + n * 0x9e3779b97f4a7c15ull + 1};
  FuzzCase c;
  c.seed = 1 + r.next() % 1000000;
  c.high_debt_limit = t.debt_limit;
  c.setup.push_back("echo +memory > cgroup.subtree_control");
  const std::vector<Node> nodes = make_tree(r, &c.setup);
  std::vector<std::string> all, leaves;
  for (const Node &nd : nodes) {
    all.push_back(nd.path);
    if (!nd.parent) leaves.push_back(nd.path);
  }
  limits(r, nodes, &c.setup);
  c.setup.push_back("bpf load " + t.object + " " + kObjName);
  for (const std::string &p : t.tracing_progs)
    c.setup.push_back(std::string("bpf attach ") + kObjName + "/" + p);
  // Where each struct_ops map is attached now (for detach/attach moves in the body).
  std::vector<std::pair<std::string, std::string>> attached;
  for (const std::string &m : t.struct_ops_maps) {
    std::string where = r.pick(all);
    for (const auto &[map, cg] : t.attach)
      if (map == m) where = cg;
    c.setup.push_back(std::string("bpf attach ") + kObjName + "/" + m + " " + where);
    attached.emplace_back(m, where);
  }

  int procs = 0;
  const unsigned steps = 6 + r.below(15);
  for (unsigned s = 0; s < steps; s++) {
    const std::string leaf = r.pick(leaves);
    const std::string var = "P" + std::to_string(procs + 1);
    switch (r.below(12)) {
      case 0:
      case 1:
        c.body.push_back("spawn " + leaf + " anon " + mib(1 + r.below(48)) +
                         (r.chance(50) ? " --hold" : "") + "; " + var + "=$!");
        procs++;
        break;
      case 2:
        c.body.push_back("spawn " + leaf + " pagecache " + mib(1 + r.below(32)) +
                         (r.chance(50) ? " --file f" + std::to_string(r.below(3)) : "") +
                         (r.chance(30) ? " --hold" : "") + "; " + var + "=$!");
        procs++;
        break;
      case 3:
        c.body.push_back("spawn " + leaf + " mlock " + mib(1 + r.below(8)) + "; " + var + "=$!");
        procs++;
        break;
      case 4:
      case 10:
      case 11:
        c.body.push_back("sleep 0." + std::to_string(1 + r.below(9)));
        break;
      case 5:
        c.body.push_back("echo " + mib(1 + r.below(16)) + " > " + r.pick(all) + "/memory.reclaim");
        break;
      case 6:
        c.body.push_back("echo " + (r.chance(20) ? std::string("max") : mib(2 + r.below(63))) +
                         " > " + r.pick(all) + (r.chance(60) ? "/memory.high" : "/memory.max"));
        break;
      case 7:
        if (!attached.empty()) {
          auto &[map, where] = attached[r.below(static_cast<unsigned>(attached.size()))];
          const std::string to = r.pick(all);
          c.body.push_back(std::string("bpf detach ") + kObjName + "/" + map + " " + where);
          c.body.push_back(std::string("bpf attach ") + kObjName + "/" + map + " " + to);
          where = to;
        } else {
          c.body.push_back("cat " + r.pick(all) + "/memory.events");
        }
        break;
      case 8:
        if (procs) c.body.push_back("kill -9 $P" + std::to_string(1 + r.below(static_cast<unsigned>(procs))));
        break;
      default:
        c.body.push_back("cat " + r.pick(all) + "/memory.stat");
        break;
    }
  }

  for (int i = 1; i <= procs; i++) c.tail.push_back("kill -9 $P" + std::to_string(i));
  c.tail.push_back("wait");
  if (!t.assert_var.empty()) {
    c.tail.push_back(std::string("echo ") + kAssertMarker);
    c.tail.push_back(std::string("bpf map ") + kObjName + "/" + t.assert_section);
  }
  c.tail.push_back(std::string("bpf unload ") + kObjName);
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) c.tail.push_back("rmdir " + it->path);
  return c;
}

std::string fuzz_case_sh_options(const FuzzCase &c) {
  std::string s = "--seed " + std::to_string(c.seed);
  if (c.high_debt_limit) s += " --high-debt-limit " + std::to_string(c.high_debt_limit);
  return s;
}

std::string fuzz_case_script(const FuzzCase &c, bool header) {
  std::string s;
  if (header) s += "# umemcg fuzz case; replay: umemcg sh " + fuzz_case_sh_options(c) + " FILE\n";
  for (const auto *part : {&c.setup, &c.body, &c.tail})
    for (const std::string &l : *part) s += l + "\n";
  return s;
}

}  // namespace umemcg::fuzz
