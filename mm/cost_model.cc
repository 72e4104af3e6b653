// SPDX-License-Identifier: GPL-2.0-only
// mm/cost_model.cc: the simulated-mode cost table: its vocabulary, parser and the table in use
// (see cost_model.h).
#include "mm/cost_model.h"

#include <cctype>
#include <cstddef>
#include <iterator>

namespace umemcg::emu {

namespace {

constexpr CostName kCostNames[] = {
    {"anon_fault", &CostModel::anon_fault, "anon page fault, per page"},
    {"zap", &CostModel::zap, "zap of one mapped page or swap entry"},
    {"read_miss", &CostModel::read_miss, "page-cache read of a missing page"},
    {"read_hit", &CostModel::read_hit, "page-cache read of a cached page"},
    {"reclaim_scan", &CostModel::reclaim_scan, "one page scanned by reclaim"},
    {"reclaim_visit", &CostModel::reclaim_visit, "one memcg visited by a reclaim walk"},
    {"swap_out", &CostModel::swap_out, "one page written to swap"},
    {"swap_in", &CostModel::swap_in, "one page read back from swap"},
};

// Written by set_cost_model() at boot only (see its contract), read by every charging step.
CostModel g_cost_model;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The next blank-separated word of @line from *@pos ("" at the end).
std::string_view next_word(std::string_view line, std::size_t *pos) {
  while (*pos < line.size() && is_blank(line[*pos])) ++*pos;
  const std::size_t start = *pos;
  while (*pos < line.size() && !is_blank(line[*pos])) ++*pos;
  return line.substr(start, *pos - start);
}

// A decimal number of nanoseconds in [1, kCostMaxNs], digits only.
bool parse_ns(std::string_view s, std::uint64_t *ns) {
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
    if (v > kCostMaxNs) return false;  // checked per digit: no overflow
  }
  if (v == 0) return false;
  *ns = v;
  return true;
}

std::string known_names() {
  std::string s;
  for (const CostName &n : kCostNames) s += (s.empty() ? "" : ", ") + std::string(n.name);
  return s;
}

}  // namespace

std::span<const CostName> cost_names() { return kCostNames; }

bool parse_cost_table(std::string_view text, CostModel *costs, std::string *error) {
  CostModel next = *costs;
  bool seen[std::size(kCostNames)] = {};
  unsigned lineno = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    lineno++;
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    std::size_t pos = 0;
    const std::string_view name = next_word(line, &pos);
    if (name.empty()) continue;  // blank or comment only
    const std::string_view value = next_word(line, &pos);
    const std::string_view extra = next_word(line, &pos);
    const std::string where = "line " + std::to_string(lineno) + ": ";
    std::size_t i = 0;
    while (i < std::size(kCostNames) && name != kCostNames[i].name) i++;
    if (i == std::size(kCostNames)) {
      *error = where + "unknown cost '" + std::string(name) + "' (known: " + known_names() + ")";
      return false;
    }
    if (value.empty() || !extra.empty()) {
      *error = where + "expected 'NAME NS', one cost a line";
      return false;
    }
    std::uint64_t ns = 0;
    if (!parse_ns(value, &ns)) {
      *error = where + std::string(name) + ": '" + std::string(value) +
               "' is not a number of nanoseconds in 1.." + std::to_string(kCostMaxNs);
      return false;
    }
    if (seen[i]) {
      *error = where + std::string(name) + " given twice";
      return false;
    }
    seen[i] = true;
    next.*kCostNames[i].field = ns;
  }
  *costs = next;
  return true;
}

std::string format_cost_table(const CostModel &costs) {
  std::string s;
  for (const CostName &n : kCostNames)
    s += std::string(n.name) + " " + std::to_string(costs.*n.field) + "\n";
  return s;
}

void set_cost_model(const CostModel &costs) { g_cost_model = costs; }

const CostModel &cost_model() { return g_cost_model; }

}  // namespace umemcg::emu
