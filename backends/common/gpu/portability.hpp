// The one place that spells the GPU vendor's runtime. Everything else in backends/gpu is
// written against the gpu* names below and compiles unchanged with nvcc (CUDA) and hipcc
// (HIP, selected by __HIPCC__). Keep this header small: a name goes here only when CUDA and
// HIP spell the same thing differently.
#pragma once

#include <string>

#include "tilekit/types.hpp"

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>

#define TILEKIT_GPU_RUNTIME "HIP"
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuEvent_t = hipEvent_t;
using gpuMemcpyKind = hipMemcpyKind;
inline constexpr gpuError_t gpuSuccess = hipSuccess;
inline constexpr gpuMemcpyKind gpuMemcpyHostToDevice = hipMemcpyHostToDevice;
inline constexpr gpuMemcpyKind gpuMemcpyDeviceToHost = hipMemcpyDeviceToHost;
inline constexpr gpuMemcpyKind gpuMemcpyDeviceToDevice = hipMemcpyDeviceToDevice;
#define gpuGetErrorString hipGetErrorString
#define gpuGetErrorName hipGetErrorName
#define gpuGetLastError hipGetLastError
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuSetDevice hipSetDevice
#define gpuDevAttrMaxSharedMemoryPerBlockOptin hipDeviceAttributeSharedMemPerBlockOptin
#define gpuDevAttrMaxSharedMemoryPerMultiprocessor hipDeviceAttributeMaxSharedMemoryPerMultiprocessor
#define gpuDevAttrMaxBlocksPerMultiprocessor hipDeviceAttributeMaxBlocksPerMultiProcessor  // sic: capital P in HIP

// Device properties and attributes: HIP before 6.0 (Debian's ROCm 5.2 included) lacks what
// CUDA has and the backend reads. hipDeviceProp_t has no regsPerMultiprocessor, and
// hipDeviceGetAttribute answers hipErrorInvalidValue for the attributes it documents as
// "Cuda only" (the opt-in shared memory per block, blocks per multiprocessor). The AMD
// answers are derived here from what the runtime does report, so the backend stays
// vendor-neutral and never sees a failure that only means "not reported".
namespace tilekit::gpu::hip_compat {
#if HIP_VERSION_MAJOR < 6
// ROCm 5 fills regsPerBlock from the compute unit's whole VGPR file (VGPRs per SIMD x SIMDs
// x wavefront lanes, 4 x 512 x 64 on gfx90a): the figure ROCm 6 reports as
// regsPerMultiprocessor.
struct DeviceProp : hipDeviceProp_t {
  int regsPerMultiprocessor;
};
inline hipError_t get_device_properties(DeviceProp* p, int device) {
  const hipError_t e = hipGetDeviceProperties(static_cast<hipDeviceProp_t*>(p), device);
  p->regsPerMultiprocessor = p->regsPerBlock;
  return e;
}
#else
using DeviceProp = hipDeviceProp_t;
inline hipError_t get_device_properties(DeviceProp* p, int device) { return hipGetDeviceProperties(p, device); }
#endif

inline hipError_t device_get_attribute(int* value, hipDeviceAttribute_t attr, int device) {
  const hipError_t e = hipDeviceGetAttribute(value, attr, device);
  if (e != hipErrorInvalidValue) return e;
  // The runtime also records the failed query as the thread's last error; clear it, or the
  // next launch check (hipGetLastError) would blame an innocent kernel.
  (void)hipGetLastError();
  switch (attr) {
    case hipDeviceAttributeSharedMemPerBlockOptin:
      // AMD has no opt-in: a workgroup may use all of the LDS the default limit names
      // (64 KiB on CDNA), and nothing above it.
      return hipDeviceGetAttribute(value, hipDeviceAttributeMaxSharedMemoryPerBlock, device);
    case hipDeviceAttributeMaxBlocksPerMultiProcessor: {
      // One wavefront per workgroup is the most workgroups a CU can hold: its wavefront
      // slots (maxThreadsPerMultiProcessor / warpSize, 2048 / 64 = 32 on CDNA2/3).
      int threads = 0, wave = 0;
      if (const hipError_t t = hipDeviceGetAttribute(&threads, hipDeviceAttributeMaxThreadsPerMultiProcessor, device);
          t != hipSuccess)
        return t;
      if (const hipError_t w = hipDeviceGetAttribute(&wave, hipDeviceAttributeWarpSize, device); w != hipSuccess)
        return w;
      *value = wave > 0 ? threads / wave : 0;
      return hipSuccess;
    }
    default:
      return e;
  }
}
}  // namespace tilekit::gpu::hip_compat
using gpuDeviceProp_t = tilekit::gpu::hip_compat::DeviceProp;
#define gpuGetDeviceProperties ::tilekit::gpu::hip_compat::get_device_properties
#define gpuDeviceGetAttribute ::tilekit::gpu::hip_compat::device_get_attribute
#define gpuRuntimeGetVersion hipRuntimeGetVersion
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpyToSymbolAsync(sym, src, bytes, offset, kind, stream) \
  hipMemcpyToSymbolAsync(HIP_SYMBOL(sym), src, bytes, offset, kind, stream)
#define gpuStreamCreateNonBlocking(s) hipStreamCreateWithFlags(s, hipStreamNonBlocking)
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuEventCreate hipEventCreate
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuFuncSetMaxDynamicSharedMemory(func, bytes) \
  hipFuncSetAttribute(reinterpret_cast<const void*>(func), hipFuncAttributeMaxDynamicSharedMemorySize, int(bytes))
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor
#define gpuFuncGetAttributes hipFuncGetAttributes
#define gpuLaunchKernel hipLaunchKernel
using gpuFuncAttributes = hipFuncAttributes;
// The host-memory gemm's staging (backends/gpu/host_gemm_gpu.cu).
#define gpuGetDevice hipGetDevice
#define gpuHostAllocPortable(p, bytes) hipHostMalloc(p, bytes, hipHostMallocPortable)
#define gpuFreeHost hipHostFree
#define gpuStreamWaitEvent hipStreamWaitEvent
#define gpuEventCreateNoTiming(e) hipEventCreateWithFlags(e, hipEventDisableTiming)
#define gpuMemGetInfo hipMemGetInfo

#else  // CUDA
#include <cuda_runtime.h>

#define TILEKIT_GPU_RUNTIME "CUDA"
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuEvent_t = cudaEvent_t;
using gpuDeviceProp_t = cudaDeviceProp;
using gpuMemcpyKind = cudaMemcpyKind;
inline constexpr gpuError_t gpuSuccess = cudaSuccess;
inline constexpr gpuMemcpyKind gpuMemcpyHostToDevice = cudaMemcpyHostToDevice;
inline constexpr gpuMemcpyKind gpuMemcpyDeviceToHost = cudaMemcpyDeviceToHost;
inline constexpr gpuMemcpyKind gpuMemcpyDeviceToDevice = cudaMemcpyDeviceToDevice;
#define gpuGetErrorString cudaGetErrorString
#define gpuGetErrorName cudaGetErrorName
#define gpuGetLastError cudaGetLastError
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuSetDevice cudaSetDevice
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDevAttrMaxSharedMemoryPerBlockOptin cudaDevAttrMaxSharedMemoryPerBlockOptin
#define gpuDevAttrMaxSharedMemoryPerMultiprocessor cudaDevAttrMaxSharedMemoryPerMultiprocessor
#define gpuDevAttrMaxBlocksPerMultiprocessor cudaDevAttrMaxBlocksPerMultiprocessor
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpyToSymbolAsync(sym, src, bytes, offset, kind, stream) \
  cudaMemcpyToSymbolAsync(sym, src, bytes, offset, kind, stream)
#define gpuStreamCreateNonBlocking(s) cudaStreamCreateWithFlags(s, cudaStreamNonBlocking)
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuEventCreate cudaEventCreate
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuFuncSetMaxDynamicSharedMemory(func, bytes) \
  cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes))
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
#define gpuFuncGetAttributes cudaFuncGetAttributes
#define gpuLaunchKernel cudaLaunchKernel
using gpuFuncAttributes = cudaFuncAttributes;
// The host-memory gemm's staging (backends/gpu/host_gemm_gpu.cu).
#define gpuGetDevice cudaGetDevice
#define gpuHostAllocPortable(p, bytes) cudaHostAlloc(p, bytes, cudaHostAllocPortable)
#define gpuFreeHost cudaFreeHost
#define gpuStreamWaitEvent cudaStreamWaitEvent
#define gpuEventCreateNoTiming(e) cudaEventCreateWithFlags(e, cudaEventDisableTiming)
#define gpuMemGetInfo cudaMemGetInfo
#endif

namespace tilekit::gpu {

// Turns a failed runtime call into tilekit::DeviceError carrying the vendor's own message and
// the call that failed, so `tilekit` can print "device error: cudaMalloc(...): out of memory".
[[noreturn]] inline void throw_gpu_error(gpuError_t e, const char* what, const char* file, int line) {
  throw DeviceError(std::string(what) + ": " + gpuGetErrorName(e) + ": " + gpuGetErrorString(e) + " (" + file +
                    ":" + std::to_string(line) + ")");
}

}  // namespace tilekit::gpu

#define TILEKIT_GPU_CHECK(expr)                                                           \
  do {                                                                                    \
    const gpuError_t tilekit_gpu_err_ = (expr);                                           \
    if (tilekit_gpu_err_ != gpuSuccess)                                                   \
      ::tilekit::gpu::throw_gpu_error(tilekit_gpu_err_, #expr, __FILE__, __LINE__);       \
  } while (0)

// After every kernel launch: a bad configuration (too many threads, too much shared memory)
// is only reported by the next runtime call, which would blame the wrong line.
#define TILEKIT_GPU_CHECK_LAUNCH(kernel_name)                                             \
  do {                                                                                    \
    const gpuError_t tilekit_gpu_err_ = gpuGetLastError();                                \
    if (tilekit_gpu_err_ != gpuSuccess)                                                   \
      ::tilekit::gpu::throw_gpu_error(tilekit_gpu_err_, "launch of " kernel_name, __FILE__, __LINE__); \
  } while (0)

// Launch bounds are spelled the same by both compilers; the macro documents the intent
// (the maximum block size a kernel is compiled for) and is the single place to change it.
#define TILEKIT_LAUNCH_BOUNDS(max_threads) __launch_bounds__(max_threads)
// ...and asks for registers few enough that min_blocks blocks of max_threads fit on one SM.
// HIP's second argument means something else (minimum warps per execution unit), so there
// only the block size is passed.
#if defined(__HIPCC__)
#define TILEKIT_LAUNCH_BOUNDS_OCC(max_threads, min_blocks) __launch_bounds__(max_threads)
#else
#define TILEKIT_LAUNCH_BOUNDS_OCC(max_threads, min_blocks) __launch_bounds__(max_threads, min_blocks)
#endif

// Unrolling a loop over filter taps read from __constant__ memory: fully on NVIDIA, where an
// FFMA takes a constant-bank operand directly and an unrolled tap costs no register; rolled
// on AMD, where a VALU instruction cannot read memory, every tap is first loaded into a scalar
// register, and a fully unrolled R x R loop keeps all R^2 of them live (spilling to scratch
// from R = 9 in float, R = 7 in double: bench/results/resource-usage.md).
#if defined(__HIPCC__)
#define TILEKIT_UNROLL_CONSTANT_TAPS _Pragma("unroll 1")
#define TILEKIT_ROLLED_CONSTANT_TAPS 1
#else
#define TILEKIT_UNROLL_CONSTANT_TAPS _Pragma("unroll")
#define TILEKIT_ROLLED_CONSTANT_TAPS 0
#endif
namespace tilekit::gpu {
// The same choice for code whose shape depends on it (a rolled tap loop cannot index a
// register array by the tap: the array would go to scratch memory).
inline constexpr bool kRolledConstantTaps = TILEKIT_ROLLED_CONSTANT_TAPS;
}  // namespace tilekit::gpu

// Asynchronous copies from global to shared memory (cp.async on sm_80+): the tile layer's
// (include/tilekit/tile/gpu.hpp), under the names the hand-written kernels use. A thread issues
// all of its copies and waits once; `valid` false zero-fills without reading the source (which
// must still be a valid address). Without cp.async (HIP, older NVIDIA) TILEKIT_GPU_ASYNC_COPY is 0
// and they are plain copies, correct but overlapping nothing.
#include "tilekit/tile/gpu.hpp"
#define TILEKIT_GPU_ASYNC_COPY TILEKIT_TILE_ASYNC_COPY
namespace tilekit::gpu {
using tile::detail::copy_async;
using tile::detail::copy_async_wait_all;
// One 16-byte copy (cp.async.cg: through L2 only, for data whose reuse is in shared memory).
template <class VT>
__device__ __forceinline__ void copy_async16(VT* dst_shared, const VT* src, bool valid) {
  static_assert(sizeof(VT) == 16, "16-byte vectors");
  copy_async(dst_shared, src, valid);
}
}  // namespace tilekit::gpu
