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

namespace {
std::mutex g_mu;
std::map<const Backend*, Ceilings> g_cache;  // backends live until exit: the key stays valid
}  // namespace

const Ceilings& ceilings(Backend& be) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_cache.find(&be);
  if (it == g_cache.end()) it = g_cache.emplace(&be, be.measure_ceilings()).first;
  return it->second;
}

const Ceilings& remeasure_ceilings(Backend& be) {
  Ceilings fresh = be.measure_ceilings();
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_cache.find(&be);
  if (it == g_cache.end()) return g_cache.emplace(&be, std::move(fresh)).first->second;
  Ceilings& c = it->second;
  c.gbps = std::max(c.gbps, fresh.gbps);
  c.gflops_f32 = std::max(c.gflops_f32, fresh.gflops_f32);
  c.gflops_f64 = std::max(c.gflops_f64, fresh.gflops_f64);
  for (std::size_t i = 0; i < c.caches.size() && i < fresh.caches.size(); ++i)
    c.caches[i].gbps = std::max(c.caches[i].gbps, fresh.caches[i].gbps);
  c.measure_seconds += fresh.measure_seconds;
  c.bandwidth_method += " (the higher of two samples, before and after the rows)";
  c.compute_method += " (the higher of two samples)";
  return c;
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

#include "tilekit/ops.hpp"

namespace tilekit {

Traffic predicted_traffic(Variant v, const Problem& p, const TileConfig& tile, double line) {
  Traffic t;
  t.compulsory = compulsory_bytes(p);
  t.flops = useful_flops(p);
  const double e = double(size_of(p.dtype)), m = double(p.m), n = double(p.n), k = double(p.k);
  const bool tiled = v != Variant::naive && tile.rows > 0 && tile.cols > 0;
  switch (p.op) {
    case Op::gemm: {
      if (!tiled) {
        // Each multiply-add loads one element of A and one of B: 2e bytes per FMA (8 for float).
        t.bytes = 2 * e * m * n * k + e * m * n;
        t.model = "naive: 2 loads per FMA, 2e*M*N*K + e*M*N";
      } else {
        // A block of C (rows x cols) reads its rows of A and its columns of B once: A is read
        // N / cols times over, B M / rows times.
        const double tr = tile.rows, tc = tile.cols;
        t.bytes = e * m * k * std::ceil(n / tc) + e * k * n * std::ceil(m / tr) + e * m * n;
        t.model = fmt::format("{}x{} blocks of C: A read N/{:g} times, B M/{:g} times, C written once", tile.rows,
                              tile.cols, tc, tr);
      }
      break;
    }
    case Op::transpose: {
      if (!tiled) {
        // Reads along rows are contiguous; each write lands in a different output row, so every
        // element written moves a whole line (or sector).
        t.bytes = e * m * n + std::max(e, line) * m * n;
        t.model = fmt::format("naive: reads contiguous, each write a {:g}-byte line", line);
      } else {
        // A tile's output rows are `rows` elements long: a write moves max(rows * e, line) bytes.
        const double run = double(tile.rows) * e;
        t.bytes = e * m * n + e * m * n * std::max(1.0, line / run);
        t.model = fmt::format("{}x{} tiles: output runs of {:g} B against {:g}-byte lines", tile.rows, tile.cols, run, line);
      }
      break;
    }
    case Op::conv2d: {
      if (!tiled) {
        // Every output loads its R x R input window (the filter stays in constant/L1 memory).
        t.bytes = e * m * n * k * k + e * m * n + e * k * k;
        t.model = "naive: R*R input loads per output, e*H*W*R^2 + e*H*W";
      } else {
        // A tile of outputs loads its input tile with the halo once.
        const double tr = tile.rows, tc = tile.cols;
        t.bytes = e * m * n * (tr + k - 1) * (tc + k - 1) / (tr * tc) + e * m * n + e * k * k;
        t.model = fmt::format("{}x{} output tiles load (rows+R-1)x(cols+R-1) inputs", tile.rows, tile.cols);
      }
      break;
    }
  }
  return t;
}

}  // namespace tilekit
