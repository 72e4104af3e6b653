// SPDX-License-Identifier: GPL-2.0-only
// tools/scenario/registry.cc: the scenarios `umemcg scenario` knows, in the order of the seed
// documents (scenario.h).
//
// Mirrors: nothing of the kernel.
#include "tools/scenario/scenario.h"

namespace umemcg::scenario {

const std::vector<Scenario> &scenarios() {
  static const std::vector<Scenario> kAll = {
      kernfs_notify_scenario(),
      async_reclaim_scenario(),
      stat_fetch_scenario(),
      stock_designs_scenario(),
  };
  return kAll;
}

}  // namespace umemcg::scenario
