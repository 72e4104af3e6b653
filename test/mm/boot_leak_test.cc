// SPDX-License-Identifier: GPL-2.0-only
// test/mm/boot_leak_test.cc: a machine that ended with references held (a task ended by an
// exception, as a failed REQUIRE ends it) leaves nothing to the next boot in the process: the
// next test sees its own css and objcgs only (kernel/cgroup.cc forget_leaked_css,
// mm/memcontrol_kmem.cc forget_leaked_objcgs).
#include <memory>
#include <stdexcept>

#include "mm/obj_cgroup.h"
#include "test/support/memcg_env.h"

namespace umemcg::test {

TEST_CASE("boot: css and objcgs leaked by an earlier machine are not the next one's",
          "[mm][memcg]") {
  {
    auto m = std::make_unique<emu::Machine>(config(emu::Mode::simulated, 2, 1));
    int ret = -1;
    m->exec([&] { ret = mem_cgroup_boot(v2_params()); }, 0, "boot");
    REQUIRE(ret == 0);
    // A task takes a reference on a new cgroup and dies of an exception before its put.
    REQUIRE_THROWS_AS(m->exec(
                          [] {
                            int err = 0;
                            cgroup *c = cgroup_mkdir(root_mem_cgroup->css.cgroup, "a", &err);
                            REQUIRE(c);
                            css_get(&mem_cgroup_from_cgroup(c)->css);
                            throw std::runtime_error("task ended");
                          },
                          0),
                      std::runtime_error);
    m.reset();  // shutdown: "a" stays referenced, so its css and objcg are never freed
  }
  CHECK(emu::cgroup_live_css() > 0);
  CHECK(emu::objcg_live_count() > 0);

  MemcgEnv env(v2_params());
  CHECK(emu::cgroup_live_css() == 1);  // the new root
  mem_cgroup *a = env.mkdir(nullptr, "a");
  env.run([&] { REQUIRE(env.charge(a, 10) == 0); });
  env.run([&] { env.uncharge(a, 10); });
  env.finish();
}

}  // namespace umemcg::test
