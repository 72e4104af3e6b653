// SPDX-License-Identifier: GPL-2.0-only
// bpfvm/verifier_mem.cc: loads, stores and atomics: alignment, map values, sized memory,
// context fields, kernel-object fields, and what a load yields.
//
// Mirrors: kernel/bpf/verifier.c (check_mem_access, check_ptr_alignment, check_map_access,
//          check_mem_region_access, check_ctx_access, check_ptr_to_btf_access, check_atomic,
//          check_helper_mem_access, bpf_map_direct_read, save_aux_ptr_type,
//          check_ptr_to_map_access, __check_ptr_off_reg) (Linux 6.19)
// Emulation: kernel-object fields are read through the field lists a subsystem registered
//   (bpf_btf_struct), not through vmlinux BTF; writes through PTR_TO_BTF_ID are rejected.
//   Storing a pointer into a map, memory or the context is rejected unless
//   opts.allow_ptr_leaks (verifier.h).
#include <algorithm>
#include <cstring>

#include "bpfvm/prog_type.h"
#include "bpfvm/verifier_mem_internal.h"
#include "bpfvm/verifier_state.h"
#include "shim/errno.h"

namespace umemcg {

int check_ptr_alignment(bpf_verifier_env &env, const bpf_reg_state &reg, s32 off, int size,
                        bool strict_once) {
  const bool strict = env.opts.strict_alignment || strict_once;
  const char *desc = "";
  switch (base_type(reg.type)) {
    case PTR_TO_STACK: desc = "stack "; break;  // the stack is always strictly aligned
    case PTR_TO_CTX: desc = "context "; break;
    case PTR_TO_MAP_VALUE: desc = "value "; break;
    case PTR_TO_MAP_KEY: desc = "key "; break;
    default: break;
  }
  if (!strict && base_type(reg.type) != PTR_TO_STACK) return 0;
  if (size == 1) return 0;
  const tnum t = tnum_add(reg.var_off, tnum_const((u64)(s64)(reg.off + off)));
  if (!tnum_is_aligned(t, size)) {
    env.verbose_err("misaligned %saccess off %s+%d+%d size %d", desc, tnum_str(reg.var_off).c_str(),
                    reg.off, off, size);
    return -EACCES;
  }
  return 0;
}

namespace {

// [off + smin, off + umax + size) within [0, mem_size) (check_mem_region_access).
int check_mem_region_access(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg, s32 off,
                            int size, u32 mem_size, bool zero_size_allowed, const char *what) {
  auto access_ok = [&](s64 o) {
    return o >= 0 && (size > 0 || zero_size_allowed) && o + size <= (s64)mem_size;
  };
  auto report = [&](s64 o) {
    if (!std::strcmp(what, "map value"))
      env.verbose_err("invalid access to map value, value_size=%u off=%lld size=%d", mem_size,
                      (long long)o, size);
    else if (!std::strcmp(what, "map key"))
      env.verbose_err("invalid access to map key, key_size=%u off=%lld size=%d", mem_size,
                      (long long)o, size);
    else
      env.verbose_err("invalid access to memory, mem_size=%u off=%lld size=%d", mem_size,
                      (long long)o, size);
  };
  const s64 fixed = (s64)reg.off + off;
  if (reg.smin_value < 0 && (reg.smin_value <= -BPF_MAX_VAR_OFF || reg.smin_value + fixed < 0)) {
    env.verbose_err("R%u min value is negative, either use unsigned index or do a if (index >=0) check.",
                    regno);
    return -EACCES;
  }
  if (!access_ok(reg.smin_value + fixed)) {
    report(reg.smin_value + fixed);
    env.verbose_err("R%u min value is outside of the allowed memory range", regno);
    return -EACCES;
  }
  if (reg.umax_value >= (u64)BPF_MAX_VAR_OFF) {
    env.verbose_err("R%u unbounded memory access, make sure to bounds check any such access",
                    regno);
    return -EACCES;
  }
  if (!access_ok((s64)reg.umax_value + fixed)) {
    report((s64)reg.umax_value + fixed);
    env.verbose_err("R%u max value is outside of the allowed memory range", regno);
    return -EACCES;
  }
  return 0;
}

int check_map_access(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg, s32 off,
                     int size, bool zero_size_allowed, bpf_access_type t) {
  const bpf_verifier_map *map = reg.map_ptr;
  if (int err = check_mem_region_access(env, regno, reg, off, size, map->value_size,
                                        zero_size_allowed, "map value"))
    return err;
  if (map->spin_lock_off >= 0) {
    const s64 lo = reg.smin_value + reg.off + off;
    const s64 hi = (s64)reg.umax_value + reg.off + off + size;
    if (lo < map->spin_lock_off + 4 && hi > map->spin_lock_off) {
      env.verbose_err("bpf_spin_lock cannot be accessed directly by load/store");
      return -EACCES;
    }
  }
  if (map->wq_off >= 0) {
    const s64 lo = reg.smin_value + reg.off + off;
    const s64 hi = (s64)reg.umax_value + reg.off + off + size;
    if (lo < map->wq_off + 16 && hi > map->wq_off) {  // sizeof(struct bpf_wq)
      env.verbose_err("bpf_wq cannot be accessed directly by load/store");
      return -EACCES;
    }
  }
  if (map->timer_off >= 0) {
    const s64 lo = reg.smin_value + reg.off + off;
    const s64 hi = (s64)reg.umax_value + reg.off + off + size;
    if (lo < map->timer_off + 16 && hi > map->timer_off) {  // sizeof(struct bpf_timer)
      env.verbose_err("bpf_timer cannot be accessed directly by load/store");
      return -EACCES;
    }
  }
  (void)t;
  return 0;
}

// The program's access rights to a map's values (BPF_F_RDONLY_PROG, frozen; BPF_F_WRONLY_PROG);
// off is the access offset including the pointer's fixed offset.
int check_map_access_type(bpf_verifier_env &env, const bpf_verifier_map &map, s64 off, int size,
                          bpf_access_type t) {
  if (t == BPF_WRITE && map.rdonly_prog) {
    env.verbose_err("write into map forbidden, value_size=%u off=%lld size=%d", map.value_size,
                    (long long)off, size);
    return -EACCES;
  }
  if (t == BPF_READ && !map.rdonly_prog && (map.map_flags & BPF_F_WRONLY_PROG)) {
    env.verbose_err("read from map forbidden, value_size=%u off=%lld size=%d", map.value_size,
                    (long long)off, size);
    return -EACCES;
  }
  return 0;
}

// A loaded pointer or scalar field (ctx or kernel object).
void load_field(bpf_verifier_env &env, const bpf_ctx_field &fld, u32 off, int size,
                bool parent_untrusted, bpf_reg_state *out) {
  if (base_type(fld.reg_type) == SCALAR_VALUE || (u32)size != fld.size || off != fld.off) {
    __mark_reg_unknown(*out);
    coerce_reg_to_size(*out, size);
    return;
  }
  mark_reg_ptr(*out, fld.reg_type);
  if (base_type(fld.reg_type) == PTR_TO_BTF_ID) {
    out->btf_name = fld.btf_name.c_str();
    if (parent_untrusted) out->type = (out->type & ~(PTR_TRUSTED | MEM_RCU)) | PTR_UNTRUSTED;
  }
  if (base_type(fld.reg_type) == PTR_TO_MEM) out->mem_size = fld.mem_size;
  if (type_may_be_null(out->type)) out->id = env.new_id();
}

bool size_allowed(u8 mask, int size) {
  const int bit = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
  return mask & (1u << bit);
}

int check_ctx_access(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg, s32 off,
                     int size, bpf_access_type t, bpf_reg_state *out) {
  // __check_ptr_off_reg(): a negative fixed offset first, then any.
  if (reg.off < 0) {
    env.verbose_err("negative offset ctx ptr R%u off=%d disallowed", regno, reg.off);
    return -EACCES;
  }
  if (reg.off) {
    env.verbose_err("dereference of modified ctx ptr R%u off=%d disallowed", regno, reg.off);
    return -EACCES;
  }
  if (!tnum_is_const(reg.var_off) || reg.var_off.value) {
    env.verbose_err("variable ctx access var_off=%s disallowed", tnum_str(reg.var_off).c_str());
    return -EACCES;
  }
  const bpf_prog_type_desc &pt = env.ptype;
  if (pt.ctx_kind == bpf_ctx_kind::bytes) {
    // syscall_prog_is_valid_access(): in bounds and aligned to the access size.
    if (off < 0 || (u64)off + size > pt.ctx_size || off % size) {
      env.verbose_err("invalid bpf_context access off=%d size=%d", off, size);
      return -EACCES;
    }
    env.res.max_ctx_offset = std::max(env.res.max_ctx_offset, (u32)(off + size));
    if (out) {
      __mark_reg_unknown(*out);
      coerce_reg_to_size(*out, size);
    }
    return 0;
  }
  const bpf_ctx_field *fld = off < 0 ? nullptr : pt.find_field((u32)off, (u32)size);
  bool ok = fld && !fld->embedded;
  if (ok && t == BPF_READ) {
    ok = size_allowed(fld->read_sizes, size);
    if (base_type(fld->reg_type) != SCALAR_VALUE) ok = ok && (u32)off == fld->off && (u32)size == fld->size;
  }
  if (ok && t == BPF_WRITE) ok = fld->writable && (u32)off == fld->off && (u32)size == fld->size;
  if (!ok) {
    env.verbose_err("invalid bpf_context access off=%d size=%d", off, size);
    return -EACCES;
  }
  if (out) load_field(env, *fld, (u32)off, size, false, out);
  return 0;
}

int check_ptr_to_btf_access(bpf_verifier_env &env, u32 regno, const bpf_reg_state &reg, s32 off,
                            int size, bpf_access_type t, bpf_reg_state *out) {
  const char *name = reg.btf_name ? reg.btf_name : "?";
  if (t == BPF_WRITE) {
    env.verbose_err("only read is supported");
    return -EACCES;
  }
  if (!tnum_is_const(reg.var_off) || reg.var_off.value) {
    env.verbose_err("R%u is ptr_%s invalid variable offset: off=%d, var_off=%s", regno, name,
                    reg.off, tnum_str(reg.var_off).c_str());
    return -EACCES;
  }
  const s64 o = (s64)reg.off + off;
  if (o < 0) {
    env.verbose_err("R%u is ptr_%s invalid negative access: off=%lld", regno, name, (long long)o);
    return -EACCES;
  }
  const bpf_btf_struct *st = env.opts.types ? env.opts.types->find_struct(name) : nullptr;
  if (!st || (u64)o + size > st->size) {
    env.verbose_err("access beyond struct %s at off %lld size %d", name, (long long)o, size);
    return -EACCES;
  }
  // Walk embedded structs down to the field.
  const bpf_btf_struct *cur = st;
  u32 rel = (u32)o;
  for (int depth = 0; depth < 8; depth++) {
    const bpf_ctx_field *fld = bpf_find_field(cur->fields, rel, (u32)size);
    if (fld && fld->embedded) {
      const bpf_btf_struct *inner = env.opts.types->find_struct(fld->btf_name);
      if (!inner) break;
      rel -= fld->off;
      cur = inner;
      continue;
    }
    if (!fld || !size_allowed(fld->read_sizes, size) ||
        (base_type(fld->reg_type) != SCALAR_VALUE && (rel != fld->off || (u32)size != fld->size)))
      break;
    if (out) load_field(env, *fld, rel, size, reg.type & PTR_UNTRUSTED, out);
    return 0;
  }
  env.verbose_err("struct %s has no readable field at off %lld size %d", name, (long long)o, size);
  return -EACCES;
}

bool map_direct_read(const bpf_verifier_map &map, const bpf_reg_state &reg, s32 off, int size,
                     u64 *val) {
  if (!map.rdonly_prog || !map.frozen_value || !tnum_is_const(reg.var_off)) return false;
  const s64 o = (s64)reg.var_off.value + reg.off + off;
  if (o < 0 || o + size > (s64)map.value_size) return false;
  u64 v = 0;
  std::memcpy(&v, map.frozen_value + o, (size_t)size);  // little-endian host
  *val = v;
  return true;
}

}  // namespace

namespace {

// The kernel structs a map pointer points to (each map type's ops->map_btf_id), with the host
// kernel's layout (Linux 6.18, x86-64): struct bpf_map, embedded first in each map type's own.
// Emulation: the fields inside struct bpf_map's freeze_mutex, rcu/work union, owner_lock and
//   owner, and the map-type structs' allocator and bucket internals, are not listed: a read
//   there is "doesn't have field". Pointers to something other than a struct (void *, char *,
//   the per-CPU element count) yield untrusted read-only handles of "void".
const std::vector<bpf_btf_struct> &kernel_map_structs() {
  using F = bpf_ctx_field;
  auto mem = [](std::string name, u32 off) {
    F f = F::ptr(std::move(name), off, "void", PTR_UNTRUSTED | MEM_RDONLY);
    return f;
  };
  static const std::vector<bpf_btf_struct> structs = {
      {"bpf_map",
       296,
       {F::scalar("sha", 0, 32), F::scalar("excl", 32, 4), F::ptr("ops", 40, "bpf_map_ops", 0),
        F::ptr("inner_map_meta", 48, "bpf_map", 0), mem("security", 56),
        F::scalar("map_type", 64, 4), F::scalar("key_size", 68, 4),
        F::scalar("value_size", 72, 4), F::scalar("max_entries", 76, 4),
        F::scalar("map_extra", 80, 8), F::scalar("map_flags", 88, 4), F::scalar("id", 92, 4),
        F::ptr("record", 96, "btf_record", 0), F::scalar("numa_node", 104, 4),
        F::scalar("btf_key_type_id", 108, 4), F::scalar("btf_value_type_id", 112, 4),
        F::scalar("btf_vmlinux_value_type_id", 116, 4), F::ptr("btf", 120, "btf", 0),
        F::ptr("objcg", 128, "obj_cgroup", 0), F::scalar("name", 136, 16),
        F::scalar("refcnt", 184, 8), F::scalar("usercnt", 192, 8),
        F::scalar("writecnt", 232, 8), F::scalar("bypass_spec_v1", 256, 1),
        F::scalar("frozen", 257, 1), F::scalar("init_private", 258, 1),
        F::scalar("free_after_mult_rcu_gp", 259, 1), F::scalar("free_after_rcu_gp", 260, 1),
        F::scalar("sleepable_refcnt", 264, 8), mem("elem_count", 272),
        F::scalar("cookie", 280, 8), mem("excl_prog_sha", 288)}},
      {"bpf_array",
       312,
       {F::embed("map", 0, 296, "bpf_map"), F::scalar("elem_size", 296, 4),
        F::scalar("index_mask", 300, 4), F::ptr("aux", 304, "bpf_array_aux", 0)}},
      {"bpf_htab",
       896,
       {F::embed("map", 0, 296, "bpf_map"), F::ptr("buckets", 456, "bucket", 0),
        F::scalar("count", 816, 4), F::scalar("use_percpu_counter", 820, 1),
        F::scalar("n_buckets", 824, 4), F::scalar("elem_size", 828, 4),
        F::scalar("hashrnd", 832, 4)}},
      {"bpf_ringbuf_map", 304, {F::embed("map", 0, 296, "bpf_map"), F::ptr("rb", 296, "bpf_ringbuf", 0)}},
      {"bpf_local_storage_map",
       480,
       {F::embed("map", 0, 296, "bpf_map"),
        F::ptr("buckets", 296, "bpf_local_storage_map_bucket", 0),
        F::scalar("bucket_log", 304, 4), F::scalar("elem_size", 308, 2),
        F::scalar("cache_idx", 310, 2), F::scalar("bpf_ma", 472, 1)}},
  };
  return structs;
}

const bpf_btf_struct *kernel_map_struct(const std::string &name) {
  for (const bpf_btf_struct &s : kernel_map_structs())
    if (s.name == name) return &s;
  return nullptr;
}

// The kernel struct a map pointer points to (the map type's ops->map_btf_id), nullptr if not
// known here.
const char *map_struct_name(u32 map_type) {
  switch (map_type) {
    case BPF_MAP_TYPE_ARRAY:
    case BPF_MAP_TYPE_PERCPU_ARRAY:
    case BPF_MAP_TYPE_PROG_ARRAY:
    case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
    case BPF_MAP_TYPE_CGROUP_ARRAY:
    case BPF_MAP_TYPE_ARRAY_OF_MAPS:
      return "bpf_array";
    case BPF_MAP_TYPE_HASH:
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_LRU_HASH:
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
    case BPF_MAP_TYPE_HASH_OF_MAPS:
      return "bpf_htab";
    case BPF_MAP_TYPE_RINGBUF:
    case BPF_MAP_TYPE_USER_RINGBUF:
      return "bpf_ringbuf_map";
    case BPF_MAP_TYPE_TASK_STORAGE:
    case BPF_MAP_TYPE_INODE_STORAGE:
    case BPF_MAP_TYPE_SK_STORAGE:
    case 32:  // BPF_MAP_TYPE_CGRP_STORAGE (after the uapi headers built against)
      return "bpf_local_storage_map";
    default:
      return nullptr;
  }
}

// btf_struct_walk() over a kernel map struct: [off, off + size) inside one field, through
// embedded structs; a scalar field (an array of scalars is one field) may be read in part, a
// pointer only whole.
int walk_map_struct(bpf_verifier_env &env, const bpf_btf_struct *st, u32 off, int size,
                    bpf_reg_state *out) {
  for (int depth = 0; depth < 4 && st; depth++) {
    if ((u64)off + size > st->size) {
      env.verbose_err("access beyond struct %s at off %u size %d", st->name.c_str(), off, size);
      return -EACCES;
    }
    const bpf_ctx_field *hit = nullptr;
    for (const bpf_ctx_field &f : st->fields) {  // in offset order
      if ((u64)off + size <= f.off || off < f.off) break;
      if (off >= f.off + f.size) continue;
      hit = &f;
      break;
    }
    if (!hit) break;
    if (hit->embedded) {
      off -= hit->off;
      st = kernel_map_struct(hit->btf_name);
      continue;
    }
    if (base_type(hit->reg_type) == PTR_TO_BTF_ID) {
      if (off != hit->off || (u32)size != hit->size) {
        env.verbose_err("cannot access ptr member %s with moff %u in struct %s with off %u size %d",
                        hit->name.c_str(), hit->off, st->name.c_str(), off, size);
        return -EACCES;
      }
    } else if ((u64)off + size > hit->off + hit->size) {
      env.verbose_err("access beyond the end of member %s (mend:%u) in struct %s with off %u size %d",
                      hit->name.c_str(), hit->off + hit->size, st->name.c_str(), off, size);
      return -EACCES;
    }
    if (out) load_field(env, *hit, off, size, false, out);
    env.res.map_field_reads = true;
    return 0;
  }
  env.verbose_err("struct %s doesn't have field at offset %u", st ? st->name.c_str() : "?", off);
  return -EINVAL;
}

// check_ptr_to_map_access(): a privileged program may read the fields of the struct a map
// pointer points to, at non-negative offsets, as a PTR_TO_BTF_ID of that struct.
int check_ptr_to_map_access(bpf_verifier_env &env, u32 regno, const bpf_verifier_map &map,
                            s32 off, int size, bpf_access_type t, bpf_reg_state *out) {
  const char *tname = map_struct_name(map.map_type);
  if (!tname) {
    env.verbose_err("map_ptr access not supported for map type %u", map.map_type);
    return -ENOTSUPP;
  }
  if (!env.opts.allow_ptr_leaks) {
    env.verbose_err("'struct %s' access is allowed only to CAP_PERFMON and CAP_SYS_ADMIN", tname);
    return -EPERM;
  }
  if (off < 0) {
    env.verbose_err("R%u is %s invalid negative access: off=%d", regno, tname, off);
    return -EACCES;
  }
  if (t != BPF_READ) {
    env.verbose_err("only read from %s is supported", tname);
    return -EACCES;
  }
  return walk_map_struct(env, kernel_map_struct(tname), (u32)off, size, out);
}

}  // namespace

int check_mem_access(bpf_verifier_env &env, u32 insn_idx, u32 regno, s32 off, int size,
                     bpf_access_type t, int value_regno, bool strict_alignment_once,
                     bool sign_ext) {
  (void)insn_idx;
  bpf_func_state &f = env.cur->cur();
  const bpf_reg_state reg = f.regs[regno];
  bpf_reg_state val;
  if (t == BPF_WRITE && value_regno >= 0) val = f.regs[value_regno];
  bpf_reg_state result;
  __mark_reg_unknown(result);

  if (reg.type == CONST_PTR_TO_MAP && reg.map_ptr) {
    if (int err = check_ptr_alignment(env, reg, off, size, strict_alignment_once)) return err;
    if (int err = check_ptr_to_map_access(env, regno, *reg.map_ptr, off + reg.off, size, t,
                                          &result))
      return err;
    if (sign_ext && result.type == SCALAR_VALUE) coerce_reg_to_size_sx(result, size);
    if (value_regno >= 0) {
      env.cur->cur().regs[value_regno] = result;
      env.scratched_regs |= 1u << value_regno;
    }
    return 0;
  }
  if (type_may_be_null(reg.type) || reg.type == SCALAR_VALUE || reg.type == NOT_INIT ||
      base_type(reg.type) == CONST_PTR_TO_MAP || base_type(reg.type) == PTR_TO_FUNC) {
    env.verbose_err("R%u invalid mem access '%s'", regno, reg_type_name(reg.type).c_str());
    return -EACCES;
  }
  if (int err = check_ptr_alignment(env, reg, off, size, strict_alignment_once)) return err;

  const bool ptr_val = t == BPF_WRITE && value_regno >= 0 && is_pointer(val);
  auto leak = [&](const char *where) {
    env.verbose_err("R%d leaks addr into %s", value_regno, where);
    return -EACCES;
  };

  switch (base_type(reg.type)) {
    case PTR_TO_STACK: {
      s64 min_off, max_off;
      if (int err = check_stack_access_within_bounds(env, regno, reg, off, size, t,
                                                     &min_off, &max_off))
        return err;
      bpf_func_state &sf = env.cur->frame[reg.frameno];
      if (t == BPF_WRITE) {
        if (value_regno < 0) {
          // BPF_ST: a constant (the immediate, sign-extended) is stored.
          __mark_reg_known(val, (u64)(s64)env.insns[env.cur->insn_idx].imm);
          val.type = SCALAR_VALUE;
        } else if (val.type == SCALAR_VALUE && tnum_is_const(reg.var_off) &&
                   min_off % BPF_REG_SIZE == 0) {
          // A scalar spill links the slot and the register (assign_scalar_id_before_mov()) when
          // the value fits the spill's size, so that a bound learned on either, or on a fill
          // of the slot, applies to all of them; a narrowing spill breaks the link.
          bpf_reg_state &src = f.regs[value_regno];
          const bool fits = size == BPF_REG_SIZE || !(src.umax_value >> 1 >> (size * 8 - 1));
          if (fits && !src.id && !tnum_is_const(src.var_off)) src.id = env.new_id();
          val.id = fits ? src.id : 0;
        }
        return check_stack_write(env, sf, regno, min_off, max_off, size, val,
                                 !tnum_is_const(reg.var_off));
      }
      if (int err = check_stack_read(env, sf, regno, reg, min_off, max_off, size, &result, sign_ext))
        return err;
      break;
    }
    case PTR_TO_MAP_VALUE: {
      if (ptr_val && !env.opts.allow_ptr_leaks) return leak("map");
      if (int err = check_map_access_type(env, *reg.map_ptr, (s64)reg.off + off, size, t))
        return err;
      if (int err = check_map_access(env, regno, reg, off, size, false, t)) return err;
      u64 v;
      if (t == BPF_READ && map_direct_read(*reg.map_ptr, reg, off, size, &v)) {
        __mark_reg_known(result, v);
        if (sign_ext) coerce_reg_to_size_sx(result, size);
      } else if (t == BPF_READ) {
        if (sign_ext) coerce_reg_to_size_sx(result, size);
        else coerce_reg_to_size(result, size);
      }
      break;
    }
    case PTR_TO_MAP_KEY:
      if (t == BPF_WRITE) {
        env.verbose_err("write to change key R%u not allowed", regno);
        return -EACCES;
      }
      if (int err = check_mem_region_access(env, regno, reg, off, size, reg.map_ptr->key_size,
                                            false, "map key"))
        return err;
      if (sign_ext) coerce_reg_to_size_sx(result, size);
      else coerce_reg_to_size(result, size);
      break;
    case PTR_TO_MEM:
      if (t == BPF_WRITE && (reg.type & MEM_RDONLY)) {
        env.verbose_err("R%u cannot write into %s", regno, reg_type_name(reg.type).c_str());
        return -EACCES;
      }
      if (ptr_val && !env.opts.allow_ptr_leaks) return leak("mem");
      if (int err = check_mem_region_access(env, regno, reg, off, size, reg.mem_size, false, "mem"))
        return err;
      if (sign_ext) coerce_reg_to_size_sx(result, size);
      else coerce_reg_to_size(result, size);
      break;
    case PTR_TO_CTX:
      if (ptr_val && !env.opts.allow_ptr_leaks) return leak("ctx");
      if (int err = check_ctx_access(env, regno, reg, off, size, t, t == BPF_READ ? &result : nullptr))
        return err;
      if (sign_ext && result.type == SCALAR_VALUE) coerce_reg_to_size_sx(result, size);
      break;
    case PTR_TO_BTF_ID:
      if (int err = check_ptr_to_btf_access(env, regno, reg, off, size, t,
                                            t == BPF_READ ? &result : nullptr))
        return err;
      if (sign_ext && result.type == SCALAR_VALUE) coerce_reg_to_size_sx(result, size);
      break;
    default:
      env.verbose_err("R%u invalid mem access '%s'", regno, reg_type_name(reg.type).c_str());
      return -EACCES;
  }
  if (t == BPF_READ && value_regno >= 0) {
    bpf_func_state &cf = env.cur->cur();
    cf.regs[value_regno] = result;
    env.scratched_regs |= 1u << value_regno;
  }
  return 0;
}

namespace {

// Pointer types whose loads and stores the kernel rewrites per instruction (context field
// conversion, socket and BTF accesses): one instruction may not reach two of them, nor one of
// them and another pointer type.
bool reg_type_mismatch_ok(u32 type) {
  switch (base_type(type)) {
    case PTR_TO_CTX:
    case PTR_TO_BTF_ID:
      return false;
    default:
      return true;
  }
}

// save_aux_ptr_type(): remembers the pointer type insn_idx accessed memory through, and refuses
// a second, incompatible one on another path. allow_trust_mismatch (loads): two BTF pointers of
// different trust are one untrusted BTF pointer.
int save_aux_ptr_type(bpf_verifier_env &env, u32 insn_idx, u32 type, bool allow_trust_mismatch) {
  u32 &prev = env.aux[insn_idx].ptr_type;
  if (prev == NOT_INIT) {
    prev = type;
    return 0;
  }
  if (type == prev || (reg_type_mismatch_ok(type) && reg_type_mismatch_ok(prev))) return 0;
  if (allow_trust_mismatch && base_type(type) == PTR_TO_BTF_ID &&
      base_type(prev) == PTR_TO_BTF_ID) {
    prev = PTR_TO_BTF_ID | PTR_UNTRUSTED;
    return 0;
  }
  env.verbose_err("same insn cannot be used with different pointers");
  return -EINVAL;
}

}  // namespace

int check_load_store(bpf_verifier_env &env, const bpf_insn &insn, const bpf_opcode_desc &d,
                     u32 insn_idx) {
  const int size = bpf_opcode_mem_bytes(d);
  if (d.form == bpf_opc::F_LDX) {
    if (int err = check_reg_arg(env, insn.src_reg, SRC_OP)) return err;
    if (int err = check_reg_arg(env, insn.dst_reg, DST_OP_NO_MARK)) return err;
    const u32 src_type = env.cur->cur().regs[insn.src_reg].type;
    if (int err = check_mem_access(env, insn_idx, insn.src_reg, insn.off, size, BPF_READ,
                                   insn.dst_reg, false, BPF_MODE(insn.code) == BPF_MEMSX))
      return err;
    return save_aux_ptr_type(env, insn_idx, src_type, true);
  }
  if (d.form == bpf_opc::F_STX) {
    if (int err = check_reg_arg(env, insn.src_reg, SRC_OP)) return err;
  }
  if (int err = check_reg_arg(env, insn.dst_reg, SRC_OP)) return err;
  const bpf_reg_state &dst = env.cur->cur().regs[insn.dst_reg];
  const u32 dst_type = dst.type;
  if (d.form == bpf_opc::F_ST && base_type(dst.type) == PTR_TO_CTX &&
      env.ptype.ctx_kind == bpf_ctx_kind::fields) {
    // Stores of an immediate into the context are refused as in the kernel (BPF_ST into ctx).
    env.verbose_err("BPF_ST stores into R%u %s is not allowed", insn.dst_reg,
                    reg_type_name(dst.type).c_str());
    return -EACCES;
  }
  if (int err = check_mem_access(env, insn_idx, insn.dst_reg, insn.off, size, BPF_WRITE,
                                 d.form == bpf_opc::F_STX ? insn.src_reg : -1, false, false))
    return err;
  return save_aux_ptr_type(env, insn_idx, dst_type, false);
}

int check_atomic(bpf_verifier_env &env, const bpf_insn &insn, const bpf_opcode_desc &d,
                 u32 insn_idx) {
  const int size = bpf_opcode_mem_bytes(d);
  if (int err = check_reg_arg(env, insn.src_reg, SRC_OP)) return err;
  if (int err = check_reg_arg(env, insn.dst_reg, SRC_OP)) return err;
  if (d.form == bpf_opc::F_ATOMIC_CMPXCHG)
    if (int err = check_reg_arg(env, BPF_REG_0, SRC_OP)) return err;
  bpf_func_state &f = env.cur->cur();
  if (is_pointer(f.regs[insn.src_reg]) && !env.opts.allow_ptr_leaks) {
    env.verbose_err("R%u leaks addr into mem", insn.src_reg);
    return -EACCES;
  }
  const u32 dt = base_type(f.regs[insn.dst_reg].type);
  if (dt == PTR_TO_CTX || dt == PTR_TO_BTF_ID || dt == PTR_TO_MAP_KEY) {
    env.verbose_err("BPF_ATOMIC stores into R%u %s is not allowed", insn.dst_reg,
                    reg_type_name(f.regs[insn.dst_reg].type).c_str());
    return -EACCES;
  }
  // Read then write the same location, strictly aligned.
  if (int err = check_mem_access(env, insn_idx, insn.dst_reg, insn.off, size, BPF_READ, -1, true,
                                 false))
    return err;
  bpf_reg_state unknown;
  __mark_reg_unknown(unknown);
  // The stored value is a scalar the verifier does not track (old value op src).
  const bpf_reg_state saved_src = f.regs[insn.src_reg];
  f.regs[insn.src_reg] = unknown;
  int err = check_mem_access(env, insn_idx, insn.dst_reg, insn.off, size, BPF_WRITE,
                             insn.src_reg, true, false);
  f.regs[insn.src_reg] = saved_src;
  if (err) return err;
  const int load_reg = d.form == bpf_opc::F_ATOMIC_CMPXCHG ? BPF_REG_0
                       : d.form == bpf_opc::F_ATOMIC_FETCH ? insn.src_reg
                                                           : -1;
  if (load_reg >= 0) {
    bpf_reg_state &r = env.cur->cur().regs[load_reg];
    __mark_reg_unknown(r);
    if (size == 4) coerce_reg_to_size(r, 4);
    env.scratched_regs |= 1u << load_reg;
  }
  return 0;
}

int check_helper_mem_access(bpf_verifier_env &env, u32 regno, u64 access_size, bpf_access_type t,
                            bool zero_size_allowed) {
  const bpf_reg_state &reg = env.cur->cur().regs[regno];
  const int size = (int)access_size;
  switch (base_type(reg.type)) {
    case PTR_TO_STACK:
      if (size == 0 && zero_size_allowed) {
        // Nothing is read or written, but the pointer must still be within the stack.
        s64 min_off, max_off;
        return check_stack_access_within_bounds(env, regno, reg, 0, 0, t, &min_off, &max_off);
      }
      return check_stack_helper_access(env, regno, reg, size, t);
    case PTR_TO_MAP_VALUE:
      if (int err = check_map_access_type(env, *reg.map_ptr, reg.off, size, t)) return err;
      return check_map_access(env, regno, reg, 0, size, zero_size_allowed, t);
    case PTR_TO_MAP_KEY:
      if (t == BPF_WRITE) {
        env.verbose_err("R%u cannot write into %s", regno, reg_type_name(reg.type).c_str());
        return -EACCES;
      }
      return check_mem_region_access(env, regno, reg, 0, size, reg.map_ptr->key_size,
                                     zero_size_allowed, "map key");
    case PTR_TO_MEM:
      if (t == BPF_WRITE && (reg.type & MEM_RDONLY)) {
        env.verbose_err("R%u cannot write into %s", regno, reg_type_name(reg.type).c_str());
        return -EACCES;
      }
      return check_mem_region_access(env, regno, reg, 0, size, reg.mem_size, zero_size_allowed,
                                     "mem");
    case PTR_TO_CTX:
      // A context without a fixed layout (SYSCALL: bytes the caller passes) cannot be checked
      // by field, so the access is checked like a load of its last byte. A context with fields
      // (a kernel structure the verifier rewrites accesses to) is never helper memory.
      if (env.ptype.ctx_kind == bpf_ctx_kind::bytes) {
        if (size == 0) return zero_size_allowed ? 0 : -EACCES;
        return check_ctx_access(env, regno, reg, size - 1, 1, t, nullptr);
      }
      [[fallthrough]];
    default:
      env.verbose_err("R%u type=%s expected=fp", regno, reg_type_name(reg.type).c_str());
      return -EACCES;
  }
}

}  // namespace umemcg
