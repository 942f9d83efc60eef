// The roofline SVG (plot.hpp). Coordinates are computed here, so the file needs no scripting or
// fonts beyond the renderer's default sans-serif, and any SVG 1.1 renderer (browsers, rsvg-convert,
// Inkscape) draws the same picture.
#include "plot.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace tilekit::cli {
namespace {

constexpr double kWidth = 1000, kX0 = 80, kX1 = 600, kTop = 50, kBottom = 400;  // chart area
constexpr double kLegendX = 630, kStripTop = 460, kStripBottom = 500;
constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

// A decade-aligned log axis over [lo, hi] mapped onto pixels [p0, p1].
struct LogAxis {
  double lo, hi, p0, p1;
  static LogAxis fit(double lo, double hi, double p0, double p1) {
    lo = std::pow(10, std::floor(std::log10(lo)));
    hi = std::pow(10, std::ceil(std::log10(hi)));
    if (hi <= lo) hi = lo * 10;
    return {lo, hi, p0, p1};
  }
  double operator()(double v) const {
    return p0 + (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) * (p1 - p0);
  }
  double px_per_decade() const { return (p1 - p0) / (std::log10(hi) - std::log10(lo)); }
};

std::string tick_label(double v) {
  if (v >= 1e3) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
}

std::string marker(const std::string& variant, bool peer, double x, double y, const std::string& color) {
  const std::string style = fmt::format(R"~(fill="{}" stroke="black" stroke-width="0.8")~", color);
  if (peer)
    return fmt::format(R"~(<path class="point" d="M{:.1f},{:.1f} l6,6 l-6,6 l-6,-6 z" {}/>)~", x, y - 6, style);
  if (variant == "naive") return fmt::format(R"~(<circle class="point" cx="{:.1f}" cy="{:.1f}" r="5" {}/>)~", x, y, style);
  if (variant == "tiled")
    return fmt::format(R"~(<rect class="point" x="{:.1f}" y="{:.1f}" width="10" height="10" {}/>)~", x - 5, y - 5, style);
  return fmt::format(R"~(<path class="point" d="M{:.1f},{:.1f} l6,11 l-12,0 z" {}/>)~", x, y - 6, style);
}

std::string text(double x, double y, const std::string& s, const char* extra = "") {
  return fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" {}>{}</text>)~", x, y, extra, esc(s));
}

std::string device_panel(const PlotDevice& d, double y_off, int index, double& height) {
  std::string o;
  // Colors by (backend, operation); the same pair keeps its color everywhere in the panel.
  std::map<std::string, std::string> colors;
  for (const auto& p : d.points) {
    const std::string key = p.backend + " " + p.op;
    if (!colors.count(key)) colors[key] = kPalette[colors.size() % std::size(kPalette)];
  }
  std::vector<const PlotPoint*> flop_pts, byte_pts;
  for (const auto& p : d.points) (p.intensity > 0 && p.gflops > 0 ? flop_pts : byte_pts).push_back(&p);

  double xlo = 1e30, xhi = 0, ylo = 1e30, yhi = 0;
  for (const auto& r : d.roofs)
    if (r.peak_gflops > 0 && r.peak_gbps > 0) {
      const double ridge = r.peak_gflops / r.peak_gbps;
      xlo = std::min(xlo, ridge / 100);
      xhi = std::max(xhi, ridge * 10);
      yhi = std::max(yhi, r.peak_gflops * 2);
      ylo = std::min(ylo, r.peak_gflops / 1e3);
    }
  for (const auto* p : flop_pts) {
    xlo = std::min(xlo, p->intensity / 2);
    xhi = std::max(xhi, p->intensity * 2);
    ylo = std::min(ylo, p->gflops / 2);
    yhi = std::max(yhi, p->gflops * 2);
  }
  if (xhi <= 0) xlo = 0.01, xhi = 100;
  if (yhi <= 0) ylo = 1, yhi = 1000;
  const LogAxis X = LogAxis::fit(xlo, xhi, kX0, kX1);
  const LogAxis Y = LogAxis::fit(ylo, yhi, y_off + kBottom, y_off + kTop);

  o += fmt::format(R"~(<g class="device" id="device{}">)~", index) + "\n";
  o += text(kX0, y_off + 28, fmt::format("{} ({})", d.name, d.dtype), R"~(font-size="16" font-weight="bold")~") + "\n";
  o += fmt::format(R"~(<clipPath id="clip{}"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath>)~", index, kX0,
                   y_off + kTop, kX1 - kX0, kBottom - kTop) + "\n";
  o += fmt::format(R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="black"/>)~", kX0, y_off + kTop,
                   kX1 - kX0, kBottom - kTop) + "\n";
  for (double v = X.lo; v <= X.hi * 1.001; v *= 10) {
    o += fmt::format(R"~(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#ddd"/>)~", X(v), y_off + kTop,
                     y_off + kBottom) + "\n";
    o += text(X(v), y_off + kBottom + 16, tick_label(v), R"~(text-anchor="middle" font-size="11")~") + "\n";
  }
  for (double v = Y.lo; v <= Y.hi * 1.001; v *= 10) {
    o += fmt::format(R"~(<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" stroke="#ddd"/>)~", kX0, Y(v), kX1, Y(v)) + "\n";
    o += text(kX0 - 6, Y(v) + 4, tick_label(v), R"~(text-anchor="end" font-size="11")~") + "\n";
  }
  o += text((kX0 + kX1) / 2, y_off + kBottom + 34, "arithmetic intensity (useful FLOP per compulsory byte)",
            R"~(text-anchor="middle" font-size="12")~") + "\n";
  o += text(22, y_off + (kTop + kBottom) / 2, "GFLOP/s",
            fmt::format(R"~(text-anchor="middle" font-size="12" transform="rotate(-90 22 {:.1f})")~",
                        y_off + (kTop + kBottom) / 2).c_str()) + "\n";

  // The roofs: bandwidth slope up to the ridge point, then the compute roof.
  const char* dashes[] = {"", "8,4", "3,3", "10,3,2,3"};
  // y = bandwidth x intensity rises one decade per decade: on screen, this angle (SVG's y points down).
  const double slope_deg = std::atan2(Y.px_per_decade(), X.px_per_decade()) * 180 / M_PI;
  int ri = 0;
  for (const auto& r : d.roofs) {
    if (r.peak_gflops <= 0 || r.peak_gbps <= 0) continue;
    const double ridge = r.peak_gflops / r.peak_gbps;
    const double x_start = std::max(X.lo, Y.lo / r.peak_gbps);
    o += fmt::format(
        R"~(<polyline class="roof" clip-path="url(#clip{})" points="{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}" fill="none" stroke="#333" stroke-width="2" stroke-dasharray="{}"/>)~",
        index, X(x_start), Y(x_start * r.peak_gbps), X(ridge), Y(r.peak_gflops), X(X.hi), Y(r.peak_gflops),
        dashes[ri % 4]) + "\n";
    o += fmt::format(R"~(<circle class="ridge" cx="{:.1f}" cy="{:.1f}" r="4" fill="white" stroke="#333" stroke-width="2"/>)~",
                     X(ridge), Y(r.peak_gflops)) + "\n";
    // Below and left of the point, clear of the roof labels at the right; one line per backend.
    o += text(X(ridge) - 6, Y(r.peak_gflops) + 16 + 13 * ri, fmt::format("{} ridge {:.3g} FLOP/B", r.backend, ridge),
              R"~(font-size="11" text-anchor="end")~") + "\n";
    // Cache levels: a problem that fits there streams at that level's bandwidth (dotted).
    for (const auto& [level, gbps] : r.caches) {
      const double xs = std::max(X.lo, Y.lo / gbps), xr = r.peak_gflops / gbps;
      o += fmt::format(
          R"~(<polyline class="cache-roof" clip-path="url(#clip{})" points="{:.1f},{:.1f} {:.1f},{:.1f}" fill="none" stroke="#888" stroke-width="1" stroke-dasharray="2,3"/>)~",
          index, X(xs), Y(xs * gbps), X(xr), Y(r.peak_gflops)) + "\n";
    }
    o += text(kX1 - 4, Y(r.peak_gflops) - 5, fmt::format("{}: {:.4g} GFLOP/s", r.backend, r.peak_gflops),
              R"~(text-anchor="end" font-size="11")~") + "\n";
    // The slope's label, rotated to lie along it: the fastest memory's above its line, the next
    // one's below, so two close lines keep their labels outside the gap between them; each at
    // its own place along the slope.
    int rank = 0;
    for (const auto& o2 : d.roofs) rank += o2.peak_gbps > r.peak_gbps ? 1 : 0;
    const double dy = rank == 1 ? 14 : -6;
    const double lo = std::max(x_start, X.lo);
    const double xm = lo * std::pow(ridge / lo, 0.5 / (1 + 0.6 * ri));
    o += text(X(xm), Y(xm * r.peak_gbps) + dy, fmt::format("{} memory: {:.4g} GB/s", r.backend, r.peak_gbps),
              fmt::format(R"~(text-anchor="middle" font-size="11" transform="rotate({:.1f} {:.1f} {:.1f})")~",
                          slope_deg, X(xm), Y(xm * r.peak_gbps) + dy).c_str()) + "\n";
    ++ri;
  }
  for (const auto* p : flop_pts)
    o += marker(p->variant, p->peer, X(p->intensity), Y(p->gflops), colors[p->backend + " " + p->op]) + "\n";

  double bottom = kBottom + 40;
  // Points without FLOPs (transpose, copies) have no place on the intensity axis: a strip of
  // bandwidth below, with each backend's bandwidth ceiling.
  if (!byte_pts.empty()) {
    double lo = 1e30, hi = 0;
    for (const auto* p : byte_pts) lo = std::min(lo, p->gbps / 2), hi = std::max(hi, p->gbps * 2);
    for (const auto& r : d.roofs) {
      if (r.peak_gbps > 0) hi = std::max(hi, r.peak_gbps * 1.5), lo = std::min(lo, r.peak_gbps / 100);
      for (const auto& l : r.caches) hi = std::max(hi, l.second * 1.5);
    }
    const LogAxis B = LogAxis::fit(std::max(lo, 1e-6), hi, kX0, kX1);
    const double top = y_off + kStripTop, bot = y_off + kStripBottom;
    o += text(kX0, top - 8, "no FLOPs (transpose, copies): GB/s against the bandwidth ceiling", R"~(font-size="12")~") + "\n";
    o += fmt::format(R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="black"/>)~", kX0, top, kX1 - kX0,
                     bot - top) + "\n";
    for (double v = B.lo; v <= B.hi * 1.001; v *= 10)
      o += text(B(v), bot + 14, tick_label(v), R"~(text-anchor="middle" font-size="11")~") + "\n";
    for (const auto& r : d.roofs) {
      if (r.peak_gbps > 0)
        o += fmt::format(R"~(<line class="roof" x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#333" stroke-width="2"/>)~",
                         B(r.peak_gbps), top, bot) + "\n";
      for (const auto& [level, gbps] : r.caches)
        if (gbps < B.hi)
          o += fmt::format(R"~(<line class="cache-roof" x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#888" stroke-dasharray="2,3"/>)~",
                           B(gbps), top, bot) + "\n";
    }
    for (const auto* p : byte_pts)
      o += marker(p->variant, p->peer, B(p->gbps), (top + bot) / 2, colors[p->backend + " " + p->op]) + "\n";
    o += text((kX0 + kX1) / 2, bot + 30, "GB/s (bytes read + written)", R"~(text-anchor="middle" font-size="12")~") + "\n";
    bottom = kStripBottom + 40;
  }

  // The legend: one entry per point.
  double ly = y_off + kTop;
  o += text(kLegendX, ly, "backend operation variant: % of roof", R"~(font-size="12" font-weight="bold")~") + "\n";
  for (const auto& p : d.points) {
    ly += 17;
    o += marker(p.variant, p.peer, kLegendX + 8, ly - 4, colors[p.backend + " " + p.op]) + "\n";
    const std::string frac = std::isfinite(p.roof_fraction) ? fmt::format(": {:.0f}%", 100 * p.roof_fraction) : "";
    o += text(kLegendX + 22, ly, fmt::format("{} {} {}{}{}", p.backend, p.op, p.peer ? "*" : "", p.variant, frac),
              R"~(font-size="12")~") + "\n";
  }
  o += text(kLegendX, ly + 24, "circle naive, square tiled, triangle optimized,", R"~(font-size="11" fill="#555")~") + "\n";
  o += text(kLegendX, ly + 38, "diamond * peer; lines: measured ceilings;", R"~(font-size="11" fill="#555")~") + "\n";
  o += text(kLegendX, ly + 52, "dotted: cache bandwidths (bytes that fit there):", R"~(font-size="11" fill="#555")~") + "\n";
  for (const auto& r : d.roofs) {
    std::string levels;
    for (const auto& [level, gbps] : r.caches) levels += fmt::format("{}{} {:.4g}", levels.empty() ? "" : ", ", level, gbps);
    if (levels.empty()) continue;
    ly += 14;
    o += text(kLegendX + 10, ly + 52, fmt::format("{}: {} GB/s", r.backend, levels), R"~(font-size="11" fill="#555")~") + "\n";
  }
  ly += 14;
  o += "</g>\n";
  height = std::max(bottom, ly - y_off + 60);
  return o;
}

}  // namespace

std::string roofline_svg(const std::vector<PlotDevice>& devices) {
  std::string body;
  double y = 0;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    double h = 0;
    body += device_panel(devices[i], y, int(i), h);
    y += h;
  }
  if (devices.empty()) {
    body += text(20, 40, "no rows to plot") + "\n";
    y = 60;
  }
  return fmt::format(R"(<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1:.0f}" viewBox="0 0 {0} {1:.0f}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
{2}</svg>
)",
                     kWidth, y, body);
}

}  // namespace tilekit::cli
