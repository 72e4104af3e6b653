// SPDX-License-Identifier: GPL-2.0-only
// tools/sh/sh_bpf_machine.cc: the shell's bpf commands on the emulated machine (see
// sh_bpf_machine.h).
#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include "tools/sh/sh_bpf_machine.h"

#include <cerrno>
#include <cstring>

#include "bpfvm/attach_tracing.h"
#include "bpfvm/kernel_env.h"
#include "bpfvm/map.h"
#include "bpfvm/ringbuf.h"
#include "bpfvm/runtime.h"
#include "mm/bpf_memcg_ops.h"
#include "mm/bpf_memcontrol.h"

namespace umemcg::sh {

using emu::BpfLoadedObject;
using emu::BpfLoadedProg;
using emu::BpfTracingLink;

struct ShBpf::Loaded {
  std::unique_ptr<BpfLoadedObject> obj;
  // Links, destroyed before the object: struct_ops maps by (map, cgroup path), programs by name.
  std::map<std::pair<std::string, std::string>, std::unique_ptr<BpfMemcgOpsLink>> ops_links;
  std::map<std::string, std::unique_ptr<BpfTracingLink>> prog_links;
};

ShBpf::ShBpf(CgroupResolver resolve) : resolve_(std::move(resolve)) { bpf_memcontrol_init(); }

ShBpf::~ShBpf() { unload_all(); }

ShBpf::Loaded *ShBpf::find(const std::string &name) {
  auto it = objects_.find(name);
  return it == objects_.end() ? nullptr : it->second.get();
}

int ShBpf::load(const std::string &file, const std::string &name, std::string *log) {
  if (find(name)) {
    *log = "an object named '" + name + "' is loaded already";
    return -EEXIST;
  }
  emu::BpfLinkOptions lopts;  // verify every program, log level 1
  // The shell is root: a privileged loader (CAP_BPF and CAP_PERFMON), as bpftool run by root.
  lopts.allow_ptr_leaks = true;
  auto lo = BpfLoadedObject::open(file, emu::bpf_kernel_load_options(), lopts);
  if (!lo.ok()) {
    *log = std::string(lo.status().message());
    int err = bpf_status_errno(lo.status());
    return err ? err : -EINVAL;
  }
  // bpftool prog loadall fails as a whole when the kernel rejects one program.
  for (BpfLoadedProg &p : (*lo)->programs()) {
    const emu::BpfVerdict &v = p.verdict();
    if (v.available && !v.accepted) {
      *log = "program '" + p.name() + "': " + v.error + "\n" + v.log;
      return v.err ? v.err : -EACCES;
    }
  }
  auto l = std::make_unique<Loaded>();
  l->obj = std::move(*lo);
  objects_.emplace(name, std::move(l));
  return 0;
}

int ShBpf::attach(const std::string &obj, const std::string &item,
                  const std::string &cgroup_path) {
  Loaded *l = find(obj);
  if (!l) return -ENOENT;
  if (bpf_map *map = l->obj->find_map(item)) {
    if (map->map_type != BPF_MAP_TYPE_STRUCT_OPS) return -EINVAL;
    if (cgroup_path.empty()) return -EINVAL;  // a struct_ops map attaches to a cgroup
    auto key = std::make_pair(item, cgroup_path);
    if (l->ops_links.count(key)) return -EEXIST;
    mem_cgroup *memcg = nullptr;
    if (int err = resolve_(cgroup_path, &memcg)) return err;
    auto link = BpfMemcgOpsLink::attach(*l->obj, item, memcg, 0);
    if (!link.ok()) {
      int err = bpf_status_errno(link.status());
      return err ? err : -EINVAL;
    }
    l->ops_links.emplace(key, std::move(*link));
    return 0;
  }
  BpfLoadedProg *p = l->obj->find_program(item);
  if (!p) return -ENOENT;
  if (!cgroup_path.empty()) return -EINVAL;  // programs link to their hook, not a cgroup
  if (p->prog_type() == BPF_PROG_TYPE_TRACING &&
      p->spec().expected_attach_type == BPF_TRACE_ITER)
    return -EOPNOTSUPP;  // see the banner
  if (l->prog_links.count(item)) return -EEXIST;
  auto link = BpfTracingLink::attach(*p);
  if (!link.ok()) {
    int err = bpf_status_errno(link.status());
    return err ? err : -EINVAL;
  }
  l->prog_links.emplace(item, std::move(*link));
  return 0;
}

int ShBpf::detach(const std::string &obj, const std::string &item,
                  const std::string &cgroup_path) {
  Loaded *l = find(obj);
  if (!l) return -ENOENT;
  if (l->obj->find_map(item)) {
    auto it = l->ops_links.find(std::make_pair(item, cgroup_path));
    if (it == l->ops_links.end()) return -ENOENT;
    it->second->detach();
    l->ops_links.erase(it);
    return 0;
  }
  if (!l->obj->find_program(item)) return -ENOENT;
  auto it = l->prog_links.find(item);
  if (it == l->prog_links.end()) return -ENOENT;
  l->prog_links.erase(it);  // the link's destructor detaches and waits for a grace period
  return 0;
}

int ShBpf::run(const std::string &obj, const std::string &prog,
               const std::vector<uint64_t> &args, uint64_t *retval) {
  Loaded *l = find(obj);
  if (!l) return -ENOENT;
  BpfLoadedProg *p = l->obj->find_program(prog);
  if (!p) return -ENOENT;
  emu::BpfTestRunOpts opts;
  opts.ctx_in.resize(args.size() * sizeof(uint64_t));
  if (!args.empty()) std::memcpy(opts.ctx_in.data(), args.data(), opts.ctx_in.size());
  emu::BpfTestRunResult r = emu::bpf_prog_test_run(*p, opts);
  if (r.err) return r.err;
  *retval = r.retval;
  return 0;
}

int ShBpf::map_dump(const std::string &obj, const std::string &map_name, BpfMapDump *out) {
  Loaded *l = find(obj);
  if (!l) return -ENOENT;
  bpf_map *map = l->obj->find_map(map_name);
  if (!map) return -ENOENT;
  if (map->map_type == BPF_MAP_TYPE_STRUCT_OPS || map->map_type == BPF_MAP_TYPE_RINGBUF)
    return -EOPNOTSUPP;  // bpftool dumps neither with `map dump`
  out->percpu = map->is_percpu();
  out->key_size = map->key_size;
  out->value_size = map->value_size;
  out->entries.clear();
  const u32 sys_size = map->sys_value_size();
  const u32 stride = map->is_percpu() ? (map->value_size + 7) / 8 * 8 : map->value_size;
  std::string key(map->key_size, '\0'), next(map->key_size, '\0'), value(sys_size, '\0');
  const void *prev = nullptr;
  // Bounded: a map never has more than max_entries keys.
  for (u32 n = 0; n <= map->max_entries; n++) {
    int err = sys_map_get_next_key(map, prev, next.data());
    if (err == -ENOENT) return 0;
    if (err) return err;
    key = next;
    prev = key.data();
    err = sys_map_lookup_elem(map, key.data(), value.data());
    if (err == -ENOENT) continue;  // deleted meanwhile
    if (err) return err;
    BpfMapEntry e;
    e.key = key;
    for (u32 off = 0; off + map->value_size <= sys_size; off += stride) {
      e.values.emplace_back(value.data() + off, map->value_size);
      if (!map->is_percpu()) break;
    }
    out->entries.push_back(std::move(e));
  }
  return 0;
}

int ShBpf::ringbuf(const std::string &obj, const std::string &map_name,
                   std::vector<std::string> *records) {
  Loaded *l = find(obj);
  if (!l) return -ENOENT;
  bpf_map *map = l->obj->find_map(map_name);
  if (!map) return -ENOENT;
  emu::RingBuffer rb;
  int err = rb.add(map, [records](const void *data, u32 size) {
    records->emplace_back(static_cast<const char *>(data), size);
    return 0;
  });
  if (err) return err;
  err = rb.consume();
  return err < 0 ? err : 0;
}

int ShBpf::unload(const std::string &name) {
  auto it = objects_.find(name);
  if (it == objects_.end()) return -ENOENT;
  Loaded &l = *it->second;
  for (auto &[key, link] : l.ops_links) link->detach();
  l.ops_links.clear();
  l.prog_links.clear();
  objects_.erase(it);
  return 0;
}

void ShBpf::unload_all() {
  while (!objects_.empty()) unload(objects_.begin()->first);
}

}  // namespace umemcg::sh
