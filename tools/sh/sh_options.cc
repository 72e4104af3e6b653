// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_options.cc: `umemcg sh` option parsing and the number syntaxes the shell shares
// with its commands (sizes, seconds, integers).
#include "tools/sh/sh_options.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mm/cmdline.h"

namespace umemcg::sh {

bool parse_size(const std::string &s, uint64_t *bytes) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  // memparse() wraps silently: the digits are checked for overflow with strtoull (same base-0
  // rules: "0x" hex, leading 0 octal), then the suffix shift.
  errno = 0;
  unsigned long long digits = std::strtoull(s.c_str(), nullptr, 0);
  if (errno == ERANGE) return false;
  char *digits_end = nullptr, *end = nullptr;
  umemcg::simple_strtoull(s.c_str(), &digits_end, 0);
  unsigned long long v = umemcg::memparse(s.c_str(), &end);
  if (*end != '\0') return false;
  // The suffix's shift lost bits when the value shifted back differs.
  unsigned shift = static_cast<unsigned>(10 * (end - digits_end));
  if (shift) {
    switch (std::tolower(static_cast<unsigned char>(*digits_end))) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      case 't': shift = 40; break;
      case 'p': shift = 50; break;
      default: shift = 60; break;  // 'e'
    }
    if ((v >> shift) != digits) return false;
  }
  *bytes = v;
  return true;
}

bool parse_seconds(const std::string &s, uint64_t *ns) {
  size_t i = 0;
  uint64_t whole = 0, frac = 0, scale = 1000000000ull;
  bool any = false;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); i++) {
    whole = whole * 10 + static_cast<uint64_t>(s[i] - '0');
    if (whole > 1000000000ull) return false;
    any = true;
  }
  if (i < s.size() && s[i] == '.') {
    for (i++; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); i++) {
      any = true;
      if (scale > 1) {  // digits past the nanosecond are ignored
        scale /= 10;
        frac += static_cast<uint64_t>(s[i] - '0') * scale;
      }
    }
  }
  if (!any || i != s.size()) return false;
  *ns = whole * 1000000000ull + frac;
  return true;
}

bool parse_int(const std::string &s, long long lo, long long hi, long long *out) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  if (i == s.size()) return false;
  long long v = 0;
  for (; i < s.size(); i++) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    if (v > (1ll << 53)) return false;  // far outside any range the shell asks for
    v = v * 10 + (s[i] - '0');
  }
  if (neg) v = -v;
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

const char *sh_usage() {
  return "usage: umemcg sh [OPTIONS] [SCRIPT [ARGS...]]   (SCRIPT absent or \"-\": standard input)\n"
         "  --cpus N                 virtual CPUs (1..64, default 4)\n"
         "  --memory SIZE            the machine's RAM (default 4G)\n"
         "  --swap SIZE              one swap device of that size (default 0: none)\n"
         "  --mode sim|native        simulated (default) or native mode\n"
         "  --seed N                 the simulated scheduler's seed (default 1)\n"
         "  --cgroup v2|v1           the hierarchy at /sys/fs/cgroup (default v2)\n"
         "  --mount-opts LIST        memory_localevents,memory_recursiveprot (default none)\n"
         "  --stock memcg|pcstock    the per-CPU charge stock design (default memcg)\n"
         "  --high-debt-limit PAGES  warn when a high_policy defers more memory.high debt\n"
         "                           (a debug check; default 0: never)\n"
         "  --hung-task-timeout SECONDS  sim: warn when a task stays blocked in the kernel\n"
         "                           longer (machine time; default 0: never)\n"
         "  --costs FILE             sim: the cost table the memory model charges machine time\n"
         "                           from (`NAME NS` lines, as umemcg calibrate prints;\n"
         "                           default: the built-in table)\n"
         "  -e                       stop at the first command that fails\n";
}

namespace {

// The whole of host file @path into *@text; false with *@why ("cannot read: strerror").
bool read_host_file(const std::string &path, std::string *text, std::string *why) {
  FILE *f = std::fopen(path.c_str(), "r");
  if (!f) return *why = std::string("cannot open: ") + std::strerror(errno), false;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text->append(buf, n);
  const int err = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (err) return *why = std::string("cannot read: ") + std::strerror(err), false;
  return true;
}

bool set_option(const std::string &name, const std::string &value, ShOptions *o,
                std::string *why) {
  long long n = 0;
  if (name == "--cpus") {
    if (!parse_int(value, 1, 64, &n)) return *why = "not a CPU count in 1..64", false;
    o->cpus = static_cast<int>(n);
  } else if (name == "--memory") {
    if (!parse_size(value, &o->memory) || o->memory < (1ull << 20))
      return *why = "not a size of at least 1M", false;
  } else if (name == "--high-debt-limit") {
    if (!parse_int(value, 0, 1ll << 40, &n)) return *why = "not a number of pages", false;
    o->high_debt_limit = static_cast<uint64_t>(n);
  } else if (name == "--hung-task-timeout") {
    if (!parse_seconds(value, &o->hung_task_timeout_ns)) return *why = "not a number of seconds", false;
  } else if (name == "--costs") {
    std::string text, err;
    if (!read_host_file(value, &text, &err)) return *why = err, false;
    o->costs = emu::CostModel{};
    if (!emu::parse_cost_table(text, &o->costs, &err)) return *why = err, false;
  } else if (name == "--swap") {
    if (!parse_size(value, &o->swap)) return *why = "not a size", false;
  } else if (name == "--mode") {
    if (value == "sim") o->mode = ShOptions::Mode::kSim;
    else if (value == "native") o->mode = ShOptions::Mode::kNative;
    else return *why = "not sim or native", false;
  } else if (name == "--seed") {
    char *end = nullptr;
    errno = 0;
    o->seed = std::strtoull(value.c_str(), &end, 0);
    if (value.empty() || !std::isdigit(static_cast<unsigned char>(value[0])) || *end ||
        errno == ERANGE)
      return *why = "not an unsigned 64-bit number", false;
  } else if (name == "--cgroup") {
    if (value == "v2") o->cgroup_version = 2;
    else if (value == "v1") o->cgroup_version = 1;
    else return *why = "not v2 or v1", false;
  } else if (name == "--mount-opts") {
    o->memory_localevents = o->memory_recursiveprot = false;
    size_t start = 0;
    while (start <= value.size() && !value.empty()) {
      size_t comma = value.find(',', start);
      std::string opt = value.substr(start, comma == std::string::npos ? std::string::npos
                                                                       : comma - start);
      if (opt == "memory_localevents") o->memory_localevents = true;
      else if (opt == "memory_recursiveprot") o->memory_recursiveprot = true;
      else if (opt != "none") return *why = "unknown mount option '" + opt + "'", false;
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else if (name == "--stock") {
    if (value == "memcg") o->stock = ShOptions::Stock::kMemcg;
    else if (value == "pcstock") o->stock = ShOptions::Stock::kPcstock;
    else return *why = "not memcg or pcstock", false;
  } else {
    return *why = "unknown option", false;
  }
  return true;
}

}  // namespace

bool parse_sh_options(const std::vector<std::string> &argv, ShOptions *opts, std::string *error) {
  *opts = ShOptions{};
  size_t i = 0;
  for (; i < argv.size(); i++) {
    const std::string &a = argv[i];
    if (a == "--") {
      i++;
      break;
    }
    if (a == "--help" || a == "-h") {
      opts->help = true;
      continue;
    }
    if (a == "-e") {
      opts->errexit = true;
      continue;
    }
    if (a.size() < 2 || a[0] != '-' ) break;  // SCRIPT ("-" included)
    std::string name = a, value;
    size_t eq = a.find('=');
    if (a.compare(0, 2, "--") == 0 && eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
    } else {
      static const char *const kNames[] = {"--cpus", "--memory", "--swap", "--mode", "--seed",
                                           "--cgroup", "--mount-opts", "--stock",
                                           "--high-debt-limit", "--hung-task-timeout", "--costs"};
      bool known = false;
      for (const char *k : kNames) known |= name == k;
      if (!known) {
        *error = "umemcg sh: " + name + ": unknown option";
        return false;
      }
      if (i + 1 >= argv.size()) {
        *error = "umemcg sh: " + name + ": needs a value";
        return false;
      }
      value = argv[++i];
    }
    std::string why;
    if (!set_option(name, value, opts, &why)) {
      *error = "umemcg sh: " + name + (why == "unknown option" ? ": unknown option"
                                                              : " '" + value + "': " + why);
      return false;
    }
  }
  if (i < argv.size()) {
    opts->script = argv[i++];
    opts->args.assign(argv.begin() + static_cast<long>(i), argv.end());
  }
  return true;
}

}  // namespace umemcg::sh
