// GpuBackend::measure_ceilings (gpu_backend.hpp): the roofline ceilings of the GPU as this
// backend reaches them: a copy kernel (and the runtime's device copy) for bandwidth, FFMA and
// DFMA chains for the arithmetic peak, beside the estimate from the device's properties.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "common/gpu/estimate.hpp"
#include "common/gpu/gemm_dmma.cuh"  // peak_chains (empty under hipcc)
#include "gpu_backend.hpp"

namespace tilekit::gpu {
namespace {

// 16-byte loads and stores, grid-stride: the copy that moves the most bytes per instruction.
__global__ void copy_kernel(const int4* __restrict__ in, int4* __restrict__ out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

// 8 independent FMA chains per thread; with 2048 threads per SM (64 warps) every FMA pipe has
// far more independent work than its ~4-cycle latency needs. acc * m + c converges, so the
// values stay normal for any iteration count.
template <class T>
__global__ void fma_kernel(T* out, int iters) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  T a[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) a[j] = T(tid % 7) + T(j);
  const T m = T(0.999), c = T(0.001);
  for (int k = 0; k < iters; ++k) {
#pragma unroll
    for (int j = 0; j < 8; ++j) a[j] = fma(a[j], m, c);
  }
  T s = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) s += a[j];
  out[tid] = s;
}

#if !defined(__HIPCC__)
// FP64 tensor-core chains (sm_80 and later, where the double gemm runs on them, so the double
// roof is theirs): gemm_dmma.cuh's peak_chains.
__global__ void dmma_kernel(double* out, int iters) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  out[tid] = dmma::peak_chains(tid, iters);
}
#endif

// The attributes the estimate reads (cudaDeviceProp lost clockRate and memoryClockRate in CUDA 13).
#if defined(__HIPCC__)
constexpr auto kAttrClock = hipDeviceAttributeClockRate, kAttrMemClock = hipDeviceAttributeMemoryClockRate,
               kAttrBusWidth = hipDeviceAttributeMemoryBusWidth;
#else
constexpr auto kAttrClock = cudaDevAttrClockRate, kAttrMemClock = cudaDevAttrMemoryClockRate,
               kAttrBusWidth = cudaDevAttrGlobalMemoryBusWidth;
#endif

}  // namespace

Ceilings GpuBackend::measure_ceilings() {
  require_available();
  const auto t0 = std::chrono::steady_clock::now();
  Ceilings c;
  gpuDeviceProp_t p{};
  TILEKIT_GPU_CHECK(gpuGetDeviceProperties(&p, device_));
  auto best_of = [&](int runs, auto&& launch) {
    launch();  // warm-up
    double best = 1e30;
    for (int r = 0; r < runs; ++r) best = std::min(best, time_seconds(launch));
    return best;
  };

  // Bandwidth: two arrays of 8x the L2 or 1 GiB, whichever is more, within a quarter of memory.
  std::size_t bytes = std::max<std::size_t>(std::size_t(1) << 30, 8 * props_.l2_bytes);
  bytes = std::min<std::size_t>(bytes, std::size_t(p.totalGlobalMem) / 4) / 16 * 16;
  void* src = allocate(bytes);
  void* dst = nullptr;
  try {
    dst = allocate(bytes);
    const std::size_t n = bytes / 16;
    const int blocks = props_.sm_count * (props_.max_threads_per_sm / 256);
    const double kernel_s = best_of(10, [&] {
      copy_kernel<<<blocks, 256, 0, stream_>>>(static_cast<const int4*>(src), static_cast<int4*>(dst), n);
      TILEKIT_GPU_CHECK(gpuGetLastError());
    });
    const double runtime_s = best_of(10, [&] { device_copy(dst, src, bytes); });
    const double kernel_gbps = 2.0 * double(bytes) / kernel_s * 1e-9, runtime_gbps = 2.0 * double(bytes) / runtime_s * 1e-9;
    c.gbps = std::max(kernel_gbps, runtime_gbps);
    c.bandwidth_method = fmt::format("copy of {} MiB, best of 10: 16-byte copy kernel {:.0f} GB/s, {} device copy {:.0f} GB/s",
                                     bytes >> 20, kernel_gbps, TILEKIT_GPU_RUNTIME, runtime_gbps);
  } catch (...) {
    deallocate(src);
    if (dst) deallocate(dst);
    throw;
  }
  deallocate(src);
  deallocate(dst);

  // Peak: every SM full of threads (2048 on NVIDIA), 4 waves of blocks.
  double dmma_gflops = 0;
  const int threads = 256, blocks = props_.sm_count * (props_.max_threads_per_sm / threads) * 4;
  void* out = allocate(std::size_t(blocks) * threads * sizeof(double));
  try {
    auto peak = [&](auto zero, int iters) {
      using T = decltype(zero);
      const double s = best_of(5, [&] {
        fma_kernel<T><<<blocks, threads, 0, stream_>>>(static_cast<T*>(out), iters);
        TILEKIT_GPU_CHECK(gpuGetLastError());
      });
      return 2.0 * 8.0 * double(iters) * double(blocks) * threads / s * 1e-9;
    };
    c.gflops_f32 = peak(0.0f, 4096);
    c.gflops_f64 = peak(0.0, props_.cc_major == 9 || props_.cc_major == 10 || props_.cc_major == 8 ? 2048 : 256);
    c.compute_method = fmt::format("FFMA/DFMA kernel, {} blocks x {} threads x 8 chains, best of 5", blocks, threads);
#if !defined(__HIPCC__)
    if (props_.fp64_mma) {
      const int iters = 1024;
      const double s = best_of(5, [&] {
        dmma_kernel<<<blocks, threads, 0, stream_>>>(static_cast<double*>(out), iters);
        TILEKIT_GPU_CHECK(gpuGetLastError());
      });
      dmma_gflops = dmma::kPeakFlopsPerStep * double(iters) * double(blocks) * threads / s * 1e-9;
      c.gflops_f64 = std::max(c.gflops_f64, dmma_gflops);
      c.compute_method += fmt::format("; fp64: DMMA (mma.sync f64) chains, 4 per warp, {:.0f} GFLOP/s", dmma_gflops);
    }
#endif
  } catch (...) {
    deallocate(out);
    throw;
  }
  deallocate(out);

  int clock = 0, mem_clock = 0, bus = 0;
  if (gpuDeviceGetAttribute(&clock, kAttrClock, device_) == gpuSuccess &&
      gpuDeviceGetAttribute(&mem_clock, kAttrMemClock, device_) == gpuSuccess &&
      gpuDeviceGetAttribute(&bus, kAttrBusWidth, device_) == gpuSuccess) {
#if defined(__HIPCC__)
    const GpuEstimate e = estimate_gpu(true, props_.cc_major, props_.cc_minor, p.gcnArchName, props_.sm_count, clock,
                                       mem_clock, bus);
#else
    const GpuEstimate e = estimate_gpu(false, props_.cc_major, props_.cc_minor, "", props_.sm_count, clock, mem_clock, bus);
#endif
    c.est_gflops_f32 = e.gflops_f32;
    // The double estimate of the unit the double ceiling was measured on.
    c.est_gflops_f64 = dmma_gflops > 0 && e.gflops_f64_matrix > 0 ? e.gflops_f64_matrix : e.gflops_f64;
    c.est_gbps = e.gbps;
    c.estimate_basis = e.basis;
  } else {
    (void)gpuGetLastError();
    c.estimate_basis = "the runtime does not report the clocks";
  }
  c.measure_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

}  // namespace tilekit::gpu
