// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/verifier_test_util.h: instruction-building macros in the style of the kernel's
// include/linux/filter.h (written fresh), and a verifier test environment: maps of each kind,
// a struct_ops-like program type with typed context fields, kernel-object structs and kfuncs.
#pragma once

#include <linux/bpf.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bpfvm/insn.h"
#include "bpfvm/kfunc.h"
#include "bpfvm/prog_type.h"
#include "bpfvm/verifier.h"
#include "test/bpfvm/memcg_kfunc_descs.h"

// --- instruction macros --------------------------------------------------------------------
#define BPF_RAW(code, dst, src, off, imm) ::umemcg::bpf_raw_insn((code), (dst), (src), (off), (imm))
#define BPF_MOV64_IMM(dst, imm) BPF_RAW(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm)
#define BPF_MOV32_IMM(dst, imm) BPF_RAW(BPF_ALU | BPF_MOV | BPF_K, dst, 0, 0, imm)
#define BPF_MOV64_REG(dst, src) BPF_RAW(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0)
#define BPF_MOV32_REG(dst, src) BPF_RAW(BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0)
#define BPF_ALU64_IMM(op, dst, imm) BPF_RAW(BPF_ALU64 | (op) | BPF_K, dst, 0, 0, imm)
#define BPF_ALU64_REG(op, dst, src) BPF_RAW(BPF_ALU64 | (op) | BPF_X, dst, src, 0, 0)
#define BPF_ALU32_IMM(op, dst, imm) BPF_RAW(BPF_ALU | (op) | BPF_K, dst, 0, 0, imm)
#define BPF_ALU32_REG(op, dst, src) BPF_RAW(BPF_ALU | (op) | BPF_X, dst, src, 0, 0)
#define BPF_LDX_MEM(sz, dst, src, off) BPF_RAW(BPF_LDX | BPF_MEM | (sz), dst, src, off, 0)
#define BPF_STX_MEM(sz, dst, src, off) BPF_RAW(BPF_STX | BPF_MEM | (sz), dst, src, off, 0)
#define BPF_ST_MEM(sz, dst, off, imm) BPF_RAW(BPF_ST | BPF_MEM | (sz), dst, 0, off, imm)
#define BPF_ATOMIC_OP(sz, op, dst, src, off) BPF_RAW(BPF_STX | BPF_ATOMIC | (sz), dst, src, off, op)
#define BPF_JMP_IMM(op, dst, imm, off) BPF_RAW(BPF_JMP | (op) | BPF_K, dst, 0, off, imm)
#define BPF_JMP_REG(op, dst, src, off) BPF_RAW(BPF_JMP | (op) | BPF_X, dst, src, off, 0)
#define BPF_JMP32_IMM(op, dst, imm, off) BPF_RAW(BPF_JMP32 | (op) | BPF_K, dst, 0, off, imm)
#define BPF_JMP_A(off) BPF_RAW(BPF_JMP | BPF_JA, 0, 0, off, 0)
#define BPF_EXIT_INSN() BPF_RAW(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define BPF_EMIT_CALL(id) BPF_RAW(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define BPF_CALL_REL(off) BPF_RAW(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, off)
#define BPF_CALL_KFUNC(idx) BPF_RAW(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, idx)
#define BPF_LD_IMM64_RAW(dst, src, imm)                                  \
  BPF_RAW(BPF_LD | BPF_DW | BPF_IMM, dst, src, 0, (::umemcg::s32)(imm)), \
      BPF_RAW(0, 0, 0, 0, (::umemcg::s32)((::umemcg::u64)(imm) >> 32))
#define BPF_LD_IMM64(dst, imm) BPF_LD_IMM64_RAW(dst, 0, imm)
#define BPF_LD_MAP_FD(dst, idx) BPF_LD_IMM64_RAW(dst, BPF_PSEUDO_MAP_FD, idx)
#define BPF_LD_MAP_VALUE(dst, idx, off)                                \
  BPF_RAW(BPF_LD | BPF_DW | BPF_IMM, dst, BPF_PSEUDO_MAP_VALUE, 0, idx), \
      BPF_RAW(0, 0, 0, 0, off)
#define BPF_LD_FUNC(dst, off) BPF_LD_IMM64_RAW(dst, BPF_PSEUDO_FUNC, off)

// Sequences the verifier tests share (the maps are VerifierEnv's, below).
// key = 1 at fp-4; r0 = bpf_map_lookup_elem(map, &key)  (6 instructions). An unaligned constant
// key is plain stack bytes (STACK_MISC) to the verifier: the result may be NULL even for an
// array (see get_constant_map_key()).
#define LOOKUP(map)                                                             \
  BPF_ST_MEM(BPF_W, BPF_REG_10, -4, 1), BPF_MOV64_REG(BPF_REG_2, BPF_REG_10), \
      BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4), BPF_LD_MAP_FD(BPF_REG_1, map),  \
      BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem)
// r0 = bpf_ringbuf_reserve(rb, 16, 0)  (5 instructions)
#define RESERVE16                                                   \
  BPF_LD_MAP_FD(BPF_REG_1, kRingbuf), BPF_MOV64_IMM(BPF_REG_2, 16), \
      BPF_MOV64_IMM(BPF_REG_3, 0), BPF_EMIT_CALL(BPF_FUNC_ringbuf_reserve)
#define RET0 BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN()

namespace umemcg::emu::testing {

using Prog = std::vector<bpf_insn>;

// Map indices in VerifierEnv::maps.
enum : int { kArray = 0, kHash = 1, kRingbuf = 2, kRodata = 3, kLocked = 4, kTaskStorage = 5,
             kData = 6, kRdonlyProg = 7, kWronlyProg = 8 };
// kfunc indices in VerifierEnv::kfuncs.
enum : int { kGetMemcg = 0, kPutMemcg = 1, kUsage = 2, kFlush = 3, kReclaim = 4,
             kTaskAcquire = 5, kTaskRelease = 6, kUnresolved = 7, kTaskPid = 8 };

inline u64 fake_fn(u64, u64, u64, u64, u64) { return 0; }

// Context of the "test_ops" type (a struct_ops-like member): offsets of its fields.
enum : int { kCtxA = 0, kCtxB = 8, kCtxTask = 16, kCtxMemcg = 24, kCtxCgroup = 32,
             kCtxSize = 40 };

struct VerifierEnv {
  std::vector<bpf_verifier_map> maps;
  std::vector<u8> rodata = {7, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  KfuncRegistry kreg;
  std::vector<const KfuncDesc *> kfuncs;
  ProgTypeRegistry types;
  const bpf_prog_type_desc *test_ops = nullptr;

  VerifierEnv() {
    auto map = [&](std::string name, u32 type, u32 ks, u32 vs, u32 n) {
      bpf_verifier_map m;
      m.name = std::move(name);
      m.map_type = type;
      m.key_size = ks;
      m.value_size = vs;
      m.max_entries = n;
      maps.push_back(m);
    };
    map("arr", BPF_MAP_TYPE_ARRAY, 4, 48, 16);
    map("hash", BPF_MAP_TYPE_HASH, 8, 16, 128);
    map("rb", BPF_MAP_TYPE_RINGBUF, 0, 0, 4096);
    map(".rodata", BPF_MAP_TYPE_ARRAY, 4, 16, 1);
    maps.back().rdonly_prog = true;
    maps.back().frozen_value = rodata.data();
    map("locked", BPF_MAP_TYPE_ARRAY, 4, 16, 1);
    maps.back().spin_lock_off = 0;
    map("task_store", BPF_MAP_TYPE_TASK_STORAGE, 4, 8, 0);
    map(".data", BPF_MAP_TYPE_ARRAY, 4, 32, 1);
    map("ro_prog", BPF_MAP_TYPE_HASH, 4, 8, 16);
    maps.back().map_flags = BPF_F_RDONLY_PROG;
    maps.back().rdonly_prog = true;
    map("wo_prog", BPF_MAP_TYPE_HASH, 4, 8, 16);
    maps.back().map_flags = BPF_F_WRONLY_PROG;

    auto add = [&](KfuncDesc d) {
      d.fn = fake_fn;
      if (!kreg.add(d).ok()) throw std::runtime_error("kfunc " + d.name);
      kfuncs.push_back(kreg.find(d.name));
    };
    for (const KfuncDesc &d : memcg_kfunc_descs()) add(d);
    add({"bpf_task_acquire", KfuncArg::ptr_to("task_struct"), {KfuncArg::ptr_to("task_struct")},
         KF_ACQUIRE | KF_RET_NULL | KF_RCU});
    add({"bpf_task_release", KfuncArg::void_(), {KfuncArg::ptr_to("task_struct")}, KF_RELEASE});
    kfuncs.push_back(nullptr);  // an unresolved weak extern
    add({"bpf_test_task_pid", KfuncArg::scalar(4), {KfuncArg::ptr_to("task_struct")}, 0});

    bpf_btf_struct task{"task_struct", 64, {}};
    task.fields.push_back(bpf_ctx_field::scalar("pid", 0, 4));
    task.fields.push_back(bpf_ctx_field::scalar("tgid", 4, 4));
    task.fields.push_back(bpf_ctx_field::scalar("comm", 8, 16));
    task.fields.push_back(bpf_ctx_field::ptr("real_parent", 24, "task_struct", PTR_UNTRUSTED));
    task.fields.push_back(bpf_ctx_field::ptr("rcu_parent", 32, "task_struct", MEM_RCU | PTR_MAYBE_NULL));
    (void)types.add_struct(task);
    (void)types.add_struct({"cgroup_subsys_state", 16, {bpf_ctx_field::scalar("flags", 0, 8)}});
    (void)types.add_struct({"cgroup", 32,
                            {bpf_ctx_field::embed("self", 0, 16, "cgroup_subsys_state"),
                             bpf_ctx_field::scalar("level", 16, 4)}});
    (void)types.add_struct({"mem_cgroup", 8, {}});

    bpf_prog_type_desc t;
    t.name = "test_ops";
    t.type = BPF_PROG_TYPE_STRUCT_OPS;
    t.ctx_size = kCtxSize;
    t.ctx_fields = {bpf_ctx_field::scalar("a", kCtxA, 8),
                    bpf_ctx_field::scalar("b", kCtxB, 4, true),
                    bpf_ctx_field::ptr("task", kCtxTask, "task_struct", PTR_TRUSTED),
                    bpf_ctx_field::ptr("memcg", kCtxMemcg, "mem_cgroup", PTR_TRUSTED | PTR_MAYBE_NULL),
                    bpf_ctx_field::ptr("cgroup", kCtxCgroup, "cgroup", PTR_TRUSTED)};
    t.ctx_fields[0].read_sizes = BPF_SZ_8 | BPF_SZ_4;
    t.helpers = {BPF_FUNC_map_lookup_elem, BPF_FUNC_map_update_elem, BPF_FUNC_ktime_get_ns,
                 BPF_FUNC_ringbuf_reserve, BPF_FUNC_ringbuf_submit, BPF_FUNC_ringbuf_discard,
                 BPF_FUNC_ringbuf_output, BPF_FUNC_task_storage_get, BPF_FUNC_loop,
                 BPF_FUNC_spin_lock, BPF_FUNC_spin_unlock, BPF_FUNC_get_current_comm};
    t.kfunc_prog_type = BPF_PROG_TYPE_STRUCT_OPS;
    t.sleepable = bpf_sleepable::optional;
    t.has_retval_range = true;
    t.ret_min = 0;
    t.ret_max = 1;
    if (!types.add(t).ok()) throw std::runtime_error("test_ops");
    test_ops = types.find("test_ops");
  }

  bpf_verifier_opts opts(const bpf_prog_type_desc *pt) const {
    bpf_verifier_opts o;
    o.prog_type = pt;
    o.maps = maps;
    o.kfuncs = kfuncs;
    o.types = &types;
    o.ctx_mem_size = 64;
    return o;
  }
  bpf_verifier_result raw(const Prog &p, u32 log_level = 0) const {
    bpf_verifier_opts o = opts(&bpf_raw_mem_prog_type());
    o.log_level = log_level;
    return bpf_check(p, o);
  }
  bpf_verifier_result ops(const Prog &p, bool sleepable = false) const {
    bpf_verifier_opts o = opts(test_ops);
    o.sleepable = sleepable;
    return bpf_check(p, o);
  }
  bpf_verifier_result ops_sleepable(const Prog &p) const { return ops(p, true); }
  bpf_verifier_result syscall(const Prog &p) const {
    return bpf_check(p, opts(&bpf_syscall_prog_type()));
  }
};

}  // namespace umemcg::emu::testing
