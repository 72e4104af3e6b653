// SPDX-License-Identifier: GPL-2.0-only
// test/tools/sh_bpf_machine_test.cc: ShBpf, the shell's bpf commands on a booted machine with
// memcg: load (and refusal of a second load under the same name or of a missing file), a
// bpf_memcg_ops map attached to a cgroup and detached, fentry/fexit programs attached to the
// rwsem hook points and seen running through their map, an iterator refused, a SYSCALL program
// test-run, map dumps, ring buffer errors, unload.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "shim/thread_annotations.h"  // before abseil, see bpfvm/map.h

#include "kernel/cgroupfs.h"
#include "mm/bpf_memcg_ops.h"
#include "shim/rwsem.h"
#include "shim/sched.h"
#include "test/support/memcg_env.h"
#include "tools/sh/sh_bpf_machine.h"

#ifndef UMEMCG_BPF_PROGS_DIR
#error "UMEMCG_BPF_PROGS_DIR must name the compiled test programs"
#endif

namespace {

using namespace umemcg;
using umemcg::sh::BpfMapDump;
using umemcg::sh::ShBpf;

const std::string kPolicy = std::string(UMEMCG_BPF_PROGS_DIR) + "/memcg_policy.bpf.o";

// "/sys/fs/cgroup/a/b" -> the memcg, as the shell resolves it.
int resolve(const std::string &path, mem_cgroup **out) {
  cgroup *cg = nullptr;
  if (int err = cgroupfs_lookup_cgroup(path, &cg)) return err;
  *out = mem_cgroup_from_cgroup(cg);
  return *out ? 0 : -ENOENT;
}

}  // namespace

TEST_CASE("ShBpf: load, attach a policy and hooks, run, dump, unload") {
  test::MemcgEnv env(test::v2_params());
  env.mkdir(nullptr, "a");
  env.run([&] {
    ShBpf bpf(resolve);
    std::string log;
    REQUIRE(bpf.load(kPolicy, "pol", &log) == 0);
    CHECK(bpf.load(kPolicy, "pol", &log) == -EEXIST);
    CHECK(bpf.load("/nonexistent.bpf.o", "x", &log) < 0);
    CHECK(!log.empty());

    // The struct_ops map goes to a cgroup, once; programs go to their hooks, never a cgroup.
    CHECK(bpf.attach("pol", "lockholder", "/sys/fs/cgroup/nope") == -ENOENT);
    CHECK(bpf.attach("pol", "lockholder", "") == -EINVAL);
    REQUIRE(bpf.attach("pol", "lockholder", "/sys/fs/cgroup/a") == 0);
    CHECK(bpf.attach("pol", "lockholder", "/sys/fs/cgroup/a") == -EEXIST);
    CHECK(bpf.attach("pol", "after_down_read", "/sys/fs/cgroup/a") == -EINVAL);
    CHECK(bpf.attach("pol", "no_such_item", "") == -ENOENT);
    CHECK(bpf.attach("nobody", "lockholder", "/sys/fs/cgroup/a") == -ENOENT);
    CHECK(bpf.attach("pol", "cgroup_usage", "") == -EOPNOTSUPP);
    REQUIRE(bpf.attach("pol", "after_down_read", "") == 0);
    REQUIRE(bpf.attach("pol", "before_up_read", "") == 0);

    // The hooks run: down_read adds this task to `held`, up_read takes it out again.
    rw_semaphore sem("test_sem");
    down_read(&sem);
    BpfMapDump held;
    REQUIRE(bpf.map_dump("pol", "held", &held) == 0);
    REQUIRE(held.entries.size() == 1);
    CHECK(held.key_size == 4);
    u32 tid = 0;
    u64 n = 0;
    std::memcpy(&tid, held.entries[0].key.data(), 4);
    std::memcpy(&n, held.entries[0].values[0].data(), 8);
    CHECK(tid == static_cast<u32>(current->pid));
    CHECK(n == 1);
    up_read(&sem);
    REQUIRE(bpf.map_dump("pol", "held", &held) == 0);
    std::memcpy(&n, held.entries[0].values[0].data(), 8);
    CHECK(n == 0);

    // An array map dumps every index.
    BpfMapDump levels;
    REQUIRE(bpf.map_dump("pol", "usage_by_level", &levels) == 0);
    CHECK(levels.entries.size() == 8);
    CHECK_FALSE(levels.percpu);
    CHECK(bpf.map_dump("pol", "lockholder", &levels) == -EOPNOTSUPP);

    // The SYSCALL program runs: nothing is reclaimable at the root, so it reports 0 pages.
    uint64_t ret = 1234;
    REQUIRE(bpf.run("pol", "reclaim_root", {}, &ret) == 0);
    CHECK(ret == 0);
    CHECK(bpf.run("pol", "nope", {}, &ret) == -ENOENT);

    std::vector<std::string> recs;
    CHECK(bpf.ringbuf("pol", "held", &recs) == -EINVAL);

    CHECK(bpf.detach("pol", "lockholder", "/sys/fs/cgroup/a") == 0);
    CHECK(bpf.detach("pol", "lockholder", "/sys/fs/cgroup/a") == -ENOENT);
    CHECK(bpf.detach("pol", "after_down_read", "") == 0);
    CHECK(bpf.unload("pol") == 0);
    CHECK(bpf.unload("pol") == -ENOENT);
  });
  env.finish();
}
