// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/kernel_env_test.cc: the BPF kernel environment: registration of structs,
// struct_ops types, iterator and tracing targets; the program type a loaded program gets from
// its attach point; and the verifier's rules on the contexts derived from function signatures
// (btf_ctx_access: u64 slots, read-only, trusted or plain handles, fexit's return value,
// return ranges, sleepable rules).
#include <catch2/catch.hpp>

#include "bpfvm/kernel_env.h"
#include "test/bpfvm/verifier_test_util.h"

using namespace umemcg;
using namespace umemcg::emu;
using namespace umemcg::emu::testing;

namespace {

u64 fake(u64, u64, u64, u64, u64) { return 0; }

// A private environment (the process-wide one belongs to the subsystems).
struct Env {
  BpfKernelEnv env;
  std::vector<const KfuncDesc *> kfuncs;

  Env() {
    REQUIRE(env.add_struct({"widget", 16, {bpf_ctx_field::scalar("size", 0, 8),
                                           bpf_ctx_field::scalar("flags", 8, 4)}})
                .ok());
    REQUIRE(env.add_struct({"lock", 8, {bpf_ctx_field::scalar("count", 0, 8)}}).ok());
    REQUIRE(env.add_kfunc({"widget_size", KfuncArg::scalar(8), {KfuncArg::ptr_to("widget")},
                           KF_TRUSTED_ARGS, fake})
                .ok());
    kfuncs.push_back(env.kfuncs().find("widget_size"));

    bpf_struct_ops_type ops;
    ops.name = "widget_ops";
    ops.members.push_back({"resize", KfuncArg::scalar(4), {KfuncArg::ptr_to("widget"),
                                                           KfuncArg::scalar(8)},
                           {"w", "new_size"}, false});
    ops.members.push_back({"maybe", KfuncArg::void_(),
                           {KfuncArg::ptr_to("widget", /*nullable=*/true)}, {}, true});
    REQUIRE(env.register_struct_ops(ops).ok());
    REQUIRE(env.register_iter_target({"widget",
                                      KfuncArg::void_(),
                                      {KfuncArg::ptr_to("lock"),
                                       KfuncArg::ptr_to("widget", /*nullable=*/true)},
                                      {"meta", "widget"},
                                      {},
                                      true})
                .ok());
    REQUIRE(env.register_tracing_target({"take_lock", KfuncArg::scalar(4, true),
                                         {KfuncArg::ptr_to("lock"), KfuncArg::scalar(4)},
                                         {"l", "how"}, {}})
                .ok());
  }

  const bpf_prog_type_desc *type_of(ProgKind kind, const std::string &target,
                                    const std::string &st_type = "",
                                    const std::string &member = "", std::string *why = nullptr) {
    BpfProgram p;
    p.kind = kind;
    p.attach_target = target;
    p.st_ops_type = st_type;
    p.st_ops_member = member;
    p.prog_type = kind == ProgKind::kStructOps ? BPF_PROG_TYPE_STRUCT_OPS
                  : kind == ProgKind::kSyscall ? BPF_PROG_TYPE_SYSCALL
                                               : BPF_PROG_TYPE_TRACING;
    std::string w;
    const bpf_prog_type_desc *d = env.prog_type_for(p, &w);
    if (why) *why = w;
    return d;
  }

  bpf_verifier_result check(const bpf_prog_type_desc *pt, const Prog &prog,
                            bool sleepable = false) {
    REQUIRE(pt);
    bpf_verifier_opts o;
    o.prog_type = pt;
    o.types = &env.types();
    o.kfuncs = kfuncs;
    o.sleepable = sleepable;
    return bpf_check(prog, o);
  }
};

}  // namespace

TEST_CASE("kernel env: a program's type comes from its attach point", "[bpfvm][kernel_env]") {
  Env e;
  std::string why;
  const bpf_prog_type_desc *resize = e.type_of(ProgKind::kStructOps, "", "widget_ops", "resize");
  REQUIRE(resize);
  CHECK(resize->name == "struct_ops/widget_ops.resize");
  CHECK(resize->type == BPF_PROG_TYPE_STRUCT_OPS);
  CHECK(resize->ctx_size == 16);
  CHECK_FALSE(resize->has_retval_range);
  const bpf_prog_type_desc *it = e.type_of(ProgKind::kIter, "widget");
  REQUIRE(it);
  CHECK((it->has_retval_range && it->ret_min == 0 && it->ret_max == 1));
  const bpf_prog_type_desc *fexit = e.type_of(ProgKind::kFexit, "take_lock");
  REQUIRE(fexit);
  CHECK(fexit->ctx_size == 24);  // two arguments and the return value
  CHECK(e.type_of(ProgKind::kFentry, "take_lock")->ctx_size == 16);
  CHECK(e.type_of(ProgKind::kSyscall, "")->name == "syscall");

  CHECK_FALSE(e.type_of(ProgKind::kStructOps, "", "", "", &why));
  CHECK(why == "struct_ops program is not used by any struct_ops map");
  CHECK_FALSE(e.type_of(ProgKind::kStructOps, "", "other_ops", "x", &why));
  CHECK(why == "struct_ops type other_ops is not registered");
  CHECK_FALSE(e.type_of(ProgKind::kStructOps, "", "widget_ops", "shrink", &why));
  CHECK(why == "struct_ops type widget_ops has no function member shrink");
  CHECK_FALSE(e.type_of(ProgKind::kFentry, "drop_lock", "", "", &why));
  CHECK_THAT(why, Catch::Contains("attach target drop_lock is not registered"));
  CHECK_FALSE(e.type_of(ProgKind::kIter, "task", "", "", &why));
  CHECK_THAT(why, Catch::Contains("iterator target task is not registered"));
  // tp_btf and other attach-dependent tracing kinds have no descriptor here.
  CHECK_FALSE(e.type_of(ProgKind::kTpBtf, "sched_switch", "", "", &why));
  CHECK(e.env.has_struct_ops("widget_ops"));
  CHECK_FALSE(e.env.has_struct_ops("other_ops"));
}

TEST_CASE("kernel env: registration errors", "[bpfvm][kernel_env]") {
  Env e;
  bpf_struct_ops_type dup;
  dup.name = "widget_ops";
  CHECK(e.env.register_struct_ops(dup).code() == absl::StatusCode::kAlreadyExists);
  bpf_struct_ops_type unknown_struct;
  unknown_struct.name = "gadget_ops";
  unknown_struct.members.push_back({"poke", KfuncArg::void_(), {KfuncArg::ptr_to("gadget")}, {}, false});
  absl::Status st = e.env.register_struct_ops(unknown_struct);
  CHECK_FALSE(st.ok());
  CHECK_THAT(std::string(st.message()), Catch::Contains("struct gadget, which is not registered"));
  bpf_attach_func six{"six", KfuncArg::void_(), std::vector<KfuncArg>(6, KfuncArg::scalar(8)), {}, {}};
  st = e.env.register_tracing_target(six);
  CHECK_THAT(std::string(st.message()), Catch::Contains("6 arguments, at most 5"));
  bpf_attach_func cb{"cb", KfuncArg::void_(), {KfuncArg::callback()}, {}, {}};
  CHECK_FALSE(e.env.register_tracing_target(cb).ok());
  CHECK(e.env.register_tracing_target({"take_lock", KfuncArg::void_(), {}, {}, {}}).code() ==
        absl::StatusCode::kAlreadyExists);
  CHECK(e.env.add_struct({"widget", 8, {}}).code() == absl::StatusCode::kAlreadyExists);
}

TEST_CASE("kernel env: struct_ops contexts are trusted, read-only u64 argument slots",
          "[bpfvm][kernel_env]") {
  Env e;
  const bpf_prog_type_desc *t = e.type_of(ProgKind::kStructOps, "", "widget_ops", "resize");
  // Load the widget handle and the scalar; read a field of the widget; pass it to a
  // KF_TRUSTED_ARGS kfunc.
  const Prog ok = {BPF_LDX_MEM(BPF_DW, BPF_REG_6, BPF_REG_1, 0),
                   BPF_LDX_MEM(BPF_DW, BPF_REG_7, BPF_REG_1, 8),
                   BPF_LDX_MEM(BPF_W, BPF_REG_8, BPF_REG_1, 8),  // narrow read of a scalar
                   BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_6, 0),
                   BPF_MOV64_REG(BPF_REG_1, BPF_REG_6),
                   BPF_CALL_KFUNC(0),
                   RET0};
  bpf_verifier_result r = e.check(t, ok);
  INFO(r.log);
  CHECK(r.ok());
  // Writing an argument slot: the context is read-only.
  r = e.check(t, {BPF_MOV64_IMM(BPF_REG_2, 1), BPF_STX_MEM(BPF_DW, BPF_REG_1, BPF_REG_2, 8), RET0});
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.error, Catch::Contains("invalid bpf_context access"));
  r = e.check(t, {BPF_ST_MEM(BPF_DW, BPF_REG_1, 8, 1), RET0});
  CHECK(r.error == "BPF_ST stores into R1 ctx is not allowed");
  // Reading past the last argument.
  r = e.check(t, {BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 16), RET0});
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.error, Catch::Contains("invalid bpf_context access"));
  // A pointer argument is loaded whole.
  r = e.check(t, {BPF_LDX_MEM(BPF_W, BPF_REG_0, BPF_REG_1, 0), RET0});
  CHECK_FALSE(r.ok());
  // check_member: this member is called from atomic context, no sleepable programs.
  r = e.check(t, {RET0}, /*sleepable=*/true);
  CHECK_FALSE(r.ok());
  CHECK(r.error == "attach to unsupported member resize of struct widget_ops");
  // A nullable argument must be checked before a field read.
  const bpf_prog_type_desc *maybe = e.type_of(ProgKind::kStructOps, "", "widget_ops", "maybe");
  r = e.check(maybe, {BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, 0),
                      BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 0), RET0});
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.error, Catch::Contains("invalid mem access"));
  r = e.check(maybe, {BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, 0),
                      BPF_JMP_IMM(BPF_JEQ, BPF_REG_1, 0, 1),
                      BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_1, 0), RET0});
  INFO(r.log);
  CHECK(r.ok());
  CHECK(e.check(maybe, {RET0}, /*sleepable=*/true).ok());  // this member may sleep
}

TEST_CASE("kernel env: fentry/fexit arguments are plain handles; both return 0",
          "[bpfvm][kernel_env]") {
  Env e;
  const bpf_prog_type_desc *fentry = e.type_of(ProgKind::kFentry, "take_lock");
  const bpf_prog_type_desc *fexit = e.type_of(ProgKind::kFexit, "take_lock");
  // Field reads through the lock argument are allowed.
  bpf_verifier_result r = e.check(fentry, {BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, 0),
                                           BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, 0), RET0});
  INFO(r.log);
  CHECK(r.ok());
  // fexit sees the return value after the arguments; fentry does not.
  CHECK(e.check(fexit, {BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, 16), RET0}).ok());
  CHECK_FALSE(e.check(fentry, {BPF_LDX_MEM(BPF_DW, BPF_REG_2, BPF_REG_1, 16), RET0}).ok());
  // Return value range [0, 0].
  r = e.check(fentry, {BPF_MOV64_IMM(BPF_REG_0, 1), BPF_EXIT_INSN()});
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.error, Catch::Contains("At program exit the register R0 has"));
  // Not in the sleepable lists.
  r = e.check(fexit, {RET0}, /*sleepable=*/true);
  CHECK(r.error == "take_lock is not sleepable");
}

TEST_CASE("kernel env: iterator contexts: trusted handles, nullable object, r0 in [0, 1]",
          "[bpfvm][kernel_env]") {
  Env e;
  const bpf_prog_type_desc *it = e.type_of(ProgKind::kIter, "widget");
  // The object may be NULL (the final call): a NULL check is needed before the kfunc call.
  const Prog unchecked = {BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, 8), BPF_CALL_KFUNC(0),
                          RET0};
  bpf_verifier_result r = e.check(it, unchecked);
  CHECK_FALSE(r.ok());
  const Prog checked = {BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_1, 8),
                        BPF_JMP_IMM(BPF_JEQ, BPF_REG_1, 0, 1),
                        BPF_CALL_KFUNC(0),
                        RET0};
  r = e.check(it, checked);
  INFO(r.log);
  CHECK(r.ok());
  CHECK(e.check(it, checked, /*sleepable=*/true).ok());  // iter.s/
  r = e.check(it, {BPF_MOV64_IMM(BPF_REG_0, 2), BPF_EXIT_INSN()});
  CHECK_FALSE(r.ok());
}
