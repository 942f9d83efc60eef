// The roofline model over a backend's measured ceilings: where a kernel of a given arithmetic
// intensity is bounded, and what fraction of that bound a measured run reaches.
#pragma once

#include <string>
#include <vector>

#include "tilekit/backend.hpp"
#include "tilekit/ceilings.hpp"

namespace tilekit {

// The backend's ceilings, measured at the first call and kept for the rest of the process
// (one measurement per backend object: serial and openmp share a CPU but not a thread count).
const Ceilings& ceilings(Backend& be);
// Measures again and keeps, ceiling by ceiling, the higher figure: any rate the device reached
// is attainable, so on a machine shared with other work a second sample (after a long run, say)
// can only bring each ceiling closer to the hardware's.
const Ceilings& remeasure_ceilings(Backend& be);

// Each ceiling that differs from its estimate by more than `tolerance` (relative to the
// estimate), as a sentence naming both figures.
std::vector<std::string> ceiling_warnings(const Ceilings& c, double tolerance = 0.25);

// One point against the roof: `flops` useful FLOPs and `bytes` compulsory bytes moved in
// `seconds`. A point without FLOPs (transpose, a copy) is bounded by bandwidth alone. The
// bandwidth ceiling is that of the level the bytes fit in (Ceilings::bandwidth_for).
struct RoofPoint {
  double intensity = 0;    // useful FLOPs per compulsory byte (0 for pure data movement)
  double peak_gflops = 0;  // the ceilings of the element type's FMA and of memory
  double peak_gbps = 0;
  std::string level;       // where peak_gbps comes from: "memory", or a cache ("L2", "L3")
  double roof = 0;           // the attainable rate at this intensity: GFLOP/s, or GB/s without FLOPs
  double achieved = 0;       // the same unit as roof
  double roof_fraction = 0;  // achieved / roof; NaN when the roof is unknown (a ceiling not measured)
};
RoofPoint roof_point(const Ceilings& c, DType t, double flops, double bytes, double seconds);

}  // namespace tilekit

namespace tilekit {

// The traffic PMPP's model (ch. 5) predicts between a kernel and main memory, beside the
// compulsory bytes: every load a kernel issues goes to memory unless its own tile or register
// block reuses the value. `line` is the memory transaction (GPU DRAM sector 32 B, CPU cache line
// 64 B), the least a scattered access moves. `tile` is the resolved tile (auto for naive).
struct Traffic {
  double bytes = 0;        // predicted reads + writes
  double compulsory = 0;   // each input read once, each output written once
  double flops = 0;        // useful FLOPs; flops / bytes is PMPP's compute-to-global-memory-access ratio
  std::string model;       // the formula, in words
};
Traffic predicted_traffic(Variant v, const Problem& p, const TileConfig& tile, double line = 64);

}  // namespace tilekit
