// SPDX-License-Identifier: GPL-2.0-only
// test/bpfvm/verifier_async_test.cc: the verifier on bpf_wq kfuncs: the bpf_wq argument (a map
// value at the map's bpf_wq offset), the callback argument verified as an async callback
// (fresh frame with r1 = map, r2 = key, r3 = value; sleepable; returns 0), with the kernel's
// messages.
#include <catch2/catch.hpp>

#include "bpfvm/bpf_async.h"
#include "test/bpfvm/verifier_test_util.h"

using namespace umemcg;
using namespace umemcg::emu;
using namespace umemcg::emu::testing;

namespace {

// VerifierEnv plus an array map whose 24-byte value holds a bpf_wq at 8, a second one, and the
// bpf_wq kfuncs with a sleepable kfunc taking no argument.
struct WqEnv : VerifierEnv {
  int wqarr, wqarr2;
  int wq_init, wq_set_cb, wq_start, sleepy;
  WqEnv() {
    for (const char *n : {"wqarr", "wqarr2"}) {
      bpf_verifier_map m;
      m.name = n;
      m.map_type = BPF_MAP_TYPE_ARRAY;
      m.key_size = 4;
      m.value_size = 24;
      m.max_entries = 2;
      m.wq_off = 8;
      maps.push_back(m);
    }
    wqarr = (int)maps.size() - 2;
    wqarr2 = (int)maps.size() - 1;
    for (KfuncDesc &d : bpf_async_kfuncs()) {
      d.fn = fake_fn;
      const std::string name = d.name;
      REQUIRE(kreg.add(d).ok());
      kfuncs.push_back(kreg.find(name));
      if (name == "bpf_wq_init") wq_init = (int)kfuncs.size() - 1;
      if (name == "bpf_wq_set_callback_impl") wq_set_cb = (int)kfuncs.size() - 1;
      if (name == "bpf_wq_start") wq_start = (int)kfuncs.size() - 1;
    }
    KfuncDesc s{"bpf_test_sleep", KfuncArg::scalar(4, true), {}, KF_SLEEPABLE};
    s.fn = fake_fn;
    REQUIRE(kreg.add(s).ok());
    kfuncs.push_back(kreg.find("bpf_test_sleep"));
    sleepy = (int)kfuncs.size() - 1;
  }
};

// r6 = a value of `map` (key 0), or exit with 0.  (10 instructions)
#define WQ_VALUE(map)                                                                  \
  BPF_ST_MEM(BPF_W, BPF_REG_10, -4, 0), BPF_MOV64_REG(BPF_REG_2, BPF_REG_10),          \
      BPF_ALU64_IMM(BPF_ADD, BPF_REG_2, -4), BPF_LD_MAP_FD(BPF_REG_1, map),            \
      BPF_EMIT_CALL(BPF_FUNC_map_lookup_elem), BPF_JMP_IMM(BPF_JNE, BPF_REG_0, 0, 2), \
      BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN(), BPF_MOV64_REG(BPF_REG_6, BPF_REG_0)

// The main program: bpf_wq_init(&v->wq, map, 0); bpf_wq_set_callback_impl(&v->wq, cb, 0, ?);
// return 0; followed by the callback body (cb...). 10 + 14 instructions before the callback;
// the ld_imm64 of the callback is at 18, the flags at 20.
#define WQ_PROG(env, map, ...)                                                             \
  Prog {                                                                                   \
    WQ_VALUE(map), BPF_MOV64_REG(BPF_REG_1, BPF_REG_6), BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, 8), \
        BPF_LD_MAP_FD(BPF_REG_2, map), BPF_MOV64_IMM(BPF_REG_3, 0),                        \
        BPF_CALL_KFUNC((env).wq_init), BPF_MOV64_REG(BPF_REG_1, BPF_REG_6),                 \
        BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, 8), BPF_LD_FUNC(BPF_REG_2, 5),                    \
        BPF_MOV64_IMM(BPF_REG_3, 0), BPF_CALL_KFUNC((env).wq_set_cb),                       \
        BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN(), __VA_ARGS__                          \
  }

bpf_verifier_result check(const WqEnv &env, const Prog &p, bool allow_ptr_leaks = false) {
  bpf_verifier_opts o = env.opts(env.test_ops);
  o.allow_ptr_leaks = allow_ptr_leaks;
  return bpf_check(p, o);
}

}  // namespace

TEST_CASE("verifier: a bpf_wq callback is an async callback", "[bpfvm][verifier][wq]") {
  WqEnv env;
  SECTION("it may sleep in a program that may not, and read its key and value") {
    const auto r = check(env, WQ_PROG(env, env.wqarr,
                                      BPF_LDX_MEM(BPF_W, BPF_REG_4, BPF_REG_2, 0),
                                      BPF_LDX_MEM(BPF_DW, BPF_REG_5, BPF_REG_3, 0),
                                      BPF_CALL_KFUNC(env.sleepy), BPF_MOV64_IMM(BPF_REG_0, 0),
                                      BPF_EXIT_INSN()));
    INFO(r.error);
    CHECK(r.ok());
  }
  SECTION("the program itself may not sleep") {
    Prog p = WQ_PROG(env, env.wqarr, BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN());
    p.insert(p.begin() + 10, BPF_CALL_KFUNC(env.sleepy));  // the callback moves too
    const auto r = check(env, p);
    CHECK(r.error == "program must be sleepable to call sleepable kfunc bpf_test_sleep");
  }
  SECTION("it returns 0") {
    const auto r =
        check(env, WQ_PROG(env, env.wqarr, BPF_MOV64_IMM(BPF_REG_0, 1), BPF_EXIT_INSN()));
    CHECK(r.error ==
          "At async callback return the register R0 has smin=1 smax=1 should have been in [0, 0]");
    const auto p = check(env, WQ_PROG(env, env.wqarr, BPF_MOV64_REG(BPF_REG_0, BPF_REG_3),
                                      BPF_EXIT_INSN()),
                         true);
    CHECK(p.error == "At async callback return the register R0 is not a known value (map_value)");
  }
  SECTION("its key is the map's key, r4 is not set") {
    const auto k = check(env, WQ_PROG(env, env.wqarr, BPF_LDX_MEM(BPF_DW, BPF_REG_0, BPF_REG_2, 0),
                                      BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN()));
    CHECK_THAT(k.error, Catch::Contains("invalid access to map key"));
    const auto r4 = check(env, WQ_PROG(env, env.wqarr, BPF_MOV64_REG(BPF_REG_0, BPF_REG_4),
                                       BPF_EXIT_INSN()));
    CHECK(r4.error == "R4 !read_ok");
  }
}

TEST_CASE("verifier: the bpf_wq and callback arguments", "[bpfvm][verifier][wq]") {
  WqEnv env;
  auto init_with = [&](std::vector<bpf_insn> set_r1, int map) {
    Prog p = {WQ_VALUE(env.wqarr)};
    p.insert(p.end(), set_r1.begin(), set_r1.end());
    const Prog tail = {BPF_LD_MAP_FD(BPF_REG_2, map), BPF_MOV64_IMM(BPF_REG_3, 0),
                       BPF_CALL_KFUNC(env.wq_init), BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN()};
    p.insert(p.end(), tail.begin(), tail.end());
    return check(env, p).error;
  };
  CHECK(init_with({BPF_MOV64_REG(BPF_REG_1, BPF_REG_10), BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, -16)},
                  env.wqarr) == "arg#0 doesn't point to a map value");
  CHECK(init_with({BPF_MOV64_REG(BPF_REG_1, BPF_REG_6)}, env.wqarr) ==
        "off 0 doesn't point to 'struct bpf_wq' that is at 8");
  CHECK(init_with({BPF_LDX_MEM(BPF_DW, BPF_REG_1, BPF_REG_6, 0),
                   BPF_ALU64_IMM(BPF_AND, BPF_REG_1, 8),
                   BPF_ALU64_REG(BPF_ADD, BPF_REG_1, BPF_REG_6)},
                  env.wqarr) ==
        "R1 doesn't have constant offset. bpf_wq has to be at the constant offset");
  CHECK(init_with({BPF_MOV64_REG(BPF_REG_1, BPF_REG_6), BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, 8)},
                  env.wqarr2) ==
        "workqueue pointer in R1 map_uid=0 doesn't match map pointer in R2 map_uid=0");
  CHECK(init_with({BPF_MOV64_REG(BPF_REG_1, BPF_REG_6), BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, 8)},
                  env.wqarr) == "");
  // A value of a map without a bpf_wq.
  {
    Prog p = {WQ_VALUE(kArray), BPF_MOV64_REG(BPF_REG_1, BPF_REG_6),
              BPF_ALU64_IMM(BPF_ADD, BPF_REG_1, 8), BPF_MOV64_IMM(BPF_REG_2, 0),
              BPF_CALL_KFUNC(env.wq_start), BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN()};
    CHECK(check(env, p).error == "map 'arr' has no valid bpf_wq");
  }
  // The callback: a function.
  {
    Prog p = WQ_PROG(env, env.wqarr, BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN());
    p[18].dst_reg = BPF_REG_5;               // the callback is still referenced
    p[20] = BPF_MOV64_IMM(BPF_REG_2, 0);     // r2 a scalar (r3 is not checked: arg1 fails first)
    CHECK(check(env, p).error == "arg1 expected pointer to func");
  }
  {
    // flags: any scalar (6.19 has no __k on it); aux__prog: not even read.
    Prog p = WQ_PROG(env, env.wqarr, BPF_MOV64_IMM(BPF_REG_0, 0), BPF_EXIT_INSN());
    p[20] = BPF_LDX_MEM(BPF_DW, BPF_REG_3, BPF_REG_6, 0);
    CHECK(check(env, p).error == "");
  }
}
