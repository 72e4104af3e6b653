// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_cmd_bpf.cc: the `bpf` command (../shared/spec/cgroup-shell.md, BPF): what bpftool
// does on a real machine, for the objects the eBPF machine loads.
//   bpf load FILE [NAME]            NAME defaults to the file's name up to its first '.'
//   bpf attach NAME/MAP CGROUP      a struct_ops map to a cgroup
//   bpf attach NAME/PROG            a tracing program or an iterator to its hook
//   bpf detach NAME/MAP CGROUP | NAME/PROG
//   bpf run NAME/PROG [ARGS...]     prints "retval N"
//   bpf map NAME/MAP                bpftool's plain dump
//   bpf ringbuf NAME/MAP            one line per record: its bytes in hex, blank-separated
//   bpf unload NAME
//
// Mirrors: tools/bpf/bpftool/map.c print_entry_plain() and main.c fprint_hex() for the map dump
//   format (Linux 6.19).
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "tools/sh/sh_cmds.h"

namespace umemcg::sh {
namespace {

bool valid_name(const std::string &s) {
  if (s.empty() || s.size() > 255) return false;
  for (char ch : s)
    if (ch == '/' || ch == ' ' || ch == '\t' || ch == '\n') return false;
  return true;
}

// NAME/ITEM into its two halves.
bool split_ref(const std::string &ref, std::string *obj, std::string *item) {
  size_t slash = ref.find('/');
  if (slash == std::string::npos) return false;
  *obj = ref.substr(0, slash);
  *item = ref.substr(slash + 1);
  return valid_name(*obj) && valid_name(*item);
}

// bpftool's fprint_hex: bytes as %02x separated by @sep, two blanks after each 8 bytes and a
// newline after each 16.
std::string hex(const std::string &bytes, const char *sep) {
  std::string r;
  char b[4];
  for (size_t i = 0; i < bytes.size(); i++) {
    const char *pfx = "";
    if (i == 0) {
    } else if (i % 16 == 0) {
      r += "\n";
    } else if (i % 8 == 0) {
      r += "  ";
    } else {
      pfx = sep;
    }
    std::snprintf(b, sizeof(b), "%02x", static_cast<unsigned char>(bytes[i]));
    r += pfx;
    r += b;
  }
  return r;
}

std::string format_map(const BpfMapDump &d) {
  std::string r;
  for (const BpfMapEntry &e : d.entries) {
    if (!d.percpu) {
      bool break_names = d.key_size > 16 || d.value_size > 16;
      bool single_line = d.key_size + d.value_size <= 24 && !break_names;
      if (d.key_size) {
        r += std::string("key:") + (break_names ? '\n' : ' ') + hex(e.key, " ");
        r += single_line ? "  " : "\n";
      }
      if (d.value_size)
        r += std::string("value:") + (break_names ? '\n' : ' ') +
             hex(e.values.empty() ? std::string() : e.values[0], " ");
      r += "\n";
    } else {
      if (d.key_size) r += "key:\n" + hex(e.key, " ") + "\n";
      if (d.value_size)
        for (size_t cpu = 0; cpu < e.values.size(); cpu++) {
          char head[48];
          std::snprintf(head, sizeof(head), "value (CPU %02zu):%c", cpu, d.value_size > 16 ? '\n' : ' ');
          r += head + hex(e.values[cpu], " ") + "\n";
        }
    }
  }
  r += "Found " + std::to_string(d.entries.size()) + " element" + (d.entries.size() != 1 ? "s" : "") + "\n";
  return r;
}

int usage(Shell &sh, const Cmd &c, const std::string &form) {
  sh.error(c, "usage: bpf " + form, EINVAL);
  return 1;
}

}  // namespace

int cmd_bpf(Shell &sh, const Cmd &c) {
  const std::vector<std::string> &a = c.argv;
  const std::string verb = a.size() > 1 ? a[1] : "";
  std::string obj, item;
  ShellOs &os = sh.os();
  if (verb == "load") {
    if (a.size() < 3 || a.size() > 4 || a[2].empty()) return usage(sh, c, "load FILE [NAME]");
    std::string name;
    if (a.size() == 4) {
      name = a[3];
    } else {
      size_t base = a[2].rfind('/');
      name = a[2].substr(base == std::string::npos ? 0 : base + 1);
      name = name.substr(0, name.find('.'));
    }
    if (!valid_name(name)) {
      sh.error(c, "bad object name " + name, EINVAL);
      return 1;
    }
    std::string log;
    int r = os.bpf_load(a[2], name, &log);
    if (r < 0) {
      if (!log.empty()) sh.write_fd(2, log.back() == '\n' ? log : log + "\n");
      sh.error(c, "load " + a[2], -r);
      return 1;
    }
    return 0;
  }
  if (verb == "attach" || verb == "detach") {
    if (a.size() < 3 || a.size() > 4 || !split_ref(a[2], &obj, &item))
      return usage(sh, c, verb + " NAME/MAP CGROUP | NAME/PROG");
    std::string cg = a.size() == 4 ? sh.resolve(a[3]) : "";
    if (a.size() == 4 && a[3].empty()) {
      sh.error(c, verb + " " + a[2] + ": empty cgroup", ENOENT);
      return 1;
    }
    int r = verb == "attach" ? os.bpf_attach(obj, item, cg) : os.bpf_detach(obj, item, cg);
    if (r < 0) {
      sh.error(c, verb + " " + a[2], -r);
      return 1;
    }
    return 0;
  }
  if (verb == "run") {
    if (a.size() < 3 || !split_ref(a[2], &obj, &item)) return usage(sh, c, "run NAME/PROG [ARGS...]");
    std::vector<uint64_t> args;
    for (size_t i = 3; i < a.size(); i++) {
      const std::string &s = a[i];
      char *end = nullptr;
      errno = 0;
      uint64_t v = !s.empty() && s[0] == '-' ? static_cast<uint64_t>(std::strtoll(s.c_str(), &end, 0))
                                             : std::strtoull(s.c_str(), &end, 0);
      if (s.empty() || *end || errno == ERANGE || s[0] == ' ' || s[0] == '+') {
        sh.error(c, "run: bad argument " + s, EINVAL);
        return 1;
      }
      args.push_back(v);
    }
    uint64_t retval = 0;
    int r = os.bpf_run(obj, item, args, &retval);
    if (r < 0) {
      sh.error(c, "run " + a[2], -r);
      return 1;
    }
    return sh.out(c, "retval " + std::to_string(retval) + "\n");
  }
  if (verb == "map" || verb == "ringbuf") {
    if (a.size() != 3 || !split_ref(a[2], &obj, &item)) return usage(sh, c, verb + " NAME/MAP");
    std::string text;
    int r;
    if (verb == "map") {
      BpfMapDump d;
      r = os.bpf_map_dump(obj, item, &d);
      if (r >= 0) text = format_map(d);
    } else {
      std::vector<std::string> records;
      r = os.bpf_ringbuf(obj, item, &records);
      char b[4];
      for (const std::string &rec : records) {
        std::string line;
        for (size_t i = 0; i < rec.size(); i++) {
          std::snprintf(b, sizeof(b), "%02x", static_cast<unsigned char>(rec[i]));
          line += (i ? " " : "") + std::string(b);
        }
        text += line + "\n";
      }
    }
    if (r < 0) {
      sh.error(c, verb + " " + a[2], -r);
      return 1;
    }
    return sh.out(c, text);
  }
  if (verb == "unload") {
    if (a.size() != 3 || !valid_name(a[2])) return usage(sh, c, "unload NAME");
    int r = os.bpf_unload(a[2]);
    if (r < 0) {
      sh.error(c, "unload " + a[2], -r);
      return 1;
    }
    return 0;
  }
  return usage(sh, c, "load|attach|detach|run|map|ringbuf|unload ...");
}

}  // namespace umemcg::sh
