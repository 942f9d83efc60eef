// `compare --plot FILE.svg`: one log-log roofline per device, written as SVG directly (no
// Debian-packaged C++ plotting library writes SVG without a GUI toolkit or gnuplot behind it).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tilekit::cli {

struct PlotRoof {
  std::string backend;  // whose measured ceilings these are (serial: 1 thread, openmp: all...)
  double peak_gflops = 0, peak_gbps = 0;  // the FMA peak of the plotted dtype; memory bandwidth
  std::vector<std::pair<std::string, double>> caches;  // cache levels' bandwidths, drawn dotted
};
struct PlotPoint {
  std::string backend, op, variant;  // variant: the peer's name for peer rows
  bool peer = false;
  double intensity = 0;  // FLOP/B; 0 = no FLOPs (transpose, copies): drawn on the bandwidth strip
  double gflops = 0, gbps = 0;
  double roof_fraction = 0;  // for the legend; NaN when unknown
};
struct PlotDevice {
  std::string name, dtype;
  std::vector<PlotRoof> roofs;
  std::vector<PlotPoint> points;
};

// The whole SVG document: the devices stacked top to bottom.
std::string roofline_svg(const std::vector<PlotDevice>& devices);

}  // namespace tilekit::cli
