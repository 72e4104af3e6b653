// SPDX-License-Identifier: GPL-2.0-only
// tools/fuzz/fuzz_case.cc: the case generator of `umemcg fuzz` (see fuzz_case.h).
#include "tools/fuzz/fuzz_case.h"

#include <algorithm>
#include <cstdlib>
#include <random>

namespace umemcg::fuzz {

namespace {

// A small, fully specified generator (the same stream on every host and library).
struct SplitMix : FuzzChooser {
  explicit SplitMix(std::uint64_t seed) : s(seed) {}
  std::uint64_t s;
  std::uint64_t next() {  // splitmix64
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  unsigned below(unsigned n) override { return static_cast<unsigned>(next() % n); }
};

// The generator's view of a chooser.
struct Rng {
  FuzzChooser &ch;
  unsigned below(unsigned n) { return ch.below(n); }
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


// What a body step may name: the tree's cgroups, where each struct_ops map is attached, how
// many processes the lines so far start ($P1..$Pprocs).
struct BodyState {
  std::vector<std::string> all, leaves;
  std::vector<std::pair<std::string, std::string>> attached;  // (map, cgroup)
  int procs = 0;
};

// One step of the body (one or two lines) appended to *out.
void add_step(Rng &r, BodyState *st, std::vector<std::string> *out) {
  const std::vector<std::string> &all = st->all;
  const std::string leaf = r.pick(st->leaves);
  const std::string var = "P" + std::to_string(st->procs + 1);
  switch (r.below(12)) {
    case 0:
    case 1:
      out->push_back("spawn " + leaf + " anon " + mib(1 + r.below(48)) +
                     (r.chance(50) ? " --hold" : "") + "; " + var + "=$!");
      st->procs++;
      break;
    case 2:
      out->push_back("spawn " + leaf + " pagecache " + mib(1 + r.below(32)) +
                     (r.chance(50) ? " --file f" + std::to_string(r.below(3)) : "") +
                     (r.chance(30) ? " --hold" : "") + "; " + var + "=$!");
      st->procs++;
      break;
    case 3:
      out->push_back("spawn " + leaf + " mlock " + mib(1 + r.below(8)) + "; " + var + "=$!");
      st->procs++;
      break;
    case 4:
    case 10:
    case 11:
      out->push_back("sleep 0." + std::to_string(1 + r.below(9)));
      break;
    case 5:
      out->push_back("echo " + mib(1 + r.below(16)) + " > " + r.pick(all) + "/memory.reclaim");
      break;
    case 6:
      out->push_back("echo " + (r.chance(20) ? std::string("max") : mib(2 + r.below(63))) +
                     " > " + r.pick(all) + (r.chance(60) ? "/memory.high" : "/memory.max"));
      break;
    case 7:
      if (!st->attached.empty()) {
        auto &[map, where] = st->attached[r.below(static_cast<unsigned>(st->attached.size()))];
        const std::string to = r.pick(all);
        out->push_back(std::string("bpf detach ") + kObjName + "/" + map + " " + where);
        out->push_back(std::string("bpf attach ") + kObjName + "/" + map + " " + to);
        where = to;
      } else {
        out->push_back("cat " + r.pick(all) + "/memory.events");
      }
      break;
    case 8:
      if (st->procs)
        out->push_back("kill -9 $P" + std::to_string(1 + r.below(static_cast<unsigned>(st->procs))));
      break;
    default:
      out->push_back("cat " + r.pick(all) + "/memory.stat");
      break;
  }
}
}  // namespace

unsigned FuzzByteChooser::below(unsigned n) {
  if (n <= 1) return 0;
  unsigned v = 0;
  int shift = 0;
  for (unsigned range = n - 1; range && left_; range >>= 8, shift += 8) {
    v |= static_cast<unsigned>(*p_++) << shift;
    left_--;
  }
  return v % n;
}

FuzzCase fuzz_generate_case(const FuzzTarget &t, std::uint64_t campaign_seed, std::uint64_t n) {
  SplitMix sm(campaign_seed * 0x2545f4914f6cdd1dull + n * 0x9e3779b97f4a7c15ull + 1);
  return fuzz_generate_case_from(t, sm);
}

FuzzCase fuzz_generate_case_from(const FuzzTarget &t, FuzzChooser &ch) {
  Rng r{ch};
  FuzzCase c;
  c.seed = 1 + r.below(1000000);
  c.high_debt_limit = t.debt_limit;
  c.hung_task_timeout_ns = t.stall_limit_ns;
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

  BodyState st{all, leaves, attached, 0};
  const unsigned steps = 6 + r.below(15);
  for (unsigned s = 0; s < steps; s++) add_step(r, &st, &c.body);
  const int procs = st.procs;

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

namespace {

bool starts_with(const std::string &s, const std::string &p) { return s.rfind(p, 0) == 0; }

// The N of a body line's "; PN=$!" (0 when it starts no process).
int spawned_var(const std::string &line) {
  const size_t at = line.rfind("; P");
  if (at == std::string::npos || line.size() < at + 6 || line.compare(line.size() - 3, 3, "=$!"))
    return 0;
  return std::atoi(line.c_str() + at + 3);
}

// "bpf attach p/MAP CG": the map and the cgroup (false for other lines, and for a tracing
// program's attach, which names no cgroup).
bool map_attach(const std::string &line, std::string *map, std::string *cg) {
  const std::string pre = std::string("bpf attach ") + kObjName + "/";
  if (!starts_with(line, pre)) return false;
  const size_t sp = line.find(' ', pre.size());
  if (sp == std::string::npos) return false;
  *map = line.substr(pre.size(), sp - pre.size());
  *cg = line.substr(sp + 1);
  return true;
}

// The body state just before body line @at of @c (its tree from the setup's mkdir lines).
BodyState body_state(const FuzzCase &c, size_t at) {
  BodyState st;
  std::vector<std::string> parents;
  const std::string sub = "/cgroup.subtree_control";
  for (const std::string &l : c.setup) {
    std::string map, cg;
    if (starts_with(l, "mkdir ")) {
      st.all.push_back(l.substr(6));
    } else if (starts_with(l, "echo +memory > ") && l.size() > 15 + sub.size() &&
               l.compare(l.size() - sub.size(), sub.size(), sub) == 0) {
      parents.push_back(l.substr(15, l.size() - 15 - sub.size()));
    } else if (map_attach(l, &map, &cg)) {
      st.attached.emplace_back(map, cg);
    }
  }
  for (const std::string &n : st.all)
    if (std::find(parents.begin(), parents.end(), n) == parents.end()) st.leaves.push_back(n);
  for (size_t i = 0; i < c.body.size(); i++) {
    // Every process of the body counts, so that a new one gets a name of its own.
    st.procs = std::max(st.procs, spawned_var(c.body[i]));
    std::string map, cg;
    if (i < at && map_attach(c.body[i], &map, &cg))
      for (auto &[m, where] : st.attached)
        if (m == map) where = cg;
  }
  return st;
}

}  // namespace

FuzzCase fuzz_mutate_case(const FuzzTarget &t, const FuzzCase &parent, FuzzChooser &ch) {
  Rng r{ch};
  FuzzCase c = parent;
  c.high_debt_limit = t.debt_limit;
  c.hung_task_timeout_ns = t.stall_limit_ns;
  const bool has_tree = !body_state(c, 0).leaves.empty();
  const unsigned changes = 1 + r.below(3);
  for (unsigned i = 0; i < changes; i++) {
    const unsigned op = has_tree ? r.below(4) : 0;
    const size_t n = c.body.size();
    if (op == 0 || (op != 2 && n == 0)) {
      c.seed = 1 + r.below(1000000);
    } else if (op == 1) {
      c.body.erase(c.body.begin() + r.below(static_cast<unsigned>(n)));
    } else {
      // 2: a new step inserted; 3: a line replaced by a new step.
      const size_t at = r.below(static_cast<unsigned>(op == 2 ? n + 1 : n));
      if (op == 3) c.body.erase(c.body.begin() + static_cast<long>(at));
      BodyState st = body_state(c, at);
      std::vector<std::string> step;
      add_step(r, &st, &step);
      c.body.insert(c.body.begin() + static_cast<long>(at), step.begin(), step.end());
    }
  }
  // The tail: a kill for every process the body starts, then the parent's teardown.
  std::vector<int> vars;
  for (const std::string &l : c.body)
    if (const int v = spawned_var(l)) vars.push_back(v);
  std::sort(vars.begin(), vars.end());
  vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
  std::vector<std::string> tail;
  for (int v : vars) tail.push_back("kill -9 $P" + std::to_string(v));
  for (const std::string &l : parent.tail)
    if (!starts_with(l, "kill -9 $P")) tail.push_back(l);
  c.tail = std::move(tail);
  return c;
}

FuzzCase fuzz_mutate_pool_case(const FuzzTarget &t, const std::vector<const FuzzCase *> &pool,
                               std::uint64_t campaign_seed, std::uint64_t n, std::size_t *parent) {
  // A stream apart from fuzz_generate_case()'s for the same numbers.
  SplitMix sm((campaign_seed ^ 0x6a09e667f3bcc909ull) * 0x9e3779b97f4a7c15ull +
              n * 0x2545f4914f6cdd1dull + 7);
  *parent = sm.below(static_cast<unsigned>(pool.size()));
  return fuzz_mutate_case(t, *pool[*parent], sm);
}

std::string fuzz_case_sh_options(const FuzzCase &c) {
  std::string s = "--seed " + std::to_string(c.seed);
  if (c.high_debt_limit) s += " --high-debt-limit " + std::to_string(c.high_debt_limit);
  if (c.hung_task_timeout_ns) {
    // Seconds, with the fraction's digits when there is one (umemcg sh's parse_seconds()).
    std::string frac = std::to_string(1000000000ull + c.hung_task_timeout_ns % 1000000000ull).substr(1);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    s += " --hung-task-timeout " + std::to_string(c.hung_task_timeout_ns / 1000000000ull) +
         (frac.empty() ? "" : "." + frac);
  }
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
