// Device-side helpers shared by the kernels of both vendors.
#pragma once

#include <cstdint>

#include "kernels.hpp"

namespace tilekit::gpu {

// One 16-byte vector of T: the widest load a thread can issue in one instruction.
template <class T> struct Vec16;
template <> struct Vec16<float> {
  using type = float4;
  static constexpr int n = 4;
  __device__ static void unpack(const float4& v, float* o) { o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w; }
  __device__ static float4 pack(const float* o) { return make_float4(o[0], o[1], o[2], o[3]); }
};
template <> struct Vec16<double> {
  using type = double2;
  static constexpr int n = 2;
  __device__ static void unpack(const double2& v, double* o) { o[0] = v.x; o[1] = v.y; }
  __device__ static double2 pack(const double* o) { return make_double2(o[0], o[1]); }
};

// Grids are one-dimensional (gridDim.x reaches 2^31 - 1, y only 65535); a block recovers its
// 2D tile coordinates from the number of tiles per row.
struct BlockXY {
  int x, y;
};
__device__ __forceinline__ BlockXY block_xy(int tiles_x) {
  return {int(blockIdx.x) % tiles_x, int(blockIdx.x) / tiles_x};
}

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

inline int ceil_div(long long a, long long b) { return int((a + b - 1) / b); }

// Launches `kernel` (taking `args`) on a 1D grid of `blocks` blocks shaped as the plan says,
// opting in to more than the default shared memory first when the plan needs it, and turns a
// refused launch into DeviceError naming the kernel.
inline void launch_kernel(const void* kernel, const LaunchPlan& pl, int blocks, void** args, gpuStream_t s,
                          const char* name) {
  if (kernel == nullptr)  // (kernels.hpp: which kernels a build leaves out)
    throw Error(std::string(name) + ": the plan '" + pl.kernel +
                "' names a kernel this build does not compile (a sweep build's, or one for GPUs older than the build's "
                "architectures)");
  if (pl.needs_optin) TILEKIT_GPU_CHECK(gpuFuncSetMaxDynamicSharedMemory(kernel, pl.dynamic_smem_bytes));
  const gpuError_t e =
      gpuLaunchKernel(kernel, dim3(unsigned(blocks)), dim3(pl.block_x, pl.block_y), args, pl.dynamic_smem_bytes, s);
  if (e != gpuSuccess) throw_gpu_error(e, name, __FILE__, __LINE__);
  const gpuError_t after = gpuGetLastError();
  if (after != gpuSuccess) throw_gpu_error(after, name, __FILE__, __LINE__);
}

// Groups of asynchronous copies (cp.async, sm_80+; no-ops elsewhere), for the multi-stage kernels.
namespace async_group {
__device__ __forceinline__ void commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most `pending` of this thread's committed groups are still in flight.
template <int pending>
__device__ __forceinline__ void wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
#endif
}
// cp.async of `bytes` (0..size) of T from global to shared, the rest of `size` zero-filled (the
// kernels' borders): 16-byte copies bypass L1 (.cg: the reuse is in shared memory), smaller ones
// must go through it (.ca). Below sm_80 (and in the host emulation, backends/cuda/scripts) a
// plain copy with the same zero fill.
template <int size, class T>
__device__ __forceinline__ void copy(T* dst_shared, const T* src, int bytes) {
  static_assert(size == 16 || size == 8 || size == 4, "cp.async copies 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(dst_shared));
  if constexpr (size == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src), "n"(size), "r"(bytes) : "memory");
#else
  for (int e = 0; e < size / int(sizeof(T)); ++e) dst_shared[e] = e * int(sizeof(T)) < bytes ? src[e] : T(0);
#endif
}
// The same copy of all `size` bytes (no source size, no zero fill: the interior blocks' fast path).
template <int size, class T>
__device__ __forceinline__ void copy_full(T* dst_shared, const T* src) {
  static_assert(size == 16 || size == 8 || size == 4, "cp.async copies 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(dst_shared));
  if constexpr (size == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(src), "n"(size) : "memory");
#else
  for (int e = 0; e < size / int(sizeof(T)); ++e) dst_shared[e] = src[e];
#endif
}
}  // namespace async_group

}  // namespace tilekit::gpu
