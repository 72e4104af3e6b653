// SPDX-License-Identifier: GPL-2.0-only
// tools/scenario/plot.cc: the SVG bar charts of plot.h.
//
// Mirrors: nothing of the kernel.
#include "tools/scenario/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace umemcg::scenario {

namespace {

constexpr int kPanelW = 300, kPanelH = 220, kCols = 3, kHeadH = 36;
constexpr int kPlotL = 56, kPlotR = 10, kPlotT = 28, kPlotB = 44;
const char *const kColors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                               "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};

std::string esc(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

// A short label for an axis value (1.2k, 3.4M).
std::string axis_label(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a >= 1e9) std::snprintf(buf, sizeof(buf), "%.3gG", v / 1e9);
  else if (a >= 1e6) std::snprintf(buf, sizeof(buf), "%.3gM", v / 1e6);
  else if (a >= 1e3) std::snprintf(buf, sizeof(buf), "%.3gk", v / 1e3);
  else std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

// The metrics a scenario plots, in order: its own list, else every metric of any variant.
std::vector<std::string> plotted(const ScenarioResult &r) {
  if (!r.scenario->plot_metrics.empty()) return r.scenario->plot_metrics;
  std::vector<std::string> out;
  for (const auto &[variant, ms] : r.summary)
    for (const auto &[name, s] : ms)
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  return out;
}

void panel(std::ostringstream &o, const ScenarioResult &r, const std::string &metric, int x0,
           int y0) {
  struct Bar {
    std::string variant;
    const Stat *s;
    size_t color;  // the variant's place in the summary: one colour per variant in every panel
  };
  std::vector<Bar> bars;
  size_t index = 0;
  for (const auto &[variant, ms] : r.summary) {
    auto it = ms.find(metric);
    if (it != ms.end()) bars.push_back({variant, &it->second, index});
    ++index;
  }
  o << "<g transform=\"translate(" << x0 << "," << y0 << ")\">\n";
  o << "<text x=\"" << kPanelW / 2 << "\" y=\"16\" text-anchor=\"middle\" font-size=\"11\">"
    << esc(metric) << "</text>\n";
  const int pw = kPanelW - kPlotL - kPlotR, ph = kPanelH - kPlotT - kPlotB;
  o << "<rect x=\"" << kPlotL << "\" y=\"" << kPlotT << "\" width=\"" << pw << "\" height=\""
    << ph << "\" fill=\"none\" stroke=\"#999\"/>\n";
  if (bars.empty()) {
    o << "<text x=\"" << kPanelW / 2 << "\" y=\"" << kPlotT + ph / 2
      << "\" text-anchor=\"middle\" font-size=\"10\">no data</text>\n</g>\n";
    return;
  }
  double lo = 0, hi = 0;
  for (const Bar &b : bars) {
    lo = std::min(lo, b.s->min);
    hi = std::max(hi, b.s->max);
  }
  if (hi == lo) hi = lo + 1;
  auto y_of = [&](double v) { return kPlotT + ph - (v - lo) / (hi - lo) * ph; };
  // Axis: zero (or the lowest value), the top, and the baseline.
  for (double v : {lo, (lo + hi) / 2, hi})
    o << "<text x=\"" << kPlotL - 4 << "\" y=\"" << num(y_of(v) + 3)
      << "\" text-anchor=\"end\" font-size=\"9\">" << esc(axis_label(v)) << "</text>\n";
  const double slot = static_cast<double>(pw) / static_cast<double>(bars.size());
  const double bw = std::min(slot * 0.6, 40.0);
  for (size_t i = 0; i < bars.size(); i++) {
    const Bar &b = bars[i];
    const double cx = kPlotL + slot * (static_cast<double>(i) + 0.5);
    const double y0v = y_of(0 < lo ? lo : 0), ym = y_of(b.s->median);
    o << "<rect x=\"" << num(cx - bw / 2) << "\" y=\"" << num(std::min(y0v, ym))
      << "\" width=\"" << num(bw) << "\" height=\"" << num(std::fabs(y0v - ym))
      << "\" fill=\"" << kColors[b.color % std::size(kColors)] << "\"><title>" << esc(b.variant)
      << ": median " << num(b.s->median) << ", min " << num(b.s->min) << ", max "
      << num(b.s->max) << ", n " << b.s->n << "</title></rect>\n";
    // The min-max whisker.
    o << "<line x1=\"" << num(cx) << "\" y1=\"" << num(y_of(b.s->min)) << "\" x2=\"" << num(cx)
      << "\" y2=\"" << num(y_of(b.s->max)) << "\" stroke=\"#222\"/>\n";
    for (double v : {b.s->min, b.s->max})
      o << "<line x1=\"" << num(cx - bw / 4) << "\" y1=\"" << num(y_of(v)) << "\" x2=\""
        << num(cx + bw / 4) << "\" y2=\"" << num(y_of(v)) << "\" stroke=\"#222\"/>\n";
    if (b.s->values.size() > 1)
      for (size_t k = 0; k < b.s->values.size(); k++) {
        const double dx = (static_cast<double>(k) + 0.5) / static_cast<double>(b.s->values.size());
        o << "<circle cx=\"" << num(cx - bw / 2 + dx * bw) << "\" cy=\""
          << num(y_of(b.s->values[k])) << "\" r=\"2\" fill=\"#000\" fill-opacity=\"0.6\"/>\n";
      }
    o << "<text x=\"" << num(cx) << "\" y=\"" << kPlotT + ph + 14
      << "\" text-anchor=\"middle\" font-size=\"9\">" << esc(b.variant) << "</text>\n";
  }
  o << "</g>\n";
}

}  // namespace

std::string render_svg(const std::vector<ScenarioResult> &results) {
  std::ostringstream body;
  int y = 0;
  for (const ScenarioResult &r : results) {
    body << "<text x=\"8\" y=\"" << y + 24 << "\" font-size=\"15\" font-weight=\"bold\">"
         << esc(r.scenario->name) << " (seed " << esc(r.scenario->seed) << ", "
         << r.seeds.size() << " seed" << (r.seeds.size() == 1 ? "" : "s") << ")</text>\n";
    y += kHeadH;
    const std::vector<std::string> metrics = plotted(r);
    for (size_t i = 0; i < metrics.size(); i++)
      panel(body, r, metrics[i], static_cast<int>(i % kCols) * kPanelW,
            y + static_cast<int>(i / kCols) * kPanelH);
    y += static_cast<int>((metrics.size() + kCols - 1) / kCols) * kPanelH;
  }
  std::ostringstream o;
  const int w = kCols * kPanelW, h = std::max(y, kHeadH);
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << w
    << "\" height=\"" << h << "\" viewBox=\"0 0 " << w << " " << h
    << "\" font-family=\"sans-serif\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << body.str() << "</svg>\n";
  return o.str();
}

}  // namespace umemcg::scenario
