// SPDX-License-Identifier: GPL-2.0-only
// Tests of CPU hotplug: remove_cpu()/add_cpu(), the state callbacks, bindings broken by an
// offline vCPU, in both machine modes.
#include <catch2/catch.hpp>

#include <atomic>
#include <vector>

#include "shim/cpuhotplug.h"
#include "shim/errno.h"
#include "shim/machine.h"
#include "shim/preempt.h"
#include "shim/sched.h"
#include "shim/workqueue.h"
#include "test/support/machine_fixture.h"

using namespace umemcg;
using umemcg::test::config;
using umemcg::test::WarnCheck;

namespace {

struct call {
  const char *what;
  unsigned int cpu;
  int on_cpu;       // where the callback ran
  bool cpu_online;  // the hotplugged CPU's state seen by the callback
};
std::vector<call> g_calls;
int g_fail_startup_on = -1;

int dead_a(unsigned int cpu) {
  g_calls.push_back({"dead_a", cpu, smp_processor_id(), cpu_online(static_cast<int>(cpu))});
  return 0;
}
int dead_b(unsigned int cpu) {
  g_calls.push_back({"dead_b", cpu, smp_processor_id(), cpu_online(static_cast<int>(cpu))});
  return 0;
}
int prepare_b(unsigned int cpu) {
  g_calls.push_back({"prepare_b", cpu, smp_processor_id(), cpu_online(static_cast<int>(cpu))});
  return static_cast<int>(cpu) == g_fail_startup_on ? -ENOMEM : 0;
}

}  // namespace

TEST_CASE("cpu hotplug: dead callbacks run on the controlling CPU after the CPU is offline, "
          "highest state first; startups run before it comes back",
          "[shim][hotplug]") {
  for (emu::Mode mode : {emu::Mode::simulated, emu::Mode::native}) {
    WarnCheck wc;
    g_calls.clear();
    g_fail_startup_on = -1;
    emu::Machine m(config(mode, 3));
    m.exec([] {
      REQUIRE(cpuhp_setup_state_nocalls(CPUHP_MM_MEMCQ_DEAD, "test:a", nullptr, dead_a) == 0);
      int dyn = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "test:b", prepare_b, dead_b);
      REQUIRE(dyn >= CPUHP_BP_PREPARE_DYN);
      CHECK(g_calls.empty());  // _nocalls
      CHECK(cpuhp_setup_state_nocalls(CPUHP_MM_MEMCQ_DEAD, "again", nullptr, dead_a) == -EBUSY);

      CHECK(num_online_cpus() == 3);
      REQUIRE(remove_cpu(2) == 0);
      CHECK_FALSE(cpu_online(2));
      CHECK(num_online_cpus() == 2);
      REQUIRE(g_calls.size() == 2);
      CHECK(std::string(g_calls[0].what) == "dead_b");  // the dynamic state is higher
      CHECK(std::string(g_calls[1].what) == "dead_a");
      for (const call &c : g_calls) {
        CHECK(c.cpu == 2);
        CHECK(c.on_cpu == 0);
        CHECK_FALSE(c.cpu_online);
      }
      CHECK(remove_cpu(2) == 1);  // already offline: nothing runs
      CHECK(g_calls.size() == 2);

      g_calls.clear();
      REQUIRE(add_cpu(2) == 0);
      CHECK(cpu_online(2));
      REQUIRE(g_calls.size() == 1);
      CHECK(std::string(g_calls[0].what) == "prepare_b");
      CHECK_FALSE(g_calls[0].cpu_online);  // startups run before the CPU is online
      CHECK(add_cpu(2) == 1);

      // A failing startup leaves the CPU offline and undoes the states already brought up.
      REQUIRE(remove_cpu(1) == 0);
      g_calls.clear();
      g_fail_startup_on = 1;
      CHECK(add_cpu(1) == -ENOMEM);
      CHECK_FALSE(cpu_online(1));
      g_fail_startup_on = -1;
      REQUIRE(add_cpu(1) == 0);

      cpuhp_remove_state_nocalls(static_cast<cpuhp_state>(dyn));
      g_calls.clear();
      REQUIRE(remove_cpu(1) == 0);
      REQUIRE(g_calls.size() == 1);
      CHECK(std::string(g_calls[0].what) == "dead_a");
      REQUIRE(add_cpu(1) == 0);
    }, 0);
  }
}

TEST_CASE("cpu hotplug: bad requests are refused", "[shim][hotplug]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 2));
  m.exec([] {
    CHECK(remove_cpu(7) == -EINVAL);
    CHECK(add_cpu(64) == -EINVAL);
    CHECK(cpuhp_setup_state_nocalls(CPUHP_ONLINE, "x", nullptr, nullptr) == -EINVAL);
    CHECK(cpuhp_setup_state_nocalls(CPUHP_OFFLINE, "x", nullptr, nullptr) == -EINVAL);
    REQUIRE(remove_cpu(1) == 0);
    CHECK(remove_cpu(0) == -EBUSY);  // the last online CPU stays
    CHECK(cpu_online(0));
    REQUIRE(add_cpu(1) == 0);
  }, 0);
}

TEST_CASE("cpu hotplug: the caller's own CPU can go; tasks bound to it and per-CPU work "
          "run elsewhere, and come back once it is online",
          "[shim][hotplug]") {
  for (emu::Mode mode : {emu::Mode::simulated, emu::Mode::native}) {
    WarnCheck wc;
    emu::Machine m(config(mode, 2));
    static std::atomic<int> work_cpu;
    static work_struct w;
    m.exec([] {
      REQUIRE(smp_processor_id() == 1);
      REQUIRE(remove_cpu(1) == 0);  // this task was on it: it continues elsewhere
      CHECK(smp_processor_id() == 0);
      work_cpu = -1;
      INIT_WORK(&w, [](work_struct *) { work_cpu = smp_processor_id(); });
      queue_work_on(1, system_wq, &w);  // CPU 1's pool: unbound while the CPU is away
      flush_work(&w);
      CHECK(work_cpu == 0);
    }, 1);
    // A task bound to the offline CPU runs on the online one.
    int ran_on = -1;
    m.exec([&] { ran_on = smp_processor_id(); }, 1);
    CHECK(ran_on == 0);
    m.exec([] { REQUIRE(add_cpu(1) == 0); }, 0);
    m.exec([&] { ran_on = smp_processor_id(); }, 1);
    CHECK(ran_on == 1);
    m.exec([] {
      work_cpu = -1;
      queue_work_on(1, system_wq, &w);
      flush_work(&w);
      CHECK(work_cpu == 1);
    }, 0);
  }
}

TEST_CASE("cpu hotplug: cpuhp_setup_state calls startup on every online CPU and rolls back a "
          "failure",
          "[shim][hotplug]") {
  WarnCheck wc;
  emu::Machine m(config(emu::Mode::simulated, 3));
  m.exec([] {
    g_calls.clear();
    g_fail_startup_on = -1;
    int dyn = cpuhp_setup_state(CPUHP_BP_PREPARE_DYN, "t", prepare_b, dead_b);
    REQUIRE(dyn >= CPUHP_BP_PREPARE_DYN);
    CHECK(g_calls.size() == 3);
    cpuhp_remove_state_nocalls(static_cast<cpuhp_state>(dyn));
    g_calls.clear();
    g_fail_startup_on = 2;
    CHECK(cpuhp_setup_state(CPUHP_BP_PREPARE_DYN, "t", prepare_b, dead_b) == -ENOMEM);
    // prepare on 0, 1, 2 (fails), then dead on 0 and 1.
    REQUIRE(g_calls.size() == 5);
    CHECK(std::string(g_calls[3].what) == "dead_b");
    CHECK(g_calls[3].cpu == 0);
    CHECK(g_calls[4].cpu == 1);
    g_fail_startup_on = -1;
    // The failed registration was undone: the dynamic state is free again.
    int again = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "t", nullptr, nullptr);
    CHECK(again == dyn);
    cpuhp_remove_state_nocalls(static_cast<cpuhp_state>(again));
  }, 0);
}
