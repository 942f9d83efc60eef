// A short wait put in front of a timed region on a GPU stream, so that the region's start event
// measures the device and not the host.
//
// An event recorded on an idle stream is stamped at once; the kernel that follows starts only
// when the host has finished launching it, so `record(start); launch; record(stop)` on an idle
// GPU counts the launch's host latency as kernel time: 2-4 us for a CUDA launch, 6-17 us for a
// Kokkos team launch on the H200 (docs/design/gpu-timing-stream-hold.md), 5-12% of an 8192^2
// transpose.
// Holding the stream for longer than that first makes the start event wait behind the hold while
// the host queues the timed work, so the interval is the work's own device time (what nvbench's
// blocking kernel achieves; a timed hold instead of a host-released flag cannot deadlock when the
// timed function synchronizes: it then just waits the hold out, and the host latency is back).
// Used by the cuda/hip backend (gpu_backend.cu) and by kokkos on Kokkos::Cuda (its backend.cpp),
// for their kernels and peers alike. Include from CUDA/HIP translation units only.
#pragma once

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>
#endif

namespace tilekit::gpu {

// Longer than any launch's host latency measured (at most 17 us), short beside a run.
inline constexpr unsigned long long kStreamHoldNs = 100000;

static __global__ void stream_hold_kernel(unsigned long long ns) {
#if defined(__CUDA_ARCH__)
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
#elif defined(__HIP_DEVICE_COMPILE__)
  // s_sleep(127) waits about 127 x 64 cycles: at least 2 us up to 2.5 GHz.
  for (unsigned long long waited = 0; waited < ns; waited += 2000) __builtin_amdgcn_s_sleep(127);
#else
  (void)ns;  // the host pass of a device kernel
#endif
}

#if defined(__HIPCC__)
static inline hipError_t stream_hold(hipStream_t s) {
  hipLaunchKernelGGL(stream_hold_kernel, dim3(1), dim3(1), 0, s, kStreamHoldNs);
  return hipGetLastError();
}
#else
static inline cudaError_t stream_hold(cudaStream_t s) {
  stream_hold_kernel<<<1, 1, 0, s>>>(kStreamHoldNs);
  return cudaGetLastError();
}
#endif

}  // namespace tilekit::gpu
