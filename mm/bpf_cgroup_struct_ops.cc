// SPDX-License-Identifier: GPL-2.0-only
// mm/bpf_cgroup_struct_ops.cc: the cgroup struct_ops layer (see bpf_cgroup_struct_ops.h).
//
// Mirrors: kernel/bpf/bpf_struct_ops.c and kernel/bpf/cgroup.c of the posted series (Linux
//          6.19 base)
// Emulation: see bpf_cgroup_struct_ops.h. No CFI stub runs during a detach or update: the
//   detacher waits for a grace period instead, so a dispatcher sees the old map, the new one
//   or nothing.
#include "mm/bpf_cgroup_struct_ops.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "bpfvm/kernel_env.h"
#include "bpfvm/runtime.h"
#include "kernel/cgroup.h"
#include "mm/bpf_memcontrol.h"
#include "mm/memcontrol.h"
#include "shim/compiler.h"
#include "shim/errno.h"

namespace umemcg {

namespace {

bool all_zero(const std::vector<u8> &data, u32 off, u32 size) {
  if ((u64)off + size > data.size()) return true;  // beyond the image: nothing set
  return std::all_of(data.begin() + off, data.begin() + off + size, [](u8 b) { return !b; });
}

absl::Status errno_status(int err, const std::string &what) {
  return absl::FailedPreconditionError(absl::StrFormat("%s: %s (%d)", what, strerror(-err), err));
}

// The map update checks (bpf_struct_ops_map_update_elem): the map's members against the
// kernel type's, each program runnable. Builds the attachable kdata.
absl::StatusOr<std::unique_ptr<bpf_cgroup_struct_ops>> build_ops(emu::BpfLoadedObject &obj,
                                                                  const std::string &map_name,
                                                                  const std::string &type_name) {
  const emu::MapSpec *spec = nullptr;
  for (const emu::MapSpec &m : obj.object().maps)
    if (m.name == map_name) spec = &m;
  if (!spec) return absl::NotFoundError("no map '" + map_name + "' in the object");
  if (!spec->st_ops || spec->st_ops->type_name != type_name)
    return absl::InvalidArgumentError("map '" + map_name + "' is not a " + type_name +
                                      " struct_ops map");
  if (spec->origin != emu::MapOrigin::kStructOpsLink)
    return absl::UnimplementedError("map '" + map_name +
                                    "': a cgroup struct_ops attaches through a link "
                                    "(SEC(\".struct_ops.link\")); -EOPNOTSUPP");
  const emu::bpf_struct_ops_type *kern = emu::bpf_kernel_env().find_struct_ops(type_name);
  if (!kern) return absl::InternalError(type_name + " is not registered");

  auto ops = std::make_unique<bpf_cgroup_struct_ops>();
  ops->map_name = map_name;
  ops->progs.resize(kern->members.size());
  ops->item.data = ops.get();
  for (const emu::StructOpsMember &m : spec->st_ops->members) {
    auto kit = std::find_if(kern->members.begin(), kern->members.end(),
                            [&](const emu::bpf_struct_ops_member &k) { return k.name == m.name; });
    if (kit == kern->members.end()) {
      // libbpf: a member the kernel's type lacks must be unused (no program, all zero).
      if (m.prog_idx >= 0 || !all_zero(spec->initial_data, m.offset, m.size))
        return absl::UnimplementedError(absl::StrFormat(
            "struct_ops init_kern %s: Cannot find member %s in kernel BTF", map_name, m.name));
      continue;
    }
    if (m.prog_idx < 0) continue;  // a NULL member: the dispatcher skips it
    const std::string &pname = obj.object().progs[m.prog_idx].name;
    emu::BpfLoadedProg *prog = obj.find_program(pname);
    if (!prog) return absl::InternalError("program '" + pname + "' not linked");
    if (!prog->runnable())
      return absl::PermissionDeniedError(
          absl::StrFormat("map '%s' member %s: %s", map_name, m.name, prog->refusal()));
    bpf_cgroup_struct_ops::member_prog &mp = ops->progs[kit - kern->members.begin()];
    mp.prog = prog;
    mp.fast = prog->fast() && !prog->sleepable();
  }
  return ops;
}

}  // namespace

bool bpf_cgroup_struct_ops_atype(const std::string &type_name, cgroup_bpf_attach_type *atype) {
  // Emulation: the kernel keeps cgroup_atype in each type's struct bpf_struct_ops; bpfvm/ does
  // not see kernel/'s enum, so the cgroup layer keeps the table.
  static constexpr struct {
    const char *name;
    cgroup_bpf_attach_type atype;
  } kTypes[] = {{"bpf_tcp_ops", CGROUP_TCP_SOCK_OPS}, {"bpf_memcg_ops", CGROUP_MEMCG_OPS}};
  for (const auto &t : kTypes)
    if (type_name == t.name) {
      *atype = t.atype;
      return true;
    }
  return false;
}

u64 bpf_cgroup_struct_ops_run_checked(const bpf_cgroup_struct_ops::member_prog &m, u64 *args,
                                      size_t nr_args) {
  const emu::BpfProgRunResult r = m.prog->run(args, nr_args * sizeof(u64), true);
  return r.ok ? r.r0 : 0;
}

absl::StatusOr<std::unique_ptr<BpfCgroupStructOpsLink>> BpfCgroupStructOpsLink::attach(
    emu::BpfLoadedObject &obj, const std::string &map_name, const std::string &type_name,
    mem_cgroup *memcg, u32 flags) {
  bpf_memcontrol_init();
  cgroup_bpf_attach_type atype;
  if (!bpf_cgroup_struct_ops_atype(type_name, &atype))
    return absl::InvalidArgumentError(type_name + " is not a cgroup struct_ops type");
  auto ops = build_ops(obj, map_name, type_name);
  if (!ops.ok()) return ops.status();
  if (!memcg || !cgroup_on_dfl(memcg->css.cgroup))
    return absl::InvalidArgumentError("cgroup-bpf attaches only to cgroup v2 cgroups");
  std::unique_ptr<BpfCgroupStructOpsLink> link(new BpfCgroupStructOpsLink);
  link->ops_ = std::move(*ops);
  link->type_name_ = type_name;
  link->atype_ = atype;
  int err = cgroup_bpf_attach(memcg->css.cgroup, atype, &link->ops_->item, flags);
  if (err) {
    link->detached_ = true;
    return errno_status(err, "attach '" + map_name + "'");
  }
  return link;
}

absl::Status BpfCgroupStructOpsLink::update(emu::BpfLoadedObject &obj,
                                            const std::string &map_name) {
  if (detached_) return errno_status(-ENOLINK, "update '" + map_name + "'");
  auto ops = build_ops(obj, map_name, type_name_);
  if (!ops.ok()) {
    // A map of another struct_ops type: the kernel's -EINVAL (st_map->st_ops_desc differs).
    if (ops.status().code() == absl::StatusCode::kInvalidArgument)
      return absl::InvalidArgumentError(std::string(ops.status().message()) + " (-EINVAL)");
    return ops.status();
  }
  const int err = cgroup_bpf_replace(atype_, &ops_->item, &(*ops)->item);
  if (err) return errno_status(err, "update '" + map_name + "'");
  // cgroup_bpf_replace returned after a grace period: no dispatcher still sees the old map.
  ops_ = std::move(*ops);
  return absl::OkStatus();
}

void BpfCgroupStructOpsLink::detach() {
  if (detached_) return;
  detached_ = true;
  cgroup_bpf_detach(atype_, &ops_->item);  // returns after a grace period
}

BpfCgroupStructOpsLink::~BpfCgroupStructOpsLink() { detach(); }

bool BpfCgroupStructOpsLink::attached() const {
  return !detached_ && cgroup_bpf_item_cgroup(&ops_->item) != nullptr;
}

absl::StatusOr<std::vector<std::string>> BpfCgroupStructOpsLink::query(
    mem_cgroup *memcg, cgroup_bpf_attach_type atype, u32 query_flags, u32 *attach_flags) {
  if (!memcg || !cgroup_on_dfl(memcg->css.cgroup))
    return absl::InvalidArgumentError("cgroup-bpf queries only cgroup v2 cgroups");
  std::vector<const bpf_cgroup_item *> items;
  u32 count = 0;
  const int err = cgroup_bpf_query(memcg->css.cgroup, atype, query_flags, attach_flags, &items,
                                   BPF_CGROUP_MAX_PROGS, &count);
  if (err) return errno_status(err, "query");
  std::vector<std::string> names;
  for (const bpf_cgroup_item *it : items)
    names.push_back(static_cast<const bpf_cgroup_struct_ops *>(it->data)->map_name);
  return names;
}

}  // namespace umemcg
