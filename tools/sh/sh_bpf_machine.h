// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_bpf_machine.h: ShBpf, the shell's bpf commands on an emulated machine: what
// bpftool does through bpf(2), done on the eBPF machine and memcg's BPF surface.
//
// Objects are loaded by name (`bpf load FILE [NAME]`), as root loads them (a privileged loader:
// pointers may be compared and stored, BpfLinkOptions::allow_ptr_leaks); every program is
// verified at load, and a
// rejection refuses the whole load with the first rejected program's verifier log, as
// `bpftool prog loadall` fails. Attachments are links the object owns: a bpf_memcg_ops
// struct_ops map to a cgroup (BpfMemcgOpsLink), a tracing program to its hook point
// (BpfTracingLink). `bpf unload` destroys the links (waiting for running programs), then the
// object.
//
// Mirrors: tools/bpf/bpftool (prog loadall, struct_ops register with a cgroup, link create,
//   prog run, map dump, the ring buffer consumer of libbpf) over kernel/bpf/syscall.c's
//   commands (Linux 6.19)
// Emulation: objects and links are named by the shell's NAME/ITEM words, not by fds or pinned
//   paths; an iterator program is not attached (the shell has no file to read it through):
//   `bpf attach` of one fails with EOPNOTSUPP.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tools/sh/sh_os.h"

namespace umemcg {
struct mem_cgroup;
class BpfMemcgOpsLink;
namespace emu {
class BpfLoadedObject;
class BpfTracingLink;
}  // namespace emu
}  // namespace umemcg

namespace umemcg::sh {

class ShBpf {
 public:
  // Resolves a cgroup path to its memcg: 0 and *memcg, or -errno (ENOENT, ENOTDIR, ...).
  using CgroupResolver = std::function<int(const std::string &path, mem_cgroup **memcg)>;

  explicit ShBpf(CgroupResolver resolve);
  ~ShBpf();  // unloads everything (task context on the machine)
  ShBpf(const ShBpf &) = delete;
  ShBpf &operator=(const ShBpf &) = delete;

  // The ShellOs bpf operations (sh_os.h), called from the shell's task.
  int load(const std::string &file, const std::string &name, std::string *log);
  int attach(const std::string &obj, const std::string &item, const std::string &cgroup_path);
  int detach(const std::string &obj, const std::string &item, const std::string &cgroup_path);
  int run(const std::string &obj, const std::string &prog, const std::vector<uint64_t> &args,
          uint64_t *retval);
  int map_dump(const std::string &obj, const std::string &map, BpfMapDump *out);
  int ringbuf(const std::string &obj, const std::string &map, std::vector<std::string> *records);
  int unload(const std::string &name);
  // Unloads every object (at shell exit, before the machine stops).
  void unload_all();

 private:
  struct Loaded;
  Loaded *find(const std::string &name);

  CgroupResolver resolve_;
  std::map<std::string, std::unique_ptr<Loaded>> objects_;
};

}  // namespace umemcg::sh
