// Datasheet-style GPU ceilings from the properties the runtime reports, beside which the
// measured ones are checked (a >25% gap is warned about). Plain C++: the Kokkos backend on CUDA
// uses it too, and the tests check it without a GPU.
#pragma once

#include <string>

#include <fmt/format.h>

namespace tilekit::gpu {

struct GpuEstimate {
  double gflops_f32 = 0, gflops_f64 = 0, gbps = 0;
  double gflops_f64_matrix = 0;  // the FP64 tensor cores (A100, H100/H200, B200: twice the FP64 FMA lanes); 0: none
  std::string basis;
};

// FMA lanes per SM (NVIDIA, by compute capability) or per CU (AMD, by gfx name) for fp32 and
// fp64, from the vendors' architecture whitepapers. AMD's fp32 figure is without packed FP32
// (v_pk_fma_f32), which plain fmaf does not use.
inline void fma_lanes(bool amd, int cc_major, int cc_minor, const std::string& arch, int& f32, int& f64) {
  if (amd) {
    f32 = 64, f64 = 64;                                       // CDNA2 (gfx90a): full-rate fp64
    if (arch.rfind("gfx94", 0) == 0 || arch.rfind("gfx95", 0) == 0) f32 = 128, f64 = 64;  // CDNA3
    if (arch.rfind("gfx908", 0) == 0) f32 = 64, f64 = 32;     // CDNA1
    if (arch.rfind("gfx1", 0) == 0) f32 = 128, f64 = 4;       // RDNA
    return;
  }
  const int cc = cc_major * 10 + cc_minor;
  if (cc == 60 || cc == 70 || cc == 80) f32 = 64, f64 = 32;   // P100, V100, A100
  else if (cc == 90 || cc == 100) f32 = 128, f64 = 64;        // H100/H200, B200
  else if (cc == 75) f32 = 64, f64 = 2;                       // Turing
  else f32 = 128, f64 = 2;                                    // consumer parts (6.1, 8.6, 8.9, 12.x)
}

// clock_khz: the SM boost clock; mem_clock_khz and bus_bits: the memory's, as the runtime
// reports them (double data rate: two transfers per clock).
inline GpuEstimate estimate_gpu(bool amd, int cc_major, int cc_minor, const std::string& arch, int sms,
                                double clock_khz, double mem_clock_khz, int bus_bits) {
  int f32 = 0, f64 = 0;
  fma_lanes(amd, cc_major, cc_minor, arch, f32, f64);
  GpuEstimate e;
  const double ghz = clock_khz * 1e-6;
  e.gflops_f32 = double(sms) * f32 * 2.0 * ghz;
  e.gflops_f64 = double(sms) * f64 * 2.0 * ghz;
  const int cc = cc_major * 10 + cc_minor;
  if (!amd && (cc == 80 || cc == 90 || cc == 100)) e.gflops_f64_matrix = 2.0 * e.gflops_f64;
  e.gbps = 2.0 * mem_clock_khz * 1e3 * (bus_bits / 8.0) * 1e-9;
  e.basis = fmt::format("{} {} x {} fp32 / {} fp64 FMA lanes x 2 x {:.3f} GHz; memory {:.0f} MHz x 2 x {} bits",
                        sms, amd ? "CUs" : "SMs", f32, f64, ghz, mem_clock_khz * 1e-3, bus_bits);
  return e;
}

}  // namespace tilekit::gpu
