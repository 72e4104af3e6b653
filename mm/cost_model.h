// SPDX-License-Identifier: GPL-2.0-only
// mm/cost_model.h: the machine time the memory model charges in simulated mode, one table.
//
// Each modelled step of the memory model (an anon fault, a zapped page, a page-cache read,
// a page scanned by reclaim, a memcg visited by a reclaim walk, a page written to or read from
// swap) calls emu::consume_time with its cost from this table. In native mode consume_time
// does nothing: the real work is the cost. The built-in defaults (CostModel{}) are fixed
// constants, so that a run is the same on every host; a machine may boot with another table
// (memcg_boot_params::costs, `umemcg sh --costs FILE`), and is then deterministic for that
// table. docs/memory-model.md gives each default's origin and how `umemcg calibrate` measures
// the host kernel's own figures.
//
// A cost table is text, one cost a line: `NAME NS`, NAME one of cost_names() and NS a decimal
// number of nanoseconds in [1, kCostMaxNs]; '#' starts a comment (to the end of the line), blank
// lines are ignored, a name given twice is an error, a name not given keeps its default.
// Emulation: the kernel has no such table; its costs are what the hardware takes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace umemcg::emu {

// Nanoseconds of machine time per step; the defaults are the built-in table.
struct CostModel {
  std::uint64_t anon_fault = 1200;    // trap, allocate and zero a page, charge, map, LRU add
  std::uint64_t zap = 350;            // clear one entry (page or swap entry), free, uncharge
  std::uint64_t read_miss = 2000;     // page-cache read of a missing page: allocate, charge, insert
  std::uint64_t read_hit = 250;       // page-cache read of a cached page: a 4 KiB copy
  std::uint64_t reclaim_scan = 60;    // one page scanned by reclaim (isolate, check, free/putback)
  std::uint64_t reclaim_visit = 200;  // one memcg visited by a reclaim walk, scanned or not
  std::uint64_t swap_out = 10000;     // one page written to the swap device by reclaim
  std::uint64_t swap_in = 25000;      // one page read back from swap (on top of anon_fault)

  bool operator==(const CostModel &) const = default;
};

// The largest cost a table may give: one second per step.
inline constexpr std::uint64_t kCostMaxNs = 1000000000ull;

// One entry of the table's vocabulary: the name a cost table uses and the field it sets.
struct CostName {
  const char *name;
  std::uint64_t CostModel::*field;
  const char *what;  // one line: what the cost is per
};

// Every cost's name, in the order a formatted table lists them.
std::span<const CostName> cost_names();

/**
 * parse_cost_table - read a cost table
 * @text: the table (see the banner for the syntax)
 * @costs: (in/out) starts as the table's base (normally CostModel{}); each line sets one field
 * @error: (output) on failure, "line N: WHAT" naming the first bad line
 *
 * Returns true, or false with *@error set and *@costs unchanged.
 */
bool parse_cost_table(std::string_view text, CostModel *costs, std::string *error);

// The table as text parse_cost_table() reads back: one `NAME NS` line per cost.
std::string format_cost_table(const CostModel &costs);

/**
 * set_cost_model - the table the memory model charges from
 * @costs: the table (copied)
 *
 * Context: at boot (mem_cgroup_boot), before any task of the machine faults, reads or
 * reclaims; the machine's task start orders this write before every reader.
 */
void set_cost_model(const CostModel &costs);

// The table in use: CostModel{} until a boot sets another.
const CostModel &cost_model();

}  // namespace umemcg::emu
