// A device's two roofline ceilings (Williams, Waterman, Patterson 2009), as one backend reaches
// them: its memory bandwidth and its arithmetic peak per element type, each measured and each
// beside the datasheet-style estimate computed from the device's properties.
#pragma once

#include <string>
#include <vector>

#include "tilekit/types.hpp"

namespace tilekit {

struct Ceilings {
  // Measured. gbps: bytes read + written per second / 1e9 by a streaming copy through the
  // backend's memory. gflops: independent FMA chains on every thread / SM the backend uses
  // (2 FLOPs per FMA). 0 = not measured.
  double gbps = 0, gflops_f32 = 0, gflops_f64 = 0;
  // Datasheet-style estimates from the device's properties (cores x FMA lanes x clock, memory
  // clock x bus width). 0 = not computable here.
  double est_gbps = 0, est_gflops_f32 = 0, est_gflops_f64 = 0;
  std::string bandwidth_method, compute_method, estimate_basis;  // how each figure came about
  double measure_seconds = 0;                                    // what measuring them cost

  // Cache bandwidths (the cache-aware roofline): a problem whose compulsory bytes fit in
  // `bytes` (the capacity the backend's threads have at that level) streams from that level, not
  // from memory. Smallest level first; empty where only memory was measured (GPUs).
  struct Level {
    std::string name;
    double bytes = 0, gbps = 0;
  };
  std::vector<Level> caches;

  double gflops(DType t) const { return t == DType::f32 ? gflops_f32 : gflops_f64; }
  // The bandwidth ceiling for a problem of `footprint` bytes and the level it comes from. Up to
  // kServes times a level's capacity, part of the bytes still come from that level (a cache
  // keeps what it can): its faster roof then bounds the run; the next level's alone would not.
  static constexpr double kServes = 2;
  Level bandwidth_for(double footprint) const {
    for (const auto& l : caches)
      if (footprint <= kServes * l.bytes && l.gbps > 0) return l;
    return {"memory", 0, gbps};
  }
};

}  // namespace tilekit
