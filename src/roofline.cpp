// The roofline: the default ceiling measurement, the per-process cache, and the model itself.
#include "tilekit/roofline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include <fmt/format.h>

namespace tilekit {

Ceilings Backend::measure_ceilings() {
  const auto t0 = std::chrono::steady_clock::now();
  Ceilings c;
  // Several times the largest cache, so the copy streams from memory rather than a cache.
  const DeviceInfo& d = info();
  const std::size_t bytes = std::max<std::size_t>(std::size_t(64) << 20, 4 * std::max(d.l2_bytes, d.l3_bytes));
  void* src = allocate(bytes);
  void* dst = nullptr;
  try {
    dst = allocate(bytes);
    device_copy(dst, src, bytes);  // first touch and warm-up
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 5; ++i) best = std::min(best, time_seconds([&] { device_copy(dst, src, bytes); }));
    c.gbps = 2.0 * double(bytes) / best * 1e-9;
  } catch (...) {
    deallocate(src);
    if (dst) deallocate(dst);
    throw;
  }
  deallocate(src);
  deallocate(dst);
  c.bandwidth_method = fmt::format("device_copy of {} MiB, best of 5", bytes >> 20);
  c.compute_method = "not measured (the backend has no FMA kernel)";
  c.measure_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

const Ceilings& ceilings(Backend& be) {
  static std::mutex mu;
  static std::map<const Backend*, Ceilings> cache;  // backends live until exit: the key stays valid
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(&be);
  if (it == cache.end()) it = cache.emplace(&be, be.measure_ceilings()).first;
  return it->second;
}

std::vector<std::string> ceiling_warnings(const Ceilings& c, double tolerance) {
  std::vector<std::string> w;
  auto check = [&](const char* what, double measured, double estimate, const char* unit) {
    if (measured <= 0 || estimate <= 0) return;
    const double ratio = measured / estimate;
    if (std::abs(ratio - 1.0) > tolerance)
      w.push_back(fmt::format("measured {} {:.1f} {} is {:.0f}% of the estimate {:.1f} {}", what, measured, unit,
                              100 * ratio, estimate, unit));
  };
  check("memory bandwidth", c.gbps, c.est_gbps, "GB/s");
  check("fp32 peak", c.gflops_f32, c.est_gflops_f32, "GFLOP/s");
  check("fp64 peak", c.gflops_f64, c.est_gflops_f64, "GFLOP/s");
  return w;
}

RoofPoint roof_point(const Ceilings& c, DType t, double flops, double bytes, double seconds) {
  RoofPoint r;
  r.peak_gflops = c.gflops(t);
  const Ceilings::Level level = c.bandwidth_for(bytes);
  r.peak_gbps = level.gbps;
  r.level = level.name;
  r.intensity = bytes > 0 ? flops / bytes : 0;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (flops > 0) {
    r.achieved = seconds > 0 ? flops / seconds * 1e-9 : 0;
    // With one ceiling unmeasured the roof is not known: an unknown peak is no bound of zero.
    r.roof = r.peak_gflops > 0 && r.peak_gbps > 0 ? std::min(r.peak_gflops, r.intensity * r.peak_gbps) : nan;
  } else {
    r.achieved = seconds > 0 ? bytes / seconds * 1e-9 : 0;
    r.roof = r.peak_gbps > 0 ? r.peak_gbps : nan;
  }
  r.roof_fraction = r.roof > 0 ? r.achieved / r.roof : nan;
  return r;
}

}  // namespace tilekit
