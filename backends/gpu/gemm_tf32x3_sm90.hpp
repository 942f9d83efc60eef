// The 3xTF32 float gemm on sm_90's wgmma (common/gpu/gemm_tf32x3_sm90.cuh), as the rest of the cuda
// backend sees it: gemm_tf32x3_sm90.cu, compiled for sm_90a when the build's architectures include
// 90 (TILEKIT_CUDA_WGMMA=1), defines these; other builds get the stand-ins below, which say so.
#pragma once

#include <cstddef>

#include "common/gpu/device_common.cuh"
#include "kernels.hpp"

#ifndef TILEKIT_CUDA_WGMMA
#define TILEKIT_CUDA_WGMMA 0
#endif

namespace tilekit::gpu {

#if TILEKIT_CUDA_WGMMA && !defined(__HIPCC__)
bool tf32x3_wgmma_compiled();
const void* tf32x3_wgmma_kernel();
std::size_t tf32x3_wgmma_smem_bytes();
// Splits A and B into a stream-ordered workspace (2 x 4 bytes an element of each, padded to
// whole tiles), then runs the product; both on stream s.
void launch_tf32x3_wgmma(const GemmParams<float>& g, const LaunchPlan& pl, gpuStream_t s);
#else
inline bool tf32x3_wgmma_compiled() { return false; }
inline const void* tf32x3_wgmma_kernel() { return nullptr; }
inline std::size_t tf32x3_wgmma_smem_bytes() { return 0; }
inline void launch_tf32x3_wgmma(const GemmParams<float>&, const LaunchPlan& pl, gpuStream_t) {
  throw Error("gemm plan '" + pl.kernel + "' needs the sm_90a wgmma kernel, which this build does not compile "
              "(CMAKE_CUDA_ARCHITECTURES without 90)");
}
#endif

}  // namespace tilekit::gpu
