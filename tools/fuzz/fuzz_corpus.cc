// SPDX-License-Identifier: GPL-2.0-only
// tools/fuzz/fuzz_corpus.cc: the corpus directory of `umemcg fuzz` (see fuzz_corpus.h).
#include "tools/fuzz/fuzz_corpus.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"

namespace umemcg::fuzz {

namespace {

// The lines of the --assert dump in a case's tail (fuzz_generate_case()).
std::vector<std::string> assert_lines(const FuzzTarget &t) {
  if (t.assert_var.empty()) return {};
  return {std::string("echo ") + kAssertMarker,
          std::string("bpf map ") + kObjName + "/" + t.assert_section};
}

bool starts_with(const std::string &s, const std::string &p) { return s.rfind(p, 0) == 0; }

}  // namespace

std::string fuzz_corpus_text(const FuzzCase &c) {
  std::string s = "# umemcg fuzz case; replay: umemcg sh " + fuzz_case_sh_options(c) + " FILE\n";
  const std::pair<const char *, const std::vector<std::string> *> parts[] = {
      {kSetupMarker, &c.setup}, {kBodyMarker, &c.body}, {kTailMarker, &c.tail}};
  for (const auto &[marker, lines] : parts) {
    s += std::string(marker) + "\n";
    for (const std::string &l : *lines) s += l + "\n";
  }
  return s;
}

bool fuzz_corpus_save(const std::string &dir, const std::string &name, const FuzzCase &c,
                      std::string *err) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    *err = "cannot create " + dir + ": " + std::strerror(errno);
    return false;
  }
  const std::string path = dir + "/" + name;
  std::ofstream f(path);
  f << fuzz_corpus_text(c);
  f.close();
  if (!f) {
    *err = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

absl::StatusOr<std::vector<CorpusEntry>> fuzz_corpus_load(const std::string &dir,
                                                          const FuzzTarget &t) {
  std::vector<CorpusEntry> out;
  DIR *d = ::opendir(dir.c_str());
  if (!d) {
    if (errno == ENOENT) return out;
    return absl::InvalidArgumentError("--corpus " + dir + ": " + std::strerror(errno));
  }
  std::vector<std::string> names;
  while (const dirent *e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 3 && n.compare(n.size() - 3, 3, ".sh") == 0) names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  const std::vector<std::string> dump = assert_lines(t);
  for (const std::string &n : names) {
    const std::string path = dir + "/" + n;
    std::ifstream f(path);
    if (!f) return absl::InvalidArgumentError("cannot read " + path);
    auto bad = [&](const std::string &why) {
      return absl::InvalidArgumentError(path + ": not a corpus file (" + why + ")");
    };
    CorpusEntry ce;
    ce.file = n;
    ce.c.high_debt_limit = t.debt_limit;
    ce.c.hung_task_timeout_ns = t.stall_limit_ns;
    std::string line;
    if (!std::getline(f, line)) return bad("empty");
    const size_t at = line.find("--seed ");
    if (!starts_with(line, "# umemcg fuzz case") || at == std::string::npos)
      return bad("no header naming the seed");
    char *end = nullptr;
    ce.c.seed = std::strtoull(line.c_str() + at + 7, &end, 10);
    if (end == line.c_str() + at + 7) return bad("no seed");
    std::vector<std::string> *part = nullptr;
    while (std::getline(f, line)) {
      if (line == kSetupMarker) {
        part = &ce.c.setup;
      } else if (line == kBodyMarker) {
        part = &ce.c.body;
      } else if (line == kTailMarker) {
        part = &ce.c.tail;
      } else if (!part) {
        return bad("a line before " + std::string(kSetupMarker));
      } else if (starts_with(line, "bpf load ") &&
                 line.size() > 2 && line.compare(line.size() - 2, 2, std::string(" ") + kObjName) == 0) {
        part->push_back("bpf load " + t.object + " " + kObjName);  // today's object
      } else if (line != std::string("echo ") + kAssertMarker &&
                 !starts_with(line, std::string("bpf map ") + kObjName + "/.")) {
        part->push_back(line);  // (the assertion's dump is the campaign's: added below)
      }
    }
    if (!part) return bad("no " + std::string(kSetupMarker) + " line");
    // The assertion's dump goes before the unload, as the generator puts it.
    auto unload = std::find(ce.c.tail.begin(), ce.c.tail.end(),
                            std::string("bpf unload ") + kObjName);
    ce.c.tail.insert(unload, dump.begin(), dump.end());
    out.push_back(std::move(ce));
  }
  return out;
}

}  // namespace umemcg::fuzz
