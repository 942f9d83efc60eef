// tile::compare: a user's tile kernel on every backend, timed and checked (tile/compare.hpp).
#include "tilekit/tile/compare.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace tilekit::tile {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double relative_error(const std::vector<double>& out, const std::vector<double>& ref) {
  if (out.size() != ref.size()) return INFINITY;
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) return INFINITY;  // NaN never passes
    diff += (out[i] - ref[i]) * (out[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// Median time of a device copy moving `bytes` bytes (half read, half written) on be.
double copy_seconds(Backend& be, double bytes, int reps) {
  const std::size_t half = std::max<std::size_t>(64, std::size_t(bytes / 2));
  void* src = be.allocate(half);
  void* dst = nullptr;
  try {
    dst = be.allocate(half);
    std::vector<unsigned char> pattern(half);
    for (std::size_t i = 0; i < half; ++i) pattern[i] = static_cast<unsigned char>(i * 131 + 7);
    be.copy_to_device(src, pattern.data(), half);
    be.device_copy(dst, src, half);  // warm-up
    std::vector<double> t;
    for (int r = 0; r < std::max(1, reps); ++r) t.push_back(be.time_seconds([&] { be.device_copy(dst, src, half); }));
    be.deallocate(dst);
    be.deallocate(src);
    return median(t);
  } catch (...) {
    if (dst) be.deallocate(dst);
    be.deallocate(src);
    throw;
  }
}

}  // namespace

std::vector<Row> compare(const Study& study, const Setup& setup, const std::vector<std::string>& launchable) {
  std::vector<std::string> names = study.backends.empty() ? compiled_backends() : study.backends;
  std::vector<Row> rows;
  for (const std::string& name : names) {
    Row skip;
    skip.backend = name;
    Backend* be = find_backend(name);
    if (!be) {
      skip.skipped = "not compiled into tilekit";
    } else if (!be->available()) {
      skip.skipped = "unavailable: " + be->unavailable_reason();
    } else if (std::find(launchable.begin(), launchable.end(), name) == launchable.end()) {
      skip.skipped = "this program was not compiled for it (tile.hpp: can_launch)";
    }
    if (!skip.skipped.empty()) {
      rows.push_back(skip);
      continue;
    }
    const double copy = copy_seconds(*be, study.bytes, study.reps);
    for (int tile : study.tiles) {
      Row r;
      r.backend = name;
      r.tile = tile;
      r.copy_gbps = copy > 0 ? study.bytes / copy / 1e9 : 0;
      try {
        Trial trial = setup(*be, tile);
        trial.run();  // warm-up: module load, first-touch, caches
        std::vector<double> t;
        for (int i = 0; i < std::max(1, study.reps); ++i) t.push_back(be->time_seconds(trial.run));
        r.seconds = median(t);
        r.rel_error = relative_error(trial.output(), study.reference);
        r.verified = r.rel_error <= study.tolerance;
        r.gbps = study.bytes / r.seconds / 1e9;
        r.gflops = study.flops / r.seconds / 1e9;
      } catch (const Error& e) {
        r.skipped = e.what();
      }
      rows.push_back(r);
    }
  }
  return rows;
}

bool print(const Study& study, const std::vector<Row>& rows, std::FILE* out) {
  bool ok = true;
  fmt::print(out, "{}\n", study.name);
  fmt::print(out, "{:<8} {:>5} {:>12} {:>10} {:>10} {:>9}  {}\n", "backend", "tile", "time ms", "GFLOP/s", "GB/s",
             "vs copy", "check");
  for (const Row& r : rows) {
    if (!r.skipped.empty()) {
      fmt::print(out, "{:<8} {:>5} skipped: {}\n", r.backend, r.tile ? std::to_string(r.tile) : "auto", r.skipped);
      continue;
    }
    ok = ok && r.verified;
    fmt::print(out, "{:<8} {:>5} {:>12.3f} {:>10} {:>10.1f} {:>8.0f}%  {} {:.1e}\n", r.backend,
               r.tile ? std::to_string(r.tile) : "auto", r.seconds * 1e3,
               study.flops > 0 ? fmt::format("{:.1f}", r.gflops) : std::string("-"), r.gbps,
               r.copy_gbps > 0 ? 100.0 * r.gbps / r.copy_gbps : 0.0, r.verified ? "ok" : "FAILED", r.rel_error);
  }
  fmt::print(out, "vs copy: the kernel's GB/s over a device copy of the same bytes on that backend, same run.\n");
  return ok;
}

}  // namespace tilekit::tile
